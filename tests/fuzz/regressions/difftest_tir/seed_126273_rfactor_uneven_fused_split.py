# from tvm.script import tir as T

@T.prim_func
def main(R0: T.Buffer((9, 5), "float32"), B: T.Buffer((9,), "float32"), out: T.Buffer((9,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i0_0, k0_1 in T.grid(9, 5):
        with T.block("s0"):
            v0, w0 = T.axis.remap("SR", [i0_0, k0_1])
            with T.init():
                out[v0] = T.float32("inf")
            out[v0] = T.min(out[v0], (R0[v0, w0] * T.Select((B[v0] + T.float32(-1.75)) != B[v0], (B[v0] + T.float32(2)), T.float32(-0.5))))

