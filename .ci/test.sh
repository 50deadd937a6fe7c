#!/usr/bin/env bash
# The README's test command: install packages, build, run the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
cmake --preset default
cmake --build build/default
ctest --preset default
