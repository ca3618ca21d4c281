"""``loom.lower`` and ``loom.build`` (TVM's ``tvm.lower``, ``tvm.build``)."""
from . import _ffi
from .ir import IRModule, _module_of
from .runtime import Module


def lower(mod, args=None, name="main", simple_mode=False):
    """The module (IRModule, PrimFunc or Schedule) through Loom's lowering pipeline: loops and
    flat buffers, ready for code generation."""
    m = _module_of(mod, name)
    return IRModule({k: _ffi.lower_func(m[k]) for k in m.keys()})


def build(mod, target="llvm", name="main", **_):
    """Compiles every function of ``mod`` (IRModule, PrimFunc or Schedule) for ``target`` (an
    llvm target of this machine) and loads it: call ``lib["main"](a, b, c)``."""
    return Module(_ffi.build(_module_of(mod, name), str(target or "llvm")))
