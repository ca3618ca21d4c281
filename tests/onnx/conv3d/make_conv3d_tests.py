#!/usr/bin/env python3
"""3-D (NCDHW) Conv, ConvTranspose, MaxPool and AveragePool variants (strides, dilations,
asymmetric pads, groups, auto_pad, output_padding, output_shape), with ONNX Runtime's outputs
as the reference, in the backend-test layout under tests/onnx/conv3d/<name>/.

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  v/bin/python tests/onnx/conv3d/make_conv3d_tests.py
"""
import os
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def make(name, op, x_shape, w_shape=None, bias=False, **attrs):
    rng = np.random.default_rng(zlib.crc32(name.encode()))
    feeds = {"X": rng.standard_normal(x_shape).astype(np.float32)}
    inputs, inits = ["X"], []
    if w_shape is not None:
        inits.append(numpy_helper.from_array((rng.standard_normal(w_shape) * 0.3).astype(np.float32), "W"))
        inputs.append("W")
        if bias:
            n = w_shape[0] if op == "Conv" else w_shape[1] * attrs.get("group", 1)
            inits.append(numpy_helper.from_array(rng.standard_normal([n]).astype(np.float32), "B"))
            inputs.append("B")
    node = helper.make_node(op, inputs, ["Y"], **attrs)
    graph = helper.make_graph([node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8

    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    y = sess.run(None, feeds)[0]
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    with open(os.path.join(d, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(feeds["X"]).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y).SerializeToString())


make("conv3d_basic_bias", "Conv", [2, 3, 5, 6, 7], [4, 3, 3, 3, 3], bias=True)
make("conv3d_strides_asym_pads", "Conv", [1, 2, 7, 6, 8], [3, 2, 3, 2, 3], strides=[2, 1, 2], pads=[1, 0, 2, 0, 1, 1])
make("conv3d_dilations_groups", "Conv", [1, 4, 8, 7, 7], [6, 2, 2, 3, 2], bias=True, dilations=[2, 1, 2], group=2)
make("conv3d_autopad_same_upper", "Conv", [1, 2, 5, 5, 6], [2, 2, 2, 3, 4], auto_pad="SAME_UPPER", strides=[2, 2, 1])
make("convtranspose3d_strides_pads", "ConvTranspose", [1, 3, 3, 4, 3], [3, 2, 3, 3, 2], bias=True,
     strides=[2, 1, 2], pads=[1, 0, 1, 0, 1, 0])
make("convtranspose3d_dilations_outpad_groups", "ConvTranspose", [2, 4, 3, 3, 4], [4, 1, 2, 2, 3],
     strides=[3, 2, 1], dilations=[2, 1, 1], output_padding=[1, 1, 0], group=2)
make("convtranspose3d_output_shape", "ConvTranspose", [1, 2, 3, 3, 3], [2, 3, 3, 3, 3], strides=[2, 2, 2],
     output_shape=[6, 7, 6])
make("maxpool3d_strides_pads", "MaxPool", [1, 2, 7, 6, 8], kernel_shape=[3, 2, 3], strides=[2, 1, 2], pads=[1, 0, 1, 1, 1, 1])
make("averagepool3d_count_include_pad", "AveragePool", [1, 2, 5, 6, 7], kernel_shape=[2, 3, 3], strides=[1, 2, 2],
     pads=[1, 1, 0, 0, 1, 1], count_include_pad=1)
make("convtranspose3d_autopad_same_upper", "ConvTranspose", [1, 2, 3, 2, 3], [2, 2, 2, 3, 3], strides=[2, 2, 1],
     auto_pad="SAME_UPPER")
