# A row sum made parallel with rfactor (the Python subset of tvm.tir.Schedule).
# Try it:  loom verify --workload reduce_sum:M=64,N=4096 --schedule examples/schedules/rfactor_reduce.py
#          loom lower  --workload reduce_sum:M=64,N=4096 --schedule examples/schedules/rfactor_reduce.py

# The one block of the workload: A_red[i] += A[i, k], a reduction over k.
b = sch.get_block("A_red")
i, k = sch.get_loops(b)

# Cut the reduction in two: 16 partial sums (ki) each over N/16 elements (ko).
ko, ki = sch.split(k, factors=[None, 16])

# rfactor turns ki into a spatial axis: block "A_red_rf" accumulates the 16 partial sums of
# every row into a new buffer A_red_rf[ki, i] (factor_axis=0 puts ki first), and "A_red" becomes
# the write-back that adds the 16 partial sums of each row. rf is the partial-sum block.
rf = sch.rfactor(ki, factor_axis=0)

# The partial-sum block's loops are still i, ko, ki. Put ki outermost: the 16 partial sums are
# independent, so that loop can run in parallel (it could not while it was a reduce loop).
ri, rko, rki = sch.get_loops(rf)
sch.reorder(rki, ri, rko)
sch.parallel(rki)

# Split the partial sums' init out of the reduction, so the accumulation loop has no branch.
init = sch.decompose_reduction(rf, rko)
