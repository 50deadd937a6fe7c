#!/usr/bin/env bash
# The README's test command: install packages, build, run the unit tests.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
cmake --preset default
cmake --build build/default
rc=0
ctest --preset default || rc=$?
# torch's OpInfo run per backend (torch_opinfo_tests_*): its summary lines,
# printed whether the run passed or not.
grep -h "^opinfo " build/default/Testing/Temporary/LastTest.log || true
exit "$rc"
