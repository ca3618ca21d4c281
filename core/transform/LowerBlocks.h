// lower-blocks: TVM's block form to plain loops (iter vars bound, init and predicates as ifs).
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// The annotation key of storage_align: on a block, one tuple per written buffer of
/// (axis, factor, offset) tuples; lower-blocks moves a buffer's entries onto its Allocate, where
/// flatten-buffers pads the strides (stride[axis] % factor == offset).
inline constexpr const char* kBufferDimAlign = "buffer_dim_align";

/// The annotation lower-blocks puts on the Allocate of a buffer that a block with reduce iter vars
/// writes: how many loops (those isCountedLoop accepts, from the Allocate down) the allocation may
/// move into before the outermost loop a reduce iter value uses. compact-buffers
/// honours it and drops it: an accumulator lives across its reduction loops (TVM keeps such a
/// buffer's LCA above them too, buffer_access_lca_detector).
inline constexpr const char* kCompactMaxLoops = "compact_max_loops";

/// The loops kCompactMaxLoops counts: the ones that stay loops through lower-thread-binding (every
/// loop but the thread-bound ones, except virtual threads, which become serial loops).
inline bool isCountedLoop(const tir::ForNode* l) {
  return l->kind != tir::ForKind::ThreadBinding || l->threadTag.rfind("vthread", 0) == 0;
}

/// Removes every Block/BlockRealize. A block's iter vars are replaced by their bound values; its
/// `init` runs under `if (every reduce iter value == its dom.min)`; a non-trivial predicate
/// becomes an `if`; its alloc_buffers become Allocate + DeclBuffer at the block's position;
/// its "pragma_*" annotations become AttrStmts around it (loop "pragma_*" annotations likewise
/// become AttrStmts on the loop var); storage_align's "buffer_dim_align" entries move to the
/// Allocate of the aligned buffer; a buffer written by a reduction gets kCompactMaxLoops. Opaque blocks (no iter vars) just contribute their body.
tir::PrimFunc lowerBlocks(const tir::PrimFunc& f);

}  // namespace loom::transform
