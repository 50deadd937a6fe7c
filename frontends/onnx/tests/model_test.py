#!/usr/bin/python3
"""Runs bp-run on one exported model on one device and compares every output
with torch's (export_models.py) within the model's documented tolerance.

Usage: model_test.py BP_RUN MODELS_DIR MODEL DEVICE
Exit codes: 0 match, 1 mismatch or bp-run failed, 77 skipped (reason printed:
model not exported because torch is missing, or no such device here while
BACKPLANE_EXPECT_BACKENDS does not name its backend; named, that fails).
"""
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "tests"))
from expected_backends import expected  # noqa: E402  (tests/expected_backends.py)


def main():
    bp_run, models_dir, model, device = sys.argv[1:5]
    d = os.path.join(models_dir, model)
    meta_path = os.path.join(d, "meta.json")
    if not os.path.exists(meta_path):
        print(f"SKIP: {model} was not exported to {d} (python3-torch/python3-torchvision missing? see onnx_models_export)")
        return 77
    meta = json.load(open(meta_path))
    # The model's tolerance, written by export_models.py (bp-conformance's
    # models group reads the same two numbers).
    rtol, atol = meta["rtol"], meta["atol"]
    cmd = [bp_run, os.path.join(d, "model.onnx"), "--device", device, "--expect-rtol", str(rtol),
           "--expect-atol", str(atol)]
    for k, name in enumerate(meta["inputs"]):
        cmd += ["--input", f"{name}={os.path.join(d, f'input_{k}.npy')}"]
    for k, name in enumerate(meta["outputs"]):
        cmd += ["--expect", f"{name}={os.path.join(d, f'expected_{k}.npy')}"]
    print("+ " + " ".join(cmd), flush=True)
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    print(r.stdout)
    if r.returncode == 2 and "--device" in r.stdout:
        backend = device.split(":")[0]
        if expected(backend):
            print(f"FAIL: no device {device} here; BACKPLANE_EXPECT_BACKENDS names {backend}, so this fails")
            return 1
        print(f"SKIP: no device {device} here")
        return 77
    return 0 if r.returncode == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
