#!/usr/bin/env bash
# The skeleton bp-plugin-new writes, built from the source tree's headers and
# loaded by bp-info: it builds with warnings as errors, and with a kernel
# table row for an operator no host knows it still loads (the one policy of
# every backend: the operator is skipped, the host warns naming it).
# Usage: plugin_new_build_test.sh SCAFFOLD_SCRIPT BP_INFO INCLUDE_DIR...
set -u
new=$1 info=$2
shift 2
incs=()
for d in "$@"; do incs+=("-I$d"); done
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; exit 1; }
unset BACKPLANE_PLUGINS BACKPLANE_PLUGIN_PATH

"$new" skel "$dir/skel" >/dev/null || fail "bp-plugin-new skel failed"
cd "$dir/skel" || exit 1
grep -q '{BP_OP_NEG, skel_neg, NULL},' src/kernels/register.c || fail "no neg row in src/kernels/register.c"
sed -i 's/{BP_OP_NEG, skel_neg, NULL},/{"future_op.Tensor", skel_neg, NULL},\n    {BP_OP_NEG, skel_neg, NULL},/' \
  src/kernels/register.c
cc -std=c11 -Wall -Wextra -Werror -pedantic -shared -fPIC -fvisibility=hidden -Isrc "${incs[@]}" \
  src/*.c src/kernels/*.c -o libbackplane_skel.so -lm >build.txt 2>&1 || fail "the skeleton does not build: $(cat build.txt)"
"$info" --no-discover --plugin "$PWD/libbackplane_skel.so" >out.txt 2>&1 \
  || fail "bp-info did not load the skeleton with an unknown operator: $(cat out.txt)"
grep -q "unknown operator 'future_op.Tensor'" out.txt || fail "no warning naming the operator: $(cat out.txt)"
grep -q "skel" out.txt || fail "the skel backend is not listed: $(cat out.txt)"
echo "plugin_new_build_test: ok"
