"""ONNX Runtime's side of bench/model_bench.py: PyPI's `onnxruntime` (CPU
execution provider) in the Python venv of requirements.txt.

model_bench.py runs under /usr/bin/python3 (torch 1.13 exports the models);
ORT lives in the venv, so each round runs this file as a script under the
venv's interpreter, one process per round as for bp-run: it makes the session,
runs once (the check), then times N runs and prints one JSON line.

setup(python) returns the interpreter to run with, or None after printing why
(no venv, onnxruntime missing): the bench then leaves the ORT column out.
Nothing here is needed by the tests.

As a script: VENV_PYTHON bench/ort_side.py SPEC, SPEC a JSON object
  {"model": "model.onnx", "inputs": {"name": "x.npy", ...}, "expect": "expected_0.npy",
   "output": "output_0", "rtol": 1e-3, "atol": 1e-4, "runs": 20, "threads": 2}
The session: CPU EP, intra_op_num_threads = threads, inter_op_num_threads 1,
sequential execution, graph optimization ORT_ENABLE_ALL. The warm-up run's
output must match SPEC.expect elementwise (|ort - expected| <= atol + rtol *
|expected|). Prints {"ok", "median_ms", "min_ms", "max_abs_err", "bad", "error"};
exit codes: 0 ran and matched, 1 mismatch or ORT error, 2 bad SPEC.
"""
import json
import os
import subprocess
import sys

HERE = os.path.abspath(__file__)
DEFAULT_PYTHON = os.path.join(os.environ.get("BACKPLANE_VENV", "/opt/backplane/venv"), "bin", "python")


def setup(python):
    """The interpreter whose onnxruntime loads, or None (why printed)."""
    if not os.access(python, os.X_OK):
        print(f"model_bench: no ORT column: {python} not found (the venv of requirements.txt: .ci/deps.sh)")
        return None
    r = subprocess.run([python, "-c", "import onnxruntime as o; print(o.__version__, o.get_device())"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        print(f"model_bench: no ORT column: onnxruntime does not load in {python}: "
              f"{(r.stderr.strip().splitlines() or ['?'])[-1]}")
        return None
    print(f"model_bench: ONNX Runtime {r.stdout.split()[0]} (PyPI onnxruntime in {python}, CPU execution provider)")
    return python


def run(python, d, input_names, runs, threads, rtol, atol):
    """Median seconds per run of d/model.onnx under ORT (after one warm-up run whose
    output_0 must match d/expected_0.npy); raises RuntimeError on an error or mismatch."""
    spec = {"model": os.path.join(d, "model.onnx"), "output": "output_0",
            "inputs": {n: os.path.join(d, f"input_{k}.npy") for k, n in enumerate(input_names)},
            "expect": os.path.join(d, "expected_0.npy"), "rtol": rtol, "atol": atol, "runs": runs,
            "threads": threads}
    r = subprocess.run([python, HERE, json.dumps(spec)], capture_output=True, text=True)
    try:
        out = json.loads(r.stdout.strip().splitlines()[-1])
    except (IndexError, ValueError):
        raise RuntimeError(f"ort_side.py failed ({r.returncode}): {r.stderr.strip()[-300:]}")
    if r.returncode != 0 or not out.get("ok"):
        err = out.get("error", "?")
        if isinstance(out.get("max_abs_err"), (int, float)):
            err += f" (max |err| {out['max_abs_err']:.3g})"
        raise RuntimeError(err)
    return None if out["median_ms"] is None else out["median_ms"] / 1e3


def _main(argv):
    import statistics
    import time

    import numpy as np
    import onnxruntime as ort

    try:
        spec = json.loads(argv[1])
    except (IndexError, ValueError) as e:
        print(json.dumps({"ok": False, "error": f"bad SPEC: {e}"}))
        return 2
    try:
        so = ort.SessionOptions()
        so.intra_op_num_threads = spec["threads"]
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(spec["model"], so, providers=["CPUExecutionProvider"])
        feeds = {n: np.load(p) for n, p in spec["inputs"].items()}
        got = sess.run([spec["output"]], feeds)[0]  # warm-up, and the check
        want = np.load(spec["expect"])
        if got.size != want.size:
            print(json.dumps({"ok": False, "bad": -1, "error": f"output has {got.size} elements, expected {want.size}"}))
            return 1
        g, w = got.astype(np.float64).ravel(), want.astype(np.float64).ravel()
        err = np.abs(g - w)
        bad = int(np.count_nonzero(~(err <= spec["atol"] + spec["rtol"] * np.abs(w))))  # NaN counts as bad
        max_err = float("nan") if np.isnan(err).any() else float(err.max(initial=0.0))
        if bad:
            print(json.dumps({"ok": False, "max_abs_err": max_err, "bad": bad,
                              "error": f"{bad} of {w.size} elements beyond tolerance"}))
            return 1
        times = []
        for _ in range(spec["runs"]):
            s = time.perf_counter()
            sess.run(None, feeds)  # every output, as bp-run --bench makes
            times.append((time.perf_counter() - s) * 1e3)
    except Exception as e:  # an ORT error: one line, as the caller reports it
        print(json.dumps({"ok": False, "error": str(e).splitlines()[0] if str(e) else type(e).__name__}))
        return 1
    print(json.dumps({"ok": True, "median_ms": statistics.median(times) if times else None,
                      "min_ms": min(times) if times else None, "max_abs_err": max_err, "bad": 0}))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
