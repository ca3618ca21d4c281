"""The tensor IR (TVM's ``tvm.tir``): PrimFunc, the Schedule with every primitive, the trace."""
from .. import _ffi
from ..ir import PrimFunc, IRModule
from ..te import (exp, exp2, log, log2, log10, sqrt, rsqrt, tanh, sigmoid, erf, fabs, floor, ceil,  # noqa: F401
                  trunc, round, sin, cos, power, floordiv, floormod, cast, if_then_else, select, const,
                  max_value, min_value, Var, PrimExpr, IterVar)
from .schedule import Schedule, Trace, BlockRV, LoopRV, ExprRV, ScheduleError  # noqa: F401

min = _ffi.min  # noqa: A001
max = _ffi.max  # noqa: A001
