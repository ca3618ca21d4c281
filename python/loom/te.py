"""Tensor expressions (TVM's ``tvm.te``): placeholder, compute, reduce_axis, reductions,
create_prim_func, and the math intrinsics."""
import inspect as _inspect

from . import _ffi

Tensor = _ffi.Tensor
PrimExpr = _ffi.PrimExpr
Var = _ffi.Var
IterVar = _ffi.IterVar

var = _ffi.var
const = _ffi.const
placeholder = _ffi.placeholder
reduce_axis = _ffi.reduce_axis
if_then_else = _ffi.if_then_else
select = _ffi.select
max_value = _ffi.max_value
min_value = _ffi.min_value


def size_var(name="size", dtype="int32"):
    """A variable standing for a size (TVM's te.size_var)."""
    return _ffi.var(name, dtype)


def compute(shape, fcompute, name="compute", tag="", attrs=None):
    """A tensor of ``shape`` whose element at (i, j, ...) is ``fcompute(i, j, ...)``.

    ``fcompute`` takes one index variable per dimension (named after its parameters, as in TVM),
    or ``*i`` for all of them (named i0, i1, ...). Its body is an expression, or a reduction
    (``te.sum(A[i, k], axis=k)``) as the whole body."""
    if isinstance(shape, (int, PrimExpr)):
        shape = (shape,)
    shape = tuple(shape)
    code = fcompute.__code__
    nargs = code.co_argcount
    varargs = bool(code.co_flags & _inspect.CO_VARARGS)
    if varargs and nargs == 0:
        names = [f"i{k}" for k in range(len(shape))]
    else:
        if nargs != len(shape) and not varargs:
            raise ValueError(f"compute '{name}': fcompute takes {nargs} indices, the shape has {len(shape)} dimensions")
        names = list(code.co_varnames[:nargs])
        names += [f"i{k}" for k in range(nargs, len(shape))]
    if attrs:
        raise NotImplementedError("compute: attrs are not supported from Python yet")
    return _ffi.compute(shape, fcompute, name, tag, names, True)


def _comm_reducer(reduce_fn, binary_fn):
    def reducer(expr, axis=None, where=None, *args):
        if axis is None:
            raise TypeError("a reduction needs axis=")
        if isinstance(axis, IterVar) or (isinstance(axis, (list, tuple)) and all(isinstance(a, IterVar) for a in axis)):
            return reduce_fn(expr, axis, where)
        # te.max(a, b): the elementwise form, as in TVM.
        return binary_fn(expr, axis)
    return reducer


sum = _comm_reducer(_ffi.sum, lambda a, b: a + b)  # noqa: A001
max = _comm_reducer(_ffi.reduce_max, _ffi.max)  # noqa: A001
min = _comm_reducer(_ffi.reduce_min, _ffi.min)  # noqa: A001
prod = _comm_reducer(_ffi.reduce_prod, lambda a, b: a * b)


def create_prim_func(args, name="main"):
    """The block-form PrimFunc computing the compute tensors of ``args`` from its placeholders
    (TVM's te.create_prim_func); parameters in the order of ``args``."""
    return _ffi.create_prim_func(list(args), name)


def _intrin(op):
    def f(x):
        x = _ffi.const(float(x)) if isinstance(x, (int, float)) else x
        return _ffi.call_intrin("", op, x)
    f.__name__ = op
    f.__doc__ = f"{op}(x), elementwise"
    return f


exp = _intrin("exp")
exp2 = _intrin("exp2")
log = _intrin("log")
log2 = _intrin("log2")
log10 = _intrin("log10")
sqrt = _intrin("sqrt")
rsqrt = _intrin("rsqrt")
tanh = _intrin("tanh")
sigmoid = _intrin("sigmoid")
erf = _intrin("erf")
abs = _intrin("fabs")  # noqa: A001
fabs = abs
floor = _intrin("floor")
ceil = _intrin("ceil")
trunc = _intrin("trunc")
round = _intrin("round")  # noqa: A001
sin = _intrin("sin")
cos = _intrin("cos")


def power(x, y):
    x = x if isinstance(x, PrimExpr) else _ffi.const(float(x))
    y = y if isinstance(y, PrimExpr) else _ffi.const(float(y), x.dtype)
    return _ffi.call_intrin("", "pow", x, y)


pow = power  # noqa: A001


def floordiv(a, b):
    return a // b


def floormod(a, b):
    return a % b


def cast(x, dtype):
    return _ffi.cast(x, dtype)
