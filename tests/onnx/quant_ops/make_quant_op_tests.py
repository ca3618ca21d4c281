#!/usr/bin/env python3
"""ONNX Runtime's com.microsoft QOperator ops (QLinearAdd, QLinearMul, QLinearConcat,
QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool, QLinearGlobalAveragePool, QGemm) and
QLinearConv with constant scales (the integer path), one small model each, with ONNX Runtime's
outputs as the reference in the backend-test layout (model.onnx, test_data_set_0/) under
tests/onnx/quant_ops/<name>/. `loom onnx-test --atol 1` checks them (uint8 outputs: one
quantization step for a float rounding tie; most are exact).

Needs onnx and onnxruntime (PyPI, in a venv). The outputs are checked in; rerun to regenerate:
  python3 -m venv v && v/bin/pip install onnx onnxruntime && v/bin/python tests/onnx/quant_ops/make_quant_op_tests.py
"""
import os
import zlib

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MS = "com.microsoft"


def scalar(name, v, dtype):
    return numpy_helper.from_array(np.array(v, dtype=dtype), name)


def save(name, nodes, inits, inputs, output_shape, feeds, elem=TensorProto.UINT8):
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info(n, elem, s) for n, s in inputs],
                              [helper.make_tensor_value_info("y", elem, output_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    model.ir_version = 8
    d = os.path.join(HERE, name)
    os.makedirs(os.path.join(d, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(d, "model.onnx"))
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), providers=["CPUExecutionProvider"])
    y = sess.run(None, feeds)[0]
    for i, (n, _) in enumerate(inputs):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(numpy_helper.from_array(feeds[n], n).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())
    print(name, y.shape, y.dtype)


def u8(rng, shape):
    return rng.integers(0, 256, size=shape, dtype=np.uint8)


def every_value(dtype, shape):
    """Every value of the 8-bit type, then random ones, in `shape`."""
    info = np.iinfo(dtype)
    n = int(np.prod(shape))
    rng = np.random.default_rng(n)
    v = np.concatenate([np.arange(info.min, info.max + 1), rng.integers(info.min, info.max + 1, size=max(0, n - 256))])
    return v[:n].astype(dtype).reshape(shape)


def integer_ops():
    """The QOperator ops Loom computes as integer ops (int8d): QLinearSigmoid / QLinearLeakyRelu over
    every input value (ONNX Runtime's 256-entry tables), QLinearMul / QLinearAdd broadcasting an SE
    block's [N, C, 1, 1], QLinearAveragePool with padding (count_include_pad 0 and 1; ceil_mode too); uint8 and
    int8; and a QDQ SiLU gate (x * sigmoid(x)) that ONNX Runtime fuses into its QLinear ops."""
    for t, tp, tag in ((np.uint8, TensorProto.UINT8, "u8"), (np.int8, TensorProto.INT8, "s8")):
        z = (lambda u, s_: u) if t == np.uint8 else (lambda u, s_: s_)
        for op, attrs, params in (
                ("QLinearSigmoid", {}, [(0.0625, z(128, 0), 1 / 256, z(0, -128)), (0.0371, z(97, -9), 0.0041, z(5, -120))]),
                ("QLinearLeakyRelu", {"alpha": 0.13}, [(0.043, z(111, 4), 0.031, z(77, 10)), (0.1, z(128, 0), 0.05, z(20, -60))])):
            for k, (xs, xz, ys, yz) in enumerate(params):
                name = f"{op.lower().replace('qlinear', 'qlinear_')}_every_value_{tag}_{k}"
                inits = [scalar("x_s", xs, np.float32), scalar("x_z", xz, t), scalar("y_s", ys, np.float32),
                         scalar("y_z", yz, t)]
                node = helper.make_node(op, ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain=MS, **attrs)
                save(name, [node], inits, [("x", [4, 64])], [4, 64], {"x": every_value(t, [4, 64])}, tp)
        for op in ("QLinearMul", "QLinearAdd"):
            name = f"{op.lower().replace('qlinear', 'qlinear_')}_nchw_by_c11_{tag}"
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            inits = [scalar("a_s", 0.0371, np.float32), scalar("a_z", z(121, -7), t), scalar("b_s", 0.0613, np.float32),
                     scalar("b_z", z(140, 9), t), scalar("c_s", 0.0297, np.float32), scalar("c_z", z(17, 3), t)]
            node = helper.make_node(op, ["a", "a_s", "a_z", "b", "b_s", "b_z", "c_s", "c_z"], ["y"], domain=MS)
            info = np.iinfo(t)
            save(name, [node], inits, [("a", [2, 20, 6, 7]), ("b", [1, 20, 1, 1])], [2, 20, 6, 7],
                 {"a": every_value(t, [2, 20, 6, 7]), "b": rng.integers(info.min, info.max + 1, [1, 20, 1, 1]).astype(t)}, tp)
        for cip, k, st, shape in ((0, 3, 2, [2, 20, 11, 13]), (1, 3, 1, [1, 16, 9, 9]), (0, 2, 2, [1, 8, 7, 7])):
            name = f"qlinear_average_pool_k{k}s{st}_cip{cip}_{tag}"
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            info = np.iinfo(t)
            inits = [scalar("x_s", 0.0371, np.float32), scalar("x_z", z(121, -7), t), scalar("y_s", 0.0297, np.float32),
                     scalar("y_z", z(17, 3), t)]
            pads = [1, 1, 1, 1] if k == 3 else [0, 0, 1, 1]
            node = helper.make_node("QLinearAveragePool", ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain=MS,
                                    kernel_shape=[k, k], strides=[st, st], pads=pads, count_include_pad=cip)
            oh = (shape[2] + pads[0] + pads[2] - k) // st + 1
            ow = (shape[3] + pads[1] + pads[3] - k) // st + 1
            save(name, [node], inits, [("x", shape)], [shape[0], shape[1], oh, ow],
                 {"x": rng.integers(info.min, info.max + 1, shape).astype(t)}, tp)
    # ceil_mode (int8e): the last windows reach 1 or 2 positions past the padded end; with
    # count_include_pad ONNX Runtime divides by the kernel's area.
    for cip, k, st, shape, pads in ((0, 3, 2, [2, 20, 10, 12], [1, 1, 1, 1]), (1, 3, 2, [2, 20, 10, 12], [1, 1, 1, 1]),
                                    (1, 3, 3, [1, 16, 7, 8], [0, 0, 0, 0]), (0, 4, 3, [1, 16, 8, 9], [1, 0, 0, 1])):
        for t, tp, tag in ((np.uint8, TensorProto.UINT8, "u8"), (np.int8, TensorProto.INT8, "s8")):
            z = (lambda u, s_: u) if t == np.uint8 else (lambda u, s_: s_)
            name = f"qlinear_average_pool_ceil_k{k}s{st}_cip{cip}_{tag}"
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            info = np.iinfo(t)
            inits = [scalar("x_s", 0.0371, np.float32), scalar("x_z", z(121, -7), t), scalar("y_s", 0.0297, np.float32),
                     scalar("y_z", z(17, 3), t)]
            node = helper.make_node("QLinearAveragePool", ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain=MS,
                                    kernel_shape=[k, k], strides=[st, st], pads=pads, count_include_pad=cip, ceil_mode=1)
            oh = -(-(shape[2] + pads[0] + pads[2] - k) // st) + 1
            ow = -(-(shape[3] + pads[1] + pads[3] - k) // st) + 1
            save(name, [node], inits, [("x", shape)], [shape[0], shape[1], oh, ow],
                 {"x": rng.integers(info.min, info.max + 1, shape).astype(t)}, tp)
    # Output parameters equal to the input's (as ORT's QDQ quantizer writes an average pool): the
    # edge windows (counts 6 and 4) average to exact .5 ties, which ORT rounds by its float32 sum
    # of the dequantized values (int8e).
    for cip, k, st, shape, pads in ((0, 3, 1, [1, 16, 9, 11], [1, 1, 1, 1]), (0, 2, 2, [1, 16, 9, 9], [0, 0, 1, 1])):
        for t, tp, tag in ((np.uint8, TensorProto.UINT8, "u8"), (np.int8, TensorProto.INT8, "s8")):
            z = (lambda u, s_: u) if t == np.uint8 else (lambda u, s_: s_)
            name = f"qlinear_average_pool_same_params_k{k}s{st}_cip{cip}_{tag}"
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            info = np.iinfo(t)
            inits = [scalar("x_s", 0.027543958, np.float32), scalar("x_z", z(121, -7), t),
                     scalar("y_s", 0.027543958, np.float32), scalar("y_z", z(121, -7), t)]
            node = helper.make_node("QLinearAveragePool", ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain=MS,
                                    kernel_shape=[k, k], strides=[st, st], pads=pads, count_include_pad=cip)
            oh = (shape[2] + pads[0] + pads[2] - k) // st + 1
            ow = (shape[3] + pads[1] + pads[3] - k) // st + 1
            save(name, [node], inits, [("x", shape)], [shape[0], shape[1], oh, ow],
                 {"x": rng.integers(info.min, info.max + 1, shape).astype(t)}, tp)
    # channels_last = 1 (NHWC data, int8e): average pools (padding, both count modes, ceil mode) and
    # the global average pool.
    for op, name, attrs, shape, out in (
            ("QLinearAveragePool", "qlinear_average_pool_nhwc_k3s2_cip0", {"kernel_shape": [3, 3], "strides": [2, 2],
             "pads": [1, 1, 1, 1], "count_include_pad": 0}, [2, 11, 13, 20], [2, 6, 7, 20]),
            ("QLinearAveragePool", "qlinear_average_pool_nhwc_ceil_k3s2_cip1", {"kernel_shape": [3, 3], "strides": [2, 2],
             "pads": [1, 1, 1, 1], "count_include_pad": 1, "ceil_mode": 1}, [1, 10, 12, 16], [1, 6, 7, 16]),
            ("QLinearGlobalAveragePool", "qlinear_global_average_pool_nhwc", {}, [2, 7, 9, 24], [2, 1, 1, 24])):
        for t, tp, tag in ((np.uint8, TensorProto.UINT8, "u8"), (np.int8, TensorProto.INT8, "s8")):
            z = (lambda u, s_: u) if t == np.uint8 else (lambda u, s_: s_)
            rng = np.random.default_rng(zlib.crc32((name + tag).encode()))
            info = np.iinfo(t)
            inits = [scalar("x_s", 0.0371, np.float32), scalar("x_z", z(121, -7), t), scalar("y_s", 0.0297, np.float32),
                     scalar("y_z", z(17, 3), t)]
            node = helper.make_node(op, ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain=MS, channels_last=1, **attrs)
            save(f"{name}_{tag}", [node], inits, [("x", shape)], out,
                 {"x": rng.integers(info.min, info.max + 1, shape).astype(t)}, tp)
    # QDQ add / mul of an activation and a per-channel quantized constant [C, 1, 1] (DequantizeLinear
    # with axis 0): ONNX Runtime fuses only per-tensor groups into QLinearAdd / QLinearMul, so it
    # runs these in float32 (dequantize, op, quantize); Loom keeps the same float form (int8e).
    for op in ("Add", "Mul"):
        for t, tp, tag in ((np.uint8, TensorProto.UINT8, "u8"), (np.int8, TensorProto.INT8, "s8")):
            z = (lambda u, s_: u) if t == np.uint8 else (lambda u, s_: s_)
            name = f"qdq_{op.lower()}_per_channel_constant_{tag}"
            rng = np.random.default_rng(zlib.crc32(name.encode()))
            info = np.iinfo(t)
            C = 12
            inits = [scalar("x_s", 0.0371, np.float32), scalar("x_z", z(121, -7), t),
                     numpy_helper.from_array(rng.uniform(0.01, 0.08, [C]).astype(np.float32), "c_s"),
                     numpy_helper.from_array(rng.integers(-3, 4, [C]).astype(np.int8), "c_z"),
                     numpy_helper.from_array(rng.integers(-128, 128, [C, 1, 1]).astype(np.int8), "c_q"),
                     scalar("y_s", 0.0297 if op == "Add" else 0.0613, np.float32), scalar("y_z", z(17, 3), t)]
            nodes = [helper.make_node("DequantizeLinear", ["x", "x_s", "x_z"], ["xf"]),
                     helper.make_node("DequantizeLinear", ["c_q", "c_s", "c_z"], ["cf"], axis=0),
                     helper.make_node(op, ["xf", "cf"], ["yf"]),
                     helper.make_node("QuantizeLinear", ["yf", "y_s", "y_z"], ["y"])]
            save(name, nodes, inits, [("x", [2, C, 5, 7])], [2, C, 5, 7], {"x": every_value(t, [2, C, 5, 7])}, tp)
    # QDQ: y = x * sigmoid(x) (SiLU) with the gate quantized; ONNX Runtime turns the DQ -> op -> Q
    # groups into QLinearSigmoid and QLinearMul.
    rng = np.random.default_rng(7)
    inits = [scalar("x_s", 0.05, np.float32), scalar("x_z", 128, np.uint8), scalar("g_s", 1 / 256, np.float32),
             scalar("g_z", 0, np.uint8), scalar("y_s", 0.03, np.float32), scalar("y_z", 20, np.uint8)]
    nodes = [helper.make_node("DequantizeLinear", ["x", "x_s", "x_z"], ["xf"]),
             helper.make_node("Sigmoid", ["xf"], ["gf"]),
             helper.make_node("QuantizeLinear", ["gf", "g_s", "g_z"], ["gq"]),
             helper.make_node("DequantizeLinear", ["gq", "g_s", "g_z"], ["gd"]),
             helper.make_node("Mul", ["xf", "gd"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "y_s", "y_z"], ["y"])]
    save("qdq_silu_gate", nodes, inits, [("x", [1, 16, 8, 8])], [1, 16, 8, 8], {"x": every_value(np.uint8, [1, 16, 8, 8])})


# numpy emulations of ONNX Runtime 1.32's float kernels (what core/graph/qnn/OrtFloat.cpp and
# codegen/FastMath.cpp compute), checked bit for bit against ORT on random inputs by
# check_emulations() before the island models are written.
_f, _d = np.float32, np.float64


def _fma(a, b, c):  # float32 a*b+c rounded once (the product is exact in float64)
    return _f(np.asarray(a, _d) * np.asarray(b, _d) + np.asarray(c, _d))


def emu_layer_norm(x, g, b, eps=1e-5):
    """ONNX LayerNormalization: mean from a float64 sum; two-pass variance in 8 FMA lanes."""
    n = x.shape[-1]
    mean = _f(x.astype(_d).sum(-1, keepdims=True) / n)
    dd = _f(x - mean)
    acc = np.zeros(x.shape[:-1] + (8,), _f)
    for h in range(n):
        acc[..., h % 8] = _fma(dd[..., h], dd[..., h], acc[..., h % 8])
    var = _f(_f(_f(acc[..., 0] + acc[..., 4]) + _f(acc[..., 2] + acc[..., 6])) +
             _f(_f(acc[..., 1] + acc[..., 5]) + _f(acc[..., 3] + acc[..., 7])))
    inv = _f(_f(1) / _f(np.sqrt(_f(_f(var / _f(n)) + _f(eps)))))[..., None]
    return _fma(_f(dd * inv), g, b)


def emu_skip_layer_norm(a, c, g, b, eps=1e-5):
    """com.microsoft.SkipLayerNormalization: Welford's running mean and M2 in float32."""
    v = _f(a + c)
    n = v.shape[-1]
    m = np.zeros(v.shape[:-1], _f)
    m2 = np.zeros(v.shape[:-1], _f)
    for h in range(n):
        delta = _f(v[..., h] - m)
        m = _f(m + _f(delta / _f(h + 1)))
        m2 = _f(m2 + _f(delta * _f(v[..., h] - m)))
    std = _f(np.sqrt(_f(_f(m2 / _f(n)) + _f(eps))))[..., None]
    return _f(_f(_f(_f(v - m[..., None]) / std) * g) + b)


def mlas_avx512f():
    """Whether ORT's MLAS takes its AVX512F kernels on this host (platform.cpp: CPUID AVX512F and
    the OS saving the ZMM state; Linux lists avx512f in /proc/cpuinfo only then)."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith("flags") and " avx512f" in line for line in f)
    except OSError:
        return False


def emu_softmax(x, avx512f=False):
    """MLAS's softmax: x + (-max); its sum-exp polynomial; the exps summed in vector lanes; * 1/sum.
    FMA3 kernel (TransKernelFma3.S): clamp at -88.376, 2^m from the exponent bits (0 below
    2^-126), 8 lanes reduced as vhaddps. AVX512F kernel (TransKernelAvx512F.S, taken on AVX-512
    hosts): clamp at -103.972, 2^m by vscalefps (subnormal results kept), 16 lanes whose halves
    are added first, then as vhaddps."""
    lower = -103.9720840454 if avx512f else -88.3762626647949
    v = np.maximum(_f(x + -x.max(-1, keepdims=True)), _f(lower))
    bias = _f(12582912.0)
    biased = _fma(v, _f(1.44269504088896341), bias)
    m = _f(biased - bias)
    v = _fma(m, _f(-6.93145752e-1), v)
    v = _fma(m, _f(-1.42860677e-6), v)
    p = np.full_like(v, _f(float.fromhex("0x1.694000p-10")))
    for c in ("0x1.125edcp-7", "0x1.555b5ap-5", "0x1.555450p-3", "0x1.fffff6p-2", "0x1p0", "0x1p0"):
        p = _fma(p, v, _f(float.fromhex(c)))
    if avx512f:
        e = np.ldexp(p, m.astype(np.int32)).astype(_f)  # vscalefps: p * 2^m rounded once
    else:
        e = _f(p * ((biased.view(np.int32) << 23) + np.int32(0x3F800000)).view(_f))
    lanes = 16 if avx512f else 8
    acc = np.zeros(x.shape[:-1] + (lanes,), _f)
    for h in range(x.shape[-1]):
        acc[..., h % lanes] = _f(acc[..., h % lanes] + e[..., h])
    if avx512f:
        acc = _f(acc[..., :8] + acc[..., 8:])  # vextractf64x4 + vaddps
    s = _f(_f(_f(acc[..., 4] + acc[..., 5]) + _f(acc[..., 6] + acc[..., 7])) +
           _f(_f(acc[..., 0] + acc[..., 1]) + _f(acc[..., 2] + acc[..., 3])))
    return _f(e * _f(_f(1) / s)[..., None])


def emu_erf(x):
    """MLAS's erf (FMA3 kernel): small |x| an odd polynomial, else 1 - exp(-|x| P(|x|))."""
    c = {k: _f(v) for k, v in dict(
        s0=-5.99104969e-4, s1=4.99339588e-3, s2=-2.67667342e-2, s3=1.12818025e-1, s4=-3.76124859e-1,
        s5=1.28379151e-1, b0=1.72948930e-5, b1=-3.83208680e-4, b2=3.88393435e-3, b3=-2.42545605e-2,
        b4=1.06777847e-1, b5=6.34846687e-1, b6=1.28717512e-1, e0=1.38319808e-3, e1=8.37550033e-3,
        e2=4.16689515e-2, e3=1.66664466e-1, e4=4.99999851e-1).items()}
    a = np.abs(x)
    ac = np.minimum(a, _f(3.725))
    sq = _f(ac * ac)
    small = np.full_like(a, c["s0"])
    for k in ("s1", "s2", "s3", "s4", "s5"):
        small = _fma(small, sq, c[k])
    small = _fma(small, ac, ac)
    big = _f(0.921875) <= ac
    small = np.where(big, _f(0), small)
    ab = np.where(big, a, _f(0))
    r = np.full_like(a, c["b0"])
    for k in ("b1", "b2", "b3", "b4", "b5", "b6"):
        r = _fma(r, ab, c[k])
    r = np.maximum(_f(-_fma(r, ab, ab)), _f(-88.3762626647949))
    vr = _f(_fma(_f(1.44269504088896341), r, _f(12582912.0)) - _f(12582912.0))
    vf = _fma(vr, _f(-1.42860677e-6), _fma(vr, _f(-6.93145752e-1), r))
    y = np.full_like(a, c["e0"])
    for k in ("e1", "e2", "e3", "e4"):
        y = _fma(y, vf, c[k])
    y = _fma(_fma(y, vf, _f(1)), vf, _f(1))
    y = _f(_f(1) - _f(y * ((vr.astype(np.int32) + 127) << 23).view(_f)))
    sign = x.view(np.uint32) & np.uint32(0x80000000)
    return (y.view(np.uint32) | small.view(np.uint32) | sign).view(_f)


def emu_tanh(x):
    """MLAS's tanh: Eigen's rational approximation on [-9, 9]."""
    v = np.clip(x, _f(-9), _f(9))
    s = _f(v * v)
    p = _fma(s, _f(-2.76076847742355e-16), _f(2.00018790482477e-13))
    for k in (-8.60467152213735e-11, 5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
              4.89352455891786e-03):
        p = _fma(p, s, _f(k))
    q = _fma(s, _f(1.19825839466702e-06), _f(1.18534705686654e-04))
    for k in (2.26843463243900e-03, 4.89352518554385e-03):
        q = _fma(q, s, _f(k))
    return _f(_f(p * v) / q)


def check_emulations():
    """Each emulation equals ORT's kernel on random inputs (a single-op model each)."""
    rng = np.random.default_rng(7)
    F = TensorProto.FLOAT

    def run(nodes, feeds):
        inputs = [helper.make_tensor_value_info(k, F, list(v.shape)) for k, v in feeds.items()]
        g = helper.make_graph(nodes, "e", inputs, [helper.make_tensor_value_info("y", F, None)])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
        m.ir_version = 8
        return ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]

    x = (rng.standard_normal((1, 64, 256)) * 3 + rng.standard_normal((1, 64, 1)) * 5).astype(_f)
    c = rng.standard_normal((1, 64, 256)).astype(_f)
    g = rng.standard_normal(256).astype(_f)
    b = rng.standard_normal(256).astype(_f)
    checks = {
        "LayerNormalization": (run([helper.make_node("LayerNormalization", ["x", "g", "b"], ["y"], epsilon=1e-5)],
                                   {"x": x, "g": g, "b": b}), emu_layer_norm(x, g, b)),
        "SkipLayerNormalization": (run([helper.make_node("SkipLayerNormalization", ["x", "c", "g", "b"], ["y"],
                                                         domain=MS, epsilon=1e-5)], {"x": x, "c": c, "g": g, "b": b}),
                                   emu_skip_layer_norm(x, c, g, b)),
    }
    # ORT's softmax kernel depends on the host: the emulation of the one it takes here. Row 0 spans
    # hundreds, so that some exps are subnormal or below the clamp (where the two kernels differ).
    avx512f = mlas_avx512f()
    print("MLAS softmax kernel on this host:", "AVX512F" if avx512f else "FMA3")
    for d in (128, 37, 5, 1000):
        s = (rng.standard_normal((64, d)) * 4).astype(_f)
        s[0] *= 30
        checks[f"Softmax {d}"] = (run([helper.make_node("Softmax", ["x"], ["y"], axis=-1)], {"x": s}),
                                  emu_softmax(s, avx512f))
    e = np.concatenate([np.linspace(-6, 6, 4096), rng.standard_normal(4096) * 2]).astype(_f)
    checks["Erf"] = (run([helper.make_node("Erf", ["x"], ["y"])], {"x": e}), emu_erf(e))
    t = np.concatenate([np.linspace(-10, 10, 4096), rng.standard_normal(4096)]).astype(_f)
    checks["Tanh"] = (run([helper.make_node("Tanh", ["x"], ["y"])], {"x": t}), emu_tanh(t))
    checks["Gelu"] = (run([helper.make_node("Gelu", ["x"], ["y"], domain=MS)], {"x": e}),
                      _f(_f(_f(0.5) * e) * _f(emu_erf(_f(e * _f(np.sqrt(0.5)))) + _f(1))))
    for name, (want, got) in checks.items():
        assert np.array_equal(want, got), f"{name}: the numpy emulation differs from ORT in {np.mean(want != got):.2%}"
        print("emulation equals ORT:", name)


def float_islands():
    """The float ops between the integer matmuls of a quantize_dynamic model (int8f), after a
    DynamicQuantizeLinear -> DequantizeLinear so that Loom sees a quantized model: LayerNormalization
    (plain; ORT's SkipLayerNormalization when an Add feeds only the norm; not when the sum is used
    again), Softmax (rows of 128 and of 37: the 8-lane sum's tail), the Gelu pattern (ORT fuses it
    into com.microsoft.Gelu), and Erf alone over [-6, 6] and Tanh over [-10, 10] (MLAS's, Loom's float32
    erf and tanh everywhere: BERT's pooler ends in a tanh).
    ONNX Runtime with its default optimizations is the reference, compared exactly: one ulp moves a
    requantized tensor's scale downstream."""
    check_emulations()
    F = TensorProto.FLOAT

    def dq(rng, shape, w_name="w"):
        # x -> DynamicQuantizeLinear -> DequantizeLinear, times a random constant row: values that
        # are not on the quantization grid, so the norms' sums round.
        nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "q_s", "q_z"]),
                 helper.make_node("DequantizeLinear", ["q", "q_s", "q_z"], ["xd"]),
                 helper.make_node("Mul", ["xd", w_name], ["xw"])]
        inits = [numpy_helper.from_array((rng.standard_normal(shape[-1]) * 0.7 + 1).astype(np.float32), w_name)]
        return nodes, inits

    def feeds(rng, shape, scale=3.0):
        return (rng.standard_normal(shape) * scale + rng.standard_normal(shape[:-1] + [1])).astype(np.float32)

    def ln_params(rng, n):
        return [numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "gamma"),
                numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "beta")]

    shape = [2, 24, 256]
    rng = np.random.default_rng(101)
    nodes, inits = dq(rng, shape)
    nodes.append(helper.make_node("LayerNormalization", ["xw", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5))
    save("island_layer_norm", nodes, inits + ln_params(rng, 256), [("x", shape)], shape, {"x": feeds(rng, shape)}, F)

    rng = np.random.default_rng(102)
    nodes, inits = dq(rng, shape)
    nodes += [helper.make_node("Add", ["xw", "r"], ["s"]),
              helper.make_node("LayerNormalization", ["s", "gamma", "beta"], ["y"], axis=-1, epsilon=1e-5)]
    save("island_skip_layer_norm", nodes, inits + ln_params(rng, 256), [("x", shape), ("r", shape)], shape,
         {"x": feeds(rng, shape), "r": feeds(rng, shape, 1.0)}, F)

    rng = np.random.default_rng(103)
    nodes, inits = dq(rng, shape)
    nodes += [helper.make_node("Add", ["xw", "r"], ["s"]),
              helper.make_node("LayerNormalization", ["s", "gamma", "beta"], ["n"], axis=-1, epsilon=1e-5),
              helper.make_node("Add", ["n", "s"], ["y"])]
    save("island_layer_norm_shared_add", nodes, inits + ln_params(rng, 256), [("x", shape), ("r", shape)], shape,
         {"x": feeds(rng, shape), "r": feeds(rng, shape, 1.0)}, F)

    for d in (128, 37):
        sshape = [1, 4, 16, d]
        rng = np.random.default_rng(104 + d)
        nodes, inits = dq(rng, sshape)
        nodes.append(helper.make_node("Softmax", ["xw"], ["y"], axis=-1))
        save(f"island_softmax_{d}", nodes, inits, [("x", sshape)], sshape, {"x": feeds(rng, sshape)}, F)

    # Gelu after a quantize_dynamic projection (MatMulInteger -> Cast -> Mul(scale) -> Add(bias)), as
    # in BERT: ORT fuses the Gelu pattern into com.microsoft.Gelu there (not after every producer:
    # after a float Mul it keeps Div -> Erf, see tests/onnx/quant_ops/README).
    rng = np.random.default_rng(105)
    # 7-bit weights (quantize_dynamic's reduce_range): ORT's AVX2 u8s8 kernel sums byte pairs in
    # saturating int16 (vpmaddubsw), so full-range weights give ORT wrong sums (Loom's are exact).
    w = rng.integers(-64, 64, size=[64, 128], dtype=np.int8)
    inits = [numpy_helper.from_array(w, "w_q"), scalar("w_s", 0.004, np.float32), scalar("w_z", 0, np.int8),
             numpy_helper.from_array((rng.standard_normal(128) * 0.3).astype(np.float32), "bias"),
             scalar("sqrt2", 1.4142135381698608, np.float32), scalar("one", 1.0, np.float32),
             scalar("half", 0.5, np.float32)]
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "q_s", "q_z"]),
             helper.make_node("MatMulInteger", ["q", "w_q", "q_z", "w_z"], ["acc"]),
             helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["q_s", "w_s"], ["s"]), helper.make_node("Mul", ["accf", "s"], ["mm"]),
             helper.make_node("Add", ["mm", "bias"], ["h"]),
             helper.make_node("Div", ["h", "sqrt2"], ["g0"]), helper.make_node("Erf", ["g0"], ["g1"]),
             helper.make_node("Add", ["g1", "one"], ["g2"]), helper.make_node("Mul", ["h", "g2"], ["g3"]),
             helper.make_node("Mul", ["g3", "half"], ["y"])]
    save("island_gelu", nodes, inits, [("x", [1, 32, 64])], [1, 32, 128], {"x": feeds(rng, [1, 32, 64], 1.5)}, F)

    x = np.linspace(-6, 6, 1 << 14, dtype=np.float32)
    save("erf_mlas", [helper.make_node("Erf", ["x"], ["y"])], [], [("x", [1 << 14])], [1 << 14], {"x": x}, F)
    x = np.linspace(-10, 10, 1 << 14, dtype=np.float32)
    save("tanh_mlas", [helper.make_node("Tanh", ["x"], ["y"])], [], [("x", [1 << 14])], [1 << 14], {"x": x}, F)


def main():
    float_islands()
    integer_ops()
    qp = lambda p: [scalar(p + "_s", 0.05, np.float32), scalar(p + "_z", 120, np.uint8)]
    for op, name in (("QLinearAdd", "qlinear_add_broadcast"), ("QLinearMul", "qlinear_mul_broadcast")):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        inits = [scalar("a_s", 0.04, np.float32), scalar("a_z", 100, np.uint8), scalar("b_s", 0.07, np.float32),
                 scalar("b_z", 130, np.uint8), scalar("c_s", 0.09, np.float32), scalar("c_z", 110, np.uint8)]
        node = helper.make_node(op, ["a", "a_s", "a_z", "b", "b_s", "b_z", "c_s", "c_z"], ["y"], domain=MS)
        save(name, [node], inits, [("a", [2, 3, 4]), ("b", [3, 1])], [2, 3, 4],
             {"a": u8(rng, [2, 3, 4]), "b": u8(rng, [3, 1])})
    rng = np.random.default_rng(1)
    inits = [scalar("y_s", 0.06, np.float32), scalar("y_z", 128, np.uint8), scalar("x0_s", 0.03, np.float32),
             scalar("x0_z", 100, np.uint8), scalar("x1_s", 0.08, np.float32), scalar("x1_z", 140, np.uint8)]
    node = helper.make_node("QLinearConcat", ["y_s", "y_z", "x0", "x0_s", "x0_z", "x1", "x1_s", "x1_z"], ["y"],
                            domain=MS, axis=1)
    save("qlinear_concat", [node], inits, [("x0", [1, 2, 3]), ("x1", [1, 4, 3])], [1, 6, 3],
         {"x0": u8(rng, [1, 2, 3]), "x1": u8(rng, [1, 4, 3])})
    for op, name, attrs in (("QLinearSigmoid", "qlinear_sigmoid", {}),
                            ("QLinearLeakyRelu", "qlinear_leaky_relu", {"alpha": 0.1}),
                            ("QLinearGlobalAveragePool", "qlinear_global_average_pool", {"channels_last": 0}),
                            ("QLinearAveragePool", "qlinear_average_pool_pads",
                             {"kernel_shape": [3, 3], "strides": [2, 2], "pads": [1, 1, 1, 1], "count_include_pad": 0})):
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        inits = [scalar("x_s", 0.05, np.float32), scalar("x_z", 128, np.uint8), scalar("y_s", 0.01, np.float32),
                 scalar("y_z", 20, np.uint8)]
        node = helper.make_node(op, ["x", "x_s", "x_z", "y_s", "y_z"], ["y"], domain=MS, **attrs)
        shape = [1, 3, 7, 7]
        out = {"QLinearGlobalAveragePool": [1, 3, 1, 1], "QLinearAveragePool": [1, 3, 4, 4]}.get(op, shape)
        save(name, [node], inits, [("x", shape)], out, {"x": u8(rng, shape)})
    # QGemm (transB, per-channel int8 weight, int32 bias) with a uint8 output.
    rng = np.random.default_rng(5)
    w = rng.integers(-64, 64, size=[6, 10], dtype=np.int8)
    inits = [scalar("a_s", 0.02, np.float32), scalar("a_z", 125, np.uint8),
             numpy_helper.from_array(w, "w"), numpy_helper.from_array(np.linspace(0.01, 0.02, 6).astype(np.float32), "w_s"),
             numpy_helper.from_array(np.zeros(6, np.int8), "w_z"),
             numpy_helper.from_array(rng.integers(-2000, 2000, size=6, dtype=np.int32), "bias"),
             scalar("y_s", 0.05, np.float32), scalar("y_z", 128, np.uint8)]
    node = helper.make_node("QGemm", ["a", "a_s", "a_z", "w", "w_s", "w_z", "bias", "y_s", "y_z"], ["y"], domain=MS,
                            transB=1)
    save("qgemm_per_channel", [node], inits, [("a", [3, 10])], [3, 6], {"a": u8(rng, [3, 10])})
    # QLinearConv with constant scales and per-channel weights: the integer conv path.
    rng = np.random.default_rng(6)
    w = rng.integers(-64, 64, size=[8, 4, 3, 3], dtype=np.int8)
    inits = [scalar("x_s", 0.02, np.float32), scalar("x_z", 120, np.uint8), numpy_helper.from_array(w, "w"),
             numpy_helper.from_array(np.linspace(0.002, 0.004, 8).astype(np.float32), "w_s"),
             numpy_helper.from_array(np.zeros(8, np.int8), "w_z"), scalar("y_s", 0.03, np.float32),
             scalar("y_z", 100, np.uint8), numpy_helper.from_array(rng.integers(-500, 500, size=8, dtype=np.int32), "b")]
    node = helper.make_node("QLinearConv", ["x", "x_s", "x_z", "w", "w_s", "w_z", "y_s", "y_z", "b"], ["y"],
                            pads=[1, 1, 1, 1], strides=[2, 2])
    save("qlinearconv_per_channel_stride2", [node], inits, [("x", [1, 4, 9, 9])], [1, 8, 5, 5],
         {"x": u8(rng, [1, 4, 9, 9])})


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--check-emulations"]:
        check_emulations()
    else:
        main()
