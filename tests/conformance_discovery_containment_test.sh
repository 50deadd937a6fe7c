#!/usr/bin/env bash
# bp-conformance with a misbehaving plugin in the discovery path (the fault
# plugin, tests/test_plugins/fault_plugin.cpp; BP_FAULT picks the fault),
# beside the build tree's real plugins:
#   - a plugin whose load crashes or hangs gets its own LOAD CRASHED / LOAD
#     TIMEOUT line naming the file; the workers never load it again (they
#     load exactly the files the parent loaded), so the cpu backend stays
#     CONFORMANT and every other discovered backend keeps its verdict;
#   - a plugin that leaves a thread running after its shutdown does not take
#     the parent down: the verdicts are printed and the exit code is the
#     verdict's.
# Usage: conformance_discovery_containment_test.sh BP_CONFORMANCE FAULT_PLUGIN
set -u
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
bin=$1
fault=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/plugins"
cp "$fault" "$dir/plugins/libbp_fault.so"
bad="$dir/plugins/libbp_fault.so"
out=$dir/out.txt
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
run() {  # run FAULT TIMEOUT: every discovered backend, add.Tensor float32, stdout to a file (not a terminal)
  BP_FAULT=$1 BACKPLANE_PLUGIN_PATH="$dir/plugins" timeout 300 "$bin" --op add.Tensor --dtype float32 --group ops \
    --quick --no-progress --timeout "$2" >"$out" 2>&1
}
# The backends discovery finds without the bad plugin (their verdict lines must all stay).
BACKPLANE_PLUGIN_PATH= "$bin" --list >"$dir/list.txt" 2>&1 || { cat "$dir/list.txt"; echo "FAIL: --list"; exit 1; }
mapfile -t names < <(sed -n '/^Backends:/,/^Operators/p' "$dir/list.txt" | awk 'NR > 1 && $1 != "Operators" { print $1 }')
[ "${#names[@]}" -ge 1 ] || { cat "$dir/list.txt"; echo "FAIL: no backend discovered"; exit 1; }
verdicts_intact() {  # every backend's verdict line is there, and cpu is CONFORMANT
  grep -q '^Verdicts:' "$out" || fail "$1: no Verdicts section"
  for n in "${names[@]}"; do
    grep -Eq "^  $n \\($n:0\\): |^  $n \\($n\\): " "$out" || fail "$1: the $n backend has no verdict line"
  done
  grep -q '^  cpu (cpu:0): CONFORMANT' "$out" || fail "$1: cpu is not CONFORMANT"
}

run init_crash 20
rc=$?
[ "$rc" = 1 ] || fail "init_crash: exited $rc, expected 1 (a load failure)"
grep -q "^LOAD CRASHED  $bad: signal 11" "$out" || fail "init_crash: no LOAD CRASHED line naming $bad"
verdicts_intact init_crash

run init_hang 10
rc=$?
[ "$rc" = 1 ] || fail "init_hang: exited $rc, expected 1 (a load failure)"
grep -q "^LOAD TIMEOUT  $bad: no answer in 10 s" "$out" || fail "init_hang: no LOAD TIMEOUT line naming $bad"
verdicts_intact init_hang

# A thread left running after shutdown: the parent keeps its plugins loaded
# to the end, so it prints its verdicts (stdout is a file: buffered until exit).
run stray_thread 60
rc=$?
[ "$rc" = 0 ] || fail "stray_thread: exited $rc, expected 0"
grep -q '^  fault (fault:0): CONFORMANT' "$out" || fail "stray_thread: no CONFORMANT verdict for the fault backend"
verdicts_intact stray_thread
echo "conformance_discovery_containment_test: ok"
