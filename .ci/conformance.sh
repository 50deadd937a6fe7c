#!/usr/bin/env bash
# The README's main command: install packages, build, and run bp-conformance
# over every backend found: the device inventory, each backend's op x dtype
# matrix with its fallback, dtype-claims, ABI and streams groups, the ONNX node-test
# corpus score per backend, and a one-line verdict per backend. Reports land
# in build/default/conformance.{json,xml}. Extra arguments go to
# bp-conformance (e.g. --backend opencl --quick).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
cmake --preset default
cmake --build build/default
# The models group's networks, exported once into the build tree with Debian's
# python3-torch (no download); without torch the group says it did not run.
/usr/bin/python3 frontends/onnx/tests/export_models.py build/default/models \
  || echo "conformance: models not exported (python3-torch / python3-torchvision missing?)"
/usr/bin/python3 frontends/onnx/tests/export_recurrent.py build/default/models \
  || echo "conformance: the recurrent model not exported (python3-torch missing?)"
/usr/bin/python3 frontends/onnx/tests/export_qdq.py build/default/models \
  || echo "conformance: the int8 QDQ model not exported (python3-torch missing?)"
/usr/bin/python3 frontends/onnx/tests/export_swin.py build/default/models \
  || echo "conformance: the shifted-window transformer not exported (python3-torch missing?)"
build/default/bin/bp-conformance --verify-expectations --json build/default/conformance.json \
  --junit build/default/conformance.xml "$@"
