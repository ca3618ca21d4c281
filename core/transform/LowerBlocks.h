// lower-blocks: TVM's block form to plain loops (iter vars bound, init and predicates as ifs).
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// The annotation key of storage_align: on a block, one tuple per written buffer of
/// (axis, factor, offset) tuples; lower-blocks moves a buffer's entries onto its Allocate, where
/// flatten-buffers pads the strides (stride[axis] % factor == offset).
inline constexpr const char* kBufferDimAlign = "buffer_dim_align";

/// Removes every Block/BlockRealize. A block's iter vars are replaced by their bound values; its
/// `init` runs under `if (every reduce iter value == its dom.min)`; a non-trivial predicate
/// becomes an `if`; its alloc_buffers become Allocate + DeclBuffer at the block's position;
/// its "pragma_*" annotations become AttrStmts around it (loop "pragma_*" annotations likewise
/// become AttrStmts on the loop var); storage_align's "buffer_dim_align" entries move to the
/// Allocate of the aligned buffer. Opaque blocks (no iter vars) just contribute their body.
tir::PrimFunc lowerBlocks(const tir::PrimFunc& f);

}  // namespace loom::transform
