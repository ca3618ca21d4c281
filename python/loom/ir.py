"""IRModule and PrimFunc (TVM's ``tvm.IRModule``, ``tvm.tir.PrimFunc``)."""
from . import _ffi

IRModule = _ffi.IRModule
PrimFunc = _ffi.PrimFunc


def structural_equal(a, b):
    """True when two PrimFuncs are the same program up to variable names (TVM's structural_equal)."""
    return _ffi.structural_equal(a, b)


def _module_of(obj, name="main"):
    """An IRModule from an IRModule, PrimFunc or Schedule."""
    if isinstance(obj, IRModule):
        return obj
    if isinstance(obj, PrimFunc):
        return IRModule({name if obj.name in ("", "main") else obj.name: obj})
    mod = getattr(obj, "mod", None)
    if isinstance(mod, IRModule):
        return mod
    raise TypeError(f"expected an IRModule, PrimFunc or tir.Schedule, not {type(obj).__name__}")
