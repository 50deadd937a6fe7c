#!/usr/bin/env bash
# bp-conformance --group collectives on one backend, 2 and 4 ranks.
#   pass: exits 0 with "collectives group N pass, 0 fail" in the verdict line
#         and ENGINE as the engine (exit 77, skipped, when the backend has no device)
#   fail: exits 1 and a failure line matches REGEX (vendor_sim's wrong all_reduce)
# Usage: collectives_group_test.sh BP_CONFORMANCE BACKEND pass ENGINE | fail REGEX
# BP_COLLECTIVES_TIMEOUT_MS sets each communicator's timeout (bp-conformance's
# default: 3000 ms); the sanitizer test presets raise it, where four ranks of
# an instrumented build on two cores can take longer than that to meet.
set -u
bin=$1 backend=$2 expect=$3 arg=${4:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout=()
[ -n "${BP_COLLECTIVES_TIMEOUT_MS:-}" ] && timeout=(--collectives-timeout-ms "$BP_COLLECTIVES_TIMEOUT_MS")
"$bin" --backend "$backend" --group collectives --no-progress "${timeout[@]}" >"$out" 2>&1
rc=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
if grep -Eq '^== [a-z_0-9]+: no device' "$out" || ! grep -q 'W=2' "$out"; then
  echo "SKIP: $backend has no device here"
  exit 77
fi
case $expect in
  pass)
    [ $rc = 0 ] || fail "exit $rc, expected 0"
    grep -Eq ': CONFORMANT: collectives group [1-9][0-9]* pass, 0 fail \(2,4 ranks\)' "$out" ||
      fail "no 'collectives group N pass, 0 fail (2,4 ranks)' verdict"
    [ "$(grep -c "(engine $arg)" "$out")" = 2 ] || fail "expected engine $arg for 2 and 4 ranks"
    ;;
  fail)
    [ $rc = 1 ] || fail "exit $rc with a wrong plugin, expected 1"
    grep -q 'NOT CONFORMANT: collectives group' "$out" || fail "the verdict does not say NOT CONFORMANT"
    grep -Eq "FAIL .*$arg" "$out" || fail "no failure line matching '$arg'"
    ;;
esac
echo "collectives group: $expect as expected"
