# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((2, 7), "int8"), out: T.Buffer((2, 7), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i, j in T.grid(2, 7):
        with T.block("s"):
            v0, v1 = T.axis.remap("SS", [i, j])
            out[v0, v1] = T.Cast("int8", v1) * (A[v0, v1] * A[v0, v1] * A[v0, v1]) // T.int8(3) * T.int8(2)
