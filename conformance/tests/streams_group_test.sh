#!/usr/bin/env bash
# bp-conformance --group streams on one backend (the environment picks the
# device's mode: BP_VENDOR_SIM_ASYNC, BP_VENDOR_SIM_KERNEL_US,
# BP_VENDOR_SIM_BROKEN).
#   pass: exits 0 with a "streams group N pass" part in the verdict line, N > 0
#         (exit 77, skipped, when the backend has no device here)
#   fail: exits 1, and the failure message matches REGEX (the ordering the
#         broken device violates)
# Usage: streams_group_test.sh BP_CONFORMANCE BACKEND pass|fail [REGEX]
set -u
bin=$1 backend=$2 expect=$3 regex=${4:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" --backend "$backend" --group streams --no-onnx --no-models --no-progress --max-failures -1 >"$out" 2>&1
rc=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
if grep -Eq '^== [a-z_0-9]+: no device' "$out"; then
  echo "SKIP: $backend has no device here"
  exit 77
fi
case $expect in
  pass)
    [ $rc = 0 ] || fail "exit $rc, expected 0"
    grep -Eq 'CONFORMANT: .*; streams group [1-9][0-9]* pass, [0-9]+ skipped' "$out" ||
      fail "no 'streams group N pass, M skipped' part in the verdict line"
    ;;
  fail)
    [ $rc = 1 ] || fail "exit $rc with a broken device, expected 1"
    grep -q 'NOT CONFORMANT: .*streams-group failures' "$out" || fail "the verdict does not count streams-group failures"
    grep -Eq "$regex" "$out" || fail "no failure message naming the violated ordering (/$regex/)"
    ;;
  *) fail "unknown expectation '$expect'" ;;
esac
echo PASS
