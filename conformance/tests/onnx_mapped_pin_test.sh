#!/usr/bin/env bash
# The ONNX node-test corpus on cpu: how many tests are mapped, against the pin
# (conformance/tests/onnx_mapped_cpu.pin, which says how to update it). A
# mapping that throws NotMapped at run time only moves its test to "not
# mapped", which fails no run: this test fails on any change of the count.
# Exits 77 (skipped) without the corpus or ONNX support.
# Usage: onnx_mapped_pin_test.sh BP_CONFORMANCE PIN [CORPUS]
set -u
bin=$1 pin=$2 corpus=${3:-/usr/share/libonnx-testdata/data/node}
[ -d "$corpus/test_add" ] || { echo "SKIP: no ONNX node-test corpus at $corpus (libonnx-testdata)"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
"$bin" --backend cpu --op none --no-models --no-progress --onnx-node-tests "$corpus" >"$out" 2>&1
rc=$?
if grep -q 'built without ONNX support' "$out"; then echo "SKIP: built without ONNX support"; exit 77; fi
# The summary: "cpu:0: ONNX node tests: P of M mapped pass ..., N of T not mapped (...)".
line=$(grep -E '^cpu:0: ONNX node tests: ' "$out")
re='of ([0-9]+) mapped pass.*, [0-9]+ of ([0-9]+) not mapped'
[[ $line =~ $re ]] || { cat "$out"; fail "no 'cpu:0: ONNX node tests' summary line (exit $rc)"; }
mapped=${BASH_REMATCH[1]} total=${BASH_REMATCH[2]}
want_mapped=$(awk '$1 == "mapped" { print $2 }' "$pin")
want_total=$(awk '$1 == "total" { print $2 }' "$pin")
echo "$line"
echo "cpu: mapped $mapped of $total ONNX node tests; $pin: mapped $want_mapped of $want_total"
[ "$total" = "$want_total" ] || fail "the corpus has $total tests, the pin $want_total (another libonnx-testdata?): update $pin"
if [ "$mapped" != "$want_mapped" ]; then
  sed -n '/not mapped, by reason/,/^$/p' "$out"
  [ "$mapped" -lt "$want_mapped" ] &&
    fail "$((want_mapped - mapped)) fewer ONNX node tests mapped on cpu than pinned (a mapping now throws NotMapped?)"
  fail "$((mapped - want_mapped)) more ONNX node tests mapped on cpu than pinned: raise 'mapped' in $pin to $mapped"
fi
echo PASS
