#!/usr/bin/env python3
"""Int8 vs float, Loom vs ONNX Runtime, in one run with the four measured in interleaved rounds.

For each pair FLOAT_DIR:INT8_DIR (make_torch_models.py's float model and make_quant_models.py's
quantized one, e.g. build/models/resnet18:build/models/resnet18_int8_qdq): compiles both with
`loom compile`, then for R rounds times Loom int8, Loom fp32, ORT int8 and ORT fp32 one after the
other (bench_models.py's measurements: `loom run --repeat N` with LOOM_NUM_THREADS=T, an ORT
session with intra_op_num_threads=T). Prints min and median-of-means of each and the ratios
Loom int8 / ORT int8 and Loom int8 / Loom fp32 (below 1: Loom int8 is faster), with the load average.
Needs numpy, onnx, onnxruntime.
--compile-only compiles the packages (e.g. at a low priority), --reuse then times them without
compiling again (e.g. under `chrt -f 50`).
Usage: bench_int8.py --loom BUILD/bin/loom [--threads 2] [--repeat 20] [--rounds 3] [--reuse] [--compile-only] FLOAT_DIR:INT8_DIR...
"""
import argparse
import os
import statistics
import subprocess
import sys

import numpy as np
import onnxruntime as ort

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench_models import loom_run, ort_run, read_pb  # noqa: E402


def prepare(loom, d, work, reuse=False):
    name = os.path.basename(os.path.normpath(d))
    in_name, x = read_pb(os.path.join(d, "test_data_set_0", "input_0.pb"))
    npz = os.path.join(work, name + ".in.npz")
    np.savez(npz, **{in_name: x})
    pkg = os.path.join(work, name + ".tar")
    model = os.path.join(d, "model.onnx")
    if reuse and os.path.exists(pkg) and os.path.getmtime(pkg) > max(os.path.getmtime(model), os.path.getmtime(loom)):
        return name, pkg, npz, {in_name: x}
    r = subprocess.run([loom, "compile", os.path.join(d, "model.onnx"), "--target", "llvm", "--output", pkg],
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"loom compile {d} failed: {r.stderr.strip()}")
    return name, pkg, npz, {in_name: x}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", required=True)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="build/bench-int8")
    ap.add_argument("--reuse", action="store_true",
                    help="keep a package in --work that is newer than its model and loom (time again without compiling)")
    ap.add_argument("--compile-only", action="store_true", help="compile the packages, time nothing")
    ap.add_argument("pairs", nargs="+")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    load = os.getloadavg()
    print(f"onnxruntime {ort.__version__}, {args.threads} threads, {args.rounds} rounds x {args.repeat} runs, "
          f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; times in ms (min / median of means)")
    print(f"{'model':<24}{'Loom int8':>16}{'Loom fp32':>16}{'ORT int8':>16}{'ORT fp32':>16}"
          f"{'L8/O8':>13}{'L8/L32':>13}")
    for pair in args.pairs:
        fdir, sep, qdir = pair.partition(":")
        if not sep:
            ap.error(f"expected FLOAT_DIR:INT8_DIR, got {pair!r}")
        runs = {}
        sessions = {}
        for key, d in (("q", qdir), ("f", fdir)):
            name, pkg, npz, feed = prepare(args.loom, d, args.work, args.reuse)
            if args.compile_only:
                continue
            so = ort.SessionOptions()
            so.intra_op_num_threads = args.threads
            so.inter_op_num_threads = 1
            sessions[key] = (ort.InferenceSession(os.path.join(d, "model.onnx"), so,
                                                  providers=["CPUExecutionProvider"]), feed)
            runs[key] = (name, pkg, npz)
        if args.compile_only:
            continue
        t = {k: ([], []) for k in ("lq", "lf", "oq", "of")}
        for _ in range(args.rounds):
            for key in ("q", "f"):
                name, pkg, npz = runs[key]
                mean, mn = loom_run(args.loom, pkg, npz, os.path.join(args.work, name + ".out.npz"),
                                    args.repeat, args.threads)
                t["l" + key][0].append(mn)
                t["l" + key][1].append(mean)
            for key in ("q", "f"):
                sess, feed = sessions[key]
                mean, mn = ort_run(sess, feed, args.repeat)
                t["o" + key][0].append(mn)
                t["o" + key][1].append(mean)
        v = {k: (min(a), statistics.median(b)) for k, (a, b) in t.items()}
        cell = lambda k: f"{v[k][0]:7.2f} /{v[k][1]:7.2f}"
        ratio = lambda a, b: f"{v[a][0] / v[b][0]:5.2f} /{v[a][1] / v[b][1]:5.2f}"
        print(f"{runs['q'][0]:<24}{cell('lq'):>16}{cell('lf'):>16}{cell('oq'):>16}{cell('of'):>16}"
              f"{ratio('lq', 'oq'):>13}{ratio('lq', 'lf'):>13}")
    load = os.getloadavg()
    print(f"load average at the end {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
