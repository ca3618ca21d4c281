#!/usr/bin/env python3
"""Patterns that exporters emit which look out of scope but are not: one small model each
(onnx.helper, fixed seeds) with ONNX Runtime's outputs as the reference, in the backend-test
layout under tests/onnx/export_quirks/<name>/.

- dropout_training_zero_ratio: torchvision's Swin Transformer calls F.dropout on its attention
  with the default training=True, so torch.onnx exports Dropout(x, ratio=0, training_mode=true).
  With a ratio of 0 nothing is dropped; `loom onnx-test` used to skip such models as training
  mode, so a whole model family went untested.

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  v/bin/python tests/onnx/export_quirks/make_export_quirk_tests.py
"""
import os

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, model, inputs):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = sess.run(None, inputs)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, v in enumerate(inputs.values()):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())
    for k, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r).SerializeToString())


def dropout_training_zero_ratio():
    # Softmax -> Dropout(ratio 0, training) -> MatMul, as in Swin's window attention; the mask too.
    N = helper.make_node
    nodes = [
        N("Constant", [], ["ratio"], value=numpy_helper.from_array(np.array(0.0, np.float32))),
        N("Constant", [], ["training"], value=numpy_helper.from_array(np.array(True))),
        N("Softmax", ["S"], ["P"], axis=-1),
        N("Dropout", ["P", "ratio", "training"], ["D", "mask"]),
        N("MatMul", ["D", "V"], ["Y"]),
    ]
    graph = helper.make_graph(
        nodes, "dropout_training_zero_ratio",
        [helper.make_tensor_value_info("S", TensorProto.FLOAT, [2, 7, 7]),
         helper.make_tensor_value_info("V", TensorProto.FLOAT, [2, 7, 5])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None),
         helper.make_tensor_value_info("mask", TensorProto.BOOL, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    rng = np.random.default_rng(2111)
    save("dropout_training_zero_ratio", model,
         {"S": rng.standard_normal([2, 7, 7]).astype(np.float32),
          "V": rng.standard_normal([2, 7, 5]).astype(np.float32)})


dropout_training_zero_ratio()
