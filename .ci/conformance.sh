#!/usr/bin/env bash
# The README's main command: install packages, build, and run bp-conformance
# over every backend found, printing each backend's op x dtype matrix.
# Extra arguments go to bp-conformance (e.g. --backend opencl --full).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
cmake --preset default
cmake --build build/default
build/default/bin/bp-info
build/default/bin/bp-conformance --json build/default/conformance.json "$@"
