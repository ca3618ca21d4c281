#!/usr/bin/env bash
# Makes the dynamic-axis models and runs `loom onnx-test` on them; exit 77 (skip) without torch.
# Usage: run_dynamic_models.sh LOOM SOURCE_DIR MODELS_DIR
set -euo pipefail
LOOM="$1"
SRC="$2"
OUT="$3"
PY=/usr/bin/python3
if ! "$PY" -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "SKIP: $PY cannot import torch, torchvision and onnx (scripts/install-bench-deps.sh installs them)"
  exit 77
fi
"$PY" "$SRC/examples/models/make_dynamic_models.py" --out "$OUT" 2>&1 | grep -v -i warning || true
DIRS=()
for m in cnn_dynamic bert_dynamic ocr_dynamic shufflenet_dynamic vit_dynamic; do
  if [ ! -f "$OUT/$m/model.onnx" ]; then
    echo "FAIL: make_dynamic_models.py did not write $OUT/$m/model.onnx"
    exit 1
  fi
  DIRS+=("$OUT/$m")
done
exec "$LOOM" onnx-test "${DIRS[@]}"
