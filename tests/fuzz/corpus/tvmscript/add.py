# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), B: T.Buffer((8,), "float32"), T_add: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(4, 8):
        with T.block("T_add"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_i, v_j], B[v_j])
            T.writes(T_add[v_i, v_j])
            T_add[v_i, v_j] = A[v_i, v_j] + B[v_j]
