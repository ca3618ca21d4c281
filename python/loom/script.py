"""TVMScript text (TVM's ``tvm.script``): ``from_source(text)`` parses what ``mod.script()``
prints; ``loom.script.tir`` (``T``) and ``loom.script.ir`` (``I``) decorate Python functions and
classes written in TVMScript, as in TVM."""
import inspect as _inspect
import textwrap as _textwrap

from . import _ffi


def from_source(text, file_name="<input>"):
    """An IRModule (for text with ``@I.ir_module``) or a PrimFunc (one ``@T.prim_func``).
    Malformed text raises loom.error.ParseError with its line and column."""
    if "@I.ir_module" in text or "@tvm.script.ir_module" in text:
        return _ffi.parse_module(text, file_name)
    return _ffi.parse_func(text, file_name)


class _Namespace:
    """``T`` / ``I``: only the decorators do something; every other name (``T.Buffer``, ``T.grid``,
    ...) is a placeholder, since the decorated body is read as text, never run."""

    def __init__(self, name, decorators):
        self._name = name
        self._decorators = decorators

    def __getattr__(self, attr):
        if attr in self._decorators:
            return self._decorators[attr]
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Placeholder(f"{self._name}.{attr}")


class _Placeholder:
    def __init__(self, name):
        self._name = name

    def __call__(self, *args, **kwargs):
        return self

    def __getattr__(self, attr):
        return _Placeholder(f"{self._name}.{attr}")

    def __getitem__(self, item):
        return self


def _source_of(obj):
    src = _textwrap.dedent(_inspect.getsource(obj))
    file = _inspect.getsourcefile(obj) or "<input>"
    return src, file


def _prim_func(fn=None, **kwargs):
    if fn is None:
        return lambda f: _prim_func(f, **kwargs)
    src, file = _source_of(fn)
    return _ffi.parse_func(src, file)


def _ir_module(cls):
    src, file = _source_of(cls)
    return _ffi.parse_module(src, file)


tir = _Namespace("T", {"prim_func": _prim_func})
ir = _Namespace("I", {"ir_module": _ir_module})
ir_module = _ir_module
