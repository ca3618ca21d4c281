#!/usr/bin/python3
"""Casts to bfloat16 as the opset in use defines them, in the ONNX backend-test layout under
tests/onnx/cast/<name>/ (ctest onnx.cast_bfloat16, compared exactly). Before opset 19 a cast to
bfloat16 truncates (the float32's low 16 bits dropped; the node tests' data and the ONNX
reference of those opsets); from opset 19 it rounds to nearest even (Cast-19's definition). The
reference is that bit arithmetic in numpy. The inputs hold the hard cases: values just below
powers of two, ties (both parities), subnormals, the largest float (rounds to inf), zeros of both
signs, infinities, NaN, and random values over many magnitudes.

Run with /usr/bin/python3 (Debian's python3-onnx and numpy); the outputs are checked in.
"""
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def hard_values():
    r = np.random.default_rng(24)
    v = [0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan,
         np.finfo(np.float32).max, -np.finfo(np.float32).max, np.finfo(np.float32).tiny,
         1e-45, -1e-45, 3e-39, -7.1e-39, 1.17e-38, 1 - 2.0 ** -24, 65504.0, 3.0e38]
    for k in [-130, -126, -20, -1, 0, 1, 7, 8, 24, 100, 127]:
        p = np.float32(2.0 ** k)
        v += [np.nextafter(p, np.float32(0)), -np.nextafter(p, np.float32(0)), np.nextafter(p, np.float32(np.inf))]
    # Ties: low 16 bits exactly 0x8000 with the kept part even and odd.
    for hi in [0x3F80, 0x3F81, 0x4049, 0x404A, 0xC2F6, 0xC2F7, 0x0001, 0x0002]:
        v.append(np.array([(hi << 16) | 0x8000], np.uint32).view(np.float32)[0])
    # Just above and below a tie.
    for bits in [0x3F808001, 0x3F807FFF, 0xBF818001, 0xBF817FFF]:
        v.append(np.array([bits], np.uint32).view(np.float32)[0])
    v += list((r.standard_normal(60) * 10.0 ** r.integers(-30, 30, 60)).astype(np.float32))
    return np.array(v, np.float32)


def truncate(x):
    return (x.view(np.uint32) >> 16).astype(np.uint16)


def round_nearest_even(x):
    b = x.view(np.uint32).astype(np.uint64)
    r = ((b + 0x7FFF + ((b >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(x)
    r[nan] = np.where(np.signbit(x[nan]), 0xFFC0, 0x7FC0)
    return r


def bf16_tensor(name, bits, shape):
    t = TensorProto()
    t.name = name
    t.data_type = TensorProto.BFLOAT16
    t.dims.extend(shape)
    t.int32_data.extend(int(b) for b in bits.ravel())
    return t


def save(name, opset, node, inputs, outputs, feeds, want):
    d = os.path.join(HERE, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    g = helper.make_graph([node], name, inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    if opset <= 17:  # Debian's onnx 1.12 knows opsets up to 17
        onnx.checker.check_model(m)
    onnx.save(m, os.path.join(d, "model.onnx"))
    for i, t in enumerate(feeds):
        with open(os.path.join(d, "test_data_set_0", f"input_{i}.pb"), "wb") as f:
            f.write(t.SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(want.SerializeToString())


def main():
    x = hard_values()
    n = len(x)
    x16 = x.astype(np.float16)
    for opset in [13, 19]:
        ref = truncate if opset < 19 else round_nearest_even
        vi_x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])
        vi_y = helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [n])
        save(f"cast_float_to_bfloat16_{opset}", opset, helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16),
             [vi_x], [vi_y], [numpy_helper.from_array(x, "x")], bf16_tensor("y", ref(x), [n]))
        # float16 -> bfloat16: exact to float32 first, then the same rule.
        vi_h = helper.make_tensor_value_info("x", TensorProto.FLOAT16, [n])
        save(f"cast_float16_to_bfloat16_{opset}", opset,
             helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16), [vi_h], [vi_y],
             [numpy_helper.from_array(x16, "x")], bf16_tensor("y", ref(x16.astype(np.float32)), [n]))
    for opset in [15, 19]:
        ref = truncate if opset < 19 else round_nearest_even
        like = helper.make_tensor_value_info("like", TensorProto.BFLOAT16, [2])
        save(f"castlike_float_to_bfloat16_{opset}", opset, helper.make_node("CastLike", ["x", "like"], ["y"]),
             [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n]), like],
             [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [n])],
             [numpy_helper.from_array(x, "x"), bf16_tensor("like", np.array([1, 2], np.uint16), [2])],
             bf16_tensor("y", ref(x), [n]))


if __name__ == "__main__":
    main()
