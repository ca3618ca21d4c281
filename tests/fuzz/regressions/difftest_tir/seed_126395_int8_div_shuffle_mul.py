# from tvm.script import tir as T

@T.prim_func
def main(R0: T.Buffer((3, 6, 2, 8), "int8"), B: T.Buffer((1, 1), "int8"), C: T.Buffer((3, 6, 2), "int8"), D: T.Buffer((3, 6), "int8"), R3: T.Buffer((3, 6, 2, 1), "int8"), out: T.Buffer((3, 6, 2), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    t2 = T.alloc_buffer((3, 6, 2), "int8")
    for i2_0, i2_1, i2_2 in T.grid(3, 6, 2):
        with T.block("s2"):
            v0, v1, v2 = T.axis.remap("SSS", [i2_0, i2_1, i2_2])
            t2[v0, v1, v2] = (T.max((T.int8(-3) * D[v0, v1]), T.int8(1)) // T.int8(3))
    for i3_0, i3_1, i3_2 in T.grid(3, 6, 2):
        with T.block("s3"):
            v0, v1, v2 = T.axis.remap("SSS", [i3_0, i3_1, i3_2])
            out[v0, v1, v2] = R3[v0, v1, v2, 0] * t2[v0, v1, v2]
