#!/usr/bin/env bash
# The numpy emulations of ONNX Runtime's float kernels (LayerNormalization, SkipLayerNormalization,
# Softmax, Erf, Tanh, Gelu: tests/onnx/quant_ops/make_quant_op_tests.py), which Loom's float
# islands of a quantized model reproduce, must equal the installed ONNX Runtime bit for bit on
# random inputs; exit 77 (skip) without onnxruntime. Usage: run_ort_float_emulation.sh SOURCE_DIR ORT_PYTHON
set -euo pipefail
SRC="$1"
ORTPY="$2"
if ! "$ORTPY" -c "import onnxruntime, onnx, numpy" 2>/dev/null; then
  echo "SKIP: $ORTPY cannot import onnxruntime (python3 -m venv V && V/bin/pip install onnxruntime onnx;" \
       "then configure with -DLOOM_ORT_PYTHON=V/bin/python)"
  exit 77
fi
exec "$ORTPY" "$SRC/tests/onnx/quant_ops/make_quant_op_tests.py" --check-emulations
