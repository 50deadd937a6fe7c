#!/usr/bin/env bash
# bp-plugin-new from the source tree (scaffold/): it refuses a NAME that is not
# a lower-case C identifier and a DIR that exists, with a message and exit 2,
# writing nothing; a good NAME gives the project with every placeholder
# filled. (.ci/install_test.sh builds such a project against an installed SDK
# and runs bp-conformance on it.) Usage: plugin_new_test.sh SCAFFOLD_SCRIPT
set -u
new=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
cd "$dir" || exit 1
fail() { echo "FAIL: $*"; exit 1; }

refused() {  # refused EXPECTED_MESSAGE ARGS...: exit 2, the message on stderr, nothing written
  local want=$1; shift
  "$new" "$@" >out.txt 2>err.txt
  local rc=$?
  [ "$rc" = 2 ] || fail "bp-plugin-new $* exited $rc, expected 2"
  grep -q -- "$want" err.txt || fail "bp-plugin-new $*: no '$want' in: $(cat err.txt)"
}
refused "not a C identifier" 9lives
refused "not a C identifier" my-accel
refused "not a C identifier" "my accel"
refused "not a C identifier" "a/b"
refused "upper-case" MyAccel
refused "not a C identifier" ""
refused "usage"
refused "usage" a b c
[ -z "$(ls)" ] || [ "$(ls)" = "$(printf 'err.txt\nout.txt')" ] || fail "a refused call wrote: $(ls)"
mkdir taken
refused "already exists" myaccel taken
[ -z "$(ls taken)" ] || fail "bp-plugin-new wrote into an existing DIR"

"$new" my_accel2 proj >out.txt 2>&1 || fail "bp-plugin-new my_accel2 proj failed: $(cat out.txt)"
# The layout every backend uses (docs/plugin-guide.md, "Backend layout").
for f in CMakeLists.txt README.md ci/conformance.sh expectations/my_accel2.yaml src/plugin.h src/plugin.c \
         src/device.h src/device.c src/memory.h src/memory.c src/stream.h src/stream.c src/kernels/kernels.h \
         src/kernels/register.c src/kernels/pointwise.c; do
  [ -f "proj/$f" ] || fail "proj/$f was not written"
done
[ -x proj/ci/conformance.sh ] || fail "ci/conformance.sh is not executable"
! grep -rn '@[A-Z_]*@' proj || fail "placeholders left in the project"
grep -q '#define my_accel2_BACKEND "my_accel2"' proj/src/plugin.h || fail "the backend is not named my_accel2"
grep -Eq 'find_package\(Backplane [0-9]+\.[0-9]+ REQUIRED\)' proj/CMakeLists.txt \
  || fail "find_package does not ask for the ABI version"
echo "plugin_new_test: ok"
