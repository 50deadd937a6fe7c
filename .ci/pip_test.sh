#!/usr/bin/env bash
# pip install . as a user does it: a fresh venv with the pinned torch
# (requirements.txt, from pip's cache), `pip install --no-build-isolation .`
# (scikit-build-core builds against that torch), then the package used from
# another directory with no PYTHONPATH: a device test on the cpu backend and
# the torch 2.x suite (test_torch2.py; ctest runs every suite from the build tree).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
# A fixed path, made fresh each run: the torch and pybind11 include paths
# the build sees are inside it, and a random name made every run miss ccache
# for the torch bridge's sources (about 10 minutes on two cores).
venv=${BP_PIP_TEST_VENV:-/tmp/bp-pip-test-venv}
rm -rf "$venv"
work=$(mktemp -d /tmp/bp-pip-work.XXXXXX)
trap 'rm -rf "$venv" "$work"' EXIT
/usr/bin/python3 -m venv "$venv"
"$venv/bin/pip" install -q --disable-pip-version-check --no-deps -r requirements.txt
export CCACHE_DIR="${CCACHE_DIR:-$HOME/.cache/ccache}" CCACHE_BASEDIR="$root" CCACHE_NOHASHDIR=true
"$venv/bin/pip" install -q --disable-pip-version-check --no-build-isolation "$root"
# The suite with the repository's layout around it: its conftest finds the
# shared BACKPLANE_EXPECT_BACKENDS helper at tests/expected_backends.py.
mkdir -p "$work/frontends/torch" "$work/tests"
cp -r frontends/torch/tests "$work/frontends/torch/tests"
cp tests/expected_backends.py "$work/tests/"
cd "$work"
env -u PYTHONPATH -u LD_LIBRARY_PATH "$venv/bin/python" -c '
import torch, backplane, backplane.torch as bt
assert "site-packages" in backplane.__file__, backplane.__file__
print("pip-installed backplane:", backplane.__file__, "torch", torch.__version__)
info = bt.init("cpu")
y = (torch.arange(4.0, device="backplane") * 2).relu()
assert y.device.type == "backplane" and y.cpu().tolist() == [0.0, 2.0, 4.0, 6.0], y
print("device test:", info["backends"], y.device, y.cpu().tolist())'
env -u PYTHONPATH -u LD_LIBRARY_PATH BACKPLANE_TORCH_BACKEND=cpu \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider frontends/torch/tests/test_torch2.py
