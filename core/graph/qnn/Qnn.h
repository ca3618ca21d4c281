// The quantized graph dialect (qnn.*) and its passes: fake quantization to integer and the
// canonicalization of qnn ops into integer core ops (int32 conv2d/dense/matmul + float32
// requantize epilogues) that the rest of the pipeline fuses, lays out and lowers.
#pragma once
#include <utility>

#include "core/graph/Expr.h"

namespace loom::graph::qnn {

/// Registers the qnn ops (quantize, dequantize, requantize, add, lookup, conv2d, dense, matmul, ...)
/// (the op registry calls it with the built-in families).
void registerQnnOps();

/// [lo, hi] of integer type `t` (the saturation bounds of quantize/requantize).
std::pair<double, double> saturationRange(DataType t);

/// "fake-quantization-to-integer": QDQ patterns `quantize(op(dequantize(x), dequantize(w)))` of
/// conv2d, dense and matmul (with a bias and a relu between them optionally) become integer ops
/// with a requantize; `quantize(dequantize(x))` with the same parameters becomes `x`, and
/// through pure data movement (reshape, transpose, max pooling) with the same parameters the
/// values stay integer. An add (broadcasting too) becomes qnn.add, a global average pool an int32
/// sum with a requantize, an average pool ONNX Runtime's QLinearAveragePool (float32 window
/// sum of the dequantized values, divided by the count, rounded; ceil mode too), a mul the int32 product with a requantize, sigmoid and leaky
/// relu a qnn.lookup in a table built at compile time (as ONNX Runtime's), a concat requantizes
/// the inputs whose parameters differ from its output's. Everything else keeps its float form
/// (dequantize -> op -> quantize).
Module fakeQuantizationToInteger(const Module& m);

/// A float `multiply` of an integer tensor cast to float (an int32 accumulator times its scale,
/// as quantize_dynamic's MatMulInteger -> Cast -> Mul writes it) is wrapped in `float_fence`, so
/// the add of a bias after it is not contracted into a fused multiply-add: the product is rounded
/// to float32 first, as ONNX Runtime's MatMulIntegerToFloat computes it. Run by
/// fakeQuantizationToInteger.
Module fenceIntegerScaling(const Module& m);

/// In a function with qnn ops (a quantized model): nn.layer_norm, nn.softmax (last axis, float32)
/// and Gelu's erf(x / sqrt(2)) become nn.ort_layer_norm / nn.ort_skip_layer_norm (an add used only
/// by the norm, as ONNX Runtime fuses it) / nn.ort_softmax / erf(x * float32(1 / sqrt(2))): the
/// float islands rounded as ONNX Runtime's CPU kernels round them (OrtFloat.cpp). Run by
/// fakeQuantizationToInteger.
Module ortFloatIslands(const Module& m);

/// "qnn-canonicalize": every qnn op as core ops: casts, an int32 nn.conv2d/nn.dense/nn.matmul
/// over the zero-point-centered operands, and requantize/quantize as float32 multiply, round
/// (half to even), add, clip and cast. Runs before fold-constant so weights fold to their
/// centered int32 form at compile time.
Module canonicalizeQnn(const Module& m);

}  // namespace loom::graph::qnn
