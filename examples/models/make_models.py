#!/usr/bin/python3
"""Builds Loom's small example ONNX models with reference inputs and outputs computed in numpy.

Each model is written to examples/models/<name>/model.onnx with test_data_set_0/input_0.pb and
output_0.pb in the ONNX backend-test layout. Fixed seeds: rerunning gives identical files.
Needs python3-onnx and python3-numpy (Debian packages).
"""
import math
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def save(name, graph, inputs, outputs):
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="loom-examples")
    model.ir_version = 8
    onnx.checker.check_model(model)
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, a in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, graph.input[i].name).SerializeToString())
    for i, a in enumerate(outputs):
        with open(os.path.join(d, "test_data_set_0", f"output_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(a, graph.output[i].name).SerializeToString())
    print(f"{name}: {os.path.getsize(os.path.join(d, 'model.onnx'))} bytes")


# ---- numpy references -------------------------------------------------------------------------

def conv2d(x, w, b=None, stride=1, pad=0):
    n, c, h, wd = x.shape
    o, ci, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    oh = (h + 2 * pad - kh) // stride + 1
    ow = (wd + 2 * pad - kw) // stride + 1
    out = np.zeros((n, o, oh, ow), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            patch = xp[:, :, i:i + stride * oh:stride, j:j + stride * ow:stride]
            out += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    if b is not None:
        out += b.reshape(1, -1, 1, 1)
    return out


def batchnorm(x, g, b, m, v, eps=1e-5):
    s = (1, -1, 1, 1)
    return (x - m.reshape(s)) / np.sqrt(v.reshape(s) + eps) * g.reshape(s) + b.reshape(s)


def maxpool(x, k, s, ceil=False):
    n, c, h, w = x.shape
    def out_len(l):
        num = l - k
        o = (-(-num // s) if ceil else num // s) + 1
        if ceil and (o - 1) * s >= l:
            o -= 1
        return o
    oh, ow = out_len(h), out_len(w)
    out = np.full((n, c, oh, ow), -np.inf)
    for i in range(oh):
        for j in range(ow):
            win = x[:, :, i * s:min(i * s + k, h), j * s:min(j * s + k, w)]
            out[:, :, i, j] = win.max(axis=(2, 3))
    return out


def softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def layernorm(x, g, b, eps=1e-5):
    m = x.mean(axis=-1, keepdims=True)
    v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
    return (x - m) / np.sqrt(v + eps) * g + b


def erf(x):
    return np.vectorize(math.erf)(x)


# ---- models -----------------------------------------------------------------------------------

def small_cnn():
    """conv-bn-relu-pool x2, global pool, a Shape->Gather->Concat->Reshape flatten, gemm, softmax.
    The batch dim is symbolic ("N"): the flatten folds away once an input shape is given."""
    rng = np.random.default_rng(1)
    f = np.float32
    w1 = rng.normal(0, 0.3, (8, 3, 3, 3)).astype(f); b1 = rng.normal(0, 0.1, 8).astype(f)
    g1 = rng.uniform(0.5, 1.5, 8).astype(f); be1 = rng.normal(0, 0.1, 8).astype(f)
    m1 = rng.normal(0, 0.1, 8).astype(f); v1 = rng.uniform(0.5, 1.5, 8).astype(f)
    w2 = rng.normal(0, 0.2, (16, 8, 3, 3)).astype(f)
    g2 = rng.uniform(0.5, 1.5, 16).astype(f); be2 = rng.normal(0, 0.1, 16).astype(f)
    m2 = rng.normal(0, 0.1, 16).astype(f); v2 = rng.uniform(0.5, 1.5, 16).astype(f)
    wf = rng.normal(0, 0.3, (10, 16)).astype(f); bf = rng.normal(0, 0.1, 10).astype(f)
    nodes = [
        helper.make_node("Conv", ["data", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1.g", "bn1.b", "bn1.m", "bn1.v"], ["n1"], name="bn1"),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "conv2.w"], ["c2"], name="conv2", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c2", "bn2.g", "bn2.b", "bn2.m", "bn2.v"], ["n2"], name="bn2"),
        helper.make_node("Relu", ["n2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gp"], name="gap"),
        helper.make_node("Shape", ["gp"], ["shp"], name="shape"),
        helper.make_node("Gather", ["shp", "zero"], ["batch"], name="gather_batch", axis=0),
        helper.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="unsqueeze_batch"),
        helper.make_node("Concat", ["batch1", "minus1"], ["newshape"], name="concat_shape", axis=0),
        helper.make_node("Reshape", ["gp", "newshape"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["prob"], name="softmax", axis=-1),
    ]
    inits = [const("conv1.w", w1), const("conv1.b", b1), const("bn1.g", g1), const("bn1.b", be1), const("bn1.m", m1),
             const("bn1.v", v1), const("conv2.w", w2), const("bn2.g", g2), const("bn2.b", be2), const("bn2.m", m2),
             const("bn2.v", v2), const("fc.w", wf), const("fc.b", bf), const("zero", np.array(0, np.int64)),
             const("axes0", np.array([0], np.int64)), const("minus1", np.array([-1], np.int64))]
    graph = helper.make_graph(nodes, "small_cnn",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["N", 3, 16, 16])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", 10])], inits)
    x = rng.normal(0, 1, (1, 3, 16, 16)).astype(f)
    xd = x.astype(np.float64)
    h = np.maximum(batchnorm(conv2d(xd, w1, b1, pad=1), g1, be1, m1, v1), 0)
    h = maxpool(h, 2, 2)
    h = np.maximum(batchnorm(conv2d(h, w2, pad=1), g2, be2, m2, v2), 0)
    h = h.mean(axis=(2, 3))
    y = softmax(h @ wf.T + bf)
    save("small_cnn", graph, [x], [y.astype(f)])


def fire_net():
    """A squeezenet-like net: stem conv, max pool (ceil mode), two fire modules (squeeze 1x1,
    expand 1x1 and 3x3, concat), dropout, 1x1 classifier conv, global pool, flatten, softmax."""
    rng = np.random.default_rng(2)
    f = np.float32
    nodes, inits = [], []

    def w(name, shape, std):
        a = rng.normal(0, std, shape).astype(f)
        inits.append(const(name, a))
        return a

    params = {}
    params["stem"] = (w("stem.w", (16, 3, 3, 3), 0.3), w("stem.b", (16,), 0.1))
    nodes += [helper.make_node("Conv", ["data", "stem.w", "stem.b"], ["s"], name="stem", strides=[2, 2]),
              helper.make_node("Relu", ["s"], ["sr"], name="stem_relu"),
              helper.make_node("MaxPool", ["sr"], ["sp"], name="stem_pool", kernel_shape=[3, 3], strides=[2, 2],
                               ceil_mode=1)]
    cur, cin = "sp", 16
    for k, (sq, ex) in enumerate([(8, 16), (8, 16)]):
        p = f"fire{k}"
        params[p] = (w(f"{p}.sq.w", (sq, cin, 1, 1), 0.3), w(f"{p}.sq.b", (sq,), 0.1),
                     w(f"{p}.e1.w", (ex, sq, 1, 1), 0.3), w(f"{p}.e1.b", (ex,), 0.1),
                     w(f"{p}.e3.w", (ex, sq, 3, 3), 0.2), w(f"{p}.e3.b", (ex,), 0.1))
        nodes += [
            helper.make_node("Conv", [cur, f"{p}.sq.w", f"{p}.sq.b"], [f"{p}_s"], name=f"{p}_squeeze"),
            helper.make_node("Relu", [f"{p}_s"], [f"{p}_sr"], name=f"{p}_squeeze_relu"),
            helper.make_node("Conv", [f"{p}_sr", f"{p}.e1.w", f"{p}.e1.b"], [f"{p}_e1"], name=f"{p}_expand1x1"),
            helper.make_node("Relu", [f"{p}_e1"], [f"{p}_e1r"], name=f"{p}_expand1x1_relu"),
            helper.make_node("Conv", [f"{p}_sr", f"{p}.e3.w", f"{p}.e3.b"], [f"{p}_e3"], name=f"{p}_expand3x3",
                             pads=[1, 1, 1, 1]),
            helper.make_node("Relu", [f"{p}_e3"], [f"{p}_e3r"], name=f"{p}_expand3x3_relu"),
            helper.make_node("Concat", [f"{p}_e1r", f"{p}_e3r"], [f"{p}_out"], name=f"{p}_concat", axis=1),
        ]
        cur, cin = f"{p}_out", 2 * ex
    params["cls"] = (w("cls.w", (10, cin, 1, 1), 0.3), w("cls.b", (10,), 0.1))
    nodes += [helper.make_node("Dropout", [cur], ["drop"], name="dropout"),
              helper.make_node("Conv", ["drop", "cls.w", "cls.b"], ["cls"], name="classifier"),
              helper.make_node("Relu", ["cls"], ["clsr"], name="classifier_relu"),
              helper.make_node("GlobalAveragePool", ["clsr"], ["gp"], name="gap"),
              helper.make_node("Flatten", ["gp"], ["flat"], name="flatten"),
              helper.make_node("Softmax", ["flat"], ["prob"], name="softmax", axis=1)]
    graph = helper.make_graph(nodes, "fire_net",
                              [helper.make_tensor_value_info("data", TensorProto.FLOAT, [1, 3, 33, 33])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, [1, 10])], inits)
    x = rng.normal(0, 1, (1, 3, 33, 33)).astype(f)
    h = np.maximum(conv2d(x.astype(np.float64), *params["stem"], stride=2), 0)
    h = maxpool(h, 3, 2, ceil=True)
    for k in range(2):
        sw, sb, e1w, e1b, e3w, e3b = params[f"fire{k}"]
        s = np.maximum(conv2d(h, sw, sb), 0)
        h = np.concatenate([np.maximum(conv2d(s, e1w, e1b), 0), np.maximum(conv2d(s, e3w, e3b, pad=1), 0)], axis=1)
    h = np.maximum(conv2d(h, *params["cls"]), 0).mean(axis=(2, 3))
    save("fire_net", graph, [x], [softmax(h, axis=1).astype(f)])


def transformer_block():
    """A one-layer transformer encoder block: LayerNorm, two-head self-attention (MatMul, Add,
    Reshape/Transpose, scaled scores, Softmax), residual, LayerNorm, GELU (by Erf) MLP, residual."""
    rng = np.random.default_rng(3)
    f = np.float32
    S, D, H, F = 8, 32, 2, 64
    Dh = D // H
    inits = []

    def w(name, shape, std):
        a = rng.normal(0, std, shape).astype(f)
        inits.append(const(name, a))
        return a

    g1 = rng.uniform(0.8, 1.2, D).astype(f); inits.append(const("ln1.g", g1))
    b1 = w("ln1.b", (D,), 0.1)
    wq, bq = w("q.w", (D, D), 0.2), w("q.b", (D,), 0.1)
    wk, bk = w("k.w", (D, D), 0.2), w("k.b", (D,), 0.1)
    wv, bv = w("v.w", (D, D), 0.2), w("v.b", (D,), 0.1)
    wo, bo = w("o.w", (D, D), 0.2), w("o.b", (D,), 0.1)
    g2 = rng.uniform(0.8, 1.2, D).astype(f); inits.append(const("ln2.g", g2))
    b2 = w("ln2.b", (D,), 0.1)
    w1, c1 = w("fc1.w", (D, F), 0.2), w("fc1.b", (F,), 0.1)
    w2, c2 = w("fc2.w", (F, D), 0.2), w("fc2.b", (D,), 0.1)
    inits += [const("heads_shape", np.array([1, S, H, Dh], np.int64)),
              const("model_shape", np.array([1, S, D], np.int64)),
              const("scale", np.array(1.0 / math.sqrt(Dh), f)), const("half", np.array(0.5, f)),
              const("one", np.array(1.0, f)), const("sqrt2", np.array(math.sqrt(2.0), f))]
    N = helper.make_node
    nodes = [N("LayerNormalization", ["x", "ln1.g", "ln1.b"], ["h1"], name="ln1", axis=-1, epsilon=1e-5)]
    for t in "qkv":
        nodes += [N("MatMul", ["h1", f"{t}.w"], [f"{t}_mm"], name=f"{t}_proj"),
                  N("Add", [f"{t}_mm", f"{t}.b"], [f"{t}_b"], name=f"{t}_bias"),
                  N("Reshape", [f"{t}_b", "heads_shape"], [f"{t}_r"], name=f"{t}_split_heads"),
                  N("Transpose", [f"{t}_r"], [f"{t}_t"], name=f"{t}_transpose",
                    perm=[0, 2, 3, 1] if t == "k" else [0, 2, 1, 3])]
    nodes += [N("MatMul", ["q_t", "k_t"], ["scores"], name="scores"),
              N("Mul", ["scores", "scale"], ["scaled"], name="scale_scores"),
              N("Softmax", ["scaled"], ["attn"], name="softmax", axis=-1),
              N("MatMul", ["attn", "v_t"], ["ctx"], name="context"),
              N("Transpose", ["ctx"], ["ctx_t"], name="merge_transpose", perm=[0, 2, 1, 3]),
              N("Reshape", ["ctx_t", "model_shape"], ["ctx_r"], name="merge_heads"),
              N("MatMul", ["ctx_r", "o.w"], ["o_mm"], name="out_proj"),
              N("Add", ["o_mm", "o.b"], ["o_b"], name="out_bias"),
              N("Add", ["x", "o_b"], ["res1"], name="residual1"),
              N("LayerNormalization", ["res1", "ln2.g", "ln2.b"], ["h2"], name="ln2", axis=-1, epsilon=1e-5),
              N("MatMul", ["h2", "fc1.w"], ["f1"], name="fc1"),
              N("Add", ["f1", "fc1.b"], ["f1b"], name="fc1_bias"),
              N("Div", ["f1b", "sqrt2"], ["gd"], name="gelu_div"),
              N("Erf", ["gd"], ["ge"], name="gelu_erf"),
              N("Add", ["ge", "one"], ["ga"], name="gelu_add"),
              N("Mul", ["f1b", "ga"], ["gm"], name="gelu_mul"),
              N("Mul", ["gm", "half"], ["gelu"], name="gelu_half"),
              N("MatMul", ["gelu", "fc2.w"], ["f2"], name="fc2"),
              N("Add", ["f2", "fc2.b"], ["f2b"], name="fc2_bias"),
              N("Add", ["res1", "f2b"], ["y"], name="residual2")]
    graph = helper.make_graph(nodes, "transformer_block",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, D])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, S, D])], inits)
    x = rng.normal(0, 1, (1, S, D)).astype(f)
    xd = x.astype(np.float64)
    h = layernorm(xd, g1, b1)
    def heads(a):
        return a.reshape(1, S, H, Dh).transpose(0, 2, 1, 3)
    q, k, v = heads(h @ wq + bq), heads(h @ wk + bk), heads(h @ wv + bv)
    attn = softmax(q @ k.transpose(0, 1, 3, 2) / math.sqrt(Dh))
    ctx = (attn @ v).transpose(0, 2, 1, 3).reshape(1, S, D)
    res1 = xd + ctx @ wo + bo
    h2 = layernorm(res1, g2, b2)
    f1 = h2 @ w1 + c1
    gelu = 0.5 * f1 * (1 + erf(f1 / math.sqrt(2)))
    y = res1 + gelu @ w2 + c2
    save("transformer_block", graph, [x], [y.astype(f)])


if __name__ == "__main__":
    small_cnn()
    fire_net()
    transformer_block()
    sys.exit(0)
