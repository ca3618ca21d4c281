// Helpers shared by the qnn passes: typed operands, constants' values, per-axis broadcasting.
#pragma once
#include <vector>

#include "core/graph/Expr.h"
#include "core/graph/Type.h"

namespace loom::graph::qnn {

/// The tensor type of `e` (typed on demand).
const TensorTypeNode& tensorTypeOf(const Expr& e);
/// `axis` normalized against `rank`.
inline int64_t normAxis(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }
/// True when `e` is a constant whose elements are all zero.
bool isConstantZero(const Expr& e);
/// The elements of constant `e` as doubles; empty when `e` is not a constant.
std::vector<double> constantValues(const Expr& e);
/// A scale or zero point (0-d or 1-d) shaped to broadcast along `axis` of a rank-`rank`
/// tensor: a scalar when it holds one value, else [C, 1, ..., 1].
Expr alongAxis(const Expr& v, int64_t axis, int64_t rank);

/// The float32 constants of ONNX Runtime's QLinearAdd (MLAS's AVX2 kernel, built with FMA):
/// y = round_half_even(fma(x, first, fma(z, second, fixed))), saturated, where (x, z) is (a, b),
/// or (b, a) when `swapped`: ORT passes an input that is constant along the innermost axis (one
/// value per span of its broadcast) as the kernel's second operand. fixed =
/// y_zp - fma(first, x_zp, second * z_zp) with first/second the scale ratios to y_scale.
struct QLinearAddConstants {
  float first = 0, second = 0, fixed = 0;
  bool swapped = false;
};
QLinearAddConstants qlinearAddConstants(float aScale, float aZp, float bScale, float bZp, float yScale, float yZp,
                                        bool aScalarAlongInnermost);
/// Whether an input of shape `in` is constant along the innermost axis of the broadcast output
/// `out` (its last dimension, right-aligned, is 1 or absent while the output's is larger).
bool scalarAlongInnermost(const std::vector<int64_t>& in, const std::vector<int64_t>& out);

}  // namespace loom::graph::qnn
