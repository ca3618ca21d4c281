"""Model importers (TVM's ``relay.frontend``): ``from_onnx``."""
import os as _os
import tempfile as _tempfile

from . import _ffi

GraphModule = _ffi.GraphModule


def from_onnx(model, shape=None, dtype="float32", opset=None, freeze_params=True):
    """Imports an ONNX model (a path, or an onnx.ModelProto) with static input shapes
    ``shape={"data": [1, 3, 224, 224]}``. Returns ``(mod, params)`` like TVM; Loom binds the
    initializers as constants of ``mod``, so ``params`` is empty. A model that does not import
    raises loom.error.ImportError naming the op, node and opset."""
    shapes = {k: [int(d) for d in v] for k, v in (shape or {}).items()}
    if isinstance(model, (str, _os.PathLike)):
        return _ffi.from_onnx(_os.fspath(model), shapes), {}
    if hasattr(model, "SerializeToString"):
        with _tempfile.TemporaryDirectory() as d:
            path = _os.path.join(d, "model.onnx")
            with open(path, "wb") as f:
                f.write(model.SerializeToString())
            return _ffi.from_onnx(path, shapes), {}
    raise TypeError(f"from_onnx: a path or an onnx.ModelProto, not {type(model).__name__}")
