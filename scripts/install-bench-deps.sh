#!/usr/bin/env bash
# Installs what the benchmarks compare against (OpenBLAS, oneDNN) and what builds the real models
# (PyTorch + torchvision for examples/models/make_torch_models.py); the default tests never need them.
set -euo pipefail
PKGS=(libopenblas-dev libdnnl-dev python3-torch python3-torchvision python3-onnx)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-bench-deps: all ${#PKGS[@]} packages present"
  exit 0
fi
echo "install-bench-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -q
$SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
