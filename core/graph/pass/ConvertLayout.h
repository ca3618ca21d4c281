// ConvertLayout: moves conv2d chains from NCHW to the channel-blocked NCHW{k}c layout.
#pragma once
#include <cstdint>

#include "core/graph/Expr.h"

namespace loom::graph {

/// Rewrites each statically shaped, ungrouped NCHW conv2d into an NCHW{i}c x OIHW{i}i{o}o conv2d
/// (i, o: the largest divisors of the input / output channels not above `block`) between
/// layout_transform ops, then sinks the transforms back to NCHW through elementwise ops,
/// bias_add, pools (their "layout" attribute), channel concatenation of same-layout inputs, and
/// broadcast ops whose other operand is a scalar, a per-channel (C, 1, 1) tensor or another
/// tensor in the same layout, and cancels transform pairs. The graph keeps NCHW at its inputs,
/// outputs and at ops that are not layout-aware (reshapes, softmax, ...). Weight transforms
/// of constant weights fold away with FoldConstant. A dense layer with a constant weight becomes
/// a matmul with the transposed weight (folded likewise), whose output columns vectorize.
Expr convertLayout(const Expr& e, int64_t block = 16);
Module convertLayout(const Module& m, int64_t block = 16);

} // namespace loom::graph
