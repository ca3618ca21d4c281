b0 = sch.get_block("s")
l1, l2 = sch.get_loops(b0)
sch.unroll(l2)
