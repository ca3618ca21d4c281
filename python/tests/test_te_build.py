# TE -> create_prim_func -> tir.Schedule -> loom.build -> numpy, checked against numpy (matmul,
# conv2d, softmax), with and without schedules.
import numpy as np
import pytest

import loom
from loom import te


def matmul(M, N, K):
    A = te.placeholder((M, K), name="A")
    B = te.placeholder((K, N), name="B")
    k = te.reduce_axis((0, K), name="k")
    C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return A, B, C


def conv2d(N, C, H, W, K, R, pad):
    data = te.placeholder((N, C, H, W), name="data")
    weight = te.placeholder((K, C, R, R), name="weight")
    Hp, Wp = H + 2 * pad, W + 2 * pad
    padded = te.compute(
        (N, C, Hp, Wp),
        lambda n, c, y, x: te.if_then_else(
            (y >= pad) & (y < H + pad) & (x >= pad) & (x < W + pad), data[n, c, y - pad, x - pad], 0.0),
        name="pad_temp")
    rc = te.reduce_axis((0, C), name="rc")
    ry = te.reduce_axis((0, R), name="ry")
    rx = te.reduce_axis((0, R), name="rx")
    OH, OW = Hp - R + 1, Wp - R + 1
    out = te.compute(
        (N, K, OH, OW),
        lambda n, f, y, x: te.sum(padded[n, rc, y + ry, x + rx] * weight[f, rc, ry, rx], axis=[rc, ry, rx]),
        name="conv2d_nchw")
    return data, weight, out


def softmax(M, N):
    A = te.placeholder((M, N), name="A")
    k1 = te.reduce_axis((0, N), name="k1")
    mx = te.compute((M,), lambda i: te.max(A[i, k1], axis=k1), name="T_softmax_maxelem")
    ex = te.compute((M, N), lambda i, j: te.exp(A[i, j] - mx[i]), name="T_softmax_exp")
    k2 = te.reduce_axis((0, N), name="k2")
    sm = te.compute((M,), lambda i: te.sum(ex[i, k2], axis=k2), name="T_softmax_expsum")
    out = te.compute((M, N), lambda i, j: ex[i, j] / sm[i], name="T_softmax_norm")
    return A, out


def np_conv2d(x, w, pad):
    x = np.pad(x, ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    N, C, H, W = x.shape
    K, _, R, _ = w.shape
    out = np.zeros((N, K, H - R + 1, W - R + 1), np.float64)
    for ry in range(R):
        for rx in range(R):
            out += np.einsum("nchw,kc->nkhw", x[:, :, ry:ry + H - R + 1, rx:rx + W - R + 1], w[:, :, ry, rx])
    return out


def np_softmax(a):
    e = np.exp(a - a.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


rng = np.random.default_rng(0)


@pytest.mark.parametrize("scheduled", [False, True])
def test_matmul(scheduled):
    M, N, K = 64, 48, 32
    A, B, C = matmul(M, N, K)
    mod = loom.IRModule({"main": te.create_prim_func([A, B, C])})
    if scheduled:
        sch = loom.tir.Schedule(mod)
        block = sch.get_block("C")
        i, j, k = sch.get_loops(block)
        io, ii = sch.split(i, factors=[None, 8])
        jo, ji = sch.split(j, factors=[None, 16])
        sch.reorder(io, jo, k, ii, ji)
        sch.parallel(io)
        sch.vectorize(ji)
        sch.decompose_reduction(block, k)
        mod = sch.mod
    lib = loom.build(mod, target="llvm")
    a = rng.uniform(-1, 1, (M, K)).astype("float32")
    b = rng.uniform(-1, 1, (K, N)).astype("float32")
    c = loom.nd.empty((M, N), "float32")
    lib["main"](loom.nd.array(a), loom.nd.array(b), c)
    np.testing.assert_allclose(c.numpy(), a @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scheduled", [False, True])
def test_conv2d(scheduled):
    data, weight, out = conv2d(1, 4, 10, 10, 8, 3, 1)
    f = te.create_prim_func([data, weight, out])
    if scheduled:
        sch = loom.tir.Schedule(f)
        conv = sch.get_block("conv2d_nchw")
        pad = sch.get_block("pad_temp")
        n, ff, y, x, rc, ry, rx = sch.get_loops(conv)
        yo, yi = sch.split(y, factors=[None, 5])
        sch.reorder(yo, ff, rc, ry, rx, yi, x)
        sch.compute_at(pad, yo)
        sch.parallel(ff)
        f = sch.mod
    lib = loom.build(f)
    x = rng.uniform(-1, 1, (1, 4, 10, 10)).astype("float32")
    w = rng.uniform(-1, 1, (8, 4, 3, 3)).astype("float32")
    y = np.zeros((1, 8, 10, 10), "float32")
    lib(x, w, y)  # numpy arrays directly; the result is written into y
    np.testing.assert_allclose(y, np_conv2d(x, w, 1), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("scheduled", [False, True])
def test_softmax(scheduled):
    A, out = softmax(16, 40)
    mod = loom.IRModule({"main": te.create_prim_func([A, out])})
    if scheduled:
        sch = loom.tir.Schedule(mod)
        sch.compute_inline(sch.get_block("T_softmax_exp"))
        i, j = sch.get_loops(sch.get_block("T_softmax_norm"))
        sch.compute_at(sch.get_block("T_softmax_expsum"), i)
        sch.compute_at(sch.get_block("T_softmax_maxelem"), i)
        sch.parallel(i)
        mod = sch.mod
    lib = loom.build(mod)
    a = rng.uniform(-3, 3, (16, 40)).astype("float32")
    o = loom.nd.empty((16, 40))
    lib["main"](loom.nd.array(a), o)
    np.testing.assert_allclose(o.numpy(), np_softmax(a), rtol=1e-5, atol=1e-6)


def test_compute_forms_and_operators():
    n = te.var("n")
    A = te.placeholder((8, 6), name="A")
    # *i form, Python operators on expressions and numbers, te.max elementwise, intrinsics.
    B = te.compute(A.shape, lambda *i: te.max(A(*i) * 2.0 - 1, 0.5) + te.sqrt(te.abs(A[i[0], i[1]])), name="B")
    C = te.compute((8,), lambda i: B[i, 0] // 1 + B[i, 5] % 2, name="C")
    f = te.create_prim_func([A, B, C])
    assert "T.grid(8, 6)" in f.script() and 'T.block("B")' in f.script()
    lib = loom.build(f)
    a = rng.uniform(-2, 2, (8, 6)).astype("float32")
    b = np.zeros((8, 6), "float32")
    c = np.zeros((8,), "float32")
    lib(a, b, c)
    ref_b = np.maximum(a * 2 - 1, 0.5) + np.sqrt(np.abs(a))
    np.testing.assert_allclose(b, ref_b, rtol=1e-5)
    np.testing.assert_allclose(c, np.floor(ref_b[:, 0]) + np.mod(ref_b[:, 5], 2), rtol=1e-5, atol=1e-5)
    assert str(n + 1) == "n + 1" and (n * 2).dtype == "int32"
    assert int(te.const(3) + 4) == 7


def test_symbolic_shape_and_scalar_param():
    n = te.var("n")
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    f = te.create_prim_func([A, B])
    lib = loom.build(f)
    for size in (3, 17):
        a = rng.uniform(-1, 1, size).astype("float32")
        b = np.zeros(size, "float32")
        lib(a, b)
        np.testing.assert_allclose(b, a + 1)


def test_script_round_trip_and_lower():
    A, B, C = matmul(16, 16, 16)
    mod = loom.IRModule({"main": te.create_prim_func([A, B, C])})
    text = mod.script()
    again = loom.script.from_source(text)
    assert isinstance(again, loom.IRModule)
    assert again.script() == text
    func = loom.script.from_source(mod["main"].script())
    assert isinstance(func, loom.PrimFunc) and loom.structural_equal(func, mod["main"])
    lowered = loom.lower(mod)
    assert "T.block" not in lowered.script() and "for i" in lowered.script()


def test_get_source_and_export(tmp_path):
    A, B, C = matmul(32, 32, 32)
    lib = loom.build(te.create_prim_func([A, B, C]))
    assert "define" in lib.get_source("ll")
    assert "ret" in lib.get_source("asm")
    assert "for" in lib.get_source("tir")
    path = tmp_path / "mm.so"
    lib.export_library(path)
    loaded = loom.runtime.load_module(path)
    a = rng.uniform(-1, 1, (32, 32)).astype("float32")
    b = rng.uniform(-1, 1, (32, 32)).astype("float32")
    c = np.zeros((32, 32), "float32")
    loaded["main"](a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)


def test_time_evaluator():
    A, B, C = matmul(32, 32, 32)
    lib = loom.build(te.create_prim_func([A, B, C]))
    dev = loom.cpu(0)
    a, b, c = (loom.nd.array(rng.uniform(size=(32, 32)).astype("float32")) for _ in range(3))
    r = lib.time_evaluator("main", dev, number=5, repeat=3)(a, b, c)
    assert len(r.results) == 3 and r.mean > 0 and all(t > 0 for t in r.results)
    np.testing.assert_allclose(c.numpy(), a.numpy() @ b.numpy(), rtol=1e-5, atol=1e-5)


from loom.script import tir as T  # noqa: E402


@T.prim_func
def add_one(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i in range(8):
        with T.block("B"):
            v_i = T.axis.remap("S", [i])
            T.reads(A[v_i])
            T.writes(B[v_i])
            B[v_i] = A[v_i] + T.float32(1)


def test_tvmscript_decorator():
    # A TVMScript function in Python source is parsed (never run) into a PrimFunc, as in TVM.
    assert isinstance(add_one, loom.PrimFunc)
    A = te.placeholder((8,), name="A")
    B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
    assert loom.structural_equal(add_one, te.create_prim_func([A, B]))
    a = np.arange(8, dtype="float32")
    b = np.zeros(8, "float32")
    loom.build(add_one)(a, b)
    np.testing.assert_array_equal(b, a + 1)
