"""Loom from Python, with TVM's names: ``import loom`` where a TVM script says ``import tvm``.

    from loom import te
    A = te.placeholder((128, 128), name="A")
    B = te.compute((128, 128), lambda i, j: A[i, j] * 2, name="B")
    mod = loom.IRModule({"main": te.create_prim_func([A, B])})
    sch = loom.tir.Schedule(mod)
    ...
    lib = loom.build(sch.mod, target="llvm")
    lib["main"](loom.nd.array(a), loom.nd.array(b))
"""
import os as _os
import sys as _sys

# The extension holds the runtime's loom_* symbols that compiled model libraries (loaded with
# dlopen) call back into: load it with RTLD_GLOBAL so they resolve.
_flags = _sys.getdlopenflags()
_sys.setdlopenflags(_flags | _os.RTLD_GLOBAL)
try:
    from . import _ffi
finally:
    _sys.setdlopenflags(_flags)

from . import error
from .error import LoomError
from .ir import IRModule, PrimFunc, structural_equal
from . import te, tir, script, nd, runtime, frontend, driver, tune, topi
from .build_module import build, lower
from .runtime import cpu, device, Device
from .target import Target

__version__ = "0.1.0"

__all__ = ["IRModule", "PrimFunc", "LoomError", "build", "lower", "cpu", "device", "Device", "Target",
           "te", "tir", "script", "nd", "runtime", "frontend", "driver", "tune", "topi", "error",
           "structural_equal"]
