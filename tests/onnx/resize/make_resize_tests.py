#!/usr/bin/env python3
"""Resize (linear and nearest) in every coordinate_transformation_mode the importer takes, on NCHW
data (gathers along the output row) and on NCHW16c data (a 1x1 conv before the resize, so
ConvertLayout blocks it; at the graph output a layout_transform to NCHW is fused after it, inside
the network an add and a conv follow), upsampling by sizes and by scales, downsampling, one axis
each way: the one-pass and the two-pass (separable) bilinear forms of image.resize2d.

The expected outputs are ONNX Runtime's (float32). ctest runs them with rtol 1e-4 (Loom's
bilinear form computes in float32 as ORT does, up to the order of the two axes and a
multiplication by the scale's reciprocal; nearest indices in float64). The float64 reference of
the libonnx-testdata node tests (onnx.node_expected_pass) covers the same modes on tiny shapes.

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  v/bin/python tests/onnx/resize/make_resize_tests.py
"""
import os
import shutil
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
N = helper.make_node


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


def build(name, dtype, shape, out_shape, resize_attrs, scales=None, sizes=None, conv=None, tail=False):
    """conv: channels of a 1x1 conv before the resize (its weight from the name's seed); tail: an
    add of a second input and another 1x1 conv after it."""
    t = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    r = rng(name)
    inits, nodes, inputs = [], [], [helper.make_tensor_value_info("X", t, shape)]
    src = "X"
    c = shape[1]
    if conv:
        w = (r.standard_normal((conv, shape[1], 1, 1)) * 0.3).astype(dtype)
        inits.append(numpy_helper.from_array(w, "W"))
        nodes.append(N("Conv", ["X", "W"], ["C"]))
        src, c = "C", conv
    ins = [src, ""]
    if scales is not None:
        inits.append(numpy_helper.from_array(np.array(scales, np.float32), "scales"))
        ins.append("scales")
    else:
        inits.append(numpy_helper.from_array(np.array(sizes, np.int64), "sizes"))
        ins += ["", "sizes"]
    out = [out_shape[0], c] + out_shape[2:]
    nodes.append(N("Resize", ins, ["R" if tail else "Y"], **resize_attrs))
    if tail:
        inputs.append(helper.make_tensor_value_info("Z", t, out))
        w2 = (r.standard_normal((c, c, 1, 1)) * 0.3).astype(dtype)
        inits.append(numpy_helper.from_array(w2, "W2"))
        nodes += [N("Add", ["R", "Z"], ["S"]), N("Conv", ["S", "W2"], ["Y"])]
    graph = helper.make_graph(nodes, name, inputs, [helper.make_tensor_value_info("Y", t, out)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model, out


def make(name, shape, out_shape, mode, ctm, nearest="round_prefer_floor", scales=None, sizes=None, conv=None,
         tail=False):
    attrs = {"mode": mode, "coordinate_transformation_mode": ctm}
    if mode == "nearest":
        attrs["nearest_mode"] = nearest
    m32, out = build(name, np.float32, shape, out_shape, attrs, scales, sizes, conv, tail)
    r = rng(name + "/inputs")
    feeds = {"X": r.standard_normal(shape)}
    if tail:
        feeds["Z"] = r.standard_normal(out)
    feeds32 = {k: v.astype(np.float32) for k, v in feeds.items()}
    ref = ort.InferenceSession(m32.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds32)[0]
    assert list(ref.shape) == out, (name, ref.shape, out)
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    onnx.save(m32, os.path.join(d, "model.onnx"))
    for k, v in enumerate(feeds32.values()):
        with open(os.path.join(d, "test_data_set_0", f"input_{k}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(v).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(ref).SerializeToString())


LINEAR = ["half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"]
for ctm in LINEAR:
    # NCHW: wider rows (two passes), narrower rows (one pass), scales, one output row.
    make(f"linear_{ctm}_up_sizes", [2, 3, 10, 13], [2, 3, 23, 29], "linear", ctm, sizes=[2, 3, 23, 29])
    make(f"linear_{ctm}_down_sizes", [1, 3, 17, 19], [1, 3, 9, 7], "linear", ctm, sizes=[1, 3, 9, 7])
    make(f"linear_{ctm}_rows_down_cols_up", [1, 2, 12, 5], [1, 2, 7, 11], "linear", ctm, sizes=[1, 2, 7, 11])
    make(f"linear_{ctm}_scales", [1, 2, 6, 7], [1, 2, 12, 21], "linear", ctm, scales=[1, 1, 2.0, 3.0])
    make(f"linear_{ctm}_one_row", [1, 2, 5, 6], [1, 2, 1, 13], "linear", ctm, sizes=[1, 2, 1, 13])
    # NCHW16c: 8x (two passes) and 1.5x (one pass) at the graph output, 4x and 2x inside.
    make(f"linear_{ctm}_blocked_8x", [1, 8, 5, 6], [1, 21, 40, 48], "linear", ctm, sizes=[1, 21, 40, 48], conv=21)
    make(f"linear_{ctm}_blocked_up_small", [1, 8, 10, 12], [1, 32, 15, 19], "linear", ctm, sizes=[1, 32, 15, 19],
         conv=32)
    make(f"linear_{ctm}_blocked_4x_add", [1, 8, 6, 5], [1, 16, 24, 20], "linear", ctm, sizes=[1, 16, 24, 20],
         conv=16, tail=True)
    make(f"linear_{ctm}_blocked_2x_add", [1, 8, 6, 5], [1, 32, 12, 10], "linear", ctm, scales=[1, 1, 2.0, 2.0],
         conv=32, tail=True)
for ctm, nearest in [("asymmetric", "floor"), ("half_pixel", "round_prefer_floor"), ("align_corners", "round_prefer_ceil"),
                     ("pytorch_half_pixel", "ceil"), ("tf_half_pixel_for_nn", "round_prefer_floor")]:
    make(f"nearest_{ctm}_{nearest}_up", [1, 3, 7, 6], [1, 3, 15, 20], "nearest", ctm, nearest, sizes=[1, 3, 15, 20])
    make(f"nearest_{ctm}_{nearest}_down", [1, 2, 9, 11], [1, 2, 4, 5], "nearest", ctm, nearest, sizes=[1, 2, 4, 5])
    make(f"nearest_{ctm}_{nearest}_blocked_2x", [1, 8, 6, 5], [1, 16, 12, 10], "nearest", ctm, nearest,
         scales=[1, 1, 2.0, 2.0], conv=16, tail=True)
