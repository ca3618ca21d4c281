# A fast fp32 matmul for AVX-512 CPUs (the classic recipe: register tile, packed B, 2 threads).
# Made for matmul:M=1024,N=1024,K=1024; any M divisible by 4 and N by 128 works.
#   loom bench-op --workload matmul:M=1024,N=1024,K=1024 --schedule examples/schedules/matmul_x86.py
#   bench/run_gemm.sh build      (side by side with OpenBLAS cblas_sgemm)
#
# The micro-kernel: a 4 x 64 tile of C lives in 16 zmm registers (4 rows x 4 vectors of 16
# floats) while k runs; each k step loads 4 vectors of the packed B panel, broadcasts 4 values of
# A and issues 16 vfmadd231ps.

b = sch.get_block("C")
i, j, k = sch.get_loops(b)

# Rows: 4 per micro-tile. Columns: one half per thread, 64-column panels, each panel four
# 16-lane vectors.
i1, i2 = sch.split(i, factors=[None, 4])
jp, j0, j1, j2 = sch.split(j, factors=[2, None, 4, 16])
# The whole reduction in one panel (k0 has one iteration at K=1024): the packed panel of B is
# K x 64 floats (256 KB at K=1024, kept in the 1 MB L2 cache) and C tiles are written once.
k0, k1 = sch.split(k, factors=[None, 1024])

# Thread, panel, k block outside; then row tiles, k in the middle, the register tile innermost.
sch.reorder(jp, j0, k0, i1, k1, i2, j1, j2)

# Accumulate each 4 x 64 tile of C in a local buffer (registers, once LLVM sees its constant
# indices) and write it to C once, after the k loop.
cw = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(cw, i1)
sch.vectorize(sch.get_loops(cw)[-1])

# Pack the B panel: a copy of B[k0 block, j0 panel] into a contiguous K x 64 buffer that every
# row tile then streams through. compact-buffers (a lowering pass) shrinks the copy to the panel
# and gives each thread its own.
bp = sch.cache_read(b, 1, "global")
sch.compute_at(bp, k0)
pb = sch.get_loops(bp)[-1]
pbo, pbi = sch.split(pb, factors=[None, 16])
sch.vectorize(pbi)

# The tile starts at 0 in registers, outside the k loop, so the micro-kernel is a pure FMA chain.
binit = sch.decompose_reduction(b, k1)
il = sch.get_loops(binit)
sch.vectorize(il[-1])
sch.unroll(il[-2])
sch.unroll(il[-3])

# The register tile: rows and vectors unrolled, lanes vectorized.
sch.unroll(i2)
sch.unroll(j1)
sch.vectorize(j2)

# One half of the columns per thread.
sch.parallel(jp)
