#!/usr/bin/python3
"""Real models through `bp-run --bench` on cpu beside torch 1.13 eager.

For each model, the same nn.Module (same weights, same inputs) runs in torch
eager under torch.inference_mode() and, exported to ONNX, through
`bp-run MODEL --device cpu --bench N`. Rounds alternate the two: a round times
torch over N runs (after one warm-up run) and takes the median, then runs
bp-run --bench N (one warm-up run, then N; it prints the median). The table
gives the median over rounds of each side's median per-run time and the
median of the per-round ratios bp / torch (below 1: bp-run is faster).

Before timing, bp-run's outputs are checked against torch's (--expect, the
model's tolerance from export_models.py): a fast wrong answer is no result.

Threads: torch.set_num_threads(T) and OMP_NUM_THREADS=T for bp-run (T = 2
unless --threads). The load average is printed before and after.

Models (exported here, into MODELS_DIR, from export_models.py's seed and
opset; cached once exported):
  resnet18_b1   torchvision resnet18 (weights=None), input 1x3x224x224
  resnet18_b8   the same network, input 8x3x224x224
  transformer_encoder  export_models.py's Encoder (torch.nn.TransformerEncoder,
                2 layers, d_model 64, 4 heads, FFN 128, batch-first, padding
                mask), input 2x10x64; the model bp-run's tests run

With --profile, after the table: for each model, where bp-run's time goes,
by ONNX op type, from `bp-run --warmup 3 --trace` (one steady-state run,
the device synchronized after every node).

Usage (from the repository root, after building bp-run and backplane_cpu):
  /usr/bin/python3 bench/model_bench.py [--bp-run build/default/bin/bp-run]
      [--models-dir build/default/bench_models] [--rounds 7] [--threads 2]
      [--only NAME ...] [--profile]
Exit codes: 0 done, 1 bp-run failed or its outputs did not match torch's,
77 torch/torchvision missing.
"""
import argparse
import json
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

# name: (make the module, make the inputs from a generator, input names, runs per round)
MODELS = {
    "resnet18_b1": (lambda: torchvision.models.resnet18(weights=None),
                    lambda g: (torch.randn(1, 3, 224, 224, generator=g),), ["input"], 20),
    "resnet18_b8": (lambda: torchvision.models.resnet18(weights=None),
                    lambda g: (torch.randn(8, 3, 224, 224, generator=g),), ["input"], 5),
    "transformer_encoder": (em.Encoder, lambda g: (torch.randn(2, 10, 64, generator=g), em.encoder_pad_mask()),
                            ["src", "pad_mask"], 200),
}


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    root = os.path.join(HERE, "..")
    ap.add_argument("--bp-run", default=os.path.join(root, "build", "default", "bin", "bp-run"))
    ap.add_argument("--models-dir", default=os.path.join(root, "build", "default", "bench_models"))
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs-scale", type=float, default=1.0, help="multiply each model's runs per round")
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--profile", action="store_true", help="print bp-run's time by ONNX op type per model")
    return ap.parse_args()


def build(name):
    """The module in eval mode with the seed's weights, and its inputs."""
    make, make_inputs, input_names, runs = MODELS[name]
    torch.manual_seed(em.SEED)
    model = make().eval()
    inputs = make_inputs(torch.Generator().manual_seed(em.SEED))
    return model, inputs, input_names, runs


def export(name, model, inputs, input_names, out_dir):
    """model.onnx, input_<k>.npy and expected_<k>.npy in out_dir/name (kept when present)."""
    d = os.path.join(out_dir, name)
    onnx_path = os.path.join(d, "model.onnx")
    if not os.path.exists(onnx_path):
        os.makedirs(d, exist_ok=True)
        with torch.no_grad():
            out = model(*inputs)
        tmp = onnx_path + ".tmp"
        torch.onnx.export(model, inputs, tmp, opset_version=em.OPSET, input_names=input_names,
                          output_names=["output_0"], do_constant_folding=True)
        for k, x in enumerate(inputs):
            np.save(os.path.join(d, f"input_{k}.npy"), x.numpy())
        np.save(os.path.join(d, "expected_0.npy"), out.numpy())
        os.replace(tmp, onnx_path)
    return d


def bp_cmd(args, d, input_names):
    cmd = [args.bp_run, os.path.join(d, "model.onnx"), "--device", "cpu"]
    for k, n in enumerate(input_names):
        cmd += ["--input", f"{n}={os.path.join(d, f'input_{k}.npy')}"]
    return cmd


def bp_env(args):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(args.threads)
    return env


def check(args, name, d, input_names):
    """bp-run's output against torch's, within the tolerance export_models.py gives resnet18 / the encoder."""
    rtol, atol_scale = em.TOLERANCE["resnet18" if name.startswith("resnet18") else name]
    atol = atol_scale * float(np.abs(np.load(os.path.join(d, "expected_0.npy"))).max())
    cmd = bp_cmd(args, d, input_names) + ["--expect", f"output_0={os.path.join(d, 'expected_0.npy')}",
                                          "--expect-rtol", str(rtol), "--expect-atol", str(atol)]
    r = subprocess.run(cmd, env=bp_env(args), capture_output=True, text=True)
    line = next((ln.strip() for ln in r.stdout.splitlines() if "expect" in ln), r.stderr.strip())
    print(f"  check {name}: {line}")
    return r.returncode == 0


def torch_median(model, inputs, runs):
    with torch.inference_mode():
        model(*inputs)  # warm-up
        times = []
        for _ in range(runs):
            s = time.perf_counter()
            model(*inputs)
            times.append(time.perf_counter() - s)
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


def main():
    args = parse_args()
    torch.set_num_threads(args.threads)
    print(f"model_bench: torch {torch.__version__}, {args.threads} threads, {args.rounds} rounds, "
          f"load average before: {os.getloadavg()[0]:.2f}")
    rows = []
    ok = True
    for name in MODELS:
        if args.only and name not in args.only:
            continue
        model, inputs, input_names, runs = build(name)
        runs = max(1, int(runs * args.runs_scale))
        d = export(name, model, inputs, input_names, args.models_dir)
        if not check(args, name, d, input_names):
            ok = False
            continue
        t_torch, t_bp, ratios = [], [], []
        for _ in range(args.rounds):
            t = torch_median(model, inputs, runs)
            b = bp_median(args, d, input_names, runs)
            t_torch.append(t)
            t_bp.append(b)
            ratios.append(b / t)
        rows.append((name, runs, statistics.median(t_bp), statistics.median(t_torch), statistics.median(ratios),
                     min(ratios), max(ratios)))
        print(f"  {name}: bp {rows[-1][2] * 1e3:.2f} ms, torch {rows[-1][3] * 1e3:.2f} ms, ratio {rows[-1][4]:.2f}",
              flush=True)
    print(f"model_bench: load average after: {os.getloadavg()[0]:.2f}")
    print("\n| model | runs per round | bp-run ms | torch ms | bp / torch (median) | min - max over rounds |")
    print("|---|---|---|---|---|---|")
    for name, runs, b, t, r, lo, hi in rows:
        print(f"| {name} | {runs} | {b * 1e3:.2f} | {t * 1e3:.2f} | {r:.2f} | {lo:.2f} - {hi:.2f} |")
    if args.profile:
        for name in MODELS:
            if not args.only or name in args.only:
                profile(args, name, os.path.join(args.models_dir, name), MODELS[name][2])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
