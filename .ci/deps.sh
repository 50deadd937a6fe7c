#!/usr/bin/env bash
# Installs what Backplane builds and runs with, from Debian 12's packages.
# Run as root on a fresh machine; quick when everything is already there.
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
  python3-torch python3-torchvision  # frontends/onnx model tests: export_models.py
  python3-dev python3-pybind11 python3-pytest python3-numpy  # frontends/python
  libtorch-dev  # frontends/torch: torch 1.13's headers and CMake package
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
# The CUDA Toolkit is not a Debian package; CMake finds it at /usr/local/cuda when present.
[ -x /usr/local/cuda/bin/nvcc ] && echo "deps: CUDA Toolkit at /usr/local/cuda" || echo "deps: no CUDA Toolkit (the CUDA plugin is skipped)"
