"""Tuning from Python (``loom tune``): search schedules for one PrimFunc or a whole model, with a
progress callback. Candidates are measured in worker processes (this Python, running
``loom._ffi.tune_worker_main``), so a crashing candidate fails only itself. Records are JSON lines
that ``loom.driver.tvmc.compile(..., tuning_records=)`` and ``loom compile --tuning-records`` use."""
import os as _os
import sys as _sys

from . import _ffi

_PKG_PARENT = _os.path.dirname(_os.path.dirname(_os.path.abspath(__file__)))


def worker_command():
    """The measurement worker: this interpreter with this loom package."""
    code = ("import sys; sys.path.insert(0, %r); import loom; "
            "sys.exit(loom._ffi.tune_worker_main(sys.argv[1], sys.argv[2]))" % _PKG_PARENT)
    return [_sys.executable, "-c", code]


def tune_func(func, records, num_inputs=None, target="llvm", trials=64, batch_size=8, repeat=3,
              timeout=10.0, seed=1, measure_baseline=True, callback=None):
    """Tunes one PrimFunc (its first ``num_inputs`` parameters are inputs; default: all but the
    last). ``callback(event)`` hears each event as a dict: kind ("baseline", "trial", "new_best",
    "progress"), trials_done, trials_total, best_ms, mean_ms, ok, error, trace. Returns a dict with
    key, trials, best_ms and best_trace (the schedule script)."""
    if num_inputs is None:
        num_inputs = func.num_params - 1
    return _ffi.tune_func(func, int(num_inputs), str(target), _os.fspath(records), int(trials), int(batch_size),
                          int(repeat), float(timeout), int(seed), bool(measure_baseline), worker_command(), callback)


def tune_model(graph_mod, records, target="llvm", trials=64, trials_per_task=0, batch_size=8, repeat=3,
               timeout=10.0, seed=1, measure_baseline=True, callback=None):
    """Tunes every kernel of an imported model (Ansor's task scheduler spreads ``trials`` over
    them); events as for tune_func, with task_index / task_count. One result dict per task."""
    return _ffi.tune_model(graph_mod, str(target), _os.fspath(records), int(trials), int(trials_per_task),
                           int(batch_size), int(repeat), float(timeout), int(seed), bool(measure_baseline),
                           worker_command(), callback)


tune_tasks = tune_model
