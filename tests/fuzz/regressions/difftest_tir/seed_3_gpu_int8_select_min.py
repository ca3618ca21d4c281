# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((2, 8), "int8"), out: T.Buffer((2, 8), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t0 = T.alloc_buffer((2, 8), "int8")
    for i0_0, i0_1 in T.grid(2, 8):
        with T.block("s0"):
            v0, v1 = T.axis.remap("SS", [i0_0, i0_1])
            t0[v0, v1] = T.Select(v1 >= 4, (T.min(T.int8(-1), A[v0, v1]) // T.int8(2)), ((A[v0, v1] % T.int8(3)) + (T.int8(2) + A[v0, v1])))
    for i1_0, i1_1 in T.grid(2, 8):
        with T.block("s1"):
            v0, v1 = T.axis.remap("SS", [i1_0, i1_1])
            out[v0, v1] = T.min(((A[v0, v1] // T.int8(5)) * A[v0, v1]), t0[v0, v1])
