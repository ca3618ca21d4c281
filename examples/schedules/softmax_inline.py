# Row softmax with the exponentials inlined: exp(A - max) is recomputed where it is used instead
# of being stored in the (M, N) buffer T_softmax_exp.
# Try it:  loom verify --workload softmax:M=128,N=128 --schedule examples/schedules/softmax_inline.py

# Four blocks: T_softmax_maxelem (row max), T_softmax_exp, T_softmax_expsum (row sum),
# T_softmax_norm (exp / sum).
exp = sch.get_block("T_softmax_exp")
norm = sch.get_block("T_softmax_norm")
expsum = sch.get_block("T_softmax_expsum")
maxelem = sch.get_block("T_softmax_maxelem")

# exp is injective (one store per element, no reduction): substitute it into its two readers,
# the sum and the normalization. Its buffer disappears.
sch.compute_inline(exp)

# Compute the row max and the row sum per row, right before the row is normalized: the reductions
# move under the row loop and keep only one row's worth of work each.
i, j = sch.get_loops(norm)
sch.compute_at(expsum, i)
sch.compute_at(maxelem, i)

# The row statistics are per-row scalars now: keep them in fast storage.
sch.set_scope(expsum, 0, "local")
sch.set_scope(maxelem, 0, "local")
