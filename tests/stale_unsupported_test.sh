#!/usr/bin/env bash
# An `unsupported:` expectation entry whose cell passes is stale (issue 23
# item 18): with --verify-expectations the cell runs, shows as P, names the
# entry and fails the run; a plain run leaves it unsupported ('u').
# Usage: stale_unsupported_test.sh BP_CONFORMANCE
set -u
bin=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
printf 'unsupported:\n  - op: neg\n    dtypes: [float32]\n    reason: "no negation unit"\n' >"$dir/cpu.yaml"
run=("$bin" --backend cpu --op neg --dtype float32 --group ops --no-progress --no-onnx --expectations "$dir/cpu.yaml")

"${run[@]}" --verify-expectations >"$out" 2>&1
rc=$?
[ $rc = 1 ] || fail "a stale unsupported entry exited $rc with --verify-expectations, expected 1"
grep -Eq '^neg +P ' "$out" || fail "the stale entry's cell is not P"
grep -q "UNEXPECTED PASS cpu cpu:0 neg float32: passes, but $dir/cpu.yaml:2 lists it as unsupported (no negation unit): remove the entry" "$out" ||
  fail "no line naming the stale entry"

"${run[@]}" >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "a plain run exited $rc, expected 0"
grep -Eq '^neg +u ' "$out" || fail "without --verify-expectations the cell is not u"
echo PASS
