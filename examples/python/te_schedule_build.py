# TVM's tensor expression + TensorIR walkthrough (tensor_expr_get_started / tensor_ir_blitz_course)
# with only the import lines changed: describe a matmul with te, make a PrimFunc, schedule it with
# tir.Schedule (split, reorder, parallel, vectorize), build it for the CPU, call it on numpy arrays.
# Run:  PYTHONPATH=build/python python3 examples/python/te_schedule_build.py
import numpy as np

import loom as tvm          # TVM: import tvm
from loom import te         # TVM: from tvm import te

M = N = K = 256
dtype = "float32"
target = "llvm"
dev = tvm.cpu(0)

# The computation: C[i, j] = sum_k A[i, k] * B[k, j].
A = te.placeholder((M, K), name="A", dtype=dtype)
B = te.placeholder((K, N), name="B", dtype=dtype)
k = te.reduce_axis((0, K), name="k")
C = te.compute((M, N), lambda i, j: te.sum(A[i, k] * B[k, j], axis=k), name="C")

# The tensor program, as TVMScript.
func = te.create_prim_func([A, B, C])
ir_module = tvm.IRModule({"main": func})
print(ir_module.script())

a = tvm.nd.array(np.random.uniform(size=(M, K)).astype(dtype), dev)
b = tvm.nd.array(np.random.uniform(size=(K, N)).astype(dtype), dev)
c = tvm.nd.array(np.zeros((M, N), dtype=dtype), dev)
expected = a.numpy() @ b.numpy()

# As written: three nested loops.
baseline = tvm.build(ir_module, target=target)
baseline["main"](a, b, c)
np.testing.assert_allclose(c.numpy(), expected, rtol=1e-4)
t0 = baseline.time_evaluator("main", dev, number=3)(a, b, c).mean
print(f"baseline: {t0 * 1e3:.3f} ms")

# Schedule: tile i and j, move the reduction outside the tiles, parallelize the outer tile loop
# and vectorize the innermost one.
sch = tvm.tir.Schedule(ir_module)
block_c = sch.get_block("C")
i, j, k = sch.get_loops(block_c)
i0, i1 = sch.split(i, factors=[None, 32])
j0, j1 = sch.split(j, factors=[None, 64])
sch.reorder(i0, j0, k, i1, j1)
sch.parallel(i0)
sch.vectorize(j1)
sch.decompose_reduction(block_c, k)
print(sch.mod.script())
print(sch.trace)

rt_mod = tvm.build(sch.mod, target=target)
c = tvm.nd.array(np.zeros((M, N), dtype=dtype), dev)
rt_mod["main"](a, b, c)
np.testing.assert_allclose(c.numpy(), expected, rtol=1e-4)
evaluator = rt_mod.time_evaluator("main", dev, number=10)
t1 = evaluator(a, b, c).mean
print(f"scheduled: {t1 * 1e3:.3f} ms ({t0 / t1:.1f}x the baseline)")
print(rt_mod.get_source("asm").count("vfmadd"), "vfmadd instructions in the assembly")
