#!/usr/bin/env python3
"""Times Loom against ONNX Runtime end to end on the real models of make_torch_models.py, in one run.

For each MODEL_DIR (model.onnx + test_data_set_0/input_K.pb, output_0.pb): compiles it with
`loom compile`, times `loom run --repeat N` (LOOM_NUM_THREADS=T) and an ONNX Runtime session
(intra_op_num_threads=T, inter_op 1, all graph optimizations) on the same input, in R interleaved
rounds; checks both outputs against the reference; prints per model the minimum and the median of
the per-round means for each, and their ratios (Loom / ORT: above 1 means Loom is slower).
`--tuning-records NAME=FILE` (repeatable) compiles model NAME (its directory's name) with
`loom compile --tuning-records FILE`, so tuned and untuned models are measured the same way;
`--compile-arg ARG` (repeatable) passes ARG to every `loom compile` (e.g. --compile-arg=--opt-level=2).
`--tune N` also tunes each model (`loom tune MODEL --trials-per-task N`, `--tune-budget T` caps
the model's total trials; LOOM_NUM_THREADS=T as in the timing), compiles it with the records, and
times the untuned and the tuned package and ORT interleaved in the same rounds: the table then
has both ratios and the tuning time (records are kept in --work as NAME.records.json; an existing
file is resumed). `--cpu-time` measures one thread by process CPU time instead (steady on a busy machine).
Needs numpy, onnx and onnxruntime (bench/bench_models.sh makes a venv with them).
Usage: bench_models.py --loom BUILD/bin/loom [--threads 2] [--repeat 20] [--rounds 3]
                       [--cpu-time] [--tune N [--tune-budget T]] [--tuning-records NAME=FILE]...
                       [--compile-arg ARG]... MODEL_DIR...
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
    iterations minus that of a run with 1 (loading the package and the first run cancel out).
    Where the runs take less CPU time than loading does (VGG-11's 530 MB of weights: 5 runs of
    72 ms against a load that varies by more), the difference drowns in the load's noise (it
    came out 0 ms): the repeat count grows 4x, up to three times, until the runs outweigh half
    the load."""
    def cpu(n):
        t0 = child_cpu_s()
        loom_run(loom, pkg, npz, out_npz, n, 1)
        return child_cpu_s() - t0
    for attempt in range(4):
        base, total = cpu(1), cpu(repeat + 1)
        if total - base >= 0.5 * base or attempt == 3:
            return max(0.0, total - base) * 1e3 / repeat
        repeat *= 4


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


def compile_model(args, d, shapes, pkg, records):
    cmd = [args.loom, "compile", os.path.join(d, "model.onnx"), "--target", "llvm",
           "--input-shapes", shapes, "--output", pkg] + list(args.compile_arg)
    if records:
        cmd += ["--tuning-records", records]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"loom compile failed: {r.stderr.strip() or r.stdout.strip()}")
    used = re.search(r"(\d+) of (\d+) kernels use a record(?: \(([^;)]*))?", r.stdout)
    return time.perf_counter() - t0, (f"{used.group(1)}/{used.group(2)}" if used else "")


def tune_model(args, d, name, shapes, work):
    """Runs `loom tune` on the model; returns (records file, wall seconds of this run)."""
    records = os.path.join(work, name + ".records.json")
    cmd = [args.loom, "tune", os.path.join(d, "model.onnx"), "--input-shapes", shapes,
           "--trials-per-task", str(args.tune), "--output", records] + list(args.compile_arg)
    if args.tune_budget:
        cmd += ["--trials", str(args.tune_budget)]
    cmd += list(args.tune_arg)
    if os.path.exists(records):
        cmd.append("--resume")
    env = dict(os.environ, LOOM_NUM_THREADS=str(args.threads))
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    tune_s = time.perf_counter() - t0
    with open(os.path.join(work, name + ".tune.log"), "w") as f:
        f.write(r.stdout + r.stderr)
    if r.returncode != 0:
        raise RuntimeError(f"loom tune failed: {(r.stderr.strip() or r.stdout.strip())[-2000:]}")
    return records, tune_s


def bench(d, args, work):
    name = os.path.basename(os.path.normpath(d))
    # Every input_K.pb (a diffusion block takes a latent and a timestep), in order.
    feed = {}
    while os.path.exists(os.path.join(d, "test_data_set_0", f"input_{len(feed)}.pb")):
        in_name, x = read_pb(os.path.join(d, "test_data_set_0", f"input_{len(feed)}.pb"))
        feed[in_name] = x
    _, want = read_pb(os.path.join(d, "test_data_set_0", "output_0.pb"))
    npz = os.path.join(work, name + ".in.npz")
    np.savez(npz, **feed)
    shapes = ",".join(f"{n}:[{','.join(str(s) for s in v.shape)}]" for n, v in feed.items())
    records = args.records.get(name)
    tune_s = None
    if args.tune:
        records, tune_s = tune_model(args, d, name, shapes, work)
    # The untuned package, and the tuned one when there are records (then both are timed).
    pkgs = [(os.path.join(work, name + ".tar"), None)]
    if records:
        pkgs.append((os.path.join(work, name + ".tuned.tar"), records))
    compiled = [compile_model(args, d, shapes, pkg, rec) for pkg, rec in pkgs]
    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    sess = ort.InferenceSession(os.path.join(d, "model.onnx"), so, providers=["CPUExecutionProvider"])
    outs = [os.path.join(work, name + (".out.npz" if i == 0 else ".tuned.out.npz")) for i in range(len(pkgs))]
    loom_means = [[] for _ in pkgs]
    loom_mins = [[] for _ in pkgs]
    ort_means, ort_mins = [], []
    for _ in range(args.rounds):
        # Interleaved: each package, then ORT, in every round.
        for i, (pkg, _) in enumerate(pkgs):
            if args.cpu_time:
                t = loom_cpu_ms(args.loom, pkg, npz, outs[i], args.repeat)
                mean, mn = t, t
            else:
                mean, mn = loom_run(args.loom, pkg, npz, outs[i], args.repeat, args.threads)
            loom_means[i].append(mean)
            loom_mins[i].append(mn)
        if args.cpu_time:
            t = ort_cpu_ms(sess, feed, args.repeat)
            mean, mn = t, t
        else:
            mean, mn = ort_run(sess, feed, args.repeat)
        ort_means.append(mean)
        ort_mins.append(mn)
    errs = []
    for o in outs:
        with np.load(o) as z:
            errs.append(max_rel_err(z[z.files[0]], want))
    ort_out = sess.run(None, feed)[0]
    res = dict(name=name, compile_s=compiled[0][0], records=os.path.basename(records) if records else "-",
               loom_min=min(loom_mins[0]), loom_mean=statistics.median(loom_means[0]),
               ort_min=min(ort_mins), ort_mean=statistics.median(ort_means),
               loom_err=max(errs), ort_err=max_rel_err(ort_out, want), tune_s=tune_s)
    if records:
        res.update(tuned_min=min(loom_mins[1]), tuned_mean=statistics.median(loom_means[1]), used=compiled[1][1])
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--loom", required=True, help="the loom binary")
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
                    help="an extra argument of every loom compile and loom tune (repeatable)")
    ap.add_argument("--tune", type=int, default=0, metavar="N",
                    help="tune each model first (loom tune --trials-per-task N) and time the tuned package too")
    ap.add_argument("--tune-budget", type=int, default=0, metavar="T",
                    help="with --tune: at most T trials per model in all (loom tune --trials T)")
    ap.add_argument("--tune-arg", action="append", default=[], metavar="ARG",
                    help="an extra argument of loom tune (repeatable, e.g. --tune-arg=--batch=4)")
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
    tuned = bool(args.tune or args.records)
    hdr = (f"{'model':<22}{'compile s':>10}{'Loom min':>10}{'ORT min':>10}{'ratio':>7}"
           f"{'Loom mean':>11}{'ORT mean':>10}{'ratio':>7}{'Loom err':>10}{'ORT err':>10}")
    if tuned:
        hdr += f"{'tuned min':>10}{'ratio':>7}{'tuned mean':>11}{'ratio':>7}{'tune s':>8}{'used':>8}"
    print(hdr + "  records")
    failed = 0
    ratios = {"min": [], "mean": [], "tmin": [], "tmean": []}
    for d in args.dirs:
        try:
            r = bench(d, args, args.work)
        except RuntimeError as e:
            failed += 1
            print(f"{os.path.basename(os.path.normpath(d)):<22}error: {e}")
            continue
        line = (f"{r['name']:<22}{r['compile_s']:>10.1f}{r['loom_min']:>10.2f}{r['ort_min']:>10.2f}"
                f"{r['loom_min'] / r['ort_min']:>7.2f}{r['loom_mean']:>11.2f}{r['ort_mean']:>10.2f}"
                f"{r['loom_mean'] / r['ort_mean']:>7.2f}{r['loom_err']:>10.1e}{r['ort_err']:>10.1e}")
        ratios["min"].append(r['loom_min'] / r['ort_min'])
        ratios["mean"].append(r['loom_mean'] / r['ort_mean'])
        if tuned:
            if "tuned_min" in r:
                tune_s = f"{r['tune_s']:.0f}" if r["tune_s"] is not None else "-"
                line += (f"{r['tuned_min']:>10.2f}{r['tuned_min'] / r['ort_min']:>7.2f}{r['tuned_mean']:>11.2f}"
                         f"{r['tuned_mean'] / r['ort_mean']:>7.2f}{tune_s:>8}{r['used']:>8}")
                ratios["tmin"].append(r['tuned_min'] / r['ort_min'])
                ratios["tmean"].append(r['tuned_mean'] / r['ort_mean'])
            else:
                line += f"{'-':>10}{'-':>7}{'-':>11}{'-':>7}{'-':>8}{'-':>8}"
        print(line + f"  {r['records']}", flush=True)
    if ratios["min"]:
        gm = lambda v: float(np.exp(np.mean(np.log(v))))
        line = (f"{'geometric mean':<22}{'':>10}{'':>10}{'':>10}{gm(ratios['min']):>7.2f}{'':>11}{'':>10}"
                f"{gm(ratios['mean']):>7.2f}{'':>10}{'':>10}")
        if ratios["tmin"]:
            line += f"{'':>10}{gm(ratios['tmin']):>7.2f}{'':>11}{gm(ratios['tmean']):>7.2f}"
        print(line + f"   ({len(ratios['min'])} models{', ' + str(len(ratios['tmin'])) + ' tuned' if ratios['tmin'] else ''})")
    load1 = os.getloadavg()
    print(f"times in ms; ratio = Loom / ORT; err = max |out - reference| / max |reference| (the worse of untuned and tuned); "
          f"tune s = wall time of loom tune; used = kernels that use a record; "
          f"load average at the end {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
