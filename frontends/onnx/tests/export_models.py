#!/usr/bin/python3
"""Exports the real networks bp-run is tested on, with torch's own outputs.

Debian's python3-torch 1.13 and python3-torchvision 0.14; nothing is
downloaded: torchvision's constructors run with weights=None, every weight
comes from torch.manual_seed and is then calibrated (calibrate() below) so
that every layer's activations keep a scale of about 1: with default init
they vanish (mobilenet_v3_small's output once had a std of 1.7e-10, and any
kernel matched it). Each model goes to OUT/<name>/: model.onnx,
input_<k>.npy (fixed inputs), expected_<k>.npy (torch's eager outputs for
them, in eval mode under torch.no_grad) and meta.json (input and output
names, the shared tolerance TOLERANCE, and the exporter key). An export
whose reference output spreads less than MIN_SPREAD fails.
A model whose files are all present and whose meta.json carries this
exporter's key (a hash of this file and the torch versions) is not exported
again (cached); any change here re-exports every model.

When torch or torchvision cannot be imported, OUT/NOT_EXPORTED.txt says why
(bp-conformance's models group prints it) and the exit code is 77.

Usage: export_models.py OUT [--only NAME ...]
Exit codes: 0 done, 77 torch/torchvision missing (the tests skip), 1 an export failed.
"""
import argparse
import hashlib
import json
import math
import os
import sys

OPSET = 14
SEED = 1234
NOT_EXPORTED = "NOT_EXPORTED.txt"

# The one tolerance every model is compared with; meta.json carries it (rtol,
# atol) to its readers (model_test.py, bp-conformance's models group). An
# output matches when |bp - torch| <= atol + rtol * |torch| elementwise
# (float32 all through). The weights are calibrated so that every output
# spreads over ~1 (MIN_SPREAD at least), so one absolute atol fits every
# model; sums of up to 4608 products reorder between torch's oneDNN and
# Backplane's kernels, softmax/layer norm/GELU through erf add a few ULPs.
TOLERANCE = {"rtol": 1e-3, "atol": 1e-4}
# The smallest standard deviation a reference output may have: the same
# floor as bp-conformance's models group (kMinReferenceSpread, models_group.h).
MIN_SPREAD = 1e-2


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out")
    ap.add_argument("--only", nargs="*")
    return ap.parse_args()


ARGS = parse_args() if __name__ == "__main__" else None
try:
    import numpy as np
    import torch
    import torchvision
except ImportError as e:  # the tests using these models skip with this reason
    why = f"export_models: {e}; install python3-torch python3-torchvision"
    print(why, file=sys.stderr)
    if ARGS:
        os.makedirs(ARGS.out, exist_ok=True)
        with open(os.path.join(ARGS.out, NOT_EXPORTED), "w") as f:
            f.write(f"not exported ({why})\n")
    sys.exit(77)


class GPT(torch.nn.Module):
    """A small GPT-style decoder: token + position embedding, pre-norm blocks
    of causal self-attention and a GELU MLP, final layer norm, LM head."""

    def __init__(self, vocab=100, ctx=16, dim=64, heads=4, layers=2):
        super().__init__()
        self.heads = heads
        self.tok = torch.nn.Embedding(vocab, dim)
        self.pos = torch.nn.Embedding(ctx, dim)
        self.blocks = torch.nn.ModuleList()
        for _ in range(layers):
            self.blocks.append(torch.nn.ModuleDict({
                "ln1": torch.nn.LayerNorm(dim), "qkv": torch.nn.Linear(dim, 3 * dim), "proj": torch.nn.Linear(dim, dim),
                "ln2": torch.nn.LayerNorm(dim), "fc": torch.nn.Linear(dim, 4 * dim), "out": torch.nn.Linear(4 * dim, dim)}))
        self.ln = torch.nn.LayerNorm(dim)
        self.head = torch.nn.Linear(dim, vocab, bias=False)
        self.register_buffer("causal", torch.tril(torch.ones(ctx, ctx, dtype=torch.bool)))

    def forward(self, tokens):
        b, t = tokens.shape
        x = self.tok(tokens) + self.pos(torch.arange(t, device=tokens.device))
        d = x.shape[-1] // self.heads
        for blk in self.blocks:
            q, k, v = blk["qkv"](blk["ln1"](x)).split(x.shape[-1], dim=-1)
            q, k, v = (z.reshape(b, t, self.heads, d).transpose(1, 2) for z in (q, k, v))
            att = (q @ k.transpose(-2, -1)) / math.sqrt(d)
            att = att.masked_fill(~self.causal[:t, :t], float("-inf")).softmax(-1)
            y = (att @ v).transpose(1, 2).reshape(b, t, -1)
            x = x + blk["proj"](y)
            x = x + blk["out"](torch.nn.functional.gelu(blk["fc"](blk["ln2"](x))))
        return self.head(self.ln(x))


class Encoder(torch.nn.Module):
    """torch.nn.TransformerEncoder over [batch, seq, 64] with a padding mask."""

    def __init__(self):
        super().__init__()
        layer = torch.nn.TransformerEncoderLayer(d_model=64, nhead=4, dim_feedforward=128, dropout=0.0,
                                                 batch_first=True)
        self.enc = torch.nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)

    def forward(self, src, pad_mask):
        return self.enc(src, src_key_padding_mask=pad_mask)


def vit():
    """torchvision's VisionTransformer, small; its classifier head starts at
    zero (torchvision's init), so it gets random weights to make the output
    depend on the whole network."""
    m = torchvision.models.VisionTransformer(image_size=64, patch_size=8, num_layers=4, num_heads=4, hidden_dim=64,
                                             mlp_dim=128, num_classes=10)
    torch.nn.init.normal_(m.heads.head.weight, std=0.5)
    torch.nn.init.normal_(m.heads.head.bias, std=0.5)
    return m


def encoder_pad_mask():
    """The Encoder's padding mask for a batch of 2 sequences of 10 tokens."""
    mask = torch.zeros(2, 10, dtype=torch.bool)
    mask[1, 7:] = True  # the second sequence is padded after 7 tokens
    return mask


def models():
    """name: (constructor, inputs, input names, calibration inputs, layer
    targets). Calibration inputs come from the same generator as the inputs
    (same distribution, other values); layer targets override calibrate()'s
    output std of 1 for the layers whose name ends with the key."""
    g = torch.Generator().manual_seed(SEED)
    img = lambda n=1, s=64: torch.randn(n, 3, s, s, generator=g)
    mask = encoder_pad_mask()
    tv = torchvision.models
    # mobilenet_v3_small: the squeeze-excitation gates (fc2 -> Hardsigmoid)
    # and the classifier's Hardswish get inputs wide enough that both their
    # clamped and their linear branches run (checked by check_gates).
    mobilenet_targets = {"fc2": 3.0, "classifier.0": 2.0}
    return {
        "resnet18": (lambda: tv.resnet18(weights=None), (img(),), ["input"], (img(4),), {}),
        "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(weights=None), (img(),), ["input"], (img(4),),
                               mobilenet_targets),
        "squeezenet1_1": (lambda: tv.squeezenet1_1(weights=None), (img(),), ["input"], (img(4),), {}),
        "vit_small": (vit, (img(),), ["input"], (img(4),), {}),
        "transformer_encoder": (Encoder, (torch.randn(2, 10, 64, generator=g), mask), ["src", "pad_mask"],
                                (torch.randn(2, 10, 64, generator=g), mask), {}),
        "gpt_small": (GPT, (torch.randint(0, 100, (1, 16), generator=g),), ["tokens"],
                      (torch.randint(0, 100, (4, 16), generator=g),), {}),
    }


def calibrate(model, calib, targets):
    """Weights that keep activations at scale ~1 through every layer (LSUV,
    Mishkin and Matas 2015): each convolution and linear layer, in the order
    the forward pass reaches it, is rescaled so that its output on the
    calibration batch has std 1 (or its target); then every batch norm's
    running statistics are set from the calibration batch, so that in eval
    mode it normalizes as it would in training. Twice, since the statistics
    move what the later layers see."""
    layers = [(n, m) for n, m in model.named_modules() if isinstance(m, (torch.nn.Conv2d, torch.nn.Linear))]
    norms = [m for m in model.modules() if isinstance(m, torch.nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for _ in range(2):
            for name, layer in layers:
                seen = []
                hook = layer.register_forward_hook(lambda m, i, o: seen.append(o.std().item()))
                model(*calib)
                hook.remove()
                if not seen or not seen[0] > 0:
                    continue  # not reached by the forward pass (or constant): leave it
                target = next((t for k, t in targets.items() if name.endswith(k)), 1.0)
                layer.weight.mul_(target / seen[0])
                if layer.bias is not None:
                    layer.bias.mul_(target / seen[0])
            for bn in norms:
                bn.reset_running_stats()
                bn.momentum = None  # a cumulative average: exactly this batch's statistics
                bn.train()
            model(*calib)
            for bn in norms:
                bn.eval()


def check_gates(model, inputs):
    """Every Hardswish/Hardsigmoid must see inputs beyond +-3 (its clamped
    branches) and inside (its linear branch) on the test inputs; raises otherwise."""
    gates = [(n, m) for n, m in model.named_modules() if isinstance(m, (torch.nn.Hardswish, torch.nn.Hardsigmoid))]
    seen = {}
    hooks = [m.register_forward_hook(lambda m, i, o, n=n: seen.setdefault(n, []).append(i[0].abs()))
             for n, m in gates]
    with torch.no_grad():
        model(*inputs)
    for h in hooks:
        h.remove()
    for n, _ in gates:
        x = torch.cat([t.flatten() for t in seen.get(n, [])])
        if x.numel() == 0 or not (x >= 3).any() or not (x < 3).any():
            raise RuntimeError(f"{n}: its inputs never cross |x| = 3 both ways (max |x| "
                               f"{x.max().item() if x.numel() else 0:.3g}): a branch is never exercised")


def check_spread(expected):
    """Every reference output must vary: std >= MIN_SPREAD (bp-conformance refuses it otherwise)."""
    for k, y in enumerate(expected):
        if y.is_floating_point() and not y.std().item() >= MIN_SPREAD:
            raise RuntimeError(f"output {k} has a std of {y.std().item():.3g}, below MIN_SPREAD {MIN_SPREAD}: "
                               "its activations vanish")


def exporter_key():
    """What a cached export must match: this file and the torch versions."""
    with open(os.path.abspath(__file__), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    return f"{digest} torch {torch.__version__} torchvision {torchvision.__version__}"


def update_tolerance(d):
    """Writes the shared tolerance into the model's meta.json; also when cached."""
    meta_path = os.path.join(d, "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    if meta.get("rtol") != TOLERANCE["rtol"] or meta.get("atol") != TOLERANCE["atol"]:
        meta.update(TOLERANCE)
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=1)


def cached(d):
    """True when d holds a complete export made by this exporter."""
    meta_path = os.path.join(d, "meta.json")
    if not (os.path.exists(meta_path) and os.path.exists(os.path.join(d, "model.onnx"))):
        return False
    with open(meta_path) as f:
        return json.load(f).get("exporter") == exporter_key()


def export(name, make, inputs, input_names, calib, targets, out_dir):
    d = os.path.join(out_dir, name)
    if cached(d):
        update_tolerance(d)
        print(f"export_models: {name}: cached in {d}")
        return
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):  # an earlier exporter's files (inputs and outputs may differ in number)
        os.remove(os.path.join(d, old))
    torch.manual_seed(SEED)
    model = make().eval()
    calibrate(model, calib, targets)
    check_gates(model, inputs)
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    check_spread(expected)
    output_names = [f"output_{k}" for k in range(len(expected))]
    tmp = os.path.join(d, "model.onnx.tmp")
    torch.onnx.export(model, inputs, tmp, opset_version=OPSET, input_names=input_names,
                      output_names=output_names, do_constant_folding=True)
    for k, x in enumerate(inputs):
        np.save(os.path.join(d, f"input_{k}.npy"), x.numpy())
    for k, y in enumerate(expected):
        np.save(os.path.join(d, f"expected_{k}.npy"), y.numpy())
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump({"inputs": input_names, "outputs": output_names, "opset": OPSET, "seed": SEED,
                   "torch": torch.__version__, "torchvision": torchvision.__version__,
                   "exporter": exporter_key(), **TOLERANCE}, f, indent=1)
    # Last: model.onnx's presence (with the key) marks the export complete.
    os.replace(tmp, os.path.join(d, "model.onnx"))
    print(f"export_models: {name}: exported to {d}")


def export_all(tool, models_by_name, out, only=()):
    """Exports every model of models_by_name (models()'s layout) into out, or
    those named in only; reports each failure under tool's name. Returns the exit code."""
    torch.set_num_threads(2)
    os.makedirs(out, exist_ok=True)
    failed = False
    for name, (make, inputs, names, calib, targets) in models_by_name.items():
        if only and name not in only:
            continue
        try:
            export(name, make, inputs, names, calib, targets, out)
        except Exception as e:  # report every model, fail at the end
            print(f"{tool}: {name}: export failed: {e}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


def export_apart(tool, exporter_file, models_by_name, out):
    """export_all for an exporter kept apart from this file (export_recurrent.py,
    export_qdq.py), so that its models do not re-export the image models: their
    cache key hashes exporter_file and this file (whose export() writes the files)."""
    global exporter_key

    def key():
        h = hashlib.sha256()
        for path in (os.path.abspath(exporter_file), os.path.abspath(__file__)):
            with open(path, "rb") as f:
                h.update(f.read())
        return f"{h.hexdigest()[:16]} torch {torch.__version__} torchvision {torchvision.__version__}"

    exporter_key = key  # export() and cached() ask for the key of this exporter
    return export_all(tool, models_by_name, out)


def main():
    args = ARGS
    note = os.path.join(args.out, NOT_EXPORTED)
    if os.path.exists(note):
        os.remove(note)
    return export_all("export_models", models(), args.out, args.only)


if __name__ == "__main__":
    sys.exit(main())
