#!/usr/bin/env bash
# bp-conformance's ABI group on a plugin that exports a symbol besides
# bp_plugin_entry (test_plugins/extra_export.c): the failure is one paragraph
# naming the symbols and the fix with the installed SDK (backplane_add_plugin),
# not a GoogleTest dump citing the suite's source files or cmake/plugin.map.
# Usage: conformance_symbols_message_test.sh BP_CONFORMANCE LEAKY_PLUGIN
set -u
bin=$1
plugin=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
out=$dir/out.txt
fail() { echo "FAIL: $*"; cat "$out"; exit 1; }
"$bin" --backend "$plugin" --group abi --op none --no-onnx --no-models --no-progress --max-failures -1 >"$out" 2>&1
rc=$?
[ "$rc" = 1 ] || fail "exited $rc, expected 1 (the plugin is not conformant)"
block=$(grep -A1 '^FAIL \[abi group\] bringup bringup:0 abi.PluginExportsOnlyItsEntrySymbol' "$out") ||
  fail "no failure block for PluginExportsOnlyItsEntrySymbol"
echo "$block" | grep -q "exports bp_plugin_entry and 1 other symbols (bp_test_leaked_helper). A plugin must export exactly one symbol" ||
  fail "the message does not name the exported symbols: $block"
echo "$block" | grep -q 'build it with backplane_add_plugin(<target> SOURCES ...) after find_package(Backplane)' ||
  fail "the message does not give the fix with the installed helper: $block"
! echo "$block" | grep -Eq 'abi_runtime_group\.cpp|cmake/plugin\.map' || fail "the message cites source paths: $block"
echo "conformance_symbols_message_test: ok"
