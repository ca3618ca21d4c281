#!/usr/bin/env bash
# Makes the float zoo models (PyTorch), quantizes them with ONNX Runtime (a venv with onnxruntime)
# and checks loom against ONNX Runtime's int8 outputs; exit 77 (skip) without torch or onnxruntime.
# Usage: run_quant_models.sh LOOM SOURCE_DIR MODELS_DIR ORT_PYTHON
set -euo pipefail
LOOM="$1"
SRC="$2"
OUT="$3"
ORTPY="$4"
PY=/usr/bin/python3
if ! "$PY" -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "SKIP: $PY cannot import torch, torchvision and onnx (scripts/install-bench-deps.sh installs them)"
  exit 77
fi
if ! "$ORTPY" -c "import onnxruntime.quantization" 2>/dev/null; then
  echo "SKIP: $ORTPY cannot import onnxruntime.quantization (python3 -m venv V && V/bin/pip install" \
       "onnxruntime onnx; then configure with -DLOOM_ORT_PYTHON=V/bin/python)"
  exit 77
fi
MODELS=resnet18,mobilenet_v2,bert_encoder,efficientnet_b0
"$PY" "$SRC/examples/models/make_torch_models.py" --out "$OUT" --only $MODELS 2>&1 | grep -v -i warning || true
"$ORTPY" "$SRC/examples/models/make_quant_models.py" --models "$OUT" --only $MODELS 2>&1 | grep -v -i warning || true
exec "$PY" "$SRC/tests/quant_models/check_quant_models.py" "$LOOM" \
  "$OUT"/resnet18_int8_qdq "$OUT"/resnet18_int8_qop "$OUT"/mobilenet_v2_int8_qdq "$OUT"/mobilenet_v2_int8_qop \
  "$OUT"/bert_encoder_int8_dyn "$OUT"/efficientnet_b0_int8_qdq "$OUT"/efficientnet_b0_int8_qop
