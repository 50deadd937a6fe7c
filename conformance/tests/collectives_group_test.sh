#!/usr/bin/env bash
# bp-conformance --group collectives on one backend, 2 and 4 ranks.
#   pass: exits 0 with "collectives group N pass, 0 fail" in the verdict line
#         and ENGINE as the engine
#   skip: exit 77 only when the backend loaded and says it has no device, and
#         BACKPLANE_EXPECT_BACKENDS does not name it (then it fails); a crash,
#         a failed load or a refused option fails in either mode
#   fail: exits 1 and a failure line matches REGEX (vendor_sim's wrong all_reduce)
# Usage: collectives_group_test.sh BP_CONFORMANCE BACKEND pass ENGINE | fail REGEX
# BP_COLLECTIVES_TIMEOUT_MS sets each communicator's timeout (bp-conformance's
# default: 3000 ms); the sanitizer test presets raise it, where four ranks of
# an instrumented build on two cores can take longer than that to meet.
set -u
. "$(dirname "$0")/../../tests/expected_backends.sh"
bin=$1 backend=$2 expect=$3 arg=${4:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
timeout=()
[ -n "${BP_COLLECTIVES_TIMEOUT_MS:-}" ] && timeout=(--collectives-timeout-ms "$BP_COLLECTIVES_TIMEOUT_MS")
"$bin" --backend "$backend" --group collectives --no-progress "${timeout[@]}" >"$out" 2>&1
rc=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
name=$(bp_backend_name "$backend")
if grep -q "^== $name: no device" "$out"; then
  [ $rc = 0 ] || fail "exit $rc, and $name has no device"
  bp_skip_unless_expected "$name" "$name has no device here"
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
