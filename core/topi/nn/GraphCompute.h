// The TE computes of the graph ops: registers each one on the op registry's `compute` field.
#pragma once

namespace loom::topi {

/// Attaches a TE compute to every graph op Loom can lower (elementwise and broadcast math,
/// conv2d, conv2d_transpose, dense/matmul, pools, norms, softmax, reductions, argmax/argmin,
/// reshape/transpose/concat/split/slice/take/tile/pad/resize/depth_to_space, ...). Idempotent
/// and thread-safe; the model compiler calls it before lowering.
void registerGraphComputes();

}  // namespace loom::topi
