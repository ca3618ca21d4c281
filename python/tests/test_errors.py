# C++ errors surface as the loom.error class of their kind, with message and location; bad input
# never aborts the interpreter.
import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import loom
from loom import te
from loom.error import LoomError
from conftest import REPO


def matmul_func(n=32):
    A = te.placeholder((n, n), name="A")
    B = te.placeholder((n, n), name="B")
    k = te.reduce_axis((0, n), name="k")
    C = te.compute((n, n), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    return te.create_prim_func([A, B, C])


def test_parse_error_has_location():
    bad = matmul_func().script().replace("T.grid(32, 32, 32)", "T.grid(32, 32,, 32)")
    with pytest.raises(loom.error.ParseError) as e:
        loom.script.from_source(bad, "kernel.tir")
    err = e.value
    assert isinstance(err, LoomError) and err.kind == "ParseError"
    assert err.file == "kernel.tir" and err.line > 1 and err.column > 1
    assert str(err).startswith(f"kernel.tir:{err.line}:{err.column}: error:")


def test_schedule_errors_are_typed_and_rendered():
    sch = loom.tir.Schedule(matmul_func())
    b = sch.get_block("C")
    i, j, k = sch.get_loops(b)
    with pytest.raises(loom.error.WrongBlockIterTypeError) as e:
        sch.parallel(k)
    assert isinstance(e.value, loom.error.ScheduleError)
    assert "k" in e.value.message
    rendered = str(e.value)
    assert rendered.startswith(e.value.message) and "T.prim_func" in rendered  # the IR follows
    # Errors that know the offending statement underline it in the listing.
    with pytest.raises(loom.error.ScheduleValueError) as e:
        sch.sample_compute_location(b)
    assert "^^^" in str(e.value) and 'T.block("C")' in str(e.value)
    with pytest.raises(loom.error.InvalidFactorsError):
        sch.split(i, factors=[None, None])
    with pytest.raises(loom.error.BlockNotFoundError):
        sch.get_block("nope")
    with pytest.raises(loom.error.LoopsNotAChainError):
        io, ii = sch.split(i, factors=[4, 8])
        sch.fuse(ii, k)
    # An RV whose loop a primitive removed names the primitive that removed it.
    with pytest.raises(loom.error.InvalidRVError) as e:
        sch.vectorize(i)
    assert "split" in str(e.value)
    # The schedule is still usable after each failure.
    sch.vectorize(j)
    assert "T.vectorized" in sch.mod.script()


def test_wrong_arguments_raise_type_errors():
    sch = loom.tir.Schedule(matmul_func())
    b = sch.get_block("C")
    with pytest.raises(loom.error.TypeError) as e:
        sch.split(b, factors=[2, 16])
    assert isinstance(e.value, TypeError) and "loop" in str(e.value)
    with pytest.raises(TypeError):
        sch.get_loops(b, 3, 4)
    with pytest.raises(TypeError):
        sch.split(sch.get_loops(b)[0], factors=[object()])
    with pytest.raises(AttributeError):
        sch.splitt
    with pytest.raises(TypeError):
        te.compute((4,), lambda i: te.sum(1.0, axis=te.reduce_axis((0, 2))) + 1)
    with pytest.raises(loom.error.TypeError):
        te.compute((4,), lambda i: te.exp(te.sum(1.0, axis=te.reduce_axis((0, 2)))))
    with pytest.raises(ValueError):
        te.compute((4, 4), lambda i: i)
    with pytest.raises(loom.error.TypeError):
        te.placeholder((4,), dtype="float33")


def test_runtime_failures():
    lib = loom.build(matmul_func())
    a = np.zeros((32, 32), "float32")
    with pytest.raises(loom.error.RuntimeFailure) as e:
        lib["main"](a, a, np.zeros((32, 31), "float32"))
    assert isinstance(e.value, RuntimeError) and "shape" in str(e.value)
    with pytest.raises(loom.error.RuntimeFailure):
        lib["main"](a, a)
    with pytest.raises(loom.error.RuntimeFailure):
        lib["main"](a, a, np.zeros((32, 32), "float64"))
    with pytest.raises(loom.error.RuntimeFailure):
        lib["nope"]
    with pytest.raises(loom.error.TypeError):
        lib["main"](a, a, "x")
    with pytest.raises(loom.error.TargetError):
        loom.build(matmul_func(), target="llvm -mcpu=nonsense")
    with pytest.raises(loom.error.TargetError):
        loom.build(matmul_func(), target="cuda")


def test_model_errors(tmp_path):
    with pytest.raises(loom.error.ImportError) as e:
        loom.frontend.from_onnx(str(tmp_path / "missing.onnx"))
    assert "missing.onnx" in str(e.value)
    junk = tmp_path / "junk.onnx"
    junk.write_bytes(b"\x00not a model")
    with pytest.raises(loom.error.ImportError):
        loom.frontend.from_onnx(str(junk))
    with pytest.raises(loom.error.RuntimeFailure):
        loom.driver.tvmc.run(str(tmp_path / "missing.tar"))
    bad = tmp_path / "bad.tar"
    bad.write_bytes(b"garbage" * 100)
    with pytest.raises(loom.error.RuntimeFailure):
        loom.driver.tvmc.run(str(bad))
    with pytest.raises(loom.error.WorkloadError):
        loom.topi.workload("matmul:M=0")


def test_translation_of_each_channel():
    for kind, cls in [("ParseError", loom.error.ParseError), ("ValueError", loom.error.ValueError),
                      ("RuntimeFailure", loom.error.RuntimeFailure), ("InternalError", loom.error.InternalError),
                      ("Error", LoomError)]:
        with pytest.raises(cls) as e:
            loom._ffi._throw(kind, "boom")
        assert e.value.message == "boom"
    with pytest.raises(loom.error.ParseError) as e:
        loom._ffi._throw("ParseError", "boom")
    assert (e.value.file, e.value.line, e.value.column) == ("x.tir", 3, 7)
    assert issubclass(loom.error.ValueError, ValueError) and issubclass(loom.error.TypeError, TypeError)


def test_bad_input_never_aborts_the_interpreter():
    # A run of bad inputs in a fresh interpreter: every one must raise, and the process exit cleanly.
    code = textwrap.dedent("""
        import numpy as np, loom
        from loom import te
        A = te.placeholder((8,), name="A")
        B = te.compute((8,), lambda i: A[i] + 1.0, name="B")
        f = te.create_prim_func([A, B])
        attempts = [
            lambda: loom.script.from_source("@T.prim_func\\ndef main(:"),
            lambda: loom.script.from_source(""),
            lambda: loom.script.from_source("\\x00\\xff" * 50),
            lambda: loom.tir.Schedule(f).split(loom.tir.Schedule(f).get_loops("B")[0], factors=[3, 3]),
            lambda: loom.tir.Schedule(f).get_loops("nope"),
            lambda: loom.tir.Schedule(f).compute_inline("B"),
            lambda: loom.tir.Schedule(f).transform_layout("B", ("write", 0), lambda i: (i // 0,)),
            lambda: loom.tir.Schedule(f).tensorize(loom.tir.Schedule(f).get_loops("B")[0], "no_such_intrin"),
            lambda: loom.tir.Trace.from_json("{"),
            lambda: loom.tir.Trace.from_json('{"insts": [{"kind": "split"}]}'),
            lambda: loom.build(f)["main"](np.zeros(7, "float32"), np.zeros(8, "float32")),
            lambda: loom.nd.empty((-1, 2)),
            lambda: loom.nd.array(np.array(["a"])),
            lambda: loom.frontend.from_onnx("/dev/null"),
            lambda: loom.driver.tvmc.run("/dev/null"),
            lambda: loom.topi.workload("conv2d:groups=7"),
            lambda: te.compute((8,), lambda i: A[i, i]),
            lambda: te.create_prim_func([]),
            lambda: te.create_prim_func([B]),
        ]
        for k, f_ in enumerate(attempts):
            try:
                f_()
            except Exception as e:
                assert not isinstance(e, (SystemError,)), (k, e)
            else:
                raise SystemExit(f"attempt {k} did not raise")
        print("ok", len(attempts))
        """)
    env = dict(os.environ, PYTHONPATH=os.path.dirname(os.path.dirname(loom.__file__)))
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok")


def test_every_cpp_error_class_has_a_python_class():
    # Each LOOM_DECLARE_ERROR(Name, Base) of the C++ tree is a loom.error class deriving from Base's.
    import re
    declared = {}
    for top in ("core", "codegen", "runtime"):
        for root, _, files in os.walk(os.path.join(REPO, top)):
            for f in files:
                if f.endswith(".h"):
                    with open(os.path.join(root, f)) as fh:
                        code = "\n".join(line for line in fh if not line.lstrip().startswith("//"))
                    for name, base in re.findall(r"LOOM_DECLARE_ERROR\((\w+),\s*(\w+)\)", code):
                        if name != "Name":  # the macro's own definition
                            declared[name] = base
    classes = loom.error.error_classes()
    assert len(declared) > 50
    for name, base in declared.items():
        assert name in classes, f"loom.error has no {name}"
        want = LoomError if base == "Error" else classes[base]
        assert issubclass(classes[name], want), f"{name} should derive from {base}"
