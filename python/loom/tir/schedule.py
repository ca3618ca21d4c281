"""``loom.tir.Schedule``: TVM's tir.Schedule over Loom's C++ schedule.

Every primitive the C++ schedule registers is a method with TVM's signature (``get_block``,
``get_loops``, ``split(loop, factors=[None, 32])``, ``fuse``, ``reorder``, ``parallel``,
``vectorize``, ``unroll``, ``bind``, ``cache_read``, ``cache_write``, ``compute_at``,
``reverse_compute_at``, ``compute_inline``, ``rfactor``, ``decompose_reduction``, ``tensorize``,
``sample_perfect_tile``, ... see ``Schedule.primitives()``). They go through the same instruction
kinds, argument checking and trace as the schedule script (``loom lower -s script.py``), so a
schedule written here and the same lines in a script give the same program and the same trace.
A primitive that does not apply raises the loom.error class of its C++ error (a ScheduleError),
whose str() shows the function with the offending loop or block marked.
"""
import inspect as _inspect
import sys as _sys

from .. import _ffi
from .._ffi import BlockRV, LoopRV, ExprRV  # noqa: F401
from ..error import ScheduleError  # noqa: F401
from ..ir import IRModule, PrimFunc, _module_of


class _Sym:
    """An index-map parameter while a Python lambda is traced into the script form."""

    def __init__(self, text, prec=3):
        self.text, self.prec = text, prec

    def _wrap(self, prec):
        return f"({self.text})" if self.prec < prec else self.text

    @staticmethod
    def _of(v):
        if isinstance(v, _Sym):
            return v
        if isinstance(v, int):
            return _Sym(str(v)) if v >= 0 else _Sym(f"({v})")
        raise TypeError(f"an index map may use ints and + - * // %, not {type(v).__name__}")

    def _bin(self, other, op, prec, rev=False):
        a, b = (self._of(other), self) if rev else (self, self._of(other))
        return _Sym(f"{a._wrap(prec)} {op} {b._wrap(prec + 1)}", prec)

    def __add__(self, o): return self._bin(o, "+", 1)
    def __radd__(self, o): return self._bin(o, "+", 1, True)
    def __sub__(self, o): return self._bin(o, "-", 1)
    def __rsub__(self, o): return self._bin(o, "-", 1, True)
    def __mul__(self, o): return self._bin(o, "*", 2)
    def __rmul__(self, o): return self._bin(o, "*", 2, True)
    def __floordiv__(self, o): return self._bin(o, "//", 2)
    def __rfloordiv__(self, o): return self._bin(o, "//", 2, True)
    def __mod__(self, o): return self._bin(o, "%", 2)
    def __rmod__(self, o): return self._bin(o, "%", 2, True)
    def __neg__(self): return _Sym(f"-{self._wrap(3)}", 3)


def _index_map(fn):
    """A Python lambda (``lambda i, j: (j // 16, i, j % 16)``) as the schedule's index map."""
    params = list(_inspect.signature(fn).parameters)
    out = fn(*[_Sym(p) for p in params])
    items = list(out) if isinstance(out, (tuple, list)) else [out]
    body = ", ".join(_Sym._of(x).text for x in items)
    text = f"lambda {', '.join(params)}: ({body}{',' if len(items) == 1 else ''})"
    return _ffi.parse_index_map(text)


def _arg(v):
    if callable(v) and not isinstance(v, (BlockRV, LoopRV, ExprRV, type)):
        return _index_map(v)
    if isinstance(v, (list, tuple)):
        return [_arg(x) for x in v]
    return v


class Trace:
    """The primitives a schedule applied: ``str(trace)`` is the schedule script (one line per
    instruction), replayable with ``apply_to_schedule`` and storable with ``as_json``."""

    def __init__(self, trace):
        self._trace = trace

    def __str__(self):
        return str(self._trace)

    def __repr__(self):
        return str(self._trace)

    def __len__(self):
        return len(self._trace)

    @property
    def insts(self):
        """The instruction kind names, in order."""
        return self._trace.kinds()

    def simplified(self, remove_postproc=True):
        return Trace(self._trace.simplified())

    def as_json(self):
        return self._trace.as_json()

    @staticmethod
    def from_json(text):
        return Trace(_ffi.Trace.from_json(text))

    def apply_to_schedule(self, sch, remove_postproc=False):
        """Replays every instruction on ``sch`` (a fresh schedule of the same program)."""
        self._trace.apply_to_schedule(sch._sch)

    def show(self):
        print(str(self))


class Schedule:
    """A PrimFunc under transformation: ``Schedule(mod)`` (an IRModule with "main", or a PrimFunc)."""

    def __init__(self, mod, *, seed=None, debug_mask=None, error_render_level="detail", func_name="main"):
        seed = 1 if seed is None or seed < 0 else int(seed)
        if isinstance(mod, PrimFunc):
            self._sch = _ffi.Schedule(mod, seed)
        else:
            self._sch = _ffi.Schedule(_module_of(mod), func_name, seed)

    @property
    def mod(self):
        """The IRModule with the function as transformed so far."""
        return self._sch.mod

    @property
    def func(self):
        return self._sch.func

    @property
    def trace(self):
        return Trace(self._sch.trace)

    def copy(self):
        """An independent schedule in the same state (IR is shared, so this is cheap)."""
        s = Schedule.__new__(Schedule)
        s._sch = self._sch.copy()
        return s

    def get(self, rv):
        """The value of an RV now: an int for an ExprRV, the block's name for a BlockRV, the loop
        variable's name for a LoopRV."""
        if isinstance(rv, ExprRV):
            return self._sch.get_expr(rv)
        if isinstance(rv, BlockRV):
            return self._sch.get_block_name(rv)
        if isinstance(rv, LoopRV):
            return self._sch.get_loop_var(rv)
        raise TypeError(f"not an RV: {rv!r}")

    def show(self):
        print(self.mod.script())

    @staticmethod
    def primitives():
        """The names of every schedule primitive."""
        return _ffi.primitive_names()

    def _apply(self, name, args, kwargs):
        f = _sys._getframe(2)
        self._sch.set_span(f.f_code.co_filename, f.f_lineno)
        try:
            return self._sch.apply(name, [_arg(a) for a in args], {k: _arg(v) for k, v in kwargs.items()})
        except ScheduleError as e:
            # Like the script runner: an error without its own IR listing shows the function as
            # it is (a failed primitive leaves it unchanged).
            if e.detail == e.message:
                e.detail = e.message + "\n" + self._sch.func.script()
            raise

    def __getattr__(self, name):
        # A primitive registered after this module was loaded (e.g. by a newer extension).
        if name.startswith("_") or name not in _ffi.primitive_names():
            raise AttributeError(f"'Schedule' has no attribute '{name}'")
        return lambda *a, **k: self._apply(name, a, k)


def _make_method(name):
    doc, params, returns_list, sampling = _ffi.primitive_info(name)

    def method(self, *args, **kwargs):
        return self._apply(name, args, kwargs)

    method.__name__ = name
    sig = ", ".join(p[0] + ("=..." if p[2] else "") for p in params)
    method.__doc__ = f"sch.{name}({sig}): {doc}"
    return method


for _name in _ffi.primitive_names():
    if not hasattr(Schedule, _name):
        setattr(Schedule, _name, _make_method(_name))
