"""Model importers (TVM's ``relay.frontend``): ``from_onnx``, ``from_pytorch``."""
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


def _input_spec(input_infos, default_dtype="float32"):
    """TVM's input_infos ``[("x", [1, 3, 224, 224]), ("ids", ([1, 64], "int64"))]`` as the
    ``--input-shapes`` text Loom takes: ``x:[1,3,224,224],ids:[1,64]:int64``."""
    parts = []
    for name, info in input_infos:
        if isinstance(info, tuple) and len(info) == 2 and isinstance(info[1], str):
            shape, dtype = info
        else:
            shape, dtype = info, default_dtype
        dims = ",".join(str(int(d)) for d in shape)
        parts.append(f"{name}:[{dims}]" + ("" if dtype == "float32" else f":{dtype}"))
    return ",".join(parts)


def from_pytorch(script_module, input_infos, default_dtype="float32"):
    """Imports a TorchScript module (a ``torch.jit.save``d file, or a traced / scripted module)
    like TVM's ``relay.frontend.from_pytorch``: ``input_infos`` names forward()'s arguments with
    their shapes (and dtypes). Returns ``(mod, params)``; the weights are constants of ``mod``, so
    ``params`` is empty. Needs Loom built with libtorch; an unsupported op raises
    loom.error.ImportError naming the node and its source line."""
    spec = _input_spec(input_infos, default_dtype)
    if isinstance(script_module, (str, _os.PathLike)):
        return _ffi.from_pytorch(_os.fspath(script_module), spec), {}
    if hasattr(script_module, "save") and hasattr(script_module, "graph"):
        with _tempfile.TemporaryDirectory() as d:
            path = _os.path.join(d, "model.pt")
            script_module.save(path)
            return _ffi.from_pytorch(path, spec), {}
    raise TypeError(f"from_pytorch: a path or a torch.jit.ScriptModule, not {type(script_module).__name__}")
