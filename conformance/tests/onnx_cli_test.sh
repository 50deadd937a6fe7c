#!/usr/bin/env bash
# bp-conformance's ONNX node-test corpus end to end on the CPU plugin: the
# test_add* tests are mapped and pass, the summary line and the JSON report
# say so, and a crashing kernel (the crash plugin's neg) costs only the tests
# that ran it. Exits 77 (skipped) without the corpus or ONNX support.
# Usage: onnx_cli_test.sh BP_CONFORMANCE CRASH_PLUGIN
set -u
# Under a sanitizer the SIGSEGV must reach the child as a signal, not a report.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
bin=$1
plugin=$2
corpus=/usr/share/libonnx-testdata/data/node
[ -d "$corpus/test_add" ] || { echo "SKIP: no ONNX node-test corpus at $corpus (libonnx-testdata)"; exit 77; }
out=$(mktemp)
trap 'rm -f "$out" "$out.json"' EXIT
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

"$bin" --backend cpu --op none --onnx-filter 'test_add*' --json "$out.json" >"$out" 2>&1
rc=$?
if grep -q 'built without ONNX support' "$out"; then echo "SKIP: built without ONNX support"; exit 77; fi
[ "$rc" = 0 ] || fail "test_add* exited $rc, expected 0"
grep -q 'cpu:0: ONNX node tests: 3 of 3 mapped tests pass (0 not mapped of 3' "$out" || fail "no 3-of-3 summary line"
grep -q '"onnx_node_tests"' "$out.json" || fail "the JSON report has no onnx_node_tests"
grep -q '"outcome": "pass"' "$out.json" || fail "the JSON report has no passing ONNX test"

# test_neg and test_neg_example run the crashing neg; test_nesterov_momentum is not mapped.
# (When PoCL is loaded by discovery, LLVM's signal handler swallows the first
# raise(SIGSEGV) of a process, so the first test may end in "error" instead.)
"$bin" --backend "$plugin" --op none --onnx-filter 'test_ne*' >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "crash run exited $rc, expected 1"
grep -q '^  crashed: test_neg' "$out" || fail "no test_neg* test is crashed"
[ "$(grep -Ec '^  (crashed|error): test_neg' "$out")" = 2 ] || fail "test_neg and test_neg_example did not both fail"
grep -q 'signal 11' "$out" || fail "the crash message does not name signal 11"
grep -q 'op ai.onnx.preview.training.Momentum: test_nesterov_momentum' "$out" || fail "the run did not go on after the crash"
echo "PASS"
