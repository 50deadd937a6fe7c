#!/usr/bin/python3
"""Exports the real networks bp-run is tested on, with torch's own outputs.

Debian's python3-torch 1.13 and python3-torchvision 0.14; nothing is
downloaded: torchvision's constructors run with weights=None and every
weight comes from torch.manual_seed. Each model goes to OUT/<name>/:
model.onnx, input_<k>.npy (fixed inputs), expected_<k>.npy (torch's eager
outputs for them, in eval mode under torch.no_grad) and meta.json (input and
output names, and the model's tolerance: rtol and atol from TOLERANCE below).
A model whose files are all present is not exported again (cached); its
meta.json's tolerance is brought up to date.

When torch or torchvision cannot be imported, OUT/NOT_EXPORTED.txt says why
(bp-conformance's models group prints it) and the exit code is 77.

Usage: export_models.py OUT [--only NAME ...]
Exit codes: 0 done, 77 torch/torchvision missing (the tests skip), 1 an export failed.
"""
import argparse
import json
import math
import os
import sys

OPSET = 14
SEED = 1234
NOT_EXPORTED = "NOT_EXPORTED.txt"

# The one place each model's tolerance is set; meta.json carries it (rtol,
# atol) to its readers (model_test.py, bp-conformance's models group). An
# output matches when |bp - torch| <= atol + rtol * |torch| elementwise, with
# atol = atol_scale * max|torch output| (float32 all through; random weights
# from a fixed seed). The absolute part follows the output's scale because
# random-weight networks differ wildly in it (mobilenet_v3_small's logits are
# ~1e-9, resnet18's ~1). Why each is what it is:
TOLERANCE = {  # name: (rtol, atol_scale)
    # 20 convolutions deep with batch norm folded by the exporter; sums of up
    # to 4608 products reorder between torch's oneDNN and Backplane's kernels.
    "resnet18": (1e-3, 1e-4),
    # hardswish/hardsigmoid and squeeze-excitation; depthwise convolutions.
    "mobilenet_v3_small": (1e-3, 1e-4),
    "squeezenet1_1": (1e-3, 1e-4),
    # softmax attention and layer norm, 4 layers; GELU through erf.
    "vit_small": (1e-3, 1e-4),
    "transformer_encoder": (1e-3, 1e-4),
    "gpt_small": (1e-3, 1e-4),
}


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
    g = torch.Generator().manual_seed(SEED)
    img = lambda n=1, s=64: torch.randn(n, 3, s, s, generator=g)
    mask = encoder_pad_mask()
    tv = torchvision.models
    return {
        "resnet18": (lambda: tv.resnet18(weights=None), (img(),), ["input"]),
        "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(weights=None), (img(),), ["input"]),
        "squeezenet1_1": (lambda: tv.squeezenet1_1(weights=None), (img(),), ["input"]),
        "vit_small": (vit, (img(),), ["input"]),
        "transformer_encoder": (Encoder, (torch.randn(2, 10, 64, generator=g), mask), ["src", "pad_mask"]),
        "gpt_small": (GPT, (torch.randint(0, 100, (1, 16), generator=g),), ["tokens"]),
    }


def update_tolerance(name, d):
    """Writes the model's tolerance (TOLERANCE, atol scaled by torch's largest
    output) into its meta.json; also when cached, so a change here reaches it."""
    meta_path = os.path.join(d, "meta.json")
    with open(meta_path) as f:
        meta = json.load(f)
    rtol, atol_scale = TOLERANCE[name]
    scale = max(float(np.abs(np.load(os.path.join(d, f"expected_{k}.npy"))).max())
                for k in range(len(meta["outputs"])))
    if meta.get("rtol") != rtol or meta.get("atol") != atol_scale * scale:
        meta.update(rtol=rtol, atol=atol_scale * scale)
        with open(meta_path, "w") as f:
            json.dump(meta, f, indent=1)


def export(name, make, inputs, input_names, out_dir):
    d = os.path.join(out_dir, name)
    meta_path = os.path.join(d, "meta.json")
    if os.path.exists(meta_path) and os.path.exists(os.path.join(d, "model.onnx")):
        update_tolerance(name, d)
        print(f"export_models: {name}: cached in {d}")
        return
    os.makedirs(d, exist_ok=True)
    torch.manual_seed(SEED)
    model = make().eval()
    with torch.no_grad():
        expected = model(*inputs)
    expected = expected if isinstance(expected, (tuple, list)) else (expected,)
    output_names = [f"output_{k}" for k in range(len(expected))]
    tmp = os.path.join(d, "model.onnx.tmp")
    torch.onnx.export(model, inputs, tmp, opset_version=OPSET, input_names=input_names,
                      output_names=output_names, do_constant_folding=True)
    for k, x in enumerate(inputs):
        np.save(os.path.join(d, f"input_{k}.npy"), x.numpy())
    for k, y in enumerate(expected):
        np.save(os.path.join(d, f"expected_{k}.npy"), y.numpy())
    os.replace(tmp, os.path.join(d, "model.onnx"))
    with open(meta_path, "w") as f:
        json.dump({"inputs": input_names, "outputs": output_names, "opset": OPSET, "seed": SEED,
                   "torch": torch.__version__, "torchvision": torchvision.__version__}, f, indent=1)
    update_tolerance(name, d)
    print(f"export_models: {name}: exported to {d}")


def main():
    args = ARGS
    torch.set_num_threads(2)
    os.makedirs(args.out, exist_ok=True)
    note = os.path.join(args.out, NOT_EXPORTED)
    if os.path.exists(note):
        os.remove(note)
    failed = False
    for name, (make, inputs, names) in models().items():
        if args.only and name not in args.only:
            continue
        try:
            export(name, make, inputs, names, args.out)
        except Exception as e:  # report every model, fail at the end
            print(f"export_models: {name}: export failed: {e}", file=sys.stderr)
            failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
