# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6, 6, 7), "float32"), out: T.Buffer((6, 6, 7), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t0 = T.alloc_buffer((6, 6, 7), "float32")
    t1 = T.alloc_buffer((6, 6, 7), "float32")
    for i0_0, i0_1, i0_2 in T.grid(6, 6, 7):
        with T.block("s0"):
            v0, v1, v2 = T.axis.remap("SSS", [i0_0, i0_1, i0_2])
            t0[v0, v1, v2] = (T.exp(A[v0, v1, v2]) + (A[v0, v1, v2] * T.exp(T.Cast("float32", v0))))
    for i1_0, i1_1, i1_2 in T.grid(6, 6, 7):
        with T.block("s1"):
            v0, v1, v2 = T.axis.remap("SSS", [i1_0, i1_1, i1_2])
            t1[v0, v1, v2] = T.exp(t0[v0, v1, v2])
    for i2_0, i2_1, i2_2 in T.grid(6, 6, 7):
        with T.block("s2"):
            v0, v1, v2 = T.axis.remap("SSS", [i2_0, i2_1, i2_2])
            out[v0, v1, v2] = (t1[v0, v1, v2] - (T.Select(v1 < 5, A[v0, v1, v2], t1[v0, v1, v2]) / T.float32(2)))
