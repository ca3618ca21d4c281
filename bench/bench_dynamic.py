#!/usr/bin/env python3
"""A dynamic module against static ones, at every shape of a dynamic model's test sets (issue #18).

For each model directory made by examples/models/make_dynamic_models.py: compiles the model once
with its symbolic dims (no --input-shapes) and, per test set, statically for that set's shape in
NCHW (the layout the dynamic build uses) and with the default layout (NCHWc for CNNs); then times
`loom run` of each on the set's input in interleaved rounds. Prints min and mean per build and the
ratios dynamic / static, the compile times (process CPU time, user + sys, which the load does not
inflate, and wall time) and the load average. With --cpu-time the runs are timed by process CPU
time on one thread (bench_models.py's method, steady under load) instead of wall time.
Usage: bench_dynamic.py --loom BUILD/bin/loom [--threads 2 | --cpu-time] [--repeat 10] [--rounds 3] DIR...
"""
import argparse
import glob
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_models import child_cpu_s, loom_cpu_ms, loom_run, read_pb  # noqa: E402


def compile_model(loom, model, out, extra):
    """(process CPU seconds, wall seconds) of one `loom compile`."""
    c0, t0 = child_cpu_s(), time.perf_counter()
    r = subprocess.run([loom, "compile", model, "-q", "-o", out] + extra, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"loom compile {model} {' '.join(extra)} failed: {r.stderr.strip()}")
    return child_cpu_s() - c0, time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--cpu-time", action="store_true",
                    help="time runs by process CPU time on one thread (the mean is then that of the rounds)")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench_dynamic_")
    mode = "process CPU time, 1 thread" if args.cpu_time else f"wall time, {args.threads} threads"
    print(f"load average at start: {os.getloadavg()[0]:.2f}; runs timed by {mode}")
    for d in args.dirs:
        name = os.path.basename(os.path.normpath(d))
        model = os.path.join(d, "model.onnx")
        dyn = os.path.join(work, name + ".dyn.so")
        t_dyn = compile_model(args.loom, model, dyn, [])
        print(f"\n{name}: dynamic compile {t_dyn[0]:.1f} s CPU ({t_dyn[1]:.1f} s wall)")
        for s in sorted(glob.glob(os.path.join(d, "test_data_set_*"))):
            in_name, x = read_pb(os.path.join(s, "input_0.pb"))
            npz = os.path.join(work, f"{name}.{os.path.basename(s)}.npz")
            np.savez(npz, **{in_name: x})
            spec = f"{in_name}:[{','.join(str(v) for v in x.shape)}]"
            builds = {"dynamic": dyn}
            times = {}
            for label, extra in (("static NCHW", ["--desired-layout", "NCHW"]), ("static default", [])):
                pkg = os.path.join(work, f"{name}.{os.path.basename(s)}.{label.split()[1]}.so")
                times[label] = compile_model(args.loom, model, pkg, ["--input-shapes", spec] + extra)
                builds[label] = pkg
            res = {k: [] for k in builds}
            for _ in range(args.rounds):
                for k, pkg in builds.items():
                    out = os.path.join(work, "out.npz")
                    if args.cpu_time:
                        ms = loom_cpu_ms(args.loom, pkg, npz, out, args.repeat)
                        res[k].append((ms, ms))
                    else:
                        res[k].append(loom_run(args.loom, pkg, npz, out, args.repeat, args.threads))
            line = f"  {list(x.shape)}:"
            stats = {k: (min(m for _, m in v), sum(a for a, _ in v) / len(v)) for k, v in res.items()}
            for k, (mn, mean) in stats.items():
                line += f"  {k} min {mn:.3f} mean {mean:.3f} ms;"
            for k in ("static NCHW", "static default"):
                line += f"  dynamic/{k} {stats['dynamic'][0] / stats[k][0]:.2f} (mean {stats['dynamic'][1] / stats[k][1]:.2f})"
            line += (f"; static compile {times['static NCHW'][0]:.1f} / {times['static default'][0]:.1f} s CPU,"
                     f" dynamic/static default {t_dyn[0] / times['static default'][0]:.2f}")
            print(line, flush=True)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
