#!/usr/bin/env python3
"""Times Loom against ONNX Runtime end to end on the real models of make_torch_models.py, in one run.

For each MODEL_DIR (model.onnx + test_data_set_0/input_0.pb, output_0.pb): compiles it with
`loom compile`, times `loom run --repeat N` (LOOM_NUM_THREADS=T) and an ONNX Runtime session
(intra_op_num_threads=T, inter_op 1, all graph optimizations) on the same input, in R interleaved
rounds; checks both outputs against the reference; prints per model the minimum and the median of
the per-round means for each, and their ratios (Loom / ORT: above 1 means Loom is slower).
`--tuning-records NAME=FILE` (repeatable) compiles model NAME (its directory's name) with
`loom compile --tuning-records FILE`, so tuned and untuned models are measured the same way;
`--compile-arg ARG` (repeatable) passes ARG to every `loom compile` (e.g. --compile-arg=--opt-level=2).
`--cpu-time` measures one thread by process CPU time instead (steady on a busy machine).
`--baseline LOOM2` also compiles every model with a second loom binary (e.g. main's build) and runs
it in the same rounds (baseline, Loom, ORT, interleaved), so a change is measured against its base
under the same load (with --cpu-time too): extra columns give the baseline's min and mean ratios to
ORT and its error.
Needs numpy, onnx and onnxruntime (bench/bench_models.sh makes a venv with them).
Usage: bench_models.py --loom BUILD/bin/loom [--baseline BASE/bin/loom] [--threads 2] [--repeat 20] [--rounds 3]
                       [--cpu-time] [--tuning-records NAME=FILE]... [--compile-arg ARG]... MODEL_DIR...
"""
import argparse
import os
import resource
import re
import statistics
import subprocess
import sys
import time

import numpy as np
import onnx
import onnxruntime as ort
from onnx import numpy_helper


def read_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def max_rel_err(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(1e-12, float(np.max(np.abs(want)))))


def loom_run(loom, pkg, npz, out_npz, repeat, threads):
    env = dict(os.environ, LOOM_NUM_THREADS=str(threads))
    # Warm-up runs (as ORT's), then `repeat` measurements of one run each (a loom from before
    # --warmup times its first, cold run too).
    warmup = ["--warmup", "3"] if has_warmup(loom) else []
    r = subprocess.run([loom, "run", pkg, "--inputs", npz, "--outputs", out_npz, "--print-time", "--repeat", str(repeat)]
                       + warmup, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"loom run failed: {r.stderr.strip() or r.stdout.strip()}")
    m = re.search(r"time \(ms\): mean ([0-9.]+),(?: median [0-9.]+,)? min ([0-9.]+)", r.stdout)
    if not m:
        raise RuntimeError(f"no time in loom run output: {r.stdout!r}")
    return float(m.group(1)), float(m.group(2))


_WARMUP = {}


def has_warmup(loom):
    if loom not in _WARMUP:
        r = subprocess.run([loom, "run", "--help"], capture_output=True, text=True)
        _WARMUP[loom] = "--warmup" in r.stdout
    return _WARMUP[loom]


def child_cpu_s():
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def loom_cpu_ms(loom, pkg, npz, out_npz, repeat):
    """Process CPU time per run of `loom run` on one thread: the CPU time of a run with `repeat` + 1
    iterations minus that of a run with 1 (loading the package and the first run cancel out)."""
    def cpu(n):
        t0 = child_cpu_s()
        loom_run(loom, pkg, npz, out_npz, n, 1)
        return child_cpu_s() - t0
    return max(0.0, cpu(repeat + 1) - cpu(1)) * 1e3 / repeat


def ort_cpu_ms(sess, feed, repeat):
    sess.run(None, feed)
    t0 = time.process_time()
    for _ in range(repeat):
        sess.run(None, feed)
    return (time.process_time() - t0) * 1e3 / repeat


def ort_run(sess, feed, repeat):
    for _ in range(3):  # warm-up (ORT's arena and thread pool settle over the first runs)
        sess.run(None, feed)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        sess.run(None, feed)
        times.append((time.perf_counter() - t0) * 1e3)
    return sum(times) / len(times), min(times)


def bench(d, args, work):
    name = os.path.basename(os.path.normpath(d))
    in_name, x = read_pb(os.path.join(d, "test_data_set_0", "input_0.pb"))
    _, want = read_pb(os.path.join(d, "test_data_set_0", "output_0.pb"))
    npz = os.path.join(work, name + ".in.npz")
    np.savez(npz, **{in_name: x})
    pkg = os.path.join(work, name + ".tar")
    shape = ",".join(str(s) for s in x.shape)
    cmd = [args.loom, "compile", os.path.join(d, "model.onnx"), "--target", "llvm",
           "--input-shapes", f"{in_name}:[{shape}]", "--output", pkg] + list(args.compile_arg)
    records = args.records.get(name)
    if records:
        cmd += ["--tuning-records", records]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    compile_s = time.perf_counter() - t0
    if r.returncode != 0:
        raise RuntimeError(f"loom compile failed: {r.stderr.strip() or r.stdout.strip()}")
    base_pkg = os.path.join(work, name + ".base.tar")
    if args.baseline:
        r = subprocess.run([args.baseline] + [base_pkg if c == pkg else c for c in cmd[1:]], capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"baseline loom compile failed: {r.stderr.strip() or r.stdout.strip()}")
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
    feed = {in_name: x}
    out_npz = os.path.join(work, name + ".out.npz")
    loom_means, loom_mins, ort_means, ort_mins, base_means, base_mins = [], [], [], [], [], []
    base_out = os.path.join(work, name + ".base.out.npz")
    for _ in range(args.rounds if args.cpu_time else 0):
        # One thread, process CPU time: the mean per run (the same in both columns).
        if args.baseline:
            t = loom_cpu_ms(args.baseline, base_pkg, npz, base_out, args.repeat)
            base_means.append(t)
            base_mins.append(t)
        t = loom_cpu_ms(args.loom, pkg, npz, out_npz, args.repeat)
        loom_means.append(t)
        loom_mins.append(t)
        t = ort_cpu_ms(sess, feed, args.repeat)
        ort_means.append(t)
        ort_mins.append(t)
    for _ in range(0 if args.cpu_time else args.rounds):
        if args.baseline:
            mean, mn = loom_run(args.baseline, base_pkg, npz, base_out, args.repeat, args.threads)
            base_means.append(mean)
            base_mins.append(mn)
        mean, mn = loom_run(args.loom, pkg, npz, out_npz, args.repeat, args.threads)
        loom_means.append(mean)
        loom_mins.append(mn)
        mean, mn = ort_run(sess, feed, args.repeat)
        ort_means.append(mean)
        ort_mins.append(mn)
    with np.load(out_npz) as z:
        got = z[z.files[0]]
    ort_out = sess.run(None, feed)[0]
    base = {}
    if base_means:
        with np.load(base_out) as z:
            base = dict(base_min=min(base_mins), base_mean=statistics.median(base_means),
                        base_err=max_rel_err(z[z.files[0]], want))
    return dict(**base, name=name, compile_s=compile_s, records=os.path.basename(records) if records else "-",
                loom_min=min(loom_mins), loom_mean=statistics.median(loom_means),
                ort_min=min(ort_mins), ort_mean=statistics.median(ort_means),
                loom_err=max_rel_err(got, want), ort_err=max_rel_err(ort_out, want))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", required=True, help="the loom binary")
    ap.add_argument("--baseline", help="a second loom binary, run in the same rounds (e.g. main's build)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--work", default="build/bench-models", help="directory for packages and npz files")
    ap.add_argument("--cpu-time", action="store_true",
                    help="one thread, times by process CPU time (steady while other jobs share the cores); "
                         "min = the least per-round mean")
    ap.add_argument("--tuning-records", action="append", default=[], metavar="NAME=FILE",
                    help="compile model NAME with these tuning records (repeatable)")
    ap.add_argument("--compile-arg", action="append", default=[], metavar="ARG",
                    help="an extra argument of every loom compile (repeatable)")
    ap.add_argument("dirs", nargs="+")
    args = ap.parse_args()
    if args.cpu_time:
        args.threads = 1
    args.records = {}
    for item in args.tuning_records:
        name, sep, path = item.partition("=")
        if not sep or not name or not path:
            ap.error(f"--tuning-records expects NAME=FILE, got {item!r}")
        if not os.path.isfile(path):
            ap.error(f"--tuning-records {name}: no file {path}")
        args.records[name] = os.path.abspath(path)
    known = {os.path.basename(os.path.normpath(d)) for d in args.dirs}
    for name in args.records:
        if name not in known:
            ap.error(f"--tuning-records names model {name!r}, which is not benchmarked ({', '.join(sorted(known))})")
    os.makedirs(args.work, exist_ok=True)
    load0 = os.getloadavg()
    print(f"onnxruntime {ort.__version__}, {args.threads} threads, {args.rounds} rounds x {args.repeat} runs, "
          f"{'process CPU time' if args.cpu_time else 'wall time'}, "
          f"load average {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    hdr = (f"{'model':<22}{'compile s':>10}{'Loom min':>10}{'ORT min':>10}{'ratio':>7}"
           f"{'Loom mean':>11}{'ORT mean':>10}{'ratio':>7}{'Loom err':>10}{'ORT err':>10}  records")
    if args.baseline:
        hdr += f"{'base min':>10}{'ratio':>7}{'base mean':>11}{'ratio':>7}{'base err':>10}"
    print(hdr)
    failed = 0
    ratios_min, ratios_mean, base_min, base_mean = [], [], [], []
    for d in args.dirs:
        try:
            r = bench(d, args, args.work)
        except RuntimeError as e:
            failed += 1
            print(f"{os.path.basename(os.path.normpath(d)):<22}error: {e}")
            continue
        print(f"{r['name']:<22}{r['compile_s']:>10.1f}{r['loom_min']:>10.2f}{r['ort_min']:>10.2f}"
              f"{r['loom_min'] / r['ort_min']:>7.2f}{r['loom_mean']:>11.2f}{r['ort_mean']:>10.2f}"
              f"{r['loom_mean'] / r['ort_mean']:>7.2f}{r['loom_err']:>10.1e}{r['ort_err']:>10.1e}  {r['records']:<7}"
              + (f"{r['base_min']:>10.2f}{r['base_min'] / r['ort_min']:>7.2f}{r['base_mean']:>11.2f}"
                 f"{r['base_mean'] / r['ort_mean']:>7.2f}{r['base_err']:>10.1e}" if 'base_min' in r else ""), flush=True)
        ratios_min.append(r['loom_min'] / r['ort_min'])
        ratios_mean.append(r['loom_mean'] / r['ort_mean'])
        if 'base_min' in r:
            base_min.append(r['base_min'] / r['ort_min'])
            base_mean.append(r['base_mean'] / r['ort_mean'])
    if ratios_min:
        gm = lambda v: float(np.exp(np.mean(np.log(v))))
        print(f"{'geometric mean':<22}{'':>10}{'':>10}{'':>10}{gm(ratios_min):>7.2f}{'':>11}{'':>10}"
              f"{gm(ratios_mean):>7.2f}   ({len(ratios_min)} models)"
              + (f"{'':>17}{'':>10}{gm(base_min):>7.2f}{'':>11}{gm(base_mean):>7.2f}" if base_min else ""))
    load1 = os.getloadavg()
    print(f"times in ms; ratio = Loom / ORT; err = max |out - reference| / max |reference|; "
          f"load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
