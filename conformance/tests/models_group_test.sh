#!/usr/bin/env bash
# bp-conformance's models group end to end, with no torch: four one-node
# "models" made from ONNX's node tests (Add, Mul, Neg, Abs) with numpy's
# results as the expected outputs, run on the deliberately broken crashdev
# plugin (crash_plugin.c). In ONE run: Add matches (through the fallback),
# Mul mismatches and the shadow check names its node, Neg's SIGSEGV and Abs's
# hang are that model's outcome (crashed, timeout) and the run goes on; the
# verdict line names the models; JSON and JUnit carry the group. Then, on
# the cpu: a reference that does not vary is refused, an output dtype other
# than torch's is a mismatch. Then: the
# group says why it did not run (no models; export_models.py's note when torch
# cannot be imported), and a narrowed run (--op) leaves it out.
# Usage: models_group_test.sh BP_CONFORMANCE CRASH_PLUGIN JUNIT_XSD EXPORT_MODELS_PY
# Exit 77 (skip) without libonnx-testdata's node tests or python3-numpy.
set -u
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}handle_segv=0"
export TSAN_OPTIONS="${TSAN_OPTIONS:+$TSAN_OPTIONS:}handle_segv=0"
bin=$1
plugin=$2
xsd=$3
export_py=$4
corpus=/usr/share/libonnx-testdata/data/node
[ -d "$corpus/test_mul" ] || { echo "SKIP: no ONNX node tests at $corpus (libonnx-testdata)"; exit 77; }
/usr/bin/python3 -c 'import numpy' 2>/dev/null || { echo "SKIP: python3-numpy missing"; exit 77; }
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }

# The models, laid out as export_models.py lays them out.
/usr/bin/python3 - "$corpus" "$dir/models" <<'PY' || { echo "FAIL: could not make the models"; exit 1; }
import json, os, shutil, sys
import numpy as np
corpus, out = sys.argv[1:3]
rng = np.random.default_rng(7)
x = rng.standard_normal((3, 4, 5)).astype(np.float32)
y = rng.standard_normal((3, 4, 5)).astype(np.float32)
models = {  # name: (node test, inputs, outputs, expected)
    "add_model": ("test_add", {"x": x, "y": y}, ["sum"], x + y),
    "mul_model": ("test_mul", {"x": x, "y": y}, ["z"], x * y),
    "neg_model": ("test_neg", {"x": x}, ["y"], -x),
    "abs_model": ("test_abs", {"x": x}, ["y"], np.abs(x)),
}
for name, (test, inputs, outputs, expected) in models.items():
    d = os.path.join(out, name)
    os.makedirs(d)
    shutil.copy(os.path.join(corpus, test, "model.onnx"), d)
    for k, v in enumerate(inputs.values()):
        np.save(os.path.join(d, f"input_{k}.npy"), v)
    np.save(os.path.join(d, "expected_0.npy"), expected)
    json.dump({"inputs": list(inputs), "outputs": outputs, "rtol": 1e-3, "atol": 1e-4}, open(os.path.join(d, "meta.json"), "w"))
PY

"$bin" --backend "$plugin" --op none --no-onnx --models "$dir/models" --timeout 5 --no-progress \
  --json "$dir/run.json" --junit "$dir/run.xml" >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "the run exited $rc, expected 1 (--models given and models that do not match)"
grep -q '^crashdev:0: models: 1 of 4 match torch' "$out" || fail "no '1 of 4 match' line"
grep -Eq '^  add_model +match .*nodes 0 native / 1 fallback' "$out" || fail "add_model did not match through the fallback"
grep -Eq '^  mul_model +mismatch .*nodes 1 native' "$out" || fail "mul_model is not a native mismatch"
grep -Eq "worst node #0 'z' \(Mul\): max abs .*x its tolerance; 1 of 1 nodes beyond" "$out" ||
  fail "the shadow check does not name the Mul node"
grep -Eq '^  neg_model +crashed +child killed by signal 11' "$out" || fail "neg_model is not crashed with signal 11"
grep -Eq '^  abs_model +timeout' "$out" || fail "abs_model did not time out"
grep -q "rerun: BACKPLANE_PLUGINS=$plugin bp-run $dir/models/neg_model/model.onnx --device crashdev:0 --input x=" "$out" ||
  fail "no bp-run rerun line for the crashed model"
# The mismatch's rerun line works as printed: bp-run names the same node.
rerun=$(grep -m1 -o "rerun: BACKPLANE_PLUGINS=.*mul_model.*" "$out" | sed 's/^rerun: //')
(cd "$(dirname "$bin")" && env ${rerun%% *} ./${rerun#* }) >"$dir/rerun.txt" 2>&1
rc=$?
[ "$rc" = 1 ] || { cat "$dir/rerun.txt"; fail "the rerun line exited $rc, expected 1 (mismatch)"; }
grep -q "shadow: first divergent node #0 'z' (Mul)" "$dir/rerun.txt" || { cat "$dir/rerun.txt"; fail "the rerun does not name the node"; }
grep -Eq 'crashdev \(crashdev:0\): .*; models FAIL: 1 of 4 match: add_model \(abs_model timeout, mul_model mismatch, neg_model crashed\)$' "$out" ||
  fail "the verdict line does not name the models"
grep -q '"models": \[' "$dir/run.json" || fail "the JSON report has no models array"
grep -q '"worst_node": "z"' "$dir/run.json" || fail "the JSON report has no worst node"
if command -v xmllint >/dev/null; then
  xmllint --noout --schema "$xsd" "$dir/run.xml" >"$dir/xmllint.txt" 2>&1 || { cat "$dir/xmllint.txt"; fail "JUnit XML does not validate"; }
fi
grep -q '<testsuite name="crashdev:0 models" id="[0-9]*" tests="4" failures="1" errors="2" skipped="0">' "$dir/run.xml" ||
  fail "JUnit has no models suite with 1 failure and 2 errors"

# Issue 23 items 16 and 18: a reference that does not vary is refused, and
# an output whose dtype differs from torch's is a mismatch (on the cpu).
/usr/bin/python3 - "$corpus" "$dir/models2" <<'PY' || { echo "FAIL: could not make the models"; exit 1; }
import json, os, shutil, sys
import numpy as np
corpus, out = sys.argv[1:3]
rng = np.random.default_rng(7)
x = rng.standard_normal((3, 4, 5)).astype(np.float32)
y = rng.standard_normal((3, 4, 5)).astype(np.float32)
models = {  # name: expected output of Add
    "flat_model": np.full((3, 4, 5), 0.5, np.float32) + 1e-4 * x,  # std 1e-4 < the floor
    "dtype_model": (x + y).astype(np.float64),                    # right values, torch's dtype is float64
}
for name, expected in models.items():
    d = os.path.join(out, name)
    os.makedirs(d)
    shutil.copy(os.path.join(corpus, "test_add", "model.onnx"), d)
    np.save(os.path.join(d, "input_0.npy"), x)
    np.save(os.path.join(d, "input_1.npy"), y)
    np.save(os.path.join(d, "expected_0.npy"), expected)
    json.dump({"inputs": ["x", "y"], "outputs": ["sum"], "rtol": 1e-3, "atol": 1e-4}, open(os.path.join(d, "meta.json"), "w"))
PY
"$bin" --backend cpu --op none --no-onnx --models "$dir/models2" --no-progress >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "the run exited $rc, expected 1 (models refused or mismatching)"
grep -Eq "^  flat_model +error .*torch's reference sum has a spread \(std over 60 elements\) of [0-9.e+-]+, below the floor 0.01" "$out" ||
  fail "a reference that does not vary was not refused"
grep -Eq "^  dtype_model +mismatch " "$out" && grep -Eq "^ +sum: dtype float32, torch's reference is float64$" "$out" ||
  fail "an output of another dtype than torch's was not a mismatch"

# Nothing to run: the group says why, and with --models given the run fails.
"$bin" --backend cpu --op none --no-onnx --models "$dir/nothing" --no-progress >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "a run with no models exited $rc, expected 1"
grep -q "^cpu:0: models: not run (no exported models in $dir/nothing" "$out" || fail "no 'not run' line"
grep -q "; models: not run (no exported models in $dir/nothing" "$out" || fail "the verdict line does not say why"

# export_models.py without torch leaves its reason, which the group prints.
mkdir -p "$dir/fake"
echo 'raise ImportError("No module named torch (simulated)")' >"$dir/fake/torch.py"
PYTHONPATH="$dir/fake" /usr/bin/python3 "$export_py" "$dir/notorch" >"$out" 2>&1
rc=$?
[ "$rc" = 77 ] || fail "export_models.py without torch exited $rc, expected 77"
"$bin" --backend cpu --op none --no-onnx --models "$dir/notorch" --no-progress >"$out" 2>&1
grep -q '^cpu:0: models: not run (not exported (export_models: No module named torch (simulated); install python3-torch python3-torchvision))' "$out" ||
  fail "the group does not print the export's reason"

# A narrowed run leaves the group out unless --models is given.
"$bin" --backend cpu --op none --no-onnx --no-progress >"$out" 2>&1
grep -q 'Models group' "$out" && fail "a run narrowed with --op ran the models group"
echo "PASS"
