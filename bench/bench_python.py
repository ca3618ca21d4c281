"""What the Python API costs (issue #25's targets), measured interleaved, min reported:

1. Calling a compiled kernel from Python on numpy arrays / loom.nd arrays, against the same
   packed call made in a C++ loop (Function.time: the C++ side of time_evaluator). The difference
   is the Python call overhead (target: <= 10 us).
2. loom.build of a scheduled matmul (schedule through loom.tir.Schedule, lower, LLVM, JIT) against
   the CLI doing the same work (`loom lower -w matmul -s script --emit asm`: schedule script,
   lowering, LLVM code generation; its process start is included).

Run:  PYTHONPATH=build/python python3 bench/bench_python.py [--rounds 7]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

import loom
from loom import te

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = """b = sch.get_block("C")
i, j, k = sch.get_loops(b)
io, ii = sch.split(i, factors=[None, 8])
jo, ji = sch.split(j, factors=[None, 32])
sch.reorder(io, jo, k, ii, ji)
sch.parallel(io)
sch.vectorize(ji)
sch.decompose_reduction(b, k)
"""


def call_overhead(rounds, calls):
    n = 16
    A = te.placeholder((n,), name="A")
    B = te.compute((n,), lambda i: A[i] + 1.0, name="B")
    f = loom.build(te.create_prim_func([A, B]))["main"]
    a_np, b_np = loom.nd.aligned_array(np.ones(n, "float32")), loom.nd.aligned_empty((n,), "float32")
    a_nd, b_nd = loom.nd.array(a_np), loom.nd.array(b_np)
    rows = {"C++ loop (packed call)": [], "Python, loom.nd arrays": [], "Python, numpy arrays (aligned)": [],
            "Python, numpy arrays (unaligned: copy in/out)": []}
    un_a = np.ones(n + 1, "float32")[1:]
    un_b = np.zeros(n + 1, "float32")[1:]
    for _ in range(rounds):
        rows["C++ loop (packed call)"].append(min(f.time(calls, 1, 0.0, a_nd, b_nd)))
        for name, args in (("Python, loom.nd arrays", (a_nd, b_nd)), ("Python, numpy arrays (aligned)", (a_np, b_np)),
                           ("Python, numpy arrays (unaligned: copy in/out)", (un_a, un_b))):
            t0 = time.perf_counter()
            for _ in range(calls):
                f(*args)
            rows[name].append((time.perf_counter() - t0) / calls)
    return rows


def build_time(rounds, size):
    spec = f"matmul:M={size},N={size},K={size}"
    func = loom.topi.workload(spec)
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as f:
        f.write(SCRIPT)
        path = f.name
    cli = os.environ.get("LOOM_CLI", os.path.join(REPO, "build", "bin", "loom"))
    rows = {"loom.build (Python)": [], "loom lower --emit asm (CLI)": []}
    for _ in range(rounds):
        t0 = time.perf_counter()
        sch = loom.tir.Schedule(func)
        exec(SCRIPT, {"sch": sch})
        loom.build(sch.mod)
        rows["loom.build (Python)"].append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([cli, "lower", "-w", spec, "-s", path, "--emit", "asm"], check=True, stdout=subprocess.DEVNULL)
        rows["loom lower --emit asm (CLI)"].append(time.perf_counter() - t0)
    os.unlink(path)
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--size", type=int, default=512)
    o = ap.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f}; {o.rounds} interleaved rounds, min and mean")
    rows = call_overhead(o.rounds, o.calls)
    base = min(rows["C++ loop (packed call)"])
    print(f"\ncalling B[i] = A[i] + 1 (16 floats), {o.calls} calls per round:")
    for name, ts in rows.items():
        extra = "" if name.startswith("C++") else f"   overhead over C++: {(min(ts) - base) * 1e6:6.2f} us"
        print(f"  {name:48s} min {min(ts) * 1e6:7.2f} us  mean {statistics.fmean(ts) * 1e6:7.2f} us{extra}")
    rows = build_time(max(3, o.rounds // 2), o.size)
    print(f"\nscheduled matmul {o.size}^3, schedule + lower + codegen:")
    for name, ts in rows.items():
        print(f"  {name:48s} min {min(ts) * 1e3:7.1f} ms  mean {statistics.fmean(ts) * 1e3:7.1f} ms")
    py, cli = (min(v) for v in rows.values())
    print(f"  ratio Python / CLI (min): {py / cli:.2f}")


if __name__ == "__main__":
    sys.exit(main())
