#!/usr/bin/env bash
# bp-conformance with BACKPLANE_EXPECT_BACKENDS naming a backend the machine
# lacks fails (exit 1) with a line naming it; with only present backends the
# same run passes. Issue 23 item 15: a vanished device must not leave CI green.
# Usage: expect_backends_test.sh BP_CONFORMANCE PLUGIN_DIR
set -u
bin=$1
export BACKPLANE_PLUGIN_PATH=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
run=("$bin" --op none --group ops --no-onnx --no-models --no-progress)

BACKPLANE_EXPECT_BACKENDS=cpu,no_such_backend "${run[@]}" >"$out" 2>&1
rc=$?
[ $rc = 1 ] || fail "exit $rc with an expected backend missing, expected 1"
grep -q "^  no_such_backend: expected (BACKPLANE_EXPECT_BACKENDS), but no such backend was loaded" "$out" ||
  fail "no line naming the missing backend"
grep -q "cpu: expected" "$out" && fail "cpu is present, yet reported missing"

BACKPLANE_EXPECT_BACKENDS=cpu "${run[@]}" >"$out" 2>&1
rc=$?
[ $rc = 0 ] || fail "exit $rc with every expected backend present, expected 0"
echo PASS
