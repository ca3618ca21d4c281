# from tvm.script import tir as T

@T.prim_func
def main(data: T.Buffer((1, 2, 5, 5), "float32"), weight: T.Buffer((2, 2, 3, 3), "float32"), conv2d_nchw: T.Buffer((1, 2, 5, 5), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        pad_temp = T.alloc_buffer((1, 2, 7, 7), "float32")
        for i0, i1, i2, i3 in T.grid(1, 2, 7, 7):
            with T.block("pad_temp"):
                v_i0, v_i1, v_i2, v_i3 = T.axis.remap("SSSS", [i0, i1, i2, i3])
                T.reads(data[v_i0, v_i1, v_i2 - 1, v_i3 - 1])
                T.writes(pad_temp[v_i0, v_i1, v_i2, v_i3])
                pad_temp[v_i0, v_i1, v_i2, v_i3] = T.if_then_else(v_i2 >= 1 and v_i2 < 6 and (v_i3 >= 1 and v_i3 < 6), data[v_i0, v_i1, v_i2 - 1, v_i3 - 1], T.float32(0))
        for nn, ff, yy, xx, rc, ry, rx in T.grid(1, 2, 5, 5, 2, 3, 3):
            with T.block("conv2d_nchw"):
                v_nn, v_ff, v_yy, v_xx, v_rc, v_ry, v_rx = T.axis.remap("SSSSRRR", [nn, ff, yy, xx, rc, ry, rx])
                T.reads(pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx], weight[v_ff, v_rc, v_ry, v_rx])
                T.writes(conv2d_nchw[v_nn, v_ff, v_yy, v_xx])
                with T.init():
                    conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = T.float32(0)
                conv2d_nchw[v_nn, v_ff, v_yy, v_xx] = conv2d_nchw[v_nn, v_ff, v_yy, v_xx] + pad_temp[v_nn, v_rc, v_yy + v_ry, v_xx + v_rx] * weight[v_ff, v_rc, v_ry, v_rx]
