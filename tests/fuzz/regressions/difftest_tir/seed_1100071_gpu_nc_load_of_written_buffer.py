# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "int8"), B: T.Buffer((1, 9), "int8"), out: T.Buffer((1, 6, 9), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t0 = T.alloc_buffer((1, 6, 9), "int8")
    t1 = T.alloc_buffer((1, 6, 9), "int8")
    for i0_0, i0_1, i0_2 in T.grid(1, 6, 9):
        with T.block("s0"):
            v0, v1, v2 = T.axis.remap("SSS", [i0_0, i0_1, i0_2])
            if v2 >= 5:
                t0[v0, v1, v2] = A[v1]
            else:
                t0[v0, v1, v2] = ((T.Cast("int8", v1) * (A[v1] + T.int8(-3))) - (A[v1] % T.int8(5)))
    for i1_0, i1_1, i1_2 in T.grid(1, 6, 9):
        with T.block("s1"):
            v0, v1, v2 = T.axis.remap("SSS", [i1_0, i1_1, i1_2])
            t1[v0, v1, v2] = T.int8(-2)
    for i2_0, i2_1, i2_2 in T.grid(1, 6, 9):
        with T.block("s2"):
            v0, v1, v2 = T.axis.remap("SSS", [i2_0, i2_1, i2_2])
            out[v0, v1, v2] = T.min(T.Select(T.Select(v2 == 3, B[v0, v2], A[v1]) <= A[v1], t1[v0, v1, v2], A[v1]), T.max(A[v1], A[v1]))
