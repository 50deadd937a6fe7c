#!/usr/bin/env bash
# bp-conformance's crash isolation, end to end: a kernel that raises SIGSEGV
# makes its cells 'C' (crashed) and one that never returns makes them 'T'
# (timeout); the run goes on and exits 1. Usage: isolation_test.sh BP_CONFORMANCE CRASH_PLUGIN
set -u
# Under AddressSanitizer or ThreadSanitizer the SIGSEGV must reach the child
# as a signal, not be turned into the sanitizer's report and an exit code.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
bin=$1
plugin=$2
out=$(mktemp)
trap 'rm -f "$out" "$out.json"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

"$bin" --backend "$plugin" --op 'neg' --dtype float32 --timeout 60 --json "$out.json" >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "crash run exited $rc, expected 1"
grep -Eq '^neg +C ' "$out" || fail "neg float32 is not C"
grep -q 'signal 11' "$out" || fail "the crash message does not name signal 11"
grep -q '"outcome": "crashed"' "$out.json" || fail "the JSON report has no crashed case"

"$bin" --backend "$plugin" --op 'abs' --dtype int32 --timeout 3 >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "hang run exited $rc, expected 1"
grep -Eq '^abs +(- +)*T ' "$out" || fail "abs int32 is not T"

"$bin" --backend "$plugin" --op 'sub.Tensor' --dtype float32 >"$out" 2>&1
rc=$?
[ "$rc" = 0 ] || fail "sub.Tensor through the CPU fallback exited $rc, expected 0"
grep -Eq '^sub.Tensor +F ' "$out" || fail "sub.Tensor float32 is not F (fallback pass)"
echo "isolation_test: ok"
