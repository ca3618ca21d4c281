"""tvmc from Python (TVM's ``tvm.driver.tvmc``): load a model, tune it, compile it to a package,
run the package.

    model = tvmc.load("model.onnx", shape_dict={"data": [1, 3, 16, 16]})
    tvmc.tune(model, target="llvm", trials=64, tuning_records="records.json")
    package = tvmc.compile(model, target="llvm", tuning_records="records.json", package_path="m.tar")
    result = tvmc.run(package, device="cpu", inputs={"data": x})
    result.outputs["output0"], result.times
"""
import os as _os
import tempfile as _tempfile

import numpy as _np

from .. import _ffi, frontend as _frontend, tune as _tune
from ..runtime import BenchmarkResult


class TVMCModel:
    """An imported model: ``mod`` (the graph module), ``params`` (empty: Loom binds weights as
    constants), and the path it came from."""

    def __init__(self, mod, params, path):
        self.mod, self.params, self.path = mod, params, path

    def summary(self):
        print(self.mod.script())


class TVMCPackage:
    """A compiled model on disk (``.tar`` or ``.so``), loadable by the runtime alone."""

    def __init__(self, package_path):
        self.package_path = _os.fspath(package_path)
        self._executor = None

    def executor(self):
        if self._executor is None:
            self._executor = _ffi.load_package(self.package_path)
        return self._executor

    @property
    def metadata(self):
        return self.executor().metadata


class TVMCResult:
    """Outputs (name -> numpy array) and times (BenchmarkResult in seconds, None when not timed)."""

    def __init__(self, outputs, times):
        self.outputs, self.times = outputs, times

    def get_output(self, name):
        return self.outputs[name]

    def __str__(self):
        lines = [f"{name}: {out.dtype}{list(out.shape)}, top values {_np.sort(out.ravel())[::-1][:5]}"
                 for name, out in self.outputs.items()]
        return "\n".join(lines + ([self.format_times()] if self.times else []))

    def format_times(self):
        t = self.times
        if t is None:
            return "not timed"
        return (f"Execution time summary:\n mean (ms)   median (ms)    max (ms)     min (ms)     std (ms)\n"
                f"{t.mean * 1e3:10.4f}   {t.median * 1e3:10.4f}   {t.max * 1e3:10.4f}   {t.min * 1e3:10.4f}   "
                f"{t.std * 1e3:10.4f}")


def load(path, shape_dict=None, model_format=None, **kwargs):
    """Imports an ONNX or TorchScript (``.pt``, ``.pth``) model; ``shape_dict`` gives static input
    shapes by name (for TorchScript, which records none, a shape or a ``(shape, dtype)`` pair)."""
    path = _os.fspath(path)
    if model_format is None:
        model_format = "pytorch" if path.endswith((".pt", ".pth")) else "onnx"
    if model_format == "onnx":
        mod, params = _frontend.from_onnx(path, shape_dict)
    elif model_format in ("pytorch", "torch", "torchscript"):
        mod, params = _frontend.from_pytorch(path, list((shape_dict or {}).items()))
    else:
        raise ValueError(f"tvmc.load: onnx or pytorch models, not {model_format!r}")
    return TVMCModel(mod, params, path)


def tune(tvmc_model, target="llvm", tuning_records=None, trials=64, trials_per_task=0, prior_records=None,
         callback=None, timeout=10.0, repeat=3, seed=1, measure_baseline=True, **kwargs):
    """Tunes every kernel of the model, appending to ``tuning_records`` (a JSON-lines file,
    default a temporary one); ``callback(event)`` reports progress. Returns the records path."""
    if tuning_records is None:
        tuning_records = _os.path.join(_tempfile.mkdtemp(prefix="loom-tune-"), "records.json")
    _tune.tune_model(tvmc_model.mod, tuning_records, target=str(target), trials=trials,
                     trials_per_task=trials_per_task, callback=callback, timeout=timeout, repeat=repeat, seed=seed,
                     measure_baseline=measure_baseline)
    return _os.fspath(tuning_records)


def compile(tvmc_model, target="llvm", tuning_records=None, package_path=None, opt_level=3, desired_layout=None,
            disabled_pass=None, progress=None, **kwargs):  # noqa: A001
    """Compiles the model (with the best schedules of ``tuning_records`` when given) and writes
    the package ``package_path`` (``.tar`` or ``.so``; default a temporary ``module.tar``)."""
    if package_path is None:
        package_path = _os.path.join(_tempfile.mkdtemp(prefix="loom-tvmc-"), "module.tar")
    layout = desired_layout or ""
    compiled = _ffi.compile_model(tvmc_model.mod, str(target), int(opt_level),
                                  _os.fspath(tuning_records) if tuning_records else "", layout,
                                  list(disabled_pass or []), progress)
    compiled.export(_os.fspath(package_path))
    return TVMCPackage(package_path)


def run(tvmc_package, device="cpu", inputs=None, fill_mode="random", repeat=1, number=1, benchmark=False, **kwargs):
    """Runs the package on ``inputs`` (name -> numpy array; missing ones are filled by
    ``fill_mode``: "random", "zeros" or "ones"). Returns TVMCResult: outputs by name and times
    (``repeat`` samples of ``number`` runs, seconds per run)."""
    if device != "cpu":
        raise ValueError(f"tvmc.run: only device='cpu', not {device!r}")
    if isinstance(tvmc_package, (str, _os.PathLike)):
        tvmc_package = TVMCPackage(tvmc_package)
    ex = tvmc_package.executor()
    inputs = dict(inputs or {})
    rng = _np.random.default_rng(0)
    for name, shape, dtype in ex.input_info():
        if name not in inputs:
            if fill_mode == "zeros":
                inputs[name] = _np.zeros(shape, dtype)
            elif fill_mode == "ones":
                inputs[name] = _np.ones(shape, dtype)
            elif fill_mode == "random":
                inputs[name] = rng.uniform(-1, 1, size=shape).astype(dtype)
            else:
                raise ValueError(f"tvmc.run: fill_mode is random, zeros or ones, not {fill_mode!r}")
    for name, value in inputs.items():
        ex.set_input(name, _np.ascontiguousarray(value))
    times = ex.time_run(int(number), int(repeat)) if benchmark or repeat > 1 or number > 1 else None
    ex.run()
    outputs = {name: ex.get_output(i).numpy() for i, (name, _, _) in enumerate(ex.output_info())}
    return TVMCResult(outputs, BenchmarkResult(times) if times else None)
