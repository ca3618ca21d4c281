"""Running compiled code (TVM's ``tvm.runtime``): devices, the compiled Module and its functions,
``time_evaluator``, ``load_module``."""
import statistics as _stats
from collections import namedtuple as _namedtuple

from . import _ffi

Function = _ffi.Function


class Device:
    """A device; Loom's Python API runs kernels on the CPU (``loom.cpu(0)``)."""

    def __init__(self, kind="cpu", index=0):
        if kind not in ("cpu", "llvm"):
            raise ValueError(f"loom.device: only 'cpu' runs kernels from Python, not {kind!r}")
        self.device_type, self.index = 1, int(index)

    def __repr__(self):
        return f"cpu({self.index})"

    def sync(self):
        pass


def cpu(index=0):
    return Device("cpu", index)


def device(kind="cpu", index=0):
    return Device(kind, index)


ProfileResult = _namedtuple("ProfileResult", ["mean", "results"])


class BenchmarkResult:
    """Timing samples in seconds with mean, median, min, max, std (TVM's BenchmarkResult)."""

    def __init__(self, results):
        self.results = list(results)
        self.mean = _stats.fmean(self.results)
        self.median = _stats.median(self.results)
        self.min = min(self.results)
        self.max = max(self.results)
        self.std = _stats.pstdev(self.results)

    def __repr__(self):
        return (f"BenchmarkResult(mean={self.mean * 1e3:.4f} ms, median={self.median * 1e3:.4f} ms, "
                f"min={self.min * 1e3:.4f} ms, max={self.max * 1e3:.4f} ms, std={self.std * 1e3:.4f} ms)")


class Module:
    """Compiled functions: ``mod["main"](a, b, c)`` on loom.nd arrays or numpy arrays (outputs
    are written in place), ``mod(a, b, c)`` for the module's only (or "main") function."""

    def __init__(self, mod):
        self._mod = mod

    def __getitem__(self, name):
        return self._mod[name]

    def get_function(self, name):
        return self._mod[name]

    @property
    def entry_name(self):
        names = self._mod.function_names
        return "main" if "main" in names or not names else names[0]

    def __call__(self, *args):
        return self._mod[self.entry_name](*args)

    @property
    def function_names(self):
        return self._mod.function_names

    @property
    def type_key(self):
        return self._mod.type_key

    def get_source(self, fmt="ll"):
        """"ll" (LLVM IR), "asm" (assembly), "c" (C source), "tir" (the lowered program)."""
        return self._mod.get_source(fmt)

    def export_library(self, path):
        """Writes the functions as a shared library that ``loom.runtime.load_module`` loads."""
        self._mod.export_library(str(path))

    def time_evaluator(self, func_name, dev=None, number=10, repeat=1, min_repeat_ms=0, **_):
        """A function that runs ``func_name`` ``repeat`` times ``number`` calls (raised until one
        sample lasts ``min_repeat_ms``) and returns ProfileResult(mean, results) in seconds per
        call, like TVM's (after one untimed warm-up call)."""
        f = self._mod[func_name]

        def evaluator(*args):
            results = f.time(int(number), int(repeat), float(min_repeat_ms), *args)
            return ProfileResult(mean=_stats.fmean(results), results=tuple(results))
        return evaluator


def load_module(path):
    """A shared library of compiled functions (``Module.export_library``'s output)."""
    return Module(_ffi.load_module(str(path)))
