#!/usr/bin/env bash
# One cell of the ABI compatibility matrix: a plugin built against the
# headers of ABI DECLARED loads into today's host at ABI NEGOTIATED (bp-info
# says so; a newer-than-host plugin comes with a note naming both versions)
# and passes a quick conformance run (the operator and ABI/runtime groups).
# Usage: abi_compat_test.sh BP_INFO BP_CONFORMANCE PLUGIN DECLARED NEGOTIATED
# BP_ABI_COMPAT_OPS (a comma-separated operator list) narrows the operator
# group; the older minors' rows set it (tests/abi_compat/CMakeLists.txt), and the
# sanitizer test presets for every row, where the full quick run of every
# operator takes minutes per plugin.
set -u
info=$1 conformance=$2 plugin=$3 declared=$4 negotiated=$5
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*"; cat "$dir/out.txt"; exit 1; }
unset BACKPLANE_PLUGINS BACKPLANE_PLUGIN_PATH

"$info" --no-discover --plugin "$plugin" >"$dir/out.txt" 2>&1 || fail "bp-info did not load the $declared plugin"
grep -Eq "ABI $negotiated +$plugin" "$dir/out.txt" || fail "the $declared plugin did not load at ABI $negotiated"
host=$(sed -n 's/^Backplane .*(ABI \([0-9.]*\)).*/\1/p' "$dir/out.txt")
if [ "$declared" != "$negotiated" ]; then
  grep -q "plugin built for ABI $declared, newer than this libbackplane's ABI $host; running it at ABI $negotiated" \
    "$dir/out.txt" || fail "no note naming both versions for the $declared plugin"
fi
ops=()
[ -n "${BP_ABI_COMPAT_OPS:-}" ] && ops=(--op "$BP_ABI_COMPAT_OPS")
"$conformance" --backend "$plugin" --quick --no-onnx --group ops abi "${ops[@]}" --no-progress --failures-only >"$dir/out.txt" 2>&1 \
  || fail "the $declared plugin did not pass the quick conformance run"
grep -q ": CONFORMANT" "$dir/out.txt" || fail "no CONFORMANT verdict"
echo "abi_compat: built for $declared, loaded at $negotiated into a $host host: $(grep ': CONFORMANT' "$dir/out.txt")"
