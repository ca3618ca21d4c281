#!/usr/bin/env bash
# Installs, builds and runs Loom's main job on the bundled example (the Studio, once it exists).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja
cmake --build build -j "$(nproc)" --target loom
./build/bin/loom --version
./build/bin/loom lower --workload matmul:M=64,N=64,K=64 --emit tir
