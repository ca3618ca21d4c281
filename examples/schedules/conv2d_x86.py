# A fast fp32 NCHW conv2d for AVX-512 CPUs: output channels in vector lanes, a register tile of
# 4 pixels x 64 channels, weights re-laid out once so the 64 channels of a tap are contiguous.
# Made for the ResNet layer conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,stride=1 (K divisible by
# 64, the output width by 4).
#   loom bench-op --workload conv2d:N=1,C=64,H=56,W=56,K=64,R=3,S=3,pad=1,stride=1 \
#                 --schedule examples/schedules/conv2d_x86.py
#   build/bin/bench_conv      (side by side with oneDNN)

pad = sch.get_block("pad_temp")
b = sch.get_block("conv2d_nchw")
n, f, y, x, rc, ry, rx = sch.get_loops(b)

# 64 output channels = 4 vectors of 16 lanes; 4 output pixels of a row per tile.
fo, fi, fv = sch.split(f, factors=[None, 4, 16])
xo, xi = sch.split(x, factors=[None, 4])
# Tiles outside, the reduction (input channel, kernel row, kernel column) in the middle, the
# 4 x 64 register tile innermost: each reduction step loads 4 weight vectors, broadcasts 4 input
# values and issues 16 vfmadd231ps.
sch.reorder(n, fo, y, xo, rc, ry, rx, xi, fi, fv)

# Accumulate the tile in a local buffer laid out pixel-major, channel-minor, so the channel
# vectors are contiguous (registers once LLVM sees the constant indices); it is written to the
# NCHW output once per tile.
cw = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(cw, xo)
sch.transform_layout(b, ("write", 0), lambda n, f, y, x: (n, y, x, f))

# Weights KCRS -> CRSK: the 64 output channels of one (c, r, s) tap become one contiguous run.
wp = sch.cache_read(b, 1, "global")
sch.transform_layout(wp, ("write", 0), lambda f, c, r, s: (c, r, s, f))

# The tile starts at zero in registers, before the reduction loops.
binit = sch.decompose_reduction(b, rc)
il = sch.get_loops(binit)
sch.vectorize(il[-1])
sch.unroll(il[-2])
sch.unroll(il[-3])

sch.unroll(xi)
sch.unroll(fi)
sch.vectorize(fv)

# Output rows split between the threads; the padding copy split by input channel, the weight
# re-layout by output channel.
ny = sch.fuse(n, fo, y)
sch.parallel(ny)
pn, pc, ph, pw = sch.get_loops(pad)
sch.parallel(pc)
sch.parallel(sch.get_loops(wp)[0])
