#!/usr/bin/env bash
# Installs, builds and opens Loom Studio on the bundled example model (examples/models/small_cnn).
# Without a display it renders the window offscreen to build/studio-example.png instead.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
cmake -S . -B build -G Ninja
cmake --build build -j "$(nproc)" --target loom loom-studio
model=examples/models/small_cnn/model.onnx
if [ -n "${DISPLAY:-}" ] || [ -n "${WAYLAND_DISPLAY:-}" ]; then
  exec ./build/bin/loom-studio "$model" --preset matmul:M=256,N=256,K=256 \
    --schedule examples/schedules/matmul_tiled.py
fi
echo "run-example: no display; rendering Loom Studio offscreen to build/studio-example.png"
QT_QPA_PLATFORM=offscreen ./build/bin/loom-studio "$model" --graph fused \
  --preset matmul:M=256,N=256,K=256 --schedule examples/schedules/matmul_tiled.py \
  --screenshot build/studio-example.png
echo "run-example: wrote build/studio-example.png"
