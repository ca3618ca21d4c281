"""Loom's errors as Python exceptions.

Every C++ ``loom::Error`` surfaces as the class of this module named after its kind (the C++
class name): ``loom.error.NotSingleChildError`` for a schedule primitive's refusal,
``loom.error.ParseError`` for bad TVMScript text, ``loom.error.ImportError`` for a model that does
not import, ... All derive from :class:`LoomError`; those with a Python counterpart also derive
from it (``loom.error.TypeError`` is a ``TypeError``), so ``except ValueError`` keeps working.

Each exception has ``kind`` (the C++ class name), ``message`` (one line), ``detail`` (the full
message: a schedule error prints the function with the offending loop or block marked),
``file``, ``line`` and ``column`` (None / 0 when the error has no location).
"""
import builtins as _b


class LoomError(Exception):
    """The base of every error Loom raises (TVM's ``TVMError``)."""

    kind = "Error"

    def __init__(self, message="", formatted=None, detail=None, file=None, line=0, column=0):
        self.message = message
        self.file = file
        self.line = line
        self.column = column
        loc = self.location
        self.formatted = f"{loc}: error: {message}" if loc else message
        super().__init__(self.formatted)
        self.detail = detail or message

    @property
    def location(self):
        """"file:line:col" (or None when the error has no location)."""
        if not self.line:
            return None
        return f"{self.file or ''}:{self.line}:{self.column}" if self.file else f"{self.line}:{self.column}"

    def __str__(self):
        return self.formatted


def _declare(name, *bases, doc=None):
    cls = type(name, bases, {"kind": name, "__doc__": doc or f"Loom's {name}.", "__module__": __name__})
    globals()[name] = cls
    return cls


# The C++ hierarchy (core/support/Error.h and each LOOM_DECLARE_ERROR), with Python mixins.
_declare("ParseError", LoomError, doc="Malformed text (TVMScript, a schedule script, a trace); has file:line:col.")
_declare("TypeError", LoomError, _b.TypeError)
_declare("ValueError", LoomError, _b.ValueError)
_declare("RuntimeError", LoomError, _b.RuntimeError)
_declare("UnsupportedError", LoomError, NotImplementedError)
_declare("InternalError", LoomError, doc="A bug in Loom (an internal check failed), never the user's fault.")
_declare("RuntimeFailure", LoomError, _b.RuntimeError,
         doc="A failure of the runtime: a compiled function refused its arguments, a package did not load.")
_declare("CodeGenError", LoomError)
_declare("LinkerNotFoundError", CodeGenError)  # noqa: F821
_declare("TargetError", LoomError, _b.ValueError)
_declare("ImportError", LoomError, doc="A model that does not import (names the op, node and opset).")
_declare("GraphTypeError", TypeError)  # noqa: F821
_declare("WorkloadError", ValueError)  # noqa: F821
_declare("NpzError", LoomError)
_declare("SessionFileError", LoomError, doc="A Studio session file that is not one, or holds a value of the wrong kind (names the key).")
_declare("RecordFileError", RuntimeError)  # noqa: F821
_declare("RecordApplyError", RecordFileError)  # noqa: F821
_declare("CostModelError", RuntimeError)  # noqa: F821
for _n in ("CrossThreadReductionError", "GPUThreadLimitError", "GPUSharedMemoryError", "GPUSplitError"):
    _declare(_n, LoomError)
_declare("CpuMismatchError", LoomError, doc="An MPI rank whose CPU differs from what rank 0 tunes for.")


class ScheduleError(LoomError):
    """A schedule primitive refused to apply. ``str(e)`` is the rendered message: the one-line
    reason, then the function with the offending loop or block marked (TVM's render level
    "detail"); ``e.message`` is the line alone."""

    kind = "ScheduleError"

    def __str__(self):
        return self.detail if self.detail and self.detail != self.message else self.formatted


_SCHEDULE_ERRORS = """InvalidRVError BlockNotFoundError NotSingleChildError WrongBlockIterTypeError
NotAffineBindingError ScheduleValueError AnnotationNotFoundError BlockizeError TensorIntrinNotFoundError
TensorizeMismatchError BufferIndexOutOfRangeError InvalidStorageScopeError CachePositionError
NotAllocatedBufferError InvalidStorageAlignError NotInlinableBodyError InlineReductionError
MultipleWritesError NotSingleWriterError OutputBlockError NotSingleProducerError MultipleReadersError
NotInvertibleLoadError InlineTooLargeError NotCompleteOrReductionBlockError NotCompactDataFlowError NotInSameScopeError
NoRequiredBlockError NotAllRequiredBlocksUnderLoopError BrokenDependencyError
UnsupportedAccessPatternError WrongThreadTagError BufferIndexError IndexMapError UnsupportedBufferError
NotEinsumError LoopsNotAChainError DuplicateLoopError DependentLoopError InvalidFactorsError
NotReductionBlockError LoopPositionError UnrecognizedReducerError RFactorLoopError
FactorAxisOutOfRangeError InvalidDecisionError""".split()
for _n in _SCHEDULE_ERRORS:
    _declare(_n, ScheduleError)


def _make(kind, bases, message, formatted, detail, file, line, column):
    """The exception for a C++ error of class ``kind`` (called by the extension). ``bases``: the
    known classes it derives from, most specific first, for kinds this module does not declare."""
    cls = globals().get(kind)
    if not (isinstance(cls, type) and issubclass(cls, LoomError)):
        base = next((globals()[b] for b in bases if b in globals()), LoomError)
        cls = _declare(kind, base)
    return cls(message, formatted, detail, file, line, column)


def error_classes():
    """Every error class of this module, by name."""
    return {k: v for k, v in globals().items() if isinstance(v, type) and issubclass(v, LoomError)}
