# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), A_red: T.Buffer((4,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, k in T.grid(4, 8):
        with T.block("A_red"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(A_red[v_i])
            with T.init():
                A_red[v_i] = T.float32(0)
            A_red[v_i] = A_red[v_i] + A[v_i, v_k]
