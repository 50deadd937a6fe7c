#!/usr/bin/env bash
# Compares libbackplane's ABI with the committed baseline (abigail-tools).
# Additions are fine (a minor ABI bump); an incompatible change fails.
# To accept an intended change: bash .ci/abi_check.sh --update, and add a line
# to abi/CHANGELOG.md. A missing baseline fails: writing it here would compare
# the library with itself and pass whatever changed.
# BP_ABI_BASELINE names another baseline file (the CI scripts' test uses it).
set -uo pipefail
cd "$(dirname "$0")/.."
lib=build/default/lib/libbackplane.so
baseline=${BP_ABI_BASELINE:-abi/baseline/libbackplane.abi}
headers=abi/include/backplane
current=build/default/libbackplane.abi
if [ "${1:-}" != "--update" ] && [ ! -f "$baseline" ]; then
  echo "abi: FAIL: no baseline at $baseline; create it from a build of the last release with:" \
       "bash .ci/abi_check.sh --update"
  exit 1
fi
abidw --no-corpus-path --headers-dir "$headers" --out-file "$current" "$lib" || exit 1
if [ "${1:-}" = "--update" ]; then
  mkdir -p "$(dirname "$baseline")"
  cp "$current" "$baseline"
  echo "abi: baseline written to $baseline"
  exit 0
fi
abidiff --headers-dir2 "$headers" "$baseline" "$current"
rc=$?
if (( rc & 8 )); then echo "abi: INCOMPATIBLE change against $baseline"; exit 1; fi
if (( rc & 3 )); then echo "abi: abidiff failed (rc=$rc)"; exit 1; fi
if (( rc & 4 )); then echo "abi: compatible additions against $baseline (bump the minor version)"; fi
echo "abi: ok"
