#!/usr/bin/env python3
"""Loop, Scan and If variants beyond the node tests (scan axes and directions, a Loop that ends
by its folded condition, outer-scope captures, If on data with tensor branches), with ONNX
Runtime's outputs as the reference, in the backend-test layout under tests/onnx/control/<name>/.

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  v/bin/python tests/onnx/control/make_control_tests.py
"""
import os
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
F = TensorProto.FLOAT


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def save(name, graph, feeds, opset):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    results = sess.run(None, feeds)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, i in enumerate(graph.input):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[i.name]).SerializeToString())
    for k, r in enumerate(results):
        with open(os.path.join(d, "test_data_set_0", f"output_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(r).SerializeToString())


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


# Scan: two states, two scan inputs (one reversed, one along axis 1), outputs along axis 1 and
# reversed; the body multiplies by an outer-scope weight (a capture).
def scan_axes_directions():
    r = rng("scan_axes_directions")
    body = helper.make_graph(
        [helper.make_node("MatMul", ["x_t", "W"], ["xw"]),
         helper.make_node("Add", ["h", "xw"], ["h1"]),
         helper.make_node("Tanh", ["h1"], ["h_out"]),
         helper.make_node("Mul", ["acc", "y_t"], ["acc_out"]),
         helper.make_node("Add", ["h_out", "acc_out"], ["s1"]),
         helper.make_node("Identity", ["h_out"], ["s2"])],
        "body", [vi("h", [2, 3]), vi("acc", [2, 3]), vi("x_t", [2, 4]), vi("y_t", [2, 3])],
        [vi("h_out", [2, 3]), vi("acc_out", [2, 3]), vi("s1", [2, 3]), vi("s2", [2, 3])])
    W = (r.standard_normal([4, 3]) * 0.5).astype(np.float32)
    node = helper.make_node("Scan", ["h0", "a0", "x", "y"], ["hT", "aT", "o1", "o2"], body=body, num_scan_inputs=2,
                            scan_input_axes=[0, 1], scan_input_directions=[1, 0],
                            scan_output_axes=[1, 0], scan_output_directions=[0, 1])
    g = helper.make_graph([node], "scan_axes_directions",
                          [vi("h0", [2, 3]), vi("a0", [2, 3]), vi("x", [5, 2, 4]), vi("y", [2, 5, 3])],
                          [vi("hT", [2, 3]), vi("aT", [2, 3]), vi("o1", [2, 5, 3]), vi("o2", [5, 2, 3])],
                          [numpy_helper.from_array(W, "W")])
    feeds = {"h0": r.standard_normal([2, 3]).astype(np.float32), "a0": r.standard_normal([2, 3]).astype(np.float32),
             "x": r.standard_normal([5, 2, 4]).astype(np.float32),
             "y": (0.5 + r.random([2, 5, 3])).astype(np.float32)}
    save("scan_axes_directions", g, feeds, 16)


# Loop with a trip count of 10 whose condition (iter < 3, folded each iteration) ends it after
# 4 iterations; a loop-carried tensor and a scan output; the body reads an outer value.
def loop_condition_ends():
    r = rng("loop_condition_ends")
    body = helper.make_graph(
        [helper.make_node("Constant", [], ["three"], value=numpy_helper.from_array(np.array(3, np.int64), "three")),
         helper.make_node("Less", ["i", "three"], ["cond_out"]),
         helper.make_node("Cast", ["i"], ["fi"], to=F),
         helper.make_node("Mul", ["v", "scale"], ["vs"]),
         helper.make_node("Add", ["vs", "fi"], ["v_out"]),
         helper.make_node("Sin", ["v_out"], ["scan_out"])],
        "body", [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("v", [3, 2])],
        [vi("cond_out", [], TensorProto.BOOL), vi("v_out", [3, 2]), vi("scan_out", [3, 2])])
    consts = [helper.make_node("Constant", [], ["M"], value=numpy_helper.from_array(np.array(10, np.int64), "M")),
              helper.make_node("Constant", [], ["go"], value=numpy_helper.from_array(np.array(True), "go"))]
    node = helper.make_node("Loop", ["M", "go", "v0"], ["vT", "scans"], body=body)
    g = helper.make_graph(consts + [node], "loop_condition_ends", [vi("v0", [3, 2]), vi("scale", [3, 2])],
                          [vi("vT", [3, 2]), vi("scans", [4, 3, 2])])
    feeds = {"v0": r.standard_normal([3, 2]).astype(np.float32), "scale": r.standard_normal([3, 2]).astype(np.float32)}
    save("loop_condition_ends", g, feeds, 13)


# If on a data condition (x's sum > 0) with tensor branches computed from outer values, in a
# graph that uses the result further.
def if_data_condition(name, sign):
    r = rng(name)
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "x"], ["t_out"])], "then", [], [vi("t_out", [2, 3])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e_out"])], "else", [], [vi("e_out", [2, 3])])
    nodes = [helper.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             helper.make_node("Constant", [], ["zero"], value=numpy_helper.from_array(np.array(0, np.float32), "zero")),
             helper.make_node("Greater", ["s", "zero"], ["cond"]),
             helper.make_node("If", ["cond"], ["r"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Add", ["r", "x"], ["out"])]
    g = helper.make_graph(nodes, name, [vi("x", [2, 3])], [vi("out", [2, 3])])
    x = r.standard_normal([2, 3]).astype(np.float32)
    x = np.abs(x) * sign
    save(name, g, {"x": x}, 13)


scan_axes_directions()
loop_condition_ends()
if_data_condition("if_data_condition_then", 1.0)
if_data_condition("if_data_condition_else", -1.0)


# Models Loom refuses with a typed error (ctest onnx.control_errors_*): a Loop whose condition
# depends on data, and an If on data whose branches differ in shape.
def errors():
    d = os.path.join(HERE, "errors")
    os.makedirs(d, exist_ok=True)
    body = helper.make_graph(
        [helper.make_node("ReduceSum", ["v"], ["s"], keepdims=0),
         helper.make_node("Constant", [], ["lim"], value=numpy_helper.from_array(np.array(100, np.float32), "lim")),
         helper.make_node("Less", ["s", "lim"], ["cond_out"]),
         helper.make_node("Add", ["v", "v"], ["v_out"])],
        "body", [vi("i", [], TensorProto.INT64), vi("c", [], TensorProto.BOOL), vi("v", [2])],
        [vi("cond_out", [], TensorProto.BOOL), vi("v_out", [2])])
    consts = [helper.make_node("Constant", [], ["M"], value=numpy_helper.from_array(np.array(50, np.int64), "M")),
              helper.make_node("Constant", [], ["go"], value=numpy_helper.from_array(np.array(True), "go"))]
    g = helper.make_graph(consts + [helper.make_node("Loop", ["M", "go", "v0"], ["vT"], body=body)], "loop_data_cond",
                          [vi("v0", [2])], [vi("vT", [2])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(d, "loop_data_condition.onnx"))
    then_g = helper.make_graph([helper.make_node("Identity", ["x"], ["t_out"])], "then", [], [vi("t_out", [4])])
    else_g = helper.make_graph([helper.make_node("Concat", ["x", "x"], ["e_out"], axis=0)], "else", [], [vi("e_out", [8])])
    g = helper.make_graph([helper.make_node("If", ["c"], ["r"], then_branch=then_g, else_branch=else_g)], "if_types",
                          [vi("c", [], TensorProto.BOOL), vi("x", [4])], [vi("r", [None])])
    onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)]), os.path.join(d, "if_branch_shapes.onnx"))


errors()
