#!/usr/bin/env bash
# The CI scripts fail when they must (issue 23 item 18):
#  - .ci/abi_check.sh with no baseline fails and names the command that makes
#    one (it used to write the baseline and pass);
#  - .ci/fuzz.sh fails when a source of a target does not compile, even with
#    last run's object of that source still on disk (it used to link it).
# Usage: ci_scripts_test.sh SOURCE_DIR BUILD_DIR
set -uo pipefail
src=$1
build=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

# abi_check.sh: a missing baseline.
out=$(BP_ABI_BASELINE="$tmp/missing.abi" bash "$src/.ci/abi_check.sh" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 1 ] || fail "abi_check.sh with no baseline exited $rc, expected 1"
grep -q "no baseline at $tmp/missing.abi" <<<"$out" || fail "abi_check.sh did not say the baseline is missing"
grep -q "abi_check.sh --update" <<<"$out" || fail "abi_check.sh did not give the command that writes a baseline"
[ ! -e "$tmp/missing.abi" ] || fail "abi_check.sh wrote the missing baseline"

# fuzz.sh: a compiler that fails on one source; its stale object is present.
cat >"$tmp/fake-cxx" <<'FAKE'
#!/usr/bin/env bash
# Fails to compile conformance/src/expectations.cpp; "compiles" and "links"
# everything else by touching the -o file.
o=
for ((i = 1; i <= $#; ++i)); do
  [ "${!i}" = -o ] && { j=$((i + 1)); o=${!j}; }
  [ "${!i}" = conformance/src/expectations.cpp ] && { echo "fake-cxx: error in ${!i}" >&2; exit 1; }
done
[ -n "$o" ] && touch "$o"
exit 0
FAKE
chmod +x "$tmp/fake-cxx"
mkdir -p "$tmp/fuzz/obj"
touch "$tmp/fuzz/obj/conformance_src_expectations.cpp.o"  # last run's object
out=$(FUZZ_CXX="$tmp/fake-cxx" FUZZ_LAUNCHER="" FUZZ_OUT="$tmp/fuzz" FUZZ_BUILD="$build" FUZZ_SECONDS=1 \
      bash "$src/.ci/fuzz.sh" expectations_fuzz 2>&1)
rc=$?
echo "$out"
[ $rc -ne 0 ] || fail "fuzz.sh passed although a source failed to compile"
grep -q "expectations_fuzz: a source failed to compile" <<<"$out" || fail "fuzz.sh did not say a compile failed"
[ ! -e "$tmp/fuzz/expectations_fuzz" ] || fail "fuzz.sh linked expectations_fuzz from a stale object"
echo "PASS"
