// FuseOps: groups ops into Primitive functions with TVM's dominator-based fusion rules.
#pragma once
#include "core/graph/Expr.h"

namespace loom::graph {

/// Partitions the dataflow graph as TVM's FuseOps does: a node fuses into its immediate
/// post-dominator when every path between them allows it —
///  phase 0: an out-elementwise-fusable anchor (conv2d, dense, pool) takes the elementwise and
///           broadcast chain after it;
///  phase 0/1: elementwise/broadcast ops fuse into injective, reduction or anchor consumers;
///  phase 1: injective chains fuse;
/// reductions take their elementwise producers; opaque ops stay alone; one addition to TVM's rules:
/// a layout_transform packing all C <= 4 channels of an NCHW tensor (the RGB image) into one
/// NCHW{C}c block, read only by a conv2d, joins that conv (the default schedule inlines it into the
/// conv's input read, so no kernel copies the image); no group exceeds
/// `maxDepth` ops. Each group becomes a call of a function marked Primitive whose name joins its
/// ops in order ("fused_nn_conv2d_nn_bias_add_nn_relu"); constants with more than one element
/// become parameters, scalars stay inside.
Expr fuseOps(const Expr& e, int maxDepth = 256);
Module fuseOps(const Module& m, int maxDepth = 256);

} // namespace loom::graph
