#!/usr/bin/env python3
"""Peak resident memory of `loom run`: a dynamic module against a static one at the same shape (issue #18).

For each model directory made by examples/models/make_dynamic_models.py: compiles the model once
with its symbolic dims unbounded (no --input-shapes: storage grows with the shapes), once with
every symbol bounded by its largest value over the test sets (storage planned for the bounds),
and, per test set, statically for that set's shape; then runs `loom run PKG --inputs SET.npz
--repeat 1 --warmup 0` of each build in interleaved rounds and reads the child's peak RSS
(ru_maxrss of os.wait4). Prints min and mean per build, the ratios dynamic / static of the mins
(target <= 1.5) and the load average at start and end.
Usage: /usr/bin/python3 bench_dynamic_memory.py --loom BUILD/bin/loom [--rounds 3] DIR...
(needs python3-onnx and python3-numpy)
"""
import argparse
import glob
import os
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def compile_model(loom, model, out, extra):
    r = subprocess.run([loom, "compile", model, "-q", "-o", out] + extra, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"loom compile {model} {' '.join(extra)} failed: {r.stderr.strip()}")


def peak_rss_mib(loom, pkg, npz, threads):
    """Runs `loom run` once and returns its peak resident set in MiB (Linux reports KiB)."""
    env = dict(os.environ, LOOM_NUM_THREADS=str(threads))
    p = subprocess.Popen([loom, "run", pkg, "--inputs", npz, "--repeat", "1", "--warmup", "0"],
                         stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    _, status, usage = os.wait4(p.pid, 0)
    err = p.stderr.read().decode()
    p.stderr.close()
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"loom run {pkg} failed: {err.strip()}")
    return usage.ru_maxrss / 1024.0


def bounded_spec(model, sets):
    """--input-shapes bounding every symbolic dim of every input by its largest value in the sets."""
    m = onnx.load(model)
    inits = {i.name for i in m.graph.initializer}
    inputs = [i for i in m.graph.input if i.name not in inits]
    bounds = {}
    for s in sets:
        for k, vi in enumerate(inputs):
            _, x = read_pb(os.path.join(s, f"input_{k}.pb"))
            for d, v in zip(vi.type.tensor_type.shape.dim, x.shape):
                if d.dim_param:
                    bounds[d.dim_param] = max(bounds.get(d.dim_param, 0), int(v))
    specs = []
    for vi in inputs:
        dims = [f"{d.dim_param}<={bounds[d.dim_param]}" if d.dim_param else str(d.dim_value)
                for d in vi.type.tensor_type.shape.dim]
        specs.append(f"{vi.name}:[{','.join(dims)}]")
    return ",".join(specs)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="bench_dynamic_memory_")
    print(f"load average at start: {os.getloadavg()[0]:.2f}")
    worst = 0.0
    for d in args.dirs:
        name = os.path.basename(os.path.normpath(d))
        model = os.path.join(d, "model.onnx")
        sets = sorted(glob.glob(os.path.join(d, "test_data_set_*")))
        dyn = os.path.join(work, name + ".dyn.so")
        compile_model(args.loom, model, dyn, [])
        spec = bounded_spec(model, sets)
        bounded = os.path.join(work, name + ".bounded.so")
        compile_model(args.loom, model, bounded, ["--input-shapes", spec])
        print(f"\n{name}: bounded build --input-shapes \"{spec}\"")
        print(f"{'shape':>22} | {'dynamic MiB':>16} | {'bounded MiB':>16} | {'static MiB':>16} | dyn/static | bounded/static")
        for s in sets:
            arrays = {}
            for k in range(len(glob.glob(os.path.join(s, "input_*.pb")))):
                n, x = read_pb(os.path.join(s, f"input_{k}.pb"))
                arrays[n] = x
            npz = os.path.join(work, f"{name}.{os.path.basename(s)}.npz")
            np.savez(npz, **arrays)
            shapes = ",".join(f"{n}:[{','.join(str(v) for v in x.shape)}]" for n, x in arrays.items())
            static = os.path.join(work, f"{name}.{os.path.basename(s)}.static.so")
            compile_model(args.loom, model, static, ["--input-shapes", shapes])
            builds = {"dynamic": dyn, "bounded": bounded, "static": static}
            res = {k: [] for k in builds}
            for _ in range(args.rounds):
                for label, pkg in builds.items():
                    res[label].append(peak_rss_mib(args.loom, pkg, npz, args.threads))
            mins = {k: min(v) for k, v in res.items()}
            cell = {k: f"{mins[k]:.1f} ({sum(v) / len(v):.1f})" for k, v in res.items()}
            r1, r2 = mins["dynamic"] / mins["static"], mins["bounded"] / mins["static"]
            worst = max(worst, r1, r2)
            shape = "x".join(str(v) for v in next(iter(arrays.values())).shape)
            print(f"{shape:>22} | {cell['dynamic']:>16} | {cell['bounded']:>16} | {cell['static']:>16} | "
                  f"{r1:10.2f} | {r2:14.2f}")
    print(f"\nworst ratio {worst:.2f} (target <= 1.5); load average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
