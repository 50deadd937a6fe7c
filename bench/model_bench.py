#!/usr/bin/python3
"""Real models through `bp-run --bench` on cpu beside ONNX Runtime and torch eager.

For each model, the same nn.Module (same weights, same inputs) runs in torch
1.13 eager under torch.inference_mode(); exported to ONNX, it runs through
`bp-run MODEL --device cpu --bench N` and through ONNX Runtime's CPU execution
provider (PyPI's onnxruntime in the venv of requirements.txt, bench/ort_side.py:
graph optimization "all", one warm-up run, then N). Rounds interleave the three:
a round times torch over N runs (after one warm-up run) and takes the median,
then runs bp-run --bench N, then ort_side.py with N runs (each prints its median);
torch stops early (at least 3 runs) after TORCH_BUDGET_S, since its eager
depthwise convolutions take up to 30 times bp-run's time. The
table gives the median over rounds of each side's median per-run time, the
median of the per-round ratios bp-run / ORT (the headline; below 1: bp-run
is faster) and bp-run / torch, and a last row with the geometric means.

Weights: torchvision constructors with weights=None, then export_models.py's
calibrate() (LSUV: every conv/linear layer's output at std ~1, batch norm
statistics from a calibration batch), and a reference output that must vary
(export_models.check_spread). Before timing, bp-run's and ORT's outputs are
checked against torch's (export_models.TOLERANCE): a fast wrong answer is no
result. A model bp-run fails on or mismatches stays in the table with the
reason (e.g. an operator it lacks); ORT likewise.

ORT: the onnxruntime package (requirements.txt's pin) of the venv's interpreter
(--ort-python, default $BACKPLANE_VENV/bin/python, /opt/backplane/venv); without
it the script says why and leaves the ORT column out (the exit code does not change).

Threads: torch.set_num_threads(T); bp-run --threads T (and OMP_NUM_THREADS=T);
ORT intra_op_num_threads T, inter_op_num_threads 1 (T = 2 unless --threads). The
load average is printed before and after.

Models (exported here, into MODELS_DIR, opset export_models.OPSET; cached
once exported): see MODELS below; images are 1x3x224x224 unless the name says.

With --profile, after the table: for each model, where bp-run's time goes,
by ONNX op type, from `bp-run --warmup 3 --trace` (one steady-state run,
the device synchronized after every node).

Usage (from the repository root, after building bp-run and backplane_cpu):
  /usr/bin/python3 bench/model_bench.py [--bp-run build/default/bin/bp-run]
      [--models-dir build/default/bench_models] [--ort-python /opt/backplane/venv/bin/python] [--no-ort]
      [--rounds 7] [--threads 2] [--runs-scale 1.0] [--only NAME ...] [--profile]
Exit codes: 0 done, 1 bp-run failed or its outputs did not match torch's on
a model, 77 torch/torchvision missing.
"""
import argparse
import json
import math
import os
import re
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "frontends", "onnx", "tests"))
import export_models as em  # noqa: E402  (exits 77 without torch/torchvision)

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torchvision  # noqa: E402

import ort_side  # noqa: E402

# A change to the model set or its weights: bump, and every cached export is redone.
BENCH_KEY = "model_bench 2"
# Torch's side of a round stops after this many seconds (at least 3 runs).
TORCH_BUDGET_S = 0.5


class Recurrent(torch.nn.Module):
    """A 2-layer LSTM or GRU (64 features in, hidden 128, batch-first) and a linear head on every step."""

    def __init__(self, cell):
        super().__init__()
        self.rnn = cell(64, 128, num_layers=2, batch_first=True)
        self.head = torch.nn.Linear(128, 64)

    def forward(self, x):
        return self.head(self.rnn(x)[0])


class Segmentation(torch.nn.Module):
    """torchvision's segmentation model without its dict output: the "out" map."""

    def __init__(self, make):
        super().__init__()
        self.net = make(weights=None, weights_backbone=None)

    def forward(self, x):
        return self.net(x)["out"]


tv = torchvision.models


def image(s=224):
    return lambda g, n: (torch.randn(n, 3, s, s, generator=g),)


# name: (make the module, make n inputs from a generator, input names, runs per round)
# Runs per round: a round of the three sides stays below ~2 s on 2 cores.
MODELS = {
    "mobilenet_v2": (lambda: tv.mobilenet_v2(weights=None), image(), ["input"], 10),
    "mobilenet_v3_small": (lambda: tv.mobilenet_v3_small(weights=None), image(), ["input"], 20),
    "mobilenet_v3_large": (lambda: tv.mobilenet_v3_large(weights=None), image(), ["input"], 10),
    "efficientnet_b0": (lambda: tv.efficientnet_b0(weights=None), image(), ["input"], 5),
    "shufflenet_v2_x1_0": (lambda: tv.shufflenet_v2_x1_0(weights=None), image(), ["input"], 10),
    "squeezenet1_1": (lambda: tv.squeezenet1_1(weights=None), image(), ["input"], 10),
    "resnet18": (lambda: tv.resnet18(weights=None), image(), ["input"], 5),
    "resnet50": (lambda: tv.resnet50(weights=None), image(), ["input"], 2),
    "lraspp_mobilenet_v3_large_256": (lambda: Segmentation(tv.segmentation.lraspp_mobilenet_v3_large),
                                      image(256), ["input"], 5),
    "vit_small_64": (em.vit, image(64), ["input"], 40),
    "lstm_2x128_seq32": (lambda: Recurrent(torch.nn.LSTM),
                         lambda g, n: (torch.randn(n, 32, 64, generator=g),), ["x"], 20),
    "gru_2x128_seq32": (lambda: Recurrent(torch.nn.GRU),
                        lambda g, n: (torch.randn(n, 32, 64, generator=g),), ["x"], 20),
    "gpt_small": (em.GPT, lambda g, n: (torch.randint(0, 100, (n, 16), generator=g),), ["tokens"], 50),
    "transformer_encoder": (em.Encoder, lambda g, n: (torch.randn(2, 10, 64, generator=g), em.encoder_pad_mask()),
                            ["src", "pad_mask"], 50),
}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.join(HERE, "..")
    ap.add_argument("--bp-run", default=os.path.join(root, "build", "default", "bin", "bp-run"))
    ap.add_argument("--models-dir", default=os.path.join(root, "build", "default", "bench_models"))
    ap.add_argument("--ort-python", default=ort_side.DEFAULT_PYTHON,
                    help="the interpreter whose onnxruntime runs the ORT column (the requirements.txt venv)")
    ap.add_argument("--no-ort", action="store_true", help="leave the ONNX Runtime column out")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs-scale", type=float, default=1.0, help="multiply each model's runs per round")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--profile", action="store_true", help="print bp-run's time by ONNX op type per model")
    return ap.parse_args()


def build(name):
    """The module in eval mode, calibrated on a batch of 2 from another generator, and its inputs."""
    make, make_inputs, input_names, runs = MODELS[name]
    torch.manual_seed(em.SEED)
    model = make().eval()
    inputs = make_inputs(torch.Generator().manual_seed(em.SEED), 1)
    return model, inputs, input_names, runs, lambda: make_inputs(torch.Generator().manual_seed(em.SEED + 1), 2)


def export(name, model, inputs, input_names, calib, out_dir):
    """Calibrates model (in place) and writes model.onnx, input_<k>.npy, expected_0.npy and
    key.txt to out_dir/name, unless a complete export with this key is there; then loads
    the calibrated weights saved with it (weights.pt) so torch runs the same network."""
    d = os.path.join(out_dir, name)
    key = f"{BENCH_KEY}; {em.exporter_key()}"
    onnx_path, key_path, weights = (os.path.join(d, f) for f in ("model.onnx", "key.txt", "weights.pt"))
    if os.path.exists(onnx_path) and os.path.exists(key_path) and open(key_path).read() == key:
        model.load_state_dict(torch.load(weights))
        return d
    os.makedirs(d, exist_ok=True)
    for old in os.listdir(d):
        os.remove(os.path.join(d, old))
    print(f"  export {name}: calibrating", flush=True)
    em.calibrate(model, calib(), {})
    with torch.no_grad():
        out = model(*inputs)
    em.check_spread((out,))
    tmp = onnx_path + ".tmp"
    torch.onnx.export(model, inputs, tmp, opset_version=em.OPSET, input_names=input_names,
                      output_names=["output_0"], do_constant_folding=True)
    for k, x in enumerate(inputs):
        np.save(os.path.join(d, f"input_{k}.npy"), x.numpy())
    np.save(os.path.join(d, "expected_0.npy"), out.numpy())
    torch.save(model.state_dict(), weights)
    os.replace(tmp, onnx_path)
    with open(key_path, "w") as f:
        f.write(key)
    return d


def tolerance():
    return em.TOLERANCE["rtol"], em.TOLERANCE["atol"]


def bp_cmd(args, d, input_names):
    cmd = [args.bp_run, os.path.join(d, "model.onnx"), "--device", "cpu", "--threads", str(args.threads)]
    for k, n in enumerate(input_names):
        cmd += ["--input", f"{n}={os.path.join(d, f'input_{k}.npy')}"]
    return cmd


def bp_env(args):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(args.threads)
    return env


def check(args, name, d, input_names):
    """bp-run's output against torch's: (True, line) or (False, why)."""
    rtol, atol = tolerance()
    cmd = bp_cmd(args, d, input_names) + ["--expect", f"output_0={os.path.join(d, 'expected_0.npy')}",
                                          "--expect-rtol", str(rtol), "--expect-atol", str(atol)]
    r = subprocess.run(cmd, env=bp_env(args), capture_output=True, text=True)
    line = next((ln.strip() for ln in r.stdout.splitlines() if "expect" in ln), "")
    if r.returncode != 0:
        why = line or (r.stderr.strip().splitlines() or [f"exit code {r.returncode}"])[-1]
        unmapped = re.search(r"no mapping to Backplane operators for ONNX op '?([\w.]+)", r.stderr + r.stdout)
        line = f"unsupported (op {unmapped.group(1)})" if unmapped and r.returncode == 2 else why
    print(f"  check {name}: bp-run: {line}", flush=True)
    return r.returncode == 0, line


def torch_median(model, inputs, runs):
    with torch.inference_mode():
        model(*inputs)  # warm-up
        times = []
        for _ in range(runs):
            s = time.perf_counter()
            model(*inputs)
            times.append(time.perf_counter() - s)
            if len(times) >= 3 and sum(times) > TORCH_BUDGET_S:
                break  # torch eager's depthwise convs are slow: fewer runs, same median
    return statistics.median(times)


def bp_median(args, d, input_names, runs):
    r = subprocess.run(bp_cmd(args, d, input_names) + ["--bench", str(runs)], env=bp_env(args),
                       capture_output=True, text=True)
    m = re.search(r"bench: \d+ runs on \S+: median ([0-9.]+) ms", r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"bp-run --bench failed ({r.returncode}): {r.stderr.strip() or r.stdout.strip()}")
    return float(m.group(1)) / 1e3


def profile(args, name, d, input_names):
    """bp-run's time by ONNX op type in one steady-state run (--warmup 3 --trace)."""
    trace = os.path.join(d, "trace.json")
    r = subprocess.run(bp_cmd(args, d, input_names) + ["--warmup", "3", "--trace", trace], env=bp_env(args),
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"  profile {name}: bp-run failed: {r.stderr.strip()}")
        return
    with open(trace) as f:
        events = json.load(f)
    events = events["traceEvents"] if isinstance(events, dict) else events
    by_op, count = {}, {}
    for e in events:
        if e.get("ph") == "X":
            by_op[e["name"]] = by_op.get(e["name"], 0.0) + e["dur"]
            count[e["name"]] = count.get(e["name"], 0) + 1
    total = sum(by_op.values())
    print(f"\n{name}: {sum(count.values())} nodes, {total / 1e3:.2f} ms in one traced run")
    print("| ONNX op | nodes | ms | share |")
    print("|---|---|---|---|")
    for op, us in sorted(by_op.items(), key=lambda kv: -kv[1]):
        print(f"| {op} | {count[op]} | {us / 1e3:.3f} | {100 * us / total:.1f}% |")


def bench_model(args, ort_python, name):
    """One model's row: interleaved rounds of torch, bp-run and ORT (the sides that work)."""
    model, inputs, input_names, runs, calib = build(name)
    runs = max(1, int(runs * args.runs_scale))
    d = export(name, model, inputs, input_names, calib, args.models_dir)
    bp_ok, bp_why = check(args, name, d, input_names)
    ort_why = "no ORT" if ort_python is None else ""
    t = {"torch": [], "bp": [], "ort": []}
    for _ in range(args.rounds):
        t["torch"].append(torch_median(model, inputs, runs))
        if bp_ok:
            try:
                t["bp"].append(bp_median(args, d, input_names, runs))
            except RuntimeError as e:
                bp_ok, bp_why = False, str(e).splitlines()[0]
        if not ort_why:
            try:
                t["ort"].append(ort_side.run(ort_python, d, input_names, runs, args.threads, *tolerance()))
            except RuntimeError as e:
                ort_why = f"failed: {e}"
                print(f"  {name}: ORT {ort_why}", flush=True)
    n = args.rounds
    row = {"name": name, "runs": runs, "bp_ok": bp_ok, "bp_why": bp_why, "ort_why": ort_why,
           "torch": statistics.median(t["torch"])}
    if bp_ok:
        row["bp"] = statistics.median(t["bp"])
        row["bp_torch"] = statistics.median([b / x for b, x in zip(t["bp"], t["torch"])])
    if not ort_why:
        row["ort"] = statistics.median(t["ort"])
    if bp_ok and not ort_why:
        ratios = [b / o for b, o in zip(t["bp"], t["ort"])]
        row["bp_ort"], row["lo"], row["hi"] = statistics.median(ratios), min(ratios), max(ratios)
    ms = lambda k: f"{row[k] * 1e3:.2f} ms" if k in row else "-"
    print(f"  {name}: {n} rounds x {runs} runs: bp {ms('bp')}, ORT {ms('ort')}, torch {ms('torch')}, "
          f"bp/ORT {row.get('bp_ort', float('nan')):.2f}, bp/torch {row.get('bp_torch', float('nan')):.2f}",
          flush=True)
    return row


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def print_table(rows, with_ort):
    f = lambda r, k: f"{r[k] * 1e3:.2f}" if k in r else "-"
    print("\n| model | runs per round | bp-run ms | ORT ms | torch ms | **bp-run / ORT** (min - max) | bp-run / torch |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        bp = f(r, "bp") if r["bp_ok"] else f"bp-run: {r['bp_why']}"
        ort = f(r, "ort") if "ort" in r else ("-" if not with_ort else f"ORT: {r['ort_why']}")
        ratio = f"**{r['bp_ort']:.2f}** ({r['lo']:.2f} - {r['hi']:.2f})" if "bp_ort" in r else "-"
        bt = f"{r['bp_torch']:.2f}" if "bp_torch" in r else "-"
        print(f"| {r['name']} | {r['runs']} | {bp} | {ort} | {f(r, 'torch')} | {ratio} | {bt} |")
    bo = [r["bp_ort"] for r in rows if "bp_ort" in r]
    bt = [r["bp_torch"] for r in rows if "bp_torch" in r]
    g = lambda xs: f"{geomean(xs):.2f} over {len(xs)}" if xs else "-"
    print(f"| geometric mean | | | | | **{g(bo)}** | {g(bt)} |")


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    ort_python = None if args.no_ort else ort_side.setup(args.ort_python)
    print(f"model_bench: torch {torch.__version__}, {args.threads} threads, {args.rounds} rounds, "
          f"load average before: {os.getloadavg()[0]:.2f}", flush=True)
    names = [n for n in MODELS if not args.only or n in args.only]
    rows = []
    for name in names:
        try:
            rows.append(bench_model(args, ort_python, name))
        except Exception as e:  # an export that fails: reported, the rest goes on
            print(f"  {name}: failed: {e}", flush=True)
            rows.append({"name": name, "runs": "-", "bp_ok": False, "bp_why": f"not benchmarked ({e})",
                         "ort_why": "-", "torch": None})
            rows[-1].pop("torch")
    print(f"model_bench: load average after: {os.getloadavg()[0]:.2f}")
    print_table(rows, ort_python is not None)
    if args.profile:
        for name in names:
            profile(args, name, os.path.join(args.models_dir, name), MODELS[name][2])
    return 0 if all(r["bp_ok"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
