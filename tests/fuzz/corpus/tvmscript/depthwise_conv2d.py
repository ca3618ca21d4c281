# from tvm.script import tir as T

@T.prim_func
def main(data: T.Buffer((1, 2, 5, 5), "float32"), weight: T.Buffer((2, 1, 3, 3), "float32"), DepthwiseConv2d: T.Buffer((1, 2, 5, 5), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        pad_temp = T.alloc_buffer((1, 2, 7, 7), "float32")
        for i0, i1, i2, i3 in T.grid(1, 2, 7, 7):
            with T.block("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(data[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(v_i2 >= 1 and v_i2 < 6 and (v_i3 >= 1 and v_i3 < 6), data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
        for b, c, i, j, di, dj in T.grid(1, 2, 5, 5, 3, 3):
            with T.block("DepthwiseConv2d"):
                v_b, v_c, v_i, v_j, v_di, v_dj = T.axis.remap("SSSSRR", [b, c, i, j, di, dj])
                T.reads(pad_temp[v_b, v_c, v_i + v_di, v_j + v_dj], weight[v_c, 0, v_di, v_dj])
                T.writes(DepthwiseConv2d[v_b, v_c, v_i, v_j])
                with T.init():
                    DepthwiseConv2d[v_b, v_c, v_i, v_j] = T.float32(0)
                DepthwiseConv2d[v_b, v_c, v_i, v_j] = DepthwiseConv2d[v_b, v_c, v_i, v_j] + pad_temp[v_b, v_c, v_i + v_di, v_j + v_dj] * weight[v_c, 0, v_di, v_dj]
