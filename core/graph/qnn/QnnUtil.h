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

}  // namespace loom::graph::qnn
