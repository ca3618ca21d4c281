# A tiled, vectorized, parallel matmul schedule (the Python subset of tvm.tir.Schedule).
# Try it:  loom verify --workload matmul:M=256,N=256,K=256 --schedule examples/schedules/matmul_tiled.py
#          loom lower  --workload matmul:M=256,N=256,K=256 --schedule examples/schedules/matmul_tiled.py

# The one block of the workload: C[i, j] += A[i, k] * B[k, j].
b = sch.get_block("C")
i, j, k = sch.get_loops(b)

# Tile the two spatial loops: 32 rows by 64 columns per tile (None: inferred from the extent).
io, ii = sch.split(i, factors=[None, 32])
jo, ji = sch.split(j, factors=[None, 64])

# Tiles outside, the reduction in the middle, the tile's rows and columns innermost, so the
# innermost loop walks B and C contiguously.
sch.reorder(io, jo, k, ii, ji)

# 64 columns = four 16-wide float32 vectors (AVX-512): split and vectorize the innermost.
jio, jii = sch.split(ji, factors=[None, 16])
sch.vectorize(jii)

# One tile row-block per thread: fuse the tile loops and run them in parallel.
tiles = sch.fuse(io, jo)
sch.parallel(tiles)
