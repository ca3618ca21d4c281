# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), T_transpose: T.Buffer((8, 4), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j in T.grid(8, 4):
        with T.block("T_transpose"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(A[v_j, v_i])
            T.writes(T_transpose[v_i, v_j])
            T_transpose[v_i, v_j] = A[v_j, v_i]
