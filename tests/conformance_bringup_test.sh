#!/usr/bin/env bash
# bp-conformance on a backend in bring-up (test_plugins/bringup_plugin.c):
#   - a crash (neg float64) and a timeout (abs float64) cost only their own
#     cell: the dtypes after them in the same group keep their own verdicts;
#   - the crash block names the sample it crashed in (number, description,
#     inputs, seed) and a rerun line that reruns exactly that case;
#   - a kernel that writes its output and then declines (exp) or fails
#     (mul.Tensor) is 'W', its own failure kind, not 'F' or 'x';
#   - a cell whose samples were all rejected inputs (exp_ int32: an in-place
#     result that would promote) is 'r', not 'N';
#   - --baseline counts only the cell that changed by itself;
#   - rerun lines start with the absolute path of the running bp-conformance;
#   - --dump-inputs writes the failing samples' inputs as .npy files;
#   - a dtype probe that is accepted and answered wrong fails the run.
# Usage: conformance_bringup_test.sh BP_CONFORMANCE BRINGUP_PLUGIN
set -u
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
bin=$1
plugin=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
cell() {  # cell OP COLUMN: the matrix character (1 = float32 2 = float64 3 = float16 ... 7 = int32 ... 9 = bool)
  awk -v op="$1" -v col="$2" '$1 == op && !seen { print $(col + 1); seen = 1 }' "$out"
}
run() { "$bin" --backend "$plugin" --quick --group ops --no-progress --timeout 5 --max-failures -1 "$@" >"$out" 2>&1; }

BPC_BRINGUP_CRASH=1 BPC_BRINGUP_HANG=1 run --op 'neg,abs,exp,mul.Tensor,exp_' --json "$dir/run.json" \
  --dump-inputs "$dir/dump"
rc=$?
[ "$rc" = 1 ] || fail "the bring-up run exited $rc, expected 1"
[ "$(cell neg 2)" = C ] || fail "neg float64 is not C (crashed)"
[ "$(cell neg 1)" = N ] || fail "neg float32 (before the crash) is not N"
[ "$(cell neg 7)" = N ] || fail "neg int32 (after the crash, same group) is not N: the crash cost more than its cell"
[ "$(cell neg 3)" = F ] || fail "neg float16 (after the crash) is not F"
[ "$(cell abs 2)" = T ] || fail "abs float64 is not T (timeout)"
[ "$(cell abs 7)" = N ] || fail "abs int32 (after the timeout, same group) is not N"
[ "$(cell exp 1)" = W ] || fail "exp float32 (writes, then declines) is not W"
[ "$(cell mul.Tensor 1)" = W ] || fail "mul.Tensor float32 (writes, then fails) is not W"
[ "$(cell exp 2)" = F ] || fail "exp float64 (declined before writing) is not F"
[ "$(cell exp_ 7)" = r ] || fail "exp_ int32 (every sample a rejected input) is not r"
grep -q 'then returned UNIMPLEMENTED' "$out" || fail "the W failure of exp does not say it declined after writing"
grep -q 'then returned INVALID_ARGUMENT' "$out" || fail "the W failure of mul.Tensor does not name its status"
grep -q 'r rejected inputs only' "$out" || fail "the legend does not explain r"
# The crash block: the real sample, its inputs and seed, and a rerun line for it.
block=$(grep -A3 '^FAIL bringup bringup:0 neg float64 sample [0-9]' "$out") || fail "no crash block names neg float64's sample"
echo "$block" | grep -q 'seed 1: crashed' || fail "the crash block has no seed: $block"
echo "$block" | grep -q 'signal 11' || fail "the crash block does not name the signal: $block"
echo "$block" | grep -Eq '^    inputs: float64\[' || fail "the crash block has no inputs line: $block"
sample=$(echo "$block" | sed -n 's/^FAIL .* sample \([0-9]*\) .*/\1/p' | head -1)
rerun=$(echo "$block" | sed -n 's/^    rerun: //p')
exe=$(readlink -f "$bin")
[ "$rerun" = "$exe --backend $plugin --op neg --dtype float64 --sample $sample --seed 1 --group ops" ] \
  || fail "the rerun line is not the one for that case: $rerun"
# --dump-inputs: the crashed sample's input (neg has one tensor argument), a
# .npy of float64 values of the shape the failure block names.
npy="$dir/dump/bringup_0_neg_float64_sample$sample/arg0.npy"
[ -f "$npy" ] || fail "--dump-inputs wrote no $npy: $(ls -R "$dir/dump" 2>&1)"
head -c 6 "$npy" | grep -q NUMPY || fail "$npy is not a .npy file"
grep -q "'descr': '<f8'" "$npy" || fail "$npy does not hold float64 values"
grep -q "^--dump-inputs: neg float64 sample $sample on bringup:0: $dir/dump/bringup_0_neg_float64_sample$sample/arg<k>.npy" \
  "$out" || fail "no --dump-inputs line for the crashed sample"
! grep -q 'had not run yet' "$out" || fail "a test was filed without running"
grep -q '"wrote_then_failed": 7' "$dir/run.json" || fail "the JSON totals do not count the 7 W cells (mul.Tensor float32; exp float32 and the integer dtypes, whose output is float32)"
# The rerun line reruns exactly that case (and crashes again).
# shellcheck disable=SC2086  # the rerun line is a command line
BPC_BRINGUP_CRASH=1 $rerun --no-progress --json "$dir/rerun.json" >"$out" 2>&1
grep -c '"sample":' "$dir/rerun.json" | grep -qx 1 || fail "the rerun line ran more than one case"
grep -q '"outcome": "crashed"' "$dir/rerun.json" || fail "the rerun line did not reproduce the crash"

# --baseline: only the cell that changed counts, not the dtypes after it.
run --op neg --json "$dir/base.json" || fail "the baseline run failed"
BPC_BRINGUP_CRASH=1 run --op neg --baseline "$dir/base.json"
grep -q '1 regressions, 0 fixes' "$out" || fail "--baseline does not count exactly the one crashed cell"
grep -q 'REGRESSION bringup:0 ops neg float64: native_pass -> crashed' "$out" || fail "--baseline does not name it"
# Dtype claims: a backend that accepts a dtype ops.yaml does not claim
# (div.Tensor_mode on bool) and answers wrong fails the run; the same probe
# with the kernel declining is only "not native" and the run passes.
claims() { "$bin" --backend "$plugin" --quick --group claims --op div.Tensor_mode --no-progress "$@" >"$out" 2>&1; }
claims || fail "the claims probe with div.Tensor_mode declined failed the run"
grep -q '0 of 1 unclaimed (op, dtype) probes run natively' "$out" || fail "the declined probe is not counted as a probe"
BPC_BRINGUP_WRONG_DIV=1 claims
rc=$?
[ "$rc" = 1 ] || fail "an unclaimed dtype answered wrong exited $rc, expected 1"
grep -q 'NOT CONFORMANT: 1 unclaimed dtypes accepted with wrong values' "$out" || fail "the verdict does not name the wrong probe"
grep -q 'accepts an unclaimed dtype and answers wrong (cast): .*expected 0, got 42' "$out" \
  || fail "the failure block does not say what was wrong"
rerun=$(sed -n 's/^    rerun: //p' "$out" | head -1)
[ "$rerun" = "$exe --backend $plugin --op div.Tensor_mode --dtype bool --sample 0 --seed 1 --group claims" ] \
  || fail "the probe's rerun line is not the one for it: $rerun"
# shellcheck disable=SC2086  # the rerun line is a command line
BPC_BRINGUP_WRONG_DIV=1 $rerun --no-progress >"$out" 2>&1 && fail "the probe's rerun line did not fail again"
grep -q 'accepts an unclaimed dtype and answers wrong' "$out" || fail "the probe's rerun line did not rerun the probe"
echo "conformance_bringup_test: ok"
