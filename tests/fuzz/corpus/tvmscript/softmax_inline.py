# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), T_softmax_norm: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        T_softmax_maxelem = T.alloc_buffer((4,), "float32", scope="local")
        T_softmax_expsum = T.alloc_buffer((4,), "float32", scope="local")
        for i in range(4):
            for ax0 in range(8):
                with T.block("T_softmax_maxelem"):
                    v_i, v_k = T.axis.remap("SR", [i, ax0])
                    T.reads(A[v_i, v_k])
                    T.writes(T_softmax_maxelem[v_i])
                    with T.init():
                        T_softmax_maxelem[v_i] = T.float32("-inf")
                    T_softmax_maxelem[v_i] = T.max(T_softmax_maxelem[v_i], A[v_i, v_k])
            for ax0_1 in range(8):
                with T.block("T_softmax_expsum"):
                    v_i_1, v_k_1 = T.axis.remap("SR", [i, ax0_1])
                    T.reads(A[v_i_1, v_k_1], T_softmax_maxelem[v_i_1])
                    T.writes(T_softmax_expsum[v_i_1])
                    with T.init():
                        T_softmax_expsum[v_i_1] = T.float32(0)
                    T_softmax_expsum[v_i_1] = T_softmax_expsum[v_i_1] + T.exp(A[v_i_1, v_k_1] - T_softmax_maxelem[v_i_1])
            for j in range(8):
                with T.block("T_softmax_norm"):
                    v_i_2, v_j = T.axis.remap("SS", [i, j])
                    T.reads(A[v_i_2, v_j], T_softmax_maxelem[v_i_2], T_softmax_expsum[v_i_2])
                    T.writes(T_softmax_norm[v_i_2, v_j])
                    T_softmax_norm[v_i_2, v_j] = T.exp(A[v_i_2, v_j] - T_softmax_maxelem[v_i_2]) / T_softmax_expsum[v_i_2]
