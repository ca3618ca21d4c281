# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, 8), "float32"), gamma: T.Buffer((8,), "float32"), beta: T.Buffer((8,), "float32"), T_layer_norm: T.Buffer((4, 8), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        T_layer_norm_sum = T.alloc_buffer((4,), "float32")
        T_layer_norm_varsum = T.alloc_buffer((4,), "float32")
        for i, k in T.grid(4, 8):
            with T.block("T_layer_norm_sum"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(A[v_i, v_k])
                T.writes(T_layer_norm_sum[v_i])
                with T.init():
                    T_layer_norm_sum[v_i] = T.float32(0)
                T_layer_norm_sum[v_i] = T_layer_norm_sum[v_i] + A[v_i, v_k]
        for i_1, k_1 in T.grid(4, 8):
            with T.block("T_layer_norm_varsum"):
                v_i_1, v_k_1 = T.axis.remap("SR", [i_1, k_1])
                T.reads(A[v_i_1, v_k_1], T_layer_norm_sum[v_i_1])
                T.writes(T_layer_norm_varsum[v_i_1])
                with T.init():
                    T_layer_norm_varsum[v_i_1] = T.float32(0)
                T_layer_norm_varsum[v_i_1] = T_layer_norm_varsum[v_i_1] + (A[v_i_1, v_k_1] - T_layer_norm_sum[v_i_1] / T.float32(8)) * (A[v_i_1, v_k_1] - T_layer_norm_sum[v_i_1] / T.float32(8))
        for i_2, j in T.grid(4, 8):
            with T.block("T_layer_norm"):
                v_i_2, v_j = T.axis.remap("SS", [i_2, j])
                T.reads(A[v_i_2, v_j], T_layer_norm_sum[v_i_2], T_layer_norm_varsum[v_i_2], gamma[v_j], beta[v_j])
                T.writes(T_layer_norm[v_i_2, v_j])
                T_layer_norm[v_i_2, v_j] = (A[v_i_2, v_j] - T_layer_norm_sum[v_i_2] / T.float32(8)) * T.rsqrt(T_layer_norm_varsum[v_i_2] / T.float32(8) + T.float32(1e-05)) * gamma[v_j] + beta[v_j]
