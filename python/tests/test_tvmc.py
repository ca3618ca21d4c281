# tvmc from Python on the example model: load / compile / run against the model's reference
# output, both package forms, tuning with a progress callback and compiling with its records.
import json
import os

import numpy as np
import onnx
from onnx import numpy_helper

import loom
from loom.driver import tvmc
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


TORCH_MODEL = os.path.join(REPO, "tests", "torch", "data", "sequential_linear.pt")


def test_load_torchscript(tmp_path):
    # nn.Sequential(Dropout, Linear(4, 4), Dropout2d), traced: from .pt through tvmc and
    # from_pytorch, compiled and run; the result is the Linear of the graph's own weights.
    import pytest
    try:
        mod, params = loom.frontend.from_pytorch(TORCH_MODEL, [("input", [2, 4])])
    except loom.error.LoomError as e:
        if "libtorch" in str(e):
            pytest.skip(str(e))
        raise
    assert params == {} and "nn.dense" in mod.script()
    model = tvmc.load(TORCH_MODEL, shape_dict={"input": [2, 4]})
    package = tvmc.compile(model, target="llvm", package_path=tmp_path / "t.tar")
    x = np.random.default_rng(3).standard_normal((2, 4)).astype("float32")
    out = tvmc.run(package, inputs={"input": x})
    got = out.outputs[next(iter(out.outputs))]
    torch = pytest.importorskip("torch")
    want = torch.jit.load(TORCH_MODEL).eval()(torch.from_numpy(x)).detach().numpy()
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    assert loom.frontend._input_spec([("ids", ([1, 64], "int64")), ("x", [1, 3])]) == "ids:[1,64]:int64,x:[1,3]"
    with pytest.raises(loom.error.LoomError):
        loom.frontend.from_pytorch(TORCH_MODEL, [])  # no input shape
