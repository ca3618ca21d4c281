#!/usr/bin/python3
"""Long float32 sums: InstanceNormalization over a 128x128 map (on the graph input: the mean op;
after a conv: NCHW16c, where ConvertLayout makes the means global average pools) and a
ReduceSum / ReduceMean over 20000 elements, on data with a large mean (10 + N(0,1)), in the
backend-test layout under tests/onnx/long_sums/<name>/ (ctest onnx.long_sums). The reference is
computed in float64 with numpy and rounded once, and the test's tolerance (rtol 1e-5, atol 2e-6)
is one that float32 summed one element after another misses: before sums of 4096 or more
elements accumulated in float64 (topi sumAccumulator), Loom's InstanceNorm over a 224x224 map
erred by 4.5e-5 (ORT: 2.6e-6) and a style-transfer net missed PyTorch at rtol 1e-3.

Needs numpy and onnx (Debian's python3-onnx): /usr/bin/python3 tests/onnx/long_sums/make_long_sum_tests.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def save(name, nodes, inputs, out_shape, inits, feeds, want):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    g = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info("y", F, out_shape)],
                          [numpy_helper.from_array(v, k) for k, v in inits.items()])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, (n, a) in enumerate(feeds.items()):
        onnx.save_tensor(numpy_helper.from_array(a, n), os.path.join(d, "test_data_set_0", f"input_{i}.pb"))
    onnx.save_tensor(numpy_helper.from_array(want.astype(np.float32), "y"),
                     os.path.join(d, "test_data_set_0", "output_0.pb"))


def instance_norm(x, s, b, eps=1e-5):
    mu = x.mean((2, 3), keepdims=True)
    var = ((x - mu) ** 2).mean((2, 3), keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * s[None, :, None, None] + b[None, :, None, None]


def main():
    rng = np.random.default_rng(2121)
    H = W = 128
    # On the graph input (plain NCHW): InstanceNorm decomposes into mean ops.
    x = (10 + rng.standard_normal((1, 2, H, W))).astype(np.float32)
    s = rng.uniform(0.5, 1.5, 2).astype(np.float32)
    b = rng.normal(0, 0.1, 2).astype(np.float32)
    save("instance_norm_input_128x128",
         [helper.make_node("InstanceNormalization", ["x", "s", "b"], ["y"], epsilon=1e-5)],
         [helper.make_tensor_value_info("x", F, [1, 2, H, W])], [1, 2, H, W], {"s": s, "b": b}, {"x": x},
         instance_norm(x.astype(np.float64), s, b))
    # After a 1x1 conv to 16 channels (blocked NCHW16c), back to one channel by another.
    x = rng.standard_normal((1, 2, H, W)).astype(np.float32)
    w1 = rng.uniform(-1, 1, (16, 2, 1, 1)).astype(np.float32)
    b1 = np.full(16, 10, np.float32)
    s = rng.uniform(0.5, 1.5, 16).astype(np.float32)
    b = rng.normal(0, 0.1, 16).astype(np.float32)
    w2 = (rng.uniform(-1, 1, (1, 16, 1, 1)) / 4).astype(np.float32)
    h = np.einsum("oc,nchw->nohw", w1[:, :, 0, 0].astype(np.float64), x.astype(np.float64)) + b1[None, :, None, None]
    want = np.einsum("oc,nchw->nohw", w2[:, :, 0, 0].astype(np.float64), instance_norm(h, s, b))
    save("instance_norm_blocked_128x128",
         [helper.make_node("Conv", ["x", "w1", "b1"], ["h"]),
          helper.make_node("InstanceNormalization", ["h", "s", "b"], ["n"], epsilon=1e-5),
          helper.make_node("Conv", ["n", "w2"], ["y"])],
         [helper.make_tensor_value_info("x", F, [1, 2, H, W])], [1, 1, H, W],
         {"w1": w1, "b1": b1, "s": s, "b": b, "w2": w2}, {"x": x}, want)
    # ReduceSum and ReduceMean over 20000 elements.
    x = (10 + rng.standard_normal((3, 20000))).astype(np.float32)
    axes = np.array([1], np.int64)
    save("reduce_sum_20000",
         [helper.make_node("ReduceSum", ["x", "axes"], ["y"], keepdims=0)],
         [helper.make_tensor_value_info("x", F, [3, 20000])], [3], {"axes": axes}, {"x": x},
         x.astype(np.float64).sum(1))
    save("reduce_mean_20000",
         [helper.make_node("ReduceMean", ["x"], ["y"], axes=[1], keepdims=1)],
         [helper.make_tensor_value_info("x", F, [3, 20000])], [3, 1], {}, {"x": x},
         x.astype(np.float64).mean(1, keepdims=True))


if __name__ == "__main__":
    main()
