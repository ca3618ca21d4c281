# conv2d (NCHW) with a local accumulator and the padding computed per output tile.
# Try it:  loom verify --workload conv2d:N=1,C=16,H=28,W=28,K=32,R=3,S=3 --schedule examples/schedules/conv2d_cache_compute_at.py

# Two blocks: pad_temp (the zero-padded input) and conv2d_nchw (the reduction over rc, ry, rx).
conv = sch.get_block("conv2d_nchw")
pad = sch.get_block("pad_temp")

# Accumulate into a "local" buffer; a new block "conv2d_nchw_local" copies it to the output.
out = sch.cache_write(conv, 0, "local")

# Tile the output plane: 4 rows by 7 columns per tile (None: inferred from the extent).
n, ff, y, x, rc, ry, rx = sch.get_loops(conv)
yo, yi = sch.split(y, factors=[None, 4])
xo, xi = sch.split(x, factors=[None, 7])
sch.reorder(yo, xo, ff, rc, ry, rx, yi, xi)

# Copy each finished tile out right after it is computed (the copy covers exactly the tile).
sch.reverse_compute_at(out, xo)

# Pad only the input window one tile needs: (4 + 2) x (7 + 2) per channel, inside the tile loop.
sch.compute_at(pad, xo)

# Keep the accumulator's rows 16-float aligned (+1 to avoid bank conflicts on GPUs).
sch.storage_align(conv, 0, 2, 16, 1)
