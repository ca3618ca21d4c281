# TVM MetaSchedule on the same matmul, against OpenBLAS cblas_sgemm (ctypes) in the same process, 2 threads.
#   python3 -m venv /tmp/tvmvenv && /tmp/tvmvenv/bin/pip install apache-tvm xgboost psutil cloudpickle tornado 'apache-tvm-ffi==0.1.14.post0'
#   env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE /tmp/tvmvenv/bin/python bench/bench_tune_matmul_tvm.py [SIZE] [TRIALS] [WORK_DIR]
import ctypes, os, sys, time
import numpy as np
import tvm
from tvm import te
from tvm.s_tir import meta_schedule as ms

M = N = K = int(sys.argv[1]) if len(sys.argv) > 1 else 1024
trials = int(sys.argv[2]) if len(sys.argv) > 2 else 64
work = sys.argv[3] if len(sys.argv) > 3 else "/tmp/loom-tvm-work"
A = te.placeholder((M, K), "float32", name="A")
B = te.placeholder((K, N), "float32", name="B")
k = te.reduce_axis((0, K), name="k")
C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")
func = te.create_prim_func([A, B, C])
target = tvm.target.Target({"kind": "llvm", "mcpu": "znver5", "num-cores": 2})
t0 = time.time()
db = ms.tune_tir(func, target, work_dir=work, max_trials_global=trials, num_trials_per_iter=32,
                 num_tuning_cores=2, database="memory", builder=ms.builder.LocalBuilder(timeout_sec=120), runner=ms.runner.LocalRunner(timeout_sec=120))
tune_s = time.time() - t0
sch = ms.tir_integration.compile_tir(db, func, target)
lib = tvm.compile(sch.mod, target=target)
dev = tvm.cpu()
a = np.random.rand(M, K).astype("float32"); b = np.random.rand(K, N).astype("float32")
ta, tb, tc = tvm.runtime.tensor(a, dev), tvm.runtime.tensor(b, dev), tvm.runtime.tensor(np.zeros((M, N), "float32"), dev)
fn = lib["main"]
fn(ta, tb, tc)
blas = ctypes.CDLL("libopenblas.so.0")
blas.openblas_set_num_threads(2)
c = np.zeros((M, N), "float32")
def sgemm():
    blas.cblas_sgemm(101, 111, 111, M, N, K, ctypes.c_float(1.0), a.ctypes.data_as(ctypes.c_void_p), K,
                     b.ctypes.data_as(ctypes.c_void_p), N, ctypes.c_float(0.0), c.ctypes.data_as(ctypes.c_void_p), N)
sgemm()
err = np.abs(tc.numpy() - c).max() / np.abs(c).max()
def med(f):
    ts = []
    for _ in range(15):
        n = 5; s = time.perf_counter()
        for _ in range(n): f()
        ts.append((time.perf_counter() - s) / n)
    return float(np.median(ts))
best_tvm, best_blas = 1e9, 1e9
for r in range(3):
    best_tvm = min(best_tvm, med(lambda: fn(ta, tb, tc)))
    best_blas = min(best_blas, med(sgemm))
fl = 2.0 * M * N * K
print(f"tvm {tvm.__version__} metaschedule: {trials} trials, tuning wall time {tune_s:.0f} s, max rel err vs openblas {err:.1e}")
print(f"tvm: {best_tvm*1e3:.3f} ms {fl/best_tvm/1e9:.1f} GFLOP/s; openblas: {best_blas*1e3:.3f} ms {fl/best_blas/1e9:.1f} GFLOP/s; ratio {best_blas/best_tvm:.3f}")
print("load", open("/proc/loadavg").read().split()[:3])
