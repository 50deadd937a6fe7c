#!/usr/bin/env bash
# bp-conformance against plugins whose load goes wrong (the fault plugin,
# tests/test_plugins/fault_plugin.cpp, BP_FAULT picks the fault): an init that
# crashes, calls exit() or hangs gets a LOAD CRASHED / LOAD EXITED / LOAD
# TIMEOUT line, and the run goes on with the other backend (cpu by path, which
# also checks that "--backend path/to/plugin.so" of the host-memory cpu plugin
# selects it). Usage: load_isolation_test.sh BP_CONFORMANCE FAULT_PLUGIN CPU_PLUGIN
set -u
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
bin=$1
fault=$2
cpu=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
run() {  # run FAULT: bp-conformance on the fault plugin and the cpu plugin, add.Tensor float32
  # Only the operator group: its 3 s limit is for the hanging init, and the ABI
  # group's symbol scan alone can take longer under the sanitizers.
  BP_FAULT=$1 timeout 120 "$bin" --backend "$fault" --backend "$cpu" --op add.Tensor --dtype float32 --group ops \
    --timeout 3 --quick --no-progress >"$out" 2>&1
}

run init_crash
rc=$?
[ "$rc" = 1 ] || fail "init_crash: exited $rc, expected 1"
grep -q "LOAD CRASHED  $fault: signal 11" "$out" || fail "init_crash: no LOAD CRASHED verdict naming signal 11"
grep -Eq '^add\.Tensor +[NF]' "$out" || fail "init_crash: the cpu backend's add.Tensor did not run"

run init_exit
rc=$?
[ "$rc" = 1 ] || fail "init_exit: exited $rc, expected 1"
grep -q "LOAD EXITED   $fault: the process exited with code 3" "$out" || fail "init_exit: no LOAD EXITED verdict"
grep -Eq '^add\.Tensor +[NF]' "$out" || fail "init_exit: the cpu backend's add.Tensor did not run"

run init_hang
rc=$?
[ "$rc" = 1 ] || fail "init_hang: exited $rc, expected 1"
grep -q "LOAD TIMEOUT  $fault: no answer in 3 s" "$out" || fail "init_hang: no LOAD TIMEOUT verdict"
grep -Eq '^add\.Tensor +[NF]' "$out" || fail "init_hang: the cpu backend's add.Tensor did not run"

# A plugin that loads: no verdict line, both backends run.
run ""
rc=$?
[ "$rc" = 0 ] || fail "no fault: exited $rc, expected 0"
grep -q "LOAD " "$out" && fail "no fault: a LOAD verdict was printed"
[ "$(grep -Ec '^add\.Tensor +N' "$out")" -ge 2 ] || fail "no fault: add.Tensor is not native on both backends"
echo "PASS"
