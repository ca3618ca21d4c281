# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), out: T.Buffer((6,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t0 = T.alloc_buffer((6,), "float32")
    for i0 in T.grid(6):
        with T.block("s0"):
            v0 = T.axis.remap("S", [i0])
            t0[v0] = A[v0] + T.float32(1)
    for i1 in T.grid(6):
        with T.block("s1"):
            v0 = T.axis.remap("S", [i1])
            out[v0] = t0[v0] * T.float32(2)
