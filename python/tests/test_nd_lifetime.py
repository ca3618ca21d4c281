# loom.nd arrays (zero-copy views, copies, DLPack both ways) and lifetimes: arrays, functions and
# modules outlive what built them, and repeated create/destroy loops do not grow memory.
import gc
import os

import numpy as np
import pytest

import loom
from loom import te


def add_one_func(n=64):
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    return te.create_prim_func([A, B])


# In an ASan build (scripts/test.sh --sanitize) freed memory waits in the allocator's quarantine
# (256 MiB) and RSS only grows: the cycles still run under ASan, the RSS budgets are not checked.
SANITIZED = os.environ.get("LOOM_SANITIZE") == "1"


def rss_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def test_zero_copy_where_aligned():
    a = loom.nd.aligned_empty((64,), "float32")
    a[:] = np.arange(64)
    view = loom.nd.array(a)
    assert view.is_view and view.data_ptr == a.ctypes.data
    out = loom.nd.aligned_empty((64,), "float32")
    out_view = loom.nd.array(out)
    loom.build(add_one_func())["main"](view, out_view)
    np.testing.assert_array_equal(out, np.arange(64) + 1)  # written in place, no copy back
    # Misaligned or non-contiguous arrays are copied (kernels need aligned buffers).
    raw = np.zeros(65, "float32")
    mis = raw[1:] if raw.ctypes.data % 64 == 0 else raw[:64]
    mis = mis if mis.ctypes.data % 64 else raw[1:]
    copied = loom.nd.array(mis)
    assert not copied.is_view and copied.data_ptr % loom.nd.ALIGNMENT == 0
    assert not loom.nd.array(np.zeros((8, 8), "float32")[:, ::2]).is_view
    assert not loom.nd.array(a, copy=True).is_view


def test_numpy_arguments_any_alignment():
    lib = loom.build(add_one_func())
    raw = np.zeros(130, "float32")
    for off in range(4):
        a = raw[off:off + 64]
        a[:] = np.arange(64) * 0.5
        b = np.full(65, -1, "float32")[1:]
        lib["main"](a, b)
        np.testing.assert_array_equal(b, a + 1)
    with pytest.raises(loom.error.RuntimeFailure):
        lib["main"](np.zeros(64, "float32"), np.zeros(64, "float32")[::-1][::-1].reshape(8, 8))


def test_dlpack_round_trip():
    a = loom.nd.array(np.arange(12, dtype="float32").reshape(3, 4))
    b = np.from_dlpack(a)  # numpy takes Loom's memory
    assert b.ctypes.data == a.data_ptr
    np.testing.assert_array_equal(b, np.arange(12).reshape(3, 4))
    del a
    gc.collect()
    np.testing.assert_array_equal(b, np.arange(12).reshape(3, 4))  # b keeps the storage alive
    src = loom.nd.aligned_array(np.arange(6, dtype="int32"))
    c = loom.nd.from_dlpack(src)  # Loom takes numpy's memory
    assert c.is_view and c.data_ptr == src.ctypes.data and c.dtype == "int32"
    np.testing.assert_array_equal(c.numpy(), np.arange(6))
    capsule = loom.nd.array(np.ones(4, "float64")).__dlpack__()
    d = loom.nd.from_dlpack(capsule)
    np.testing.assert_array_equal(d.numpy(), np.ones(4))
    with pytest.raises(loom.error.ValueError):
        loom.nd.from_dlpack(capsule)  # consumed already


def test_dtypes_and_shapes():
    for dt in ("float32", "float64", "int8", "int32", "int64", "uint8", "bool"):
        x = (np.arange(24) % 2).astype(dt).reshape(2, 3, 4)
        y = loom.nd.array(x)
        assert y.dtype == dt and y.shape == (2, 3, 4)
        np.testing.assert_array_equal(y.numpy(), x)
    e = loom.nd.empty((2, 0, 3))
    assert e.shape == (2, 0, 3) and e.numpy().size == 0


def test_objects_outlive_their_builders():
    def make():
        lib = loom.build(add_one_func(16))
        f = lib["main"]
        return f  # the module and every IR object that built it go out of scope
    f = make()
    gc.collect()
    a = np.arange(16, dtype="float32")
    b = np.zeros(16, "float32")
    f(a, b)
    np.testing.assert_array_equal(b, a + 1)

    def arrays():
        x = loom.nd.array(loom.nd.aligned_array(np.arange(16, dtype="float32")))
        return loom.nd.array(x.numpy()), x
    y, x = arrays()
    gc.collect()
    f(x, y)
    np.testing.assert_array_equal(y.numpy(), np.arange(16) + 1)
    # An RV and a trace outlive their schedule; a PrimFunc outlives its tensors.
    sch = loom.tir.Schedule(add_one_func())
    loop = sch.get_loops("B")[0]
    trace, func = sch.trace, sch.func
    del sch
    gc.collect()
    assert "get_loops" in str(trace) and loop.id >= 0 and "T.block" in func.script()


def test_repeated_create_destroy_does_not_grow():
    func = add_one_func(256)
    a = np.ones(256, "float32")

    def cycle():
        lib = loom.build(func)
        out = loom.nd.empty((256,))
        lib["main"](loom.nd.array(a), out)
        np.from_dlpack(out).sum()
        sch = loom.tir.Schedule(func)
        sch.split(sch.get_loops("B")[0], factors=[None, 16])
        sch.mod.script()
        A = te.placeholder((32,), name="A")
        te.create_prim_func([A, te.compute((32,), lambda i: A[i] * 2.0, name="B")])

    for _ in range(5):
        cycle()
    gc.collect()
    before = rss_kib()
    for _ in range(40):
        cycle()
    gc.collect()
    grown = rss_kib() - before
    # Measured: about 50 KiB over 40 cycles; keeping the 40 modules alive instead grows RSS by
    # about 27 MiB (each JIT module ~0.7 MiB), so a leaked module, its code or arrays fails this.
    assert SANITIZED or grown < 8 * 1024, f"RSS grew by {grown} KiB over 40 build/run/destroy cycles"

    before = rss_kib()
    for _ in range(2000):
        x = loom.nd.array(np.ones(4096, "float32"))
        y = np.from_dlpack(loom.nd.empty((4096,)))
        del x, y
    gc.collect()
    assert SANITIZED or rss_kib() - before < 4 * 1024
