#!/usr/bin/env python3
"""Quantizes zoo models with ONNX Runtime's quantizer and records ONNX Runtime's int8 outputs.

Reads the float models that make_torch_models.py writes (OUT/<name>/model.onnx; make them first
with `/usr/bin/python3 examples/models/make_torch_models.py --only resnet18,mobilenet_v2,bert_encoder`,
or se_cnn with make_se_cnn.py) and writes, next to them:

  OUT/<name>_int8_qdq/   quantize_static, QDQ format (QuantizeLinear/DequantizeLinear pairs)
  OUT/<name>_int8_qop/   quantize_static, QOperator format (QLinearConv, QLinearAdd, QGemm, ...)
  OUT/<name>_int8_dyn/   quantize_dynamic (DynamicQuantizeLinear + MatMulInteger), for transformers

Static quantization: per-channel int8 weights, uint8 activations, MinMax calibration on 8 random
inputs (fixed seed). Weights use 7 of their 8 bits (reduce_range), as ONNX Runtime advises for
machines without VNNI: there its u8 x s8 kernels (vpmaddubsw) add two products in int16 and
saturate, so full-range weights give results that differ from the model's definition by up to
7% (ResNet-18) or 36% (MobileNet-v2) of the output's range; Loom computes the definition exactly. Each directory holds model.onnx, test_data_set_0/ (one random input and ONNX
Runtime's output for the quantized model, the ONNX backend-test layout) and float_output_0.pb
(the float model's output for the same input, to state the error of quantization itself) and
ort_unoptimized_output_0.pb (ONNX Runtime's output for the quantized model with its graph
optimizations off: how far ONNX Runtime's own two ways of running the model differ).
Needs onnxruntime, onnx and numpy (a venv: python3 -m venv v && v/bin/pip install onnxruntime).

Usage: make_quant_models.py [--models DIR] [--only NAME[,NAME...]]
"""
import argparse
import os
import sys

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper
from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic,
                                      quantize_static)
from onnxruntime.quantization.shape_inference import quant_pre_process

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))

# float model -> the quantized variants made from it.
PLAN = {
    "resnet18": ["qdq", "qop"],
    "mobilenet_v2": ["qdq", "qop"],
    "bert_encoder": ["dyn"],
    "se_cnn": ["qdq", "qop"],  # make_se_cnn.py (onnx.helper, no PyTorch)
    "efficientnet_b0": ["qdq", "qop"],  # SiLU, squeeze-and-excitation
}


class RandomReader(CalibrationDataReader):
    """8 calibration inputs drawn like the model's test input (normal images; token ids)."""

    def __init__(self, name, shape, dtype, seed):
        rng = np.random.default_rng(seed)
        self.batches = [{name: draw(rng, shape, dtype)} for _ in range(8)]

    def get_next(self):
        return self.batches.pop() if self.batches else None


def draw(rng, shape, dtype):
    if dtype == np.int64:
        return rng.integers(0, 8192, size=shape, dtype=np.int64)
    return rng.standard_normal(shape).astype(np.float32)


def read_tensor(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def write_tensor(path, array, name):
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(array, name).SerializeToString())


def run(path, feeds, optimize=True):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 2
    if not optimize:
        opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    return sess.run(None, feeds)[0]


def make(name, kind, models):
    src = os.path.join(models, name, "model.onnx")
    if not os.path.exists(src):
        sys.exit(f"{src} is missing: run make_torch_models.py --only {name} first")
    d = os.path.join(models, f"{name}_int8_{kind}")
    data = os.path.join(d, "test_data_set_0")
    os.makedirs(data, exist_ok=True)
    base = onnx.load(src)
    inp = base.graph.input[0]
    in_name = inp.name
    shape = [dim.dim_value for dim in inp.type.tensor_type.shape.dim]
    dtype = np.int64 if inp.type.tensor_type.elem_type == onnx.TensorProto.INT64 else np.float32
    pre = os.path.join(d, "preprocessed.onnx")
    quant_pre_process(src, pre, skip_symbolic_shape=True)
    out = os.path.join(d, "model.onnx")
    if kind == "dyn":
        quantize_dynamic(pre, out, weight_type=QuantType.QInt8, reduce_range=True)
    else:
        quantize_static(pre, out, RandomReader(in_name, shape, dtype, seed=7),
                        quant_format=QuantFormat.QDQ if kind == "qdq" else QuantFormat.QOperator,
                        per_channel=True, reduce_range=True, activation_type=QuantType.QUInt8,
                        weight_type=QuantType.QInt8)
    os.remove(pre)
    x = draw(np.random.default_rng(11), shape, dtype)
    y = run(out, {in_name: x})
    yf = run(src, {in_name: x})
    write_tensor(os.path.join(data, "input_0.pb"), x, in_name)
    write_tensor(os.path.join(data, "output_0.pb"), y.astype(np.float32), "output")
    write_tensor(os.path.join(d, "float_output_0.pb"), yf.astype(np.float32), "output")
    write_tensor(os.path.join(d, "ort_unoptimized_output_0.pb"), run(out, {in_name: x}, optimize=False)
                 .astype(np.float32), "output")
    m = onnx.load(out)
    ops = sorted({(n.domain + "." if n.domain else "") + n.op_type for n in m.graph.node})
    err = np.abs(y - yf).max() / max(np.abs(yf).max(), 1e-12)
    print(f"{name}_int8_{kind}: {os.path.getsize(out) / 1e6:.1f} MB, {len(m.graph.node)} nodes "
          f"({', '.join(ops)}); ORT int8 vs float: max|diff| {100 * err:.2f}% of max|float|")


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=os.path.join(REPO, "build", "models"),
                    help="directory of make_torch_models.py's output (and of ours)")
    ap.add_argument("--only", default="", help="comma-separated subset of " + ",".join(PLAN))
    args = ap.parse_args()
    names = [n for n in args.only.split(",") if n] or list(PLAN)
    for n in names:
        if n not in PLAN:
            ap.error(f"unknown model {n}; known: {', '.join(PLAN)}")
        for kind in PLAN[n]:
            make(n, kind, args.models)
    return 0


if __name__ == "__main__":
    sys.exit(main())
