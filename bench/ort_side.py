"""ONNX Runtime's side of bench/model_bench.py: onnxruntime-node from npm,
installed into the build tree on first use, and bench/ort_run.js to run a model.

setup(ort_dir) installs `onnxruntime-node@ORT_VERSION` under ort_dir (npm
install --no-save --ignore-scripts: the package bundles ORT's CPU library; its
install script only fetches the CUDA/TensorRT providers, not needed here) unless
it is there already, and returns the NODE_PATH to run with, or None after
printing why (no node/npm, no network): the bench then leaves the ORT column out.
Nothing here is needed by the tests.
"""
import json
import os
import shutil
import subprocess

ORT_VERSION = "1.30.0"
HERE = os.path.dirname(os.path.abspath(__file__))
RUNNER = os.path.join(HERE, "ort_run.js")


def installed_version(node_path):
    try:
        with open(os.path.join(node_path, "onnxruntime-node", "package.json")) as f:
            return json.load(f).get("version")
    except (OSError, ValueError):
        return None


def setup(ort_dir):
    """NODE_PATH holding onnxruntime-node ORT_VERSION, or None (why printed)."""
    node_path = os.path.join(ort_dir, "node_modules")
    if not shutil.which("node"):
        print("model_bench: no ORT column: `node` not found (install nodejs and npm)")
        return None
    if installed_version(node_path) != ORT_VERSION:
        if not shutil.which("npm"):
            print("model_bench: no ORT column: `npm` not found (install npm)")
            return None
        print(f"model_bench: installing onnxruntime-node@{ORT_VERSION} into {ort_dir} (once)", flush=True)
        os.makedirs(ort_dir, exist_ok=True)
        cmd = ["npm", "install", "--no-save", "--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error",
               "--prefix", ort_dir, f"onnxruntime-node@{ORT_VERSION}"]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            lines = [ln for ln in r.stderr.strip().splitlines() if "complete log" not in ln]
            why = " / ".join(lines[:2] or [f"exit code {r.returncode}"]) if r.returncode else ""
        except subprocess.TimeoutExpired:
            why = "npm install timed out after 600 s"
        if why or installed_version(node_path) != ORT_VERSION:
            print(f"model_bench: no ORT column: npm install onnxruntime-node@{ORT_VERSION} failed "
                  f"(no network?): {why or 'package not found after install'}")
            return None
    r = subprocess.run(["node", "-e", "console.log(require('onnxruntime-node').env.versions.common)"],
                       env=dict(os.environ, NODE_PATH=node_path), capture_output=True, text=True)
    if r.returncode != 0:
        print(f"model_bench: no ORT column: onnxruntime-node does not load: "
              f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")
        return None
    print(f"model_bench: ONNX Runtime {r.stdout.strip()} (onnxruntime-node, CPU execution provider)")
    return node_path


def run(node_path, d, input_names, runs, threads, rtol, atol):
    """Median seconds per run of d/model.onnx under ORT (after one warm-up run whose
    output_0 must match d/expected_0.npy); raises RuntimeError on an error or mismatch."""
    spec = {"model": os.path.join(d, "model.onnx"), "output": "output_0",
            "inputs": {n: os.path.join(d, f"input_{k}.npy") for k, n in enumerate(input_names)},
            "expect": os.path.join(d, "expected_0.npy"), "rtol": rtol, "atol": atol, "runs": runs,
            "threads": threads}
    r = subprocess.run(["node", RUNNER, json.dumps(spec)], env=dict(os.environ, NODE_PATH=node_path),
                       capture_output=True, text=True)
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise RuntimeError(f"ort_run.js failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    if r.returncode != 0 or not out.get("ok"):
        err = out.get("error", "?")
        if isinstance(out.get("max_abs_err"), (int, float)):
            err += f" (max |err| {out['max_abs_err']:.3g})"
        raise RuntimeError(err)
    return None if out["median_ms"] is None else out["median_ms"] / 1e3
