# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((5, 1), "float64"), B: T.Buffer((5, 1), "float64"), C: T.Buffer((1, 1), "float64"), out: T.Buffer((5, 5, 1), "float64")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t0 = T.alloc_buffer((5, 5, 1), "float64")
    for i0_0, i0_1, i0_2 in T.grid(5, 5, 1):
        with T.block("s0"):
            v0, v1, v2 = T.axis.remap("SSS", [i0_0, i0_1, i0_2])
            if T.min(A[v0, 0], A[v0, 0]) < A[v0, 0]:
                t0[v0, v1, v2] = B[v0, v2]
            else:
                t0[v0, v1, v2] = C[0, 0]
    for i1_0, i1_1, i1_2 in T.grid(5, 5, 1):
        with T.block("s1"):
            v0, v1, v2 = T.axis.remap("SSS", [i1_0, i1_1, i1_2])
            if t0[v0, v1, v2] > (T.float64(0.5) - A[v0, 0]):
                out[v0, v1, v2] = T.float64(0.5)
            else:
                out[v0, v1, v2] = t0[v0, v1, v2]

