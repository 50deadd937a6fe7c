#!/usr/bin/env bash
# bp-conformance against a deliberately broken plugin (crash_plugin.c), end to
# end, in ONE run: the kernel that raises SIGSEGV makes its cells 'C'
# (crashed), the one that never returns 'T' (timeout), the one that returns
# wrong values 'x' (fail), while every other cell of the run completes (the
# CPU fallback serves them, the fallback and ABI groups run). Then the JUnit
# report validates against the JUnit schema, an expectation file turns the same
# cells into u / X / P, and --baseline names a planted regression. Usage: isolation_test.sh BP_CONFORMANCE CRASH_PLUGIN JUNIT_XSD
set -u
# Under AddressSanitizer or ThreadSanitizer the SIGSEGV must reach the child
# as a signal, not be turned into the sanitizer's report and an exit code.
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
bin=$1
plugin=$2
xsd=$3
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
cell() {  # cell OP COLUMN: the matrix character of OP's dtype column (1 = float32 ... 9 = bool)
  awk -v op="$1" -v col="$2" '$1 == op && !seen { print $(col + 1); seen = 1 }' "$out"
}

ops='neg,abs,mul.Tensor,exp,sub.Tensor,relu'
"$bin" --backend "$plugin" --op "$ops" --dtype float32 --timeout 5 --quick --no-progress \
  --json "$dir/run.json" --junit "$dir/run.xml" >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "the broken plugin's run exited $rc, expected 1"
[ "$(cell neg 1)" = C ] || fail "neg float32 is not C (crashed)"
grep -q 'signal 11' "$out" || fail "the crash message does not name signal 11"
[ "$(cell abs 1)" = T ] || fail "abs float32 is not T (timeout)"
[ "$(cell mul.Tensor 1)" = x ] || fail "mul.Tensor float32 is not x (wrong values)"
grep -q 'expected .*, got 42' "$out" || fail "the failure does not show expected vs actual"
[ "$(cell exp 1)" = N ] || fail "exp float32 is not N (native pass)"
[ "$(cell sub.Tensor 1)" = F ] || fail "sub.Tensor float32 is not F (fallback pass)"
[ "$(cell relu 1)" = F ] || fail "relu float32 is not F (fallback pass)"
grep -q '"outcome": "crashed"' "$dir/run.json" || fail "the JSON report has no crashed case"
grep -q '"outcome": "timeout"' "$dir/run.json" || fail "the JSON report has no timeout case"
grep -Eq 'Fallback group .*: [0-9]+ cells pass, 0 fail' "$out" || fail "the fallback group did not pass"
grep -Eq 'ABI/runtime group: [1-9][0-9]* pass, 0 fail' "$out" || fail "the ABI group did not run and pass"
grep -Eq 'crashdev \(crashdev:0\): NOT CONFORMANT' "$out" || fail "no NOT CONFORMANT verdict"

if command -v xmllint >/dev/null; then
  xmllint --noout --schema "$xsd" "$dir/run.xml" >"$dir/xmllint.txt" 2>&1 || { cat "$dir/xmllint.txt"; fail "JUnit XML does not validate"; }
else
  echo "note: xmllint not installed (Debian libxml2-utils): schema check of the real run skipped"
fi
grep -q '<error message="child killed by signal 11' "$dir/run.xml" || fail "JUnit has no <error> for the crash"
grep -q '<failure message=' "$dir/run.xml" || fail "JUnit has no <failure> for the wrong values"

# Expectations end to end: unsupported cells are not run ('u', even the crash
# and the hang), an xfail that fails is 'X' and leaves the verdict alone, and a
# stale xfail that passes is 'P', which fails the run only under
# --verify-expectations.
mkdir -p "$dir/expectations"
cat >"$dir/expectations/crashdev.yaml" <<'YAML'
unsupported:
  - op: neg
    reason: "test: this kernel crashes"
  - op: abs
    dtypes: [float32]
    reason: "test: this kernel hangs"
xfail:
  - op: "mul.*"
    reason: "test: this kernel returns 42"
  - op: exp
    reason: "test: a stale entry, exp passes"
YAML
run_expected() {
  "$bin" --backend "$plugin" --op "$ops" --dtype float32 --timeout 5 --quick --group ops --no-progress \
    --expectations "$dir/expectations" "$@" >"$out" 2>&1
}
run_expected
rc=$?
[ "$rc" = 0 ] || fail "with expectations the run exited $rc, expected 0"
[ "$(cell neg 1)" = u ] || fail "neg float32 is not u (unsupported by expectation)"
[ "$(cell abs 1)" = u ] || fail "abs float32 is not u (unsupported by expectation)"
[ "$(cell mul.Tensor 1)" = X ] || fail "mul.Tensor float32 is not X (expected failure)"
[ "$(cell exp 1)" = P ] || fail "exp float32 is not P (unexpected pass)"
grep -Eq 'crashdev \(crashdev:0\): CONFORMANT' "$out" || fail "expected failures made the verdict fail"
run_expected --verify-expectations
rc=$?
[ "$rc" = 1 ] || fail "a stale xfail under --verify-expectations exited $rc, expected 1"
grep -q 'UNEXPECTED PASS crashdev' "$out" || fail "the stale xfail is not named"
grep -Eq 'crashdev \(crashdev:0\): NOT CONFORMANT' "$out" || fail "a stale xfail under --verify-expectations kept the verdict"

# A planted regression: crashdev's exp turns wrong when BPC_CRASHDEV_BREAK_EXP=1.
"$bin" --backend "$plugin" --op exp --dtype float32 --quick --group ops --no-progress \
  --json "$dir/base.json" >"$out" 2>&1 || fail "the baseline run failed"
BPC_CRASHDEV_BREAK_EXP=1 "$bin" --backend "$plugin" --op exp --dtype float32 --quick --group ops --no-progress \
  --baseline "$dir/base.json" >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "the regressed run exited $rc, expected 1"
grep -q '1 regressions, 0 fixes' "$out" || fail "--baseline does not count the regression"
grep -Eq 'REGRESSION crashdev:0 ops exp float32: native_pass -> fail' "$out" || fail "--baseline does not name it"
echo "isolation_test: ok"
