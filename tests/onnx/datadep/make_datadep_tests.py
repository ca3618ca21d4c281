#!/usr/bin/env python3
"""Ops whose output shape depends on the data (NonZero, TopK with K from data, NonMaxSuppression,
Unique, Compress on data) beyond the node tests, each followed by ordinary kernels that take the
data-dependent count as a symbol, with several test sets of different counts (zero included)
and, where an input dim is symbolic, of different shapes. ONNX Runtime's outputs are the
reference, in the backend-test layout under tests/onnx/datadep/<name>/. Also writes the detector
(conv backbone + box and class heads + NonMaxSuppression + gathers of the kept boxes and scores)
to tests/dynamic_models/detector_nms/.

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  v/bin/python tests/onnx/datadep/make_datadep_tests.py
"""
import os
import shutil
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))
F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL


def vi(name, shape, t=F):
    return helper.make_tensor_value_info(name, t, shape)


def const(name, a):
    return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(a, name))


def save(name, graph, sets, opset=13, where=HERE):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    d = os.path.join(where, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for s, feeds in enumerate(sets):
        results = sess.run(None, feeds)
        sd = os.path.join(d, f"test_data_set_{s}")
        os.makedirs(sd)
        for k, i in enumerate(graph.input):
            with open(os.path.join(sd, f"input_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(feeds[i.name]).SerializeToString())
        for k, r in enumerate(results):
            with open(os.path.join(sd, f"output_{k}.pb"), "wb") as f:
                f.write(numpy_helper.from_array(r).SerializeToString())
        print(name, s, [r.shape for r in results])


def rng(name):
    return np.random.default_rng(zlib.crc32(name.encode()))


# NonZero of a comparison on data with a symbolic batch, then kernels on the [2, n] indices and
# GatherElements-style reads of the hits: Transpose, Cast, Mul, Gather of rows.
def nonzero_chain():
    r = rng("nonzero_chain")
    nodes = [const("zero", np.array(0.5, np.float32)),
             helper.make_node("Greater", ["x", "zero"], ["mask"]),
             helper.make_node("NonZero", ["mask"], ["nz"]),
             helper.make_node("Transpose", ["nz"], ["nzt"], perm=[1, 0]),
             helper.make_node("Cast", ["nzt"], ["nzf"], to=F),
             const("two", np.array(2.0, np.float32)),
             helper.make_node("Mul", ["nzf", "two"], ["scaled"]),
             const("zero_i", np.array(0, np.int64)),
             helper.make_node("Gather", ["nz", "zero_i"], ["rows"], axis=0),
             helper.make_node("Gather", ["x", "rows"], ["picked"], axis=0),
             const("ax1", np.array([1], np.int64)),
             helper.make_node("ReduceSum", ["picked", "ax1"], ["row_sums"], keepdims=0)]
    g = helper.make_graph(nodes, "nonzero_chain", [vi("x", ["N", 5])],
                          [vi("nz", [2, "n"], I64), vi("scaled", ["n", 2]), vi("row_sums", ["n"])])
    sets = [{"x": r.random([3, 5], dtype=np.float32)}, {"x": r.random([7, 5], dtype=np.float32)},
            {"x": np.zeros([4, 5], np.float32)}, {"x": np.ones([2, 5], np.float32)}]
    save("nonzero_chain", g, sets)


# The shape ops around a count: Shape of NonZero's result -> Range, ConstantOfShape, Expand of an
# input, Reshape to a computed shape. Range and Expand read no tensor of the NonZero: they must
# still run after it.
def nonzero_shape_ops():
    r = rng("nonzero_shape_ops")
    nodes = [const("t", np.array(0.5, np.float32)),
             helper.make_node("Greater", ["x", "t"], ["m"]),
             helper.make_node("NonZero", ["m"], ["nz"]),
             helper.make_node("Shape", ["nz"], ["s"]),
             const("one", np.array(1, np.int64)), const("zero", np.array(0, np.int64)),
             helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
             helper.make_node("Range", ["zero", "n", "one"], ["r"]),
             helper.make_node("Cast", ["r"], ["rf"], to=F),
             helper.make_node("ConstantOfShape", ["s"], ["filled"], value=numpy_helper.from_array(np.array([1.5], np.float32))),
             helper.make_node("Expand", ["y", "s"], ["expanded"]),
             helper.make_node("Transpose", ["nz"], ["nzt"]),
             const("flat_shape", np.array([-1], np.int64)),
             helper.make_node("Reshape", ["nzt", "flat_shape"], ["flat"]),
             const("axes0", np.array([0], np.int64)),
             helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
             const("two", np.array([2], np.int64)),
             helper.make_node("Concat", ["two", "n1"], ["ns"], axis=0),
             helper.make_node("Reshape", ["flat", "ns"], ["back"])]
    g = helper.make_graph(nodes, "nonzero_shape_ops", [vi("x", [3, 4]), vi("y", [2, 1])],
                          [vi("rf", ["n"]), vi("filled", [2, "n"]), vi("expanded", [2, "n"]), vi("back", [2, "n"], I64)])
    sets = [{"x": r.random([3, 4], dtype=np.float32), "y": r.standard_normal([2, 1]).astype(np.float32)}
            for _ in range(2)]
    sets.append({"x": np.zeros([3, 4], np.float32), "y": np.ones([2, 1], np.float32)})
    save("nonzero_shape_ops", g, sets)


# TopK whose K is a graph input, on a symbolic batch, values then scaled by a kernel.
def topk_k_input():
    r = rng("topk_k_input")
    nodes = [helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=1),
             const("s", np.array(3.0, np.float32)),
             helper.make_node("Mul", ["v", "s"], ["v3"])]
    g = helper.make_graph(nodes, "topk_k_input", [vi("x", ["N", 12]), vi("k", [1], I64)],
                          [vi("v3", ["N", "k"]), vi("i", ["N", "k"], I64)])
    sets = [{"x": r.standard_normal([2, 12]).astype(np.float32), "k": np.array([1], np.int64)},
            {"x": r.standard_normal([5, 12]).astype(np.float32), "k": np.array([7], np.int64)},
            {"x": r.standard_normal([3, 12]).astype(np.float32), "k": np.array([12], np.int64)},
            {"x": r.standard_normal([3, 12]).astype(np.float32), "k": np.array([0], np.int64)}]
    save("topk_k_input", g, sets)


# TopK whose K is computed from the data: the number of positive entries of x (at least 1), the
# smallest ones, along axis 0 of int32 data.
def topk_k_from_data():
    r = rng("topk_k_from_data")
    nodes = [const("zero", np.array(0, np.int32)),
             const("col0", np.array(0, np.int64)),
             helper.make_node("Gather", ["x", "col0"], ["first"], axis=1),
             helper.make_node("Greater", ["first", "zero"], ["pos"]),
             helper.make_node("Cast", ["pos"], ["posi"], to=I64),
             helper.make_node("ReduceSum", ["posi"], ["count1"], keepdims=1),
             const("one", np.array([1], np.int64)),
             const("rows", np.array([6], np.int64)),
             helper.make_node("Max", ["count1", "one"], ["k0"]),
             helper.make_node("Min", ["k0", "rows"], ["k"]),
             helper.make_node("TopK", ["x", "k"], ["v", "i"], axis=0, largest=0),
             helper.make_node("Add", ["v", "v"], ["v2"])]
    g = helper.make_graph(nodes, "topk_k_from_data", [vi("x", [6, 3], TensorProto.INT32)],
                          [vi("v2", ["k", 3], TensorProto.INT32), vi("i", ["k", 3], I64)])
    sets = []
    for _ in range(3):
        # Distinct values per column, so that the order has no ties.
        x = np.stack([r.permutation(np.arange(-8, 8))[:6] for _ in range(3)], axis=1).astype(np.int32)
        sets.append({"x": x})
    sets.append({"x": -np.arange(1, 19, dtype=np.int32).reshape(6, 3)})
    save("topk_k_from_data", g, sets)


# A detector's post-processing pattern: the K of a TopK is min(count, 5) of an earlier NonZero's
# result (Shape -> Min), so one data-dependent count bounds the next; the winners' original
# positions are gathered back.
def topk_of_count():
    r = rng("topk_of_count")
    nodes = [const("t", np.array(0.3, np.float32)),
             helper.make_node("Greater", ["x", "t"], ["m"]),
             helper.make_node("NonZero", ["m"], ["nz"]),
             const("zero", np.array(0, np.int64)),
             helper.make_node("Gather", ["nz", "zero"], ["idx"], axis=0),
             helper.make_node("Gather", ["x", "idx"], ["vals"], axis=0),
             helper.make_node("Shape", ["vals"], ["s"]),
             const("five", np.array([5], np.int64)),
             helper.make_node("Min", ["s", "five"], ["k"]),
             helper.make_node("TopK", ["vals", "k"], ["tv", "ti"]),
             helper.make_node("Gather", ["idx", "ti"], ["orig"], axis=0)]
    g = helper.make_graph(nodes, "topk_of_count", [vi("x", [12])], [vi("tv", ["k"]), vi("orig", ["k"], I64)])
    sets = [{"x": r.random([12], dtype=np.float32)},
            {"x": np.where(np.arange(12) < 3, 0.9, 0.1).astype(np.float32)},
            {"x": np.zeros(12, np.float32)}]
    save("topk_of_count", g, sets)


def random_boxes(r, batches, n, center):
    c = r.random([batches, n, 2]).astype(np.float32) * 10
    wh = (r.random([batches, n, 2]).astype(np.float32) * 3 + 0.5)
    if center:
        return np.concatenate([c, wh], axis=2)
    # Corners in either order ([y1, x1, y2, x2] with some boxes flipped).
    b = np.concatenate([c - wh / 2, c + wh / 2], axis=2)[:, :, [1, 0, 3, 2]]
    flip = r.random([batches, n]) < 0.3
    b[flip] = b[flip][:, [2, 3, 0, 1]]
    return b


# NonMaxSuppression with every input from data, both box formats, then the kept boxes gathered
# (a kernel over the count).
def nms_case(name, center, with_score):
    r = rng(name)
    ins = ["boxes", "scores", "max_out", "iou"] + (["score_thr"] if with_score else [])
    nodes = [helper.make_node("NonMaxSuppression", ins, ["sel"], center_point_box=int(center)),
             const("two", np.array(2, np.int64)),
             helper.make_node("Gather", ["sel", "two"], ["box_idx"], axis=1),
             const("b0", np.array(0, np.int64)),
             helper.make_node("Gather", ["boxes", "b0"], ["boxes0"], axis=0),
             helper.make_node("Gather", ["boxes0", "box_idx"], ["kept"], axis=0)]
    inputs = [vi("boxes", [1, "B", 4]), vi("scores", [1, 3, "B"]), vi("max_out", [1], I64), vi("iou", [1])]
    if with_score:
        inputs.append(vi("score_thr", [1]))
    g = helper.make_graph(nodes, name, inputs, [vi("sel", ["n", 3], I64), vi("kept", ["n", 4])])
    sets = []
    for n, m, iou, st in [(20, 5, 0.3, 0.2), (40, 100, 0.5, 0.5), (8, 0, 0.5, 0.1), (30, 3, 0.0, 0.9)]:
        feeds = {"boxes": random_boxes(r, 1, n, center), "scores": r.random([1, 3, n]).astype(np.float32),
                 "max_out": np.array([m], np.int64), "iou": np.array([iou], np.float32)}
        if with_score:
            feeds["score_thr"] = np.array([st], np.float32)
        sets.append(feeds)
    save(name, g, sets, opset=11)


# NonMaxSuppression over two batches and classes, the thresholds constants (the count's bound
# uses the constant max_output_boxes_per_class).
def nms_batches_constant_max():
    name = "nms_batches_constant_max"
    r = rng(name)
    nodes = [const("max_out", np.array([6], np.int64)), const("iou", np.array([0.2], np.float32)),
             const("score_thr", np.array([0.5], np.float32)),
             helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_thr"], ["sel"])]
    g = helper.make_graph(nodes, name, [vi("boxes", [2, 16, 4]), vi("scores", [2, 2, 16])], [vi("sel", ["n", 3], I64)])
    sets = [{"boxes": random_boxes(r, 2, 16, False), "scores": r.random([2, 2, 16]).astype(np.float32)} for _ in range(3)]
    save(name, g, sets, opset=11)


# Unique, sorted and not, flat and along an axis, of float and int64 data with repeats; the
# counts then go through a kernel.
def unique_case(name, shape, dtype, axis, sorted_):
    r = rng(name)
    kw = {"sorted": sorted_}
    if axis is not None:
        kw["axis"] = axis
    t = I64 if dtype == np.int64 else F
    nodes = [helper.make_node("Unique", ["x"], ["y", "idx", "inv", "cnt"], **kw),
             helper.make_node("Cast", ["cnt"], ["cntf"], to=F),
             helper.make_node("Sqrt", ["cntf"], ["cnt_sqrt"])]
    yshape = ["u"] if axis is None else [("u" if k == axis else d) for k, d in enumerate(shape)]
    invshape = [int(np.prod(shape))] if axis is None else [shape[axis]]
    g = helper.make_graph(nodes, name, [vi("x", shape, t)],
                          [vi("y", yshape, t), vi("idx", ["u"], I64), vi("inv", invshape, I64), vi("cnt", ["u"], I64),
                           vi("cnt_sqrt", ["u"])])
    sets = []
    for hi in (3, 6, 1):
        x = r.integers(0, hi, size=shape)
        if axis is not None and hi == 3:  # repeated slices along the axis
            x = np.take(x, [0, 1, 0] + list(range(3, shape[axis]))[: shape[axis] - 3], axis=axis)
        sets.append({"x": (x.astype(np.float32) * 0.5 if dtype == np.float32 else x).astype(dtype)})
    save(name, g, sets, opset=11)


# Compress with a condition computed from the data (rows whose sum is positive), then a kernel.
def compress_on_data():
    r = rng("compress_on_data")
    nodes = [const("ax1", np.array([1], np.int64)),
             helper.make_node("ReduceSum", ["x", "ax1"], ["s"], keepdims=0),
             const("zero", np.array(0, np.float32)),
             helper.make_node("Greater", ["s", "zero"], ["cond"]),
             helper.make_node("Compress", ["x", "cond"], ["rows"], axis=0),
             helper.make_node("Relu", ["rows"], ["out"])]
    g = helper.make_graph(nodes, "compress_on_data", [vi("x", [8, 4])], [vi("out", ["n", 4])])
    sets = [{"x": r.standard_normal([8, 4]).astype(np.float32)} for _ in range(2)]
    sets.append({"x": -np.ones([8, 4], np.float32)})
    save("compress_on_data", g, sets)


def conv(nodes, inits, r, name, x, cin, cout, stride):
    w = (r.standard_normal([cout, cin, 3, 3]) * (1.0 / np.sqrt(cin * 9))).astype(np.float32)
    b = (r.standard_normal([cout]) * 0.1).astype(np.float32)
    inits += [numpy_helper.from_array(w, name + "_w"), numpy_helper.from_array(b, name + "_b")]
    nodes.append(helper.make_node("Conv", [x, name + "_w", name + "_b"], [name], kernel_shape=[3, 3],
                                  strides=[stride, stride], pads=[1, 1, 1, 1]))
    return name


# A small single-shot detector: a conv backbone (3 -> 16 -> 32 channels, stride 4), a box head
# (per cell deltas to one anchor, decoded as centers) and a class head (3 classes, sigmoid), then
# NonMaxSuppression and the kept boxes, classes and scores gathered by the selected indices.
def detector_nms():
    name = "detector_nms"
    r = rng(name)
    nodes, inits = [], []
    h = conv(nodes, inits, r, "c1", "image", 3, 16, 2)
    nodes.append(helper.make_node("Relu", [h], ["r1"]))
    h = conv(nodes, inits, r, "c2", "r1", 16, 32, 2)
    nodes.append(helper.make_node("Relu", [h], ["feat"]))
    cells = 8 * 8
    box = conv(nodes, inits, r, "box", "feat", 32, 4, 1)
    cls = conv(nodes, inits, r, "cls", "feat", 32, 3, 1)
    ys, xs = np.meshgrid(np.arange(8), np.arange(8), indexing="ij")
    anchors = np.stack([xs.ravel() * 4 + 2, ys.ravel() * 4 + 2, np.full(cells, 6), np.full(cells, 6)], 1)
    inits += [numpy_helper.from_array(anchors.astype(np.float32)[None], "anchors"),
              numpy_helper.from_array(np.array([1, 4, cells], np.int64), "box_shape"),
              numpy_helper.from_array(np.array([1, 3, cells], np.int64), "cls_shape"),
              numpy_helper.from_array(np.array([1, 1, 0.1, 0.1], np.float32), "delta_scale"),
              numpy_helper.from_array(np.array([0, 0, 1, 1], np.float32), "is_wh"),
              numpy_helper.from_array(np.array([1, 1, 0, 0], np.float32), "is_xy"),
              numpy_helper.from_array(np.array([8], np.int64), "max_out"),
              numpy_helper.from_array(np.array([0.45], np.float32), "iou"),
              numpy_helper.from_array(np.array([0.6], np.float32), "score_thr"),
              numpy_helper.from_array(np.array(0, np.int64), "i0"),
              numpy_helper.from_array(np.array(1, np.int64), "i1"),
              numpy_helper.from_array(np.array(2, np.int64), "i2"),
              numpy_helper.from_array(np.array(cells, np.int64), "ncells"),
              numpy_helper.from_array(np.array([3 * cells], np.int64), "flat")]
    nodes += [
        helper.make_node("Reshape", [box, "box_shape"], ["box_r"]),
        helper.make_node("Transpose", ["box_r"], ["deltas"], perm=[0, 2, 1]),  # [1, 64, 4]
        helper.make_node("Mul", ["deltas", "delta_scale"], ["d_scaled"]),
        # centers: anchor + delta; sizes: anchor * exp(delta * 0.1)
        helper.make_node("Exp", ["d_scaled"], ["d_exp"]),
        helper.make_node("Mul", ["d_exp", "is_wh"], ["wh_factor"]),
        helper.make_node("Add", ["wh_factor", "is_xy"], ["factor"]),
        helper.make_node("Mul", ["anchors", "factor"], ["scaled"]),
        helper.make_node("Mul", ["d_scaled", "is_xy"], ["shift"]),
        helper.make_node("Add", ["scaled", "shift"], ["boxes"]),
        helper.make_node("Reshape", [cls, "cls_shape"], ["logits"]),
        helper.make_node("Sigmoid", ["logits"], ["scores"]),
        helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score_thr"], ["sel"],
                         center_point_box=1),
        helper.make_node("Gather", ["sel", "i1"], ["cls_idx"], axis=1),
        helper.make_node("Gather", ["sel", "i2"], ["box_idx"], axis=1),
        helper.make_node("Gather", ["boxes", "i0"], ["boxes0"], axis=0),
        helper.make_node("Gather", ["boxes0", "box_idx"], ["det_boxes"], axis=0),
        helper.make_node("Mul", ["cls_idx", "ncells"], ["cls_off"]),
        helper.make_node("Add", ["cls_off", "box_idx"], ["flat_idx"]),
        helper.make_node("Reshape", ["scores", "flat"], ["scores_flat"]),
        helper.make_node("Gather", ["scores_flat", "flat_idx"], ["det_scores"], axis=0),
    ]
    g = helper.make_graph(nodes, name, [vi("image", [1, 3, 32, 32])],
                          [vi("det_boxes", ["n", 4]), vi("cls_idx", ["n"], I64), vi("det_scores", ["n"])],
                          initializer=inits)
    sets = [{"image": r.standard_normal([1, 3, 32, 32]).astype(np.float32) * s} for s in (1.0, 2.0, 0.5, 3.0)]
    save(name, g, sets, opset=11, where=os.path.join(ROOT, "tests", "dynamic_models"))


# Refused with a typed error: a count computed from the data used as a Reshape target.
def reshape_to_count():
    nodes = [const("zero", np.array(0, np.float32)),
             helper.make_node("Greater", ["x", "zero"], ["mask"]),
             helper.make_node("Cast", ["mask"], ["maski"], to=I64),
             helper.make_node("ReduceSum", ["maski"], ["count"], keepdims=1),
             const("rest", np.array([-1], np.int64)),
             helper.make_node("Concat", ["count", "rest"], ["shape"], axis=0),
             helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape_by_count")]
    g = helper.make_graph(nodes, "reshape_to_count", [vi("x", [6])], [vi("y", ["a", "b"])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    os.makedirs(os.path.join(HERE, "errors"), exist_ok=True)
    onnx.save(model, os.path.join(HERE, "errors", "reshape_to_count.onnx"))


# Slice whose end is a NonZero count (Slice(v, 0, n), n = Shape(NonZero(mask))[1]): the rows of
# v up to the count, and their column sums (0 rows: zeros).
def count_prefix(nodes):
    return nodes + [const("thr", np.array(0.5, np.float32)),
                    helper.make_node("Greater", ["x", "thr"], ["mask"]),
                    helper.make_node("NonZero", ["mask"], ["nz"]),
                    helper.make_node("Shape", ["nz"], ["s"]),
                    const("one", np.array(1, np.int64)),
                    helper.make_node("Gather", ["s", "one"], ["n"], axis=0),
                    const("ax0", np.array([0], np.int64)),
                    helper.make_node("Unsqueeze", ["n", "ax0"], ["n1"])]


def count_sets(r, vshape):
    return [{"x": r.random([12], dtype=np.float32), "v": r.standard_normal(vshape).astype(np.float32)},
            {"x": np.where(np.arange(12) < 2, 0.9, 0.1).astype(np.float32), "v": r.standard_normal(vshape).astype(np.float32)},
            {"x": np.zeros(12, np.float32), "v": r.standard_normal(vshape).astype(np.float32)},
            {"x": np.ones(12, np.float32), "v": r.standard_normal(vshape).astype(np.float32)}]


def slice_to_count():
    r = rng("slice_to_count")
    nodes = count_prefix([]) + [
        helper.make_node("Slice", ["v", "ax0", "n1", "ax0"], ["y"]),
        helper.make_node("ReduceSum", ["y", "ax0"], ["col_sums"], keepdims=0)]
    g = helper.make_graph(nodes, "slice_to_count", [vi("x", [12]), vi("v", [12, 3])],
                          [vi("y", ["n", 3]), vi("col_sums", [3])])
    save("slice_to_count", g, count_sets(r, [12, 3]))


# The same count as the end of a strided slice along axis 1 (start 1, step 2) next to a constant
# slice of axis 0 in the same node (ends = Concat(count, 3)), then the slice's row sums.
def slice_count_step():
    r = rng("slice_count_step")
    nodes = count_prefix([]) + [
        const("three", np.array([3], np.int64)),
        helper.make_node("Concat", ["n1", "three"], ["ends"], axis=0),
        const("starts", np.array([1, 0], np.int64)),
        const("axes", np.array([1, 0], np.int64)),
        const("steps", np.array([2, 1], np.int64)),
        helper.make_node("Slice", ["v", "starts", "ends", "axes", "steps"], ["y"]),
        const("ax1", np.array([1], np.int64)),
        helper.make_node("ReduceSum", ["y", "ax1"], ["row_sums"], keepdims=0)]
    g = helper.make_graph(nodes, "slice_count_step", [vi("x", [12]), vi("v", [4, 12])],
                          [vi("y", [3, "m"]), vi("row_sums", [3])])
    save("slice_count_step", g, count_sets(r, [4, 12]))


# Slice whose start is a NonZero count: the rows of v after the first n (v[n:]; n = 12: none),
# and their column sums.
def slice_from_count():
    r = rng("slice_from_count")
    nodes = count_prefix([]) + [
        const("big", np.array([np.iinfo(np.int64).max], np.int64)),
        helper.make_node("Slice", ["v", "n1", "big", "ax0"], ["y"]),
        helper.make_node("ReduceSum", ["y", "ax0"], ["col_sums"], keepdims=0)]
    g = helper.make_graph(nodes, "slice_from_count", [vi("x", [12]), vi("v", [12, 3])],
                          [vi("y", ["m", 3]), vi("col_sums", [3])])
    save("slice_from_count", g, count_sets(r, [12, 3]))


# Both ends from the count along axis 1 (start n // 2, end n + 1, step 2, clamped to 12 columns)
# beside a constant slice of axis 0 (rows 1..3) in the same node.
def slice_between_counts():
    r = rng("slice_between_counts")
    nodes = count_prefix([]) + [
        const("two", np.array([2], np.int64)),
        const("onev", np.array([1], np.int64)),
        helper.make_node("Div", ["n1", "two"], ["half"]),
        helper.make_node("Add", ["n1", "onev"], ["n_plus"]),
        helper.make_node("Concat", ["half", "onev"], ["starts"], axis=0),
        const("three", np.array([3], np.int64)),
        helper.make_node("Concat", ["n_plus", "three"], ["ends"], axis=0),
        const("axes", np.array([1, 0], np.int64)),
        const("steps", np.array([2, 1], np.int64)),
        helper.make_node("Slice", ["v", "starts", "ends", "axes", "steps"], ["y"]),
        const("ax1", np.array([1], np.int64)),
        helper.make_node("ReduceSum", ["y", "ax1"], ["row_sums"], keepdims=0)]
    g = helper.make_graph(nodes, "slice_between_counts", [vi("x", [12]), vi("v", [4, 12])],
                          [vi("y", [2, "m"]), vi("row_sums", [2])])
    save("slice_between_counts", g, count_sets(r, [4, 12]))


# Refused with a typed error naming the node: an end counted from the back by a NonZero count
# (v[:-n]); a data-dependent end or start must be an index from the front.
def slice_negative_count_end():
    nodes = count_prefix([]) + [
        helper.make_node("Neg", ["n1"], ["neg_n"]),
        const("zero1", np.array([0], np.int64)),
        helper.make_node("Slice", ["v", "zero1", "neg_n", "ax0"], ["y"], name="slice_from_back")]
    g = helper.make_graph(nodes, "slice_negative_count_end", [vi("x", [12]), vi("v", [12, 3])], [vi("y", ["m", 3])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "errors", "slice_negative_count_end.onnx"))


# Fills and broadcasts to a shape holding a NonZero count, the count used only through its Shape:
# ConstantOfShape([n]) of 2.5 and Expand(w [1, 3], [n, 3]). The NonZero must stay in the compiled
# graph to bind the count (without the importer's read of the count, compiling failed: "symbol
# 'nonzero_0' ... is not a dim of any input").
def fill_to_count():
    r = rng("fill_to_count")
    nodes = count_prefix([]) + [
        helper.make_node("ConstantOfShape", ["n1"], ["filled"], value=numpy_helper.from_array(np.array([2.5], np.float32))),
        const("three", np.array([3], np.int64)),
        helper.make_node("Concat", ["n1", "three"], ["shp"], axis=0),
        helper.make_node("Expand", ["w", "shp"], ["expanded"])]
    g = helper.make_graph(nodes, "fill_to_count", [vi("x", [12]), vi("w", [1, 3])],
                          [vi("filled", ["n"]), vi("expanded", ["n", 3])])
    sets = [{"x": c["x"], "w": r.standard_normal([1, 3]).astype(np.float32)} for c in count_sets(r, [1])]
    save("fill_to_count", g, sets)


# Reshape to a shape holding the count: Reshape(Cast(NonZero) [1, n], [n, 1]).
def reshape_to_count_shape():
    r = rng("reshape_to_count_shape")
    nodes = count_prefix([]) + [
        helper.make_node("Cast", ["nz"], ["nzf"], to=F),
        const("onev", np.array([1], np.int64)),
        helper.make_node("Concat", ["n1", "onev"], ["shp"], axis=0),
        helper.make_node("Reshape", ["nzf", "shp"], ["reshaped"])]
    g = helper.make_graph(nodes, "reshape_to_count_shape", [vi("x", [12])], [vi("reshaped", ["n", 1])])
    save("reshape_to_count_shape", g, [{"x": c["x"]} for c in count_sets(r, [1])])


# Range up to a NonZero count whose result is used only through its Shape (the NonZero must
# stay in the compiled graph to bind the count).
def range_to_count():
    r = rng("range_to_count")
    nodes = count_prefix([]) + [const("z", np.array(0, np.int64)),
                                helper.make_node("Range", ["z", "n", "one"], ["idx"]),
                                helper.make_node("Gather", ["v", "idx"], ["y"], axis=0)]
    g = helper.make_graph(nodes, "range_to_count", [vi("x", [12]), vi("v", [12, 3])],
                          [vi("idx", ["n"], I64), vi("y", ["n", 3])])
    save("range_to_count", g, count_sets(r, [12, 3]))


# Refused with a typed error naming the node: a Loop whose trip count is a NonZero count (Loop
# and Scan are unrolled at import, so the trip count must fold to a constant).
def loop_count_from_data():
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["acc_in", "acc_in"], ["acc_out"])],
        "body", [vi("i", [], I64), vi("cond_in", [], B), vi("acc_in", [3])],
        [vi("cond_out", [], B), vi("acc_out", [3])])
    nodes = count_prefix([]) + [
        const("cond", np.array(True)),
        helper.make_node("Loop", ["n", "cond", "v"], ["out"], body=body, name="loop_by_count")]
    g = helper.make_graph(nodes, "loop_count_from_data", [vi("x", [12]), vi("v", [3])], [vi("out", [3])])
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(HERE, "errors", "loop_count_from_data.onnx"))


reshape_to_count()
nonzero_chain()
nonzero_shape_ops()
topk_k_input()
topk_k_from_data()
topk_of_count()
nms_case("nms_corners", False, True)
nms_case("nms_centers", True, True)
nms_case("nms_no_score_threshold", False, False)
nms_batches_constant_max()
unique_case("unique_flat_sorted", [4, 5], np.float32, None, 1)
unique_case("unique_flat_unsorted", [4, 5], np.int64, None, 0)
unique_case("unique_axis0", [5, 3], np.float32, 0, 1)
unique_case("unique_axis1_unsorted", [2, 6], np.int64, 1, 0)
compress_on_data()
detector_nms()
slice_to_count()
slice_count_step()
loop_count_from_data()
range_to_count()
slice_from_count()
slice_between_counts()
slice_negative_count_end()
fill_to_count()
reshape_to_count_shape()
