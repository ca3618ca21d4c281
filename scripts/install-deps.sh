#!/usr/bin/env bash
# Installs every Debian package Loom needs to build and test (idempotent; quick when all are present).
set -euo pipefail
PKGS=(
  build-essential cmake ninja-build ccache pkg-config
  lld
  qt6-base-dev libgl-dev
  qt6-charts-dev libqt6opengl6-dev qt6-svg-dev libqscintilla2-qt6-dev libgraphviz-dev xvfb
  llvm-19-dev libzstd-dev zlib1g-dev libedit-dev libxml2-dev
  nlohmann-json3-dev libfmt-dev libcli11-dev libxgboost-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata python3-onnx python3-numpy
  pocl-opencl-icd ocl-icd-opencl-dev opencl-headers
  libtorch-dev python3-torch
  python3-dev pybind11-dev python3-pytest
  openmpi-bin libopenmpi-dev
)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
