# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 4), "float32"), B: T.Buffer((4, 8), "float32"), C: T.Buffer((8, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    A_1 = T.decl_buffer((32,), "float32", data=A.data)
    B_1 = T.decl_buffer((32,), "float32", data=B.data)
    C_1 = T.decl_buffer((64,), "float32", data=C.data)
    for i, j, k in T.grid(8, 8, 4):
        if k == 0:
            C_1[i * 8 + j] = T.float32(0)
        C_1[i * 8 + j] = C_1[i * 8 + j] + A_1[i * 4 + k] * B_1[j + k * 8]
