#!/usr/bin/env bash
# Makes the PyTorch-built real models and runs `loom onnx-test` on them; exit 77 (skip) without torch.
# Usage: run_torch_models.sh LOOM SOURCE_DIR MODELS_DIR
set -euo pipefail
LOOM="$1"
SRC="$2"
OUT="$3"
PY=/usr/bin/python3
if ! "$PY" -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "SKIP: $PY cannot import torch, torchvision and onnx (install python3-torch python3-torchvision" \
       "python3-onnx, e.g. with scripts/install-bench-deps.sh)"
  exit 77
fi
"$PY" "$SRC/examples/models/make_torch_models.py" --out "$OUT" 2>&1 | grep -v -i warning || true
# The whole zoo (issue #17's families).
read -r -a MODELS <<< "$("$PY" -c "import sys; sys.path.insert(0, '$SRC/examples/models'); \
import make_torch_models as m; print(' '.join(m.MODELS))" 2>/dev/null)"
DIRS=()
for m in "${MODELS[@]}"; do
  if [ ! -f "$OUT/$m/model.onnx" ]; then
    echo "FAIL: make_torch_models.py did not write $OUT/$m/model.onnx"
    exit 1
  fi
  DIRS+=("$OUT/$m")
done
exec "$LOOM" onnx-test "${DIRS[@]}"
