# from tvm.script import tir as T

@T.prim_func
def main(R0: T.Buffer((2, 2), "int32"), B: T.Buffer((2,), "int32"), C: T.Buffer((2,), "int32"), out: T.Buffer((2,), "int32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t0 = T.alloc_buffer((2,), "int32")
    for i0_0, k0_1 in T.grid(2, 2):
        with T.block("s0"):
            v0, w0 = T.axis.remap("SR", [i0_0, k0_1])
            with T.init():
                t0[v0] = 0
            t0[v0] = t0[v0] + R0[v0, w0]
    for i1_0 in T.grid(2):
        with T.block("s1"):
            v0 = T.axis.remap("S", [i1_0])
            out[v0] = T.Select(v0 == 2, T.if_then_else(T.min(B[v0], v0) <= (C[v0] % 2), (t0[v0] * v0), -1), (T.if_then_else(B[v0] != t0[v0], t0[v0], B[v0]) * (B[v0] // 3)))
