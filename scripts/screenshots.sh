#!/usr/bin/env bash
# Regenerates docs/screenshots/*.png with loom-studio --screenshot (offscreen). Usage:
#   scripts/screenshots.sh [BUILD_DIR]   (default: build)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-$root/build}
studio=$build/bin/loom-studio
out=$root/docs/screenshots
mkdir -p "$out"
export QT_QPA_PLATFORM=offscreen
"$studio" --screenshot "$out/workbench.png" --size 1600x1000 --preset "matmul:M=256,N=256,K=256" \
  --schedule "$root/examples/schedules/matmul_tiled.py" --model "$root/examples/models/small_cnn/model.onnx" \
  --link-line 10 --run --find conv
"$studio" --screenshot "$out/workbench-dark.png" --size 1600x1000 --dark --preset "matmul:M=128,N=128,K=128" \
  --schedule "$root/examples/schedules/matmul_tiled.py" --model "$root/examples/models/transformer_block/model.onnx" \
  --graph imported
# The tuning monitor after 32 trials of a matmul, the best candidate opened in the editor.
"$studio" --screenshot "$out/tuning.png" --size 1600x1000 --preset "matmul:M=256,N=256,K=256" \
  --model "$root/examples/models/small_cnn/model.onnx" --tune 32
# Keep the committed images small.
if command -v pngquant >/dev/null; then pngquant --force --ext .png "$out"/*.png; fi
ls -l "$out"
