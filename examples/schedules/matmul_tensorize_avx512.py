# A GEMM whose inner tile is one AVX-512 micro-kernel, mapped with tensorize.
# Try it:  loom verify --workload matmul:M=256,N=256,K=256 --schedule examples/schedules/matmul_tensorize_avx512.py
#          loom lower  --workload matmul:M=256,N=256,K=256 --schedule examples/schedules/matmul_tensorize_avx512.py --emit asm

# The one block of the workload: C[i, j] += A[i, k] * B[k, j].
b = sch.get_block("C")
i, j, k = sch.get_loops(b)

# The micro-kernel "x86_avx512_fma_f32x16_k4" computes C[0:16] += A[k] * B[k, 0:16] for 4 k:
# one row of C, 16 columns (one zmm register of float32), 4 steps of k. Shape the loops so the
# innermost two are exactly that: 4 k (reduce) outside 16 j (spatial).
jo, ji = sch.split(j, factors=[None, 16])
ko, ki = sch.split(k, factors=[None, 4])
sch.reorder(jo, i, ko, ki, ji)

# tensorize blockizes the ki loop (the tile becomes block "C_o", whose init zeroes the row of C
# before the first k step), checks the tile computes what the intrinsic describes, and replaces
# it by the kernel's vector code: C[i, ramp] = C[i, ramp] + broadcast(A[i, k]) * B[k, ramp], one
# vfmadd per k. It refuses with a clear error when the tile does not match.
sch.tensorize(ki, "x86_avx512_fma_f32x16_k4")

# Column panels are independent: run them on separate cores.
sch.parallel(jo)
