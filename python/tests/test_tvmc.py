# tvmc from Python on the example model: load / compile / run against the model's reference
# output, both package forms, tuning with a progress callback and compiling with its records.
import json
import os

import numpy as np
import onnx
from onnx import numpy_helper

import loom
from loom.driver import tvmc
from loom import te
from conftest import REPO

MODEL = os.path.join(REPO, "examples", "models", "small_cnn", "model.onnx")
DATA = os.path.join(REPO, "examples", "models", "small_cnn", "test_data_set_0")


def reference():
    x = numpy_helper.to_array(onnx.load_tensor(os.path.join(DATA, "input_0.pb")))
    y = numpy_helper.to_array(onnx.load_tensor(os.path.join(DATA, "output_0.pb")))
    return x, y


def test_load_compile_run(tmp_path):
    x, y = reference()
    model = tvmc.load(MODEL, shape_dict={"data": list(x.shape)})
    assert "nn.conv2d" in model.mod.script()
    for ext in ("tar", "so"):
        package = tvmc.compile(model, target="llvm", package_path=tmp_path / f"m.{ext}")
        assert os.path.exists(package.package_path)
        meta = json.loads(package.metadata)
        assert meta["inputs"][0]["name"] == "data"
        result = tvmc.run(package, device="cpu", inputs={"data": x}, repeat=3, number=2)
        (name, out), = result.outputs.items()
        np.testing.assert_allclose(out, y, rtol=1e-4, atol=1e-4)
        assert len(result.times.results) == 3 and result.times.min > 0
        assert "mean (ms)" in result.format_times()


def test_from_onnx_modelproto_and_in_process_executor():
    x, y = reference()
    mod, params = loom.frontend.from_onnx(onnx.load(MODEL), {"data": list(x.shape)})
    assert params == {}
    compiled = loom._ffi.compile_model(mod, "llvm", 1, "", "", [], None)
    ex = compiled.executor()
    ex.set_input("data", x)
    ex.run()
    np.testing.assert_allclose(ex.get_output(0).numpy(), y, rtol=1e-4, atol=1e-4)


def test_tune_func_with_callback(tmp_path):
    A = te.placeholder((64, 64), name="A")
    B = te.placeholder((64, 64), name="B")
    k = te.reduce_axis((0, 64), name="k")
    C = te.compute((64, 64), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
    func = te.create_prim_func([A, B, C])
    events = []
    records = tmp_path / "r.json"
    r = loom.tune.tune_func(func, records, trials=4, batch_size=2, repeat=1, callback=events.append)
    kinds = {e["kind"] for e in events}
    assert "trial" in kinds and "progress" in kinds
    assert r["trials"] == 4 and r["best_ms"] > 0
    # The best schedule replays through Python and computes the same thing.
    sch = loom.tir.Schedule(func)
    exec(r["best_trace"], {"sch": sch})
    a = np.random.rand(64, 64).astype("float32")
    b = np.random.rand(64, 64).astype("float32")
    c = np.zeros((64, 64), "float32")
    loom.build(sch.mod)(a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-4)
    assert len(records.read_text().splitlines()) >= 4


def test_tvmc_tune_then_compile(tmp_path):
    x, y = reference()
    model = tvmc.load(MODEL, shape_dict={"data": list(x.shape)})
    seen = []
    records = tvmc.tune(model, target="llvm", trials=3, tuning_records=tmp_path / "records.json",
                        callback=seen.append, repeat=1)
    assert any(e["kind"] == "trial" for e in seen) and os.path.getsize(records) > 0
    package = tvmc.compile(model, target="llvm", tuning_records=records, package_path=tmp_path / "tuned.tar")
    out = tvmc.run(package, inputs={"data": x}).outputs
    np.testing.assert_allclose(next(iter(out.values())), y, rtol=1e-4, atol=1e-4)
