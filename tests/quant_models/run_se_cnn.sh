#!/usr/bin/env bash
# The SE-block CNN (examples/models/make_se_cnn.py: SiLU, leaky relu, squeeze-and-excitation
# broadcast mul, padded average pools, broadcast add) quantized by ONNX Runtime (QDQ and
# QOperator), checked against ONNX Runtime's int8 outputs; exit 77 (skip) without onnxruntime.
# Needs no PyTorch. Usage: run_se_cnn.sh LOOM SOURCE_DIR MODELS_DIR ORT_PYTHON
set -euo pipefail
LOOM="$1"
SRC="$2"
OUT="$3"
ORTPY="$4"
if ! "$ORTPY" -c "import onnxruntime.quantization" 2>/dev/null; then
  echo "SKIP: $ORTPY cannot import onnxruntime.quantization (python3 -m venv V && V/bin/pip install" \
       "onnxruntime onnx; then configure with -DLOOM_ORT_PYTHON=V/bin/python)"
  exit 77
fi
"$ORTPY" "$SRC/examples/models/make_se_cnn.py" --models "$OUT"
"$ORTPY" "$SRC/examples/models/make_quant_models.py" --models "$OUT" --only se_cnn 2>&1 | grep -v -i warning || true
exec "$ORTPY" "$SRC/tests/quant_models/check_quant_models.py" "$LOOM" "$OUT"/se_cnn_int8_qdq "$OUT"/se_cnn_int8_qop
