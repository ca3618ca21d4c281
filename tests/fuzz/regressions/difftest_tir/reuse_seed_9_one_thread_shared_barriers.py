# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((1, 22), "int8"), B: T.Buffer((22,), "int8"), out: T.Buffer((1,), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i, k in T.grid(1, 22):
        with T.block("r"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                out[vi] = T.int8(0)
            out[vi] = out[vi] + A[vi, vk] * B[vk]
