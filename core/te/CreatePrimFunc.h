// createPrimFunc: a TE dataflow graph to a block-form tir::PrimFunc, like TVM's
// te.create_prim_func.
#pragma once
#include <string>
#include <vector>

#include "core/te/Tensor.h"
#include "core/tir/Function.h"

namespace loom::te {

/// Builds the PrimFunc that computes the compute tensors among `args` from the placeholders
/// among `args`. The parameters are the args' buffers in order. The body is a root block "root"
/// (no iter vars) holding one loop nest per compute op in topological order (post-order from each
/// arg in turn); compute tensors not among `args` become the root block's `alloc_buffers`.
///
/// Each compute op `X` becomes `for` loops (one per output axis, then one per reduce axis, named
/// after the axis variables) around a block named `X` with iter vars `v_<axis>` (spatial, then
/// reduce) bound to the loop variables. Reads are the points of producer buffers the body loads
/// (accesses of one buffer that differ only by constant offsets are merged into one range;
/// otherwise that dimension is read whole); writes are the output point. A reduction gets `init`
/// (store the identity) and the update `X[v] = combine(X[v], source)`, which is not a read.
/// Attrs of the func: "global_symbol" = `name`, "tir.noalias" = true.
///
/// Throws ValueError when `args` is empty or repeats a tensor, or when a placeholder that some
/// compute reads is not among `args`.
tir::PrimFunc createPrimFunc(const std::vector<Tensor>& args, std::string name = "main");

} // namespace loom::te
