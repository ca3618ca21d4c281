// hoist-workspaces: a buffer of run-time size allocated once around a loop, not once per iteration.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// An Allocate of a size that is not a constant (a row of a softmax over a symbolic sequence:
/// `allocate([seq])`) at the top of the body of a serial or unrolled loop, and whose size does not
/// depend on that loop's variable, moves outside the loop, with the DeclBuffers in the same chain
/// at the top of the body; repeated outward through every such loop, never out of a parallel one
/// (each thread keeps its own buffer).
///
/// Why: codegen gives a buffer of run-time size a workspace from the runtime (an allocation and a
/// free call), and compact-buffers puts an intermediate under the innermost loop around its uses:
/// a dynamic BERT's softmax allocated and freed its row buffer for every one of its 1600 rows per
/// call (2.6x the static kernel's time). Constant-size buffers are stack slots in the function's
/// entry already and are not touched, so static kernels do not change. CPU kernels only.
tir::PrimFunc hoistWorkspaces(const tir::PrimFunc& f);

}  // namespace loom::transform
