#!/usr/bin/env bash
# Installs what Backplane builds and runs with: Debian 12's packages, and the
# Python packages pinned in requirements.txt (from PyPI) into a venv at
# BACKPLANE_VENV (default /opt/backplane/venv). Run as root on a fresh machine;
# quick when everything is already there (pip's cache, PIP_CACHE_DIR, keeps the
# wheels: a warm rebuild of the venv downloads nothing).
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache python3 python3-yaml pkg-config
  libdlpack-dev libdnnl-dev libhwy-dev libgtest-dev libgmock-dev libbenchmark-dev
  libcli11-dev nlohmann-json3-dev libfmt-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libgloo-dev  # bp_comm_*: collectives through Gloo
  libclblast-dev  # backends/opencl: GEMM for matmul, addmm, linear (BACKPLANE_CLBLAST)
  hipcc libamdhip64-dev
  libonnx-dev libonnx-testdata libprotobuf-dev protobuf-compiler
  # frontends/onnx's model exports stay on Debian's torch 1.13 (/usr/bin/python3):
  # its TorchScript exporter writes the model files the tests and bench/ expect,
  # and torch 2.x's default exporter needs onnxscript.
  python3-torch python3-torchvision python3-numpy
  python3-dev python3-venv  # the venv (requirements.txt) and the headers its modules build with
  libtorch-dev  # bench/: libtorch 1.13 as a C++ speed anchor
  libxml2-dev libxml2-utils
  abigail-tools
  dpkg-dev file
  clang-14
)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "deps: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
else
  echo "deps: all ${#packages[@]} packages present"
fi

# The Python environment: torch 2.x for backplane.torch, pytest, numpy,
# onnxruntime... exactly as requirements.txt pins them. Rebuilt only when
# requirements.txt changes (its hash is kept in the venv).
venv="${BACKPLANE_VENV:-/opt/backplane/venv}"
root="$(cd "$(dirname "$0")/.." && pwd)"
want=$(sha256sum "$root/requirements.txt" | cut -d' ' -f1)
if [ "$(cat "$venv/.requirements.sha256" 2>/dev/null)" != "$want" ]; then
  echo "deps: making the Python venv $venv from requirements.txt"
  t0=$(date +%s)
  rm -rf "$venv"
  /usr/bin/python3 -m venv "$venv"
  "$venv/bin/python" -m pip install -q --disable-pip-version-check --no-deps --require-virtualenv \
    -r "$root/requirements.txt"
  "$venv/bin/python" -m pip check
  echo "$want" > "$venv/.requirements.sha256"
  echo "deps: venv ready in $(( $(date +%s) - t0 )) s"
else
  echo "deps: venv $venv matches requirements.txt"
fi

# The CUDA Toolkit is not a Debian package; CMake finds it at /usr/local/cuda when present.
[ -x /usr/local/cuda/bin/nvcc ] && echo "deps: CUDA Toolkit at /usr/local/cuda" || echo "deps: no CUDA Toolkit (the CUDA plugin is skipped)"
