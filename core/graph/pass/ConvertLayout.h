// ConvertLayout: moves conv2d chains from NCHW to the channel-blocked NCHW{k}c layout.
#pragma once
#include <cstdint>

#include "core/graph/Expr.h"

namespace loom::graph {

/// Rewrites each statically shaped NCHW conv2d into an NCHW{i}c x OIHW{i}i{o}o conv2d between
/// layout_transform ops, then sinks the transforms back to NCHW through elementwise ops,
/// bias_add, pools (their "layout" attribute), channel concatenation of same-layout inputs, and
/// broadcast ops whose other operand is a scalar, a per-channel (C, 1, 1) tensor or another
/// tensor in the same layout (also one broadcast along H and W: a squeeze-excite scale), and
/// cancels transform pairs.
///
/// Channel blocks: `block` (16) where it divides the channels; channels that it does not divide
/// are padded up to a multiple of it when that adds at most a third (58 -> 64): the padded
/// tensor carries extra channels that convs read with zero weights, that only ops keeping them
/// finite pass (relu, sigmoid, +, *, ...; not exp, log, division by a tensor), and that a channel
/// slice drops on the way back to NCHW. Fewer channels than a block form one block (3 -> NCHW3c).
/// Depthwise convs block their channels (kernel OIHW1i{k}o); grouped convs whose groups are whole
/// blocks keep them, and groups of 4 or 8 channels are regrouped into one-block groups with a
/// block-diagonal weight. The graph keeps NCHW at its inputs, outputs and at ops that are not
/// layout-aware (reshapes, softmax, ...). Weight transforms and paddings of constant weights fold
/// away with FoldConstant. A dense layer with a constant weight becomes a matmul with the
/// transposed weight (folded likewise), whose output columns vectorize.
Expr convertLayout(const Expr& e, int64_t block = 16);
Module convertLayout(const Module& m, int64_t block = 16);

} // namespace loom::graph
