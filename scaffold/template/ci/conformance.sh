#!/bin/sh
# CI for the @NAME@ plugin: build it against the installed Backplane SDK and
# run the SDK's bp-conformance on it (the ctest test in CMakeLists.txt).
# Fails when a claimed cell fails or crashes, or an xfail entry passes.
# Run from the project root with the SDK's prefix in CMAKE_PREFIX_PATH
# (not needed when the SDK is installed in /usr); arguments go to cmake:
#   CMAKE_PREFIX_PATH=/opt/backplane sh ci/conformance.sh -DCONFORMANCE_ARGS=--quick
# Any CI runs it as one step; in GitHub Actions, for example:
#   - run: sh ci/conformance.sh
#     env: { CMAKE_PREFIX_PATH: /opt/backplane }
# The report of every case is then in build/conformance.json.
set -eu
cmake -S . -B build "$@"
cmake --build build
ctest --test-dir build --verbose
