# from tvm.script import tir as T

@T.prim_func
def main(R0: T.Buffer((3, 9, 9), "int8"), B: T.Buffer((3,), "int8"), out: T.Buffer((3,), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t0 = T.alloc_buffer((3,), "int8")
    t1 = T.alloc_buffer((3,), "int8")
    for i0_0, k0_1, k0_2 in T.grid(3, 9, 9):
        with T.block("s0"):
            v0, w0, w1 = T.axis.remap("SRR", [i0_0, k0_1, k0_2])
            with T.init():
                t0[v0] = T.int8(0)
            t0[v0] = t0[v0] + (R0[v0, w0, w1] * T.Select(v0 == 0, B[v0], T.Select(v0 < 1, B[v0], B[v0])))
    for i1_0 in T.grid(3):
        with T.block("s1"):
            v0 = T.axis.remap("S", [i1_0])
            t1[v0] = B[v0]
    for i2_0 in T.grid(3):
        with T.block("s2"):
            v0 = T.axis.remap("S", [i2_0])
            out[v0] = T.min(T.if_then_else(v0 >= 2, (B[v0] * B[v0]), (B[v0] + t0[v0])), ((t0[v0] + T.int8(4)) % T.int8(4)))

