#!/usr/bin/env python3
"""A small float CNN with the ops of an EfficientNet/MobileNet-v3 block, for the int8 tests.

Writes OUT/se_cnn/model.onnx (onnx.helper, seeded random weights; no PyTorch needed), input
[1, 3, 64, 64], 100 classes:
  conv 3x3 s2 + SiLU (x * sigmoid(x)) -> depthwise 3x3 + LeakyRelu -> squeeze-and-excitation
  (global average pool, 1x1 conv, relu, 1x1 conv, sigmoid, [N, C, H, W] x [N, C, 1, 1] mul)
  -> 1x1 conv + LeakyRelu -> residual add of a 3x3 average pool (count_include_pad 0) -> add of a
  per-channel constant [1, C, 1, 1] -> 3x3 s2 average pool with padding (count_include_pad 1)
  -> conv 3x3 s2 + SiLU -> global average pool -> flatten -> Gemm.
make_quant_models.py --only se_cnn then quantizes it (QDQ and QOperator: QLinearSigmoid,
QLinearMul, QLinearLeakyRelu, QLinearAveragePool, QLinearAdd, QLinearGlobalAveragePool, ...).

Usage: make_se_cnn.py [--models DIR]   (needs onnx and numpy)
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--models", default=os.path.join(REPO, "build", "models"))
    args = ap.parse_args()
    rng = np.random.default_rng(2026)
    inits, nodes = [], []

    def w(name, shape, fan_in):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32), name))
        return name

    def b(name, n):
        inits.append(numpy_helper.from_array((rng.standard_normal(n) * 0.1).astype(np.float32), name))
        return name

    def node(op, ins, out, **attrs):
        nodes.append(helper.make_node(op, ins, [out], name=out, **attrs))
        return out

    def conv(x, out, cin, cout, k, stride=1, groups=1):
        return node("Conv", [x, w(out + "_w", [cout, cin // groups, k, k], cin // groups * k * k), b(out + "_b", cout)], out,
                    kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups)

    def silu(x, out):
        return node("Mul", [x, node("Sigmoid", [x], out + "_sig")], out)

    x = silu(conv("input", "c1", 3, 16, 3, 2), "silu1")                      # 16 x 32 x 32
    x = node("LeakyRelu", [conv(x, "dw", 16, 16, 3, 1, 16)], "lrelu1", alpha=0.1)
    g = node("GlobalAveragePool", [x], "se_pool")
    g = node("Relu", [conv(g, "se_reduce", 16, 4, 1)], "se_relu")
    g = node("Sigmoid", [conv(g, "se_expand", 4, 16, 1)], "se_gate")
    x = node("Mul", [x, g], "se_mul")                                         # broadcast [1,16,1,1]
    x = node("LeakyRelu", [conv(x, "pw", 16, 32, 1)], "lrelu2", alpha=0.1)   # 32 x 32 x 32
    p = node("AveragePool", [x], "pool_same", kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=0)
    x = node("Add", [x, p], "residual")
    inits.append(numpy_helper.from_array((rng.standard_normal([1, 32, 1, 1]) * 0.5).astype(np.float32), "shift"))
    x = node("Add", [x, "shift"], "shifted")
    x = node("AveragePool", [x], "pool_down", kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
             count_include_pad=1)                                             # 32 x 16 x 16
    x = silu(conv(x, "c2", 32, 64, 3, 2), "silu2")                           # 64 x 8 x 8
    x = node("Flatten", [node("GlobalAveragePool", [x], "head_pool")], "flat")
    node("Gemm", [x, w("fc_w", [100, 64], 64), b("fc_b", 100)], "output", transB=1)
    graph = helper.make_graph(nodes, "se_cnn", [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 64, 64])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, 100])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(args.models, "se_cnn")
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    print(f"se_cnn: {len(nodes)} nodes -> {d}/model.onnx")


if __name__ == "__main__":
    main()
