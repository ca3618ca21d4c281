#!/usr/bin/env python3
"""LSTM (input 256, hidden 256, 100 steps, batch 1) through Loom vs ONNX Runtime, interleaved.

Builds the one-node ONNX model, compiles it with `loom compile`, then alternates rounds of
`loom run --repeat R --print-time` and R timed ONNX Runtime runs; prints min and mean per run of
each and the ratio, with the load average. Needs onnx and onnxruntime (PyPI, in a venv).
--threads sets both ORT's intra-op threads and Loom's LOOM_NUM_THREADS.
--clock cpu times process CPU time instead of wall time (steady while other jobs share the cores; use
it with --threads 1, since with more threads it also counts workers' spinning): ORT by
time.process_time around R runs; Loom by the CPU time of two `loom run` children, one with R more
runs than the other, so that starting, loading and warm-up cancel out. Each round gives one mean.
--batch B runs a batch of B sequences (default 1).
Usage: bench_lstm.py [--loom build/bin/loom] [--rounds 5] [--repeat 20] [--threads 2] [--clock wall|cpu] [--batch 1]
"""
import argparse
import os
import re
import resource
import subprocess
import tempfile
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

ap = argparse.ArgumentParser()
ap.add_argument("--loom", default="build/bin/loom")
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("--repeat", type=int, default=20)
ap.add_argument("--threads", type=int, default=2)
ap.add_argument("--clock", choices=["wall", "cpu"], default="wall")
ap.add_argument("--batch", type=int, default=1)
a = ap.parse_args()

T, B, I, H = 100, a.batch, 256, 256
rng = np.random.default_rng(0)
W = (rng.standard_normal([1, 4 * H, I]) * 0.05).astype(np.float32)
R = (rng.standard_normal([1, 4 * H, H]) * 0.05).astype(np.float32)
Bias = (rng.standard_normal([1, 8 * H]) * 0.05).astype(np.float32)
node = helper.make_node("LSTM", ["X", "W", "R", "B"], ["Y", "Y_h", "Y_c"], hidden_size=H)
graph = helper.make_graph(
    [node], "lstm256", [helper.make_tensor_value_info("X", TensorProto.FLOAT, [T, B, I])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [T, 1, B, H]),
     helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [1, B, H]),
     helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, [1, B, H])],
    [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"), numpy_helper.from_array(Bias, "B")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
model.ir_version = 8
tmp = tempfile.mkdtemp()
path = os.path.join(tmp, "lstm.onnx")
onnx.save(model, path)
pkg = os.path.join(tmp, "lstm.so")
subprocess.run([a.loom, "compile", path, "-q", "-o", pkg], check=True)

# Both sides get the same thread count: Loom's pool through LOOM_NUM_THREADS (the recurrence runs
# as a team of 2 tasks when the pool has 2 or more threads, serially with 1).
loom_env = dict(os.environ, LOOM_NUM_THREADS=str(a.threads))
so = ort.SessionOptions()
so.intra_op_num_threads = a.threads
sess = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
x = rng.standard_normal([T, B, I]).astype(np.float32)
for _ in range(3):
    sess.run(None, {"X": x})



def child_cpu():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime


def loom_cpu_ms(n):
    """CPU time (ms) of one `loom run` child doing n timed runs (plus its start and warm-up)."""
    c0 = child_cpu()
    subprocess.run([a.loom, "run", pkg, "--fill-mode", "random", "--repeat", str(n)],
                   check=True, capture_output=True, env=loom_env)
    return (child_cpu() - c0) * 1e3


loom_times, ort_times = [], []
for r in range(a.rounds if a.clock == "cpu" else 0):
    # Per run: (CPU of 1 + R runs - CPU of 1 run) / R, the two children interleaved with ORT.
    base = loom_cpu_ms(1)
    full = loom_cpu_ms(1 + a.repeat)
    lm = (full - base) / a.repeat
    t0 = time.process_time()
    for _ in range(a.repeat):
        sess.run(None, {"X": x})
    om = (time.process_time() - t0) * 1e3 / a.repeat
    loom_times.append((lm, lm))
    ort_times.append((om, om))
for r in range(a.rounds if a.clock == "wall" else 0):
    out = subprocess.run([a.loom, "run", pkg, "--fill-mode", "random", "--repeat", str(a.repeat), "--print-time"],
                         check=True, capture_output=True, text=True, env=loom_env).stdout
    mean = re.search(r"mean ([0-9.]+)", out)
    mn = re.search(r"min ([0-9.]+)", out)
    if not mean or not mn:
        raise SystemExit("cannot read loom run's times from: " + out)
    loom_times.append((float(mean.group(1)), float(mn.group(1))))
    ts = []
    for _ in range(a.repeat):
        t0 = time.perf_counter()
        sess.run(None, {"X": x})
        ts.append((time.perf_counter() - t0) * 1e3)
    ort_times.append((float(np.mean(ts)), float(np.min(ts))))

lmean = np.mean([t[0] for t in loom_times]); lmin = min(t[1] for t in loom_times)
omean = np.mean([t[0] for t in ort_times]); omin = min(t[1] for t in ort_times)
print(f"LSTM T={T} B={B} I={I} H={H}, {a.rounds} interleaved rounds of {a.repeat} runs, threads {a.threads}, "
      f"clock {a.clock}" + (" (min/mean over the rounds' means)" if a.clock == "cpu" else ""))
print(f"loom:        min {lmin:.3f} ms  mean {lmean:.3f} ms")
print(f"onnxruntime: min {omin:.3f} ms  mean {omean:.3f} ms  ({ort.__version__})")
print(f"ratio loom/ORT: min {lmin / omin:.2f}  mean {lmean / omean:.2f}")
print("load average:", " ".join(f"{v:.2f}" for v in os.getloadavg()))
