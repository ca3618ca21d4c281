# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), B: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0_j_0_fused in T.parallel(1):
        for k, i_1, j_1_0 in T.grid(16, 32, 4):
            for j_1_1 in T.vectorized(16):
                with T.block("C"):
                    v_i = T.axis.spatial(16, i_1)
                    v_j = T.axis.spatial(16, j_1_0 * 16 + j_1_1)
                    v_k = T.axis.remap("R", [k])
                    T.where(i_0_j_0_fused * 32 + i_1 < 16 and 0 * 64 + (j_1_0 * 16 + j_1_1) < 16)
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    with T.init():
                        C[v_i, v_j] = T.float32(0)
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
