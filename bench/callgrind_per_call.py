#!/usr/bin/env python3
"""Instructions per call of one function in a callgrind profile.

Sums, over every call site of FUNCTION (default bp_op_call), the inclusive
instruction count and the call count recorded by callgrind, and prints their
ratio. Used for docs/benchmarks.md ("Dispatch overhead"):

  valgrind --tool=callgrind --callgrind-out-file=/tmp/cg.out \\
    build/default/bin/bp_bench_dispatch --benchmark_filter=BM_AddOut1Element --benchmark_min_time=0.3
  python3 bench/callgrind_per_call.py /tmp/cg.out [FUNCTION]
"""
import re
import sys


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    target = sys.argv[2] if len(sys.argv) > 2 else "bp_op_call"
    names = {}  # callgrind's name compression: "(id) name" once, "(id)" after

    def name(spec: str) -> str:
        m = re.match(r"\((\d+)\)(?: (.*))?", spec)
        if not m:
            return spec
        if m.group(2):
            names[m.group(1)] = m.group(2)
        return names.get(m.group(1), "?")

    calls = cost = 0
    lines = open(sys.argv[1]).read().split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("fn="):
            name(line[3:])
        elif line.startswith("cfn=") and name(line[4:]) == target:
            # cfn= is followed by calls=<count> <target position> and the call's inclusive cost line.
            calls += int(lines[i + 1].split()[0][len("calls="):])
            cost += int(lines[i + 2].split()[-1])
            i += 2
        i += 1
    if calls == 0:
        print(f"{target}: no calls recorded")
        return 1
    print(f"{target}: calls={calls} instructions/call={cost / calls:.0f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
