#!/usr/bin/env bash
# bp-conformance --group streams on one backend (the environment picks the
# device's mode: BP_VENDOR_SIM_ASYNC, BP_VENDOR_SIM_KERNEL_US,
# BP_VENDOR_SIM_BROKEN).
#   pass: exits 0 with a "streams group N pass" part in the verdict line, N > 0;
#         for a backend BACKPLANE_EXPECT_BACKENDS names, every skipped test
#         must be listed in streams_skips.pin (else: UNIMPLEMENTED stream or
#         event slots would pass as skips)
#   skip: exit 77 when the backend has no device here, unless it is expected
#   fail: exits 1, and the failure message matches REGEX (the ordering the
#         broken device violates)
# Usage: streams_group_test.sh BP_CONFORMANCE BACKEND pass|fail [REGEX]
set -u
. "$(dirname "$0")/../../tests/expected_backends.sh"
pin="$(dirname "$0")/streams_skips.pin"
bin=$1 backend=$2 expect=$3 regex=${4:-}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$bin" --backend "$backend" --group streams --no-onnx --no-models --no-progress --max-failures -1 >"$out" 2>&1
rc=$?
cat "$out"
fail() { echo "FAIL: $*"; exit 1; }
name=$(bp_backend_name "$backend")
grep -q "^== $name: no device" "$out" && bp_skip_unless_expected "$name" "$name has no device here"
# The skipped tests of an expected backend that streams_skips.pin does not allow.
unpinned_skips() {
  bp_backend_expected "$name" || return 0
  awk -v b="$name" '
    NR == FNR { if (!/^#/ && NF > 2 && ($1 == b || $1 == "*")) { r = $0; sub(/^[^ ]+ +[^ ]+ +/, "", r); ok[$2] = r } next }
    /^  skipped streams\./ { t = $2; sub(/:$/, "", t); if (!(t in ok) || index($0, ok[t]) == 0) print t }
  ' "$pin" "$out"
}
case $expect in
  pass)
    [ $rc = 0 ] || fail "exit $rc, expected 0"
    grep -Eq 'CONFORMANT: .*; streams group [1-9][0-9]* pass, [0-9]+ skipped' "$out" ||
      fail "no 'streams group N pass, M skipped' part in the verdict line"
    bad=$(unpinned_skips)
    [ -z "$bad" ] || fail "$(echo "$bad" | wc -l) streams test(s) skipped on $name, which BACKPLANE_EXPECT_BACKENDS" \
      "names and $pin does not allow: $(echo $bad)"
    ;;
  fail)
    [ $rc = 1 ] || fail "exit $rc with a broken device, expected 1"
    grep -q 'NOT CONFORMANT: .*streams-group failures' "$out" || fail "the verdict does not count streams-group failures"
    grep -Eq "$regex" "$out" || fail "no failure message naming the violated ordering (/$regex/)"
    ;;
  *) fail "unknown expectation '$expect'" ;;
esac
echo PASS
