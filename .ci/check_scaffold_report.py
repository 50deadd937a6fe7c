#!/usr/bin/python3
"""Checks a scaffolded plugin's conformance reports (bp-conformance --json):
its one kernel (neg, float32) ran natively, every other cell passed through
the fallback (or the core, for views) or had only rejected inputs.
Usage: check_scaffold_report.py REPORT.json ...   (exit 1 on a mismatch)"""
import json
import sys

for path in sys.argv[1:]:
    dev = json.load(open(path))["devices"][0]
    cells = [(op, dt, c["outcome"]) for op, row in dev["cells"].items() for dt, c in row.items()]
    kernel = sorted({(c["op"], c["dtype"]) for c in dev["cases"] if c.get("path") == "native"})
    bad = [c for c in cells if c[2] not in ("native_pass", "fallback_pass", "core_pass", "not_reached")]
    print(f"{path}: native kernel ran for {kernel}; "
          f"{sum(o == 'fallback_pass' for _, _, o in cells)} cells via fallback; failures: {bad}")
    ok = (dev["cells"]["neg"]["float32"]["outcome"] == "native_pass"
          and dev["cells"]["neg"]["float64"]["outcome"] == "fallback_pass"
          and kernel and all(op.startswith("neg") and dt == "float32" for op, dt in kernel) and not bad)
    if not ok:
        sys.exit(1)
