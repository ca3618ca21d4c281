// flatten-buffers: every buffer access becomes a 1-D access into a compact flat view.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// Rewrites each N-d buffer access into a 1-D access (row-major, honouring explicit strides; a
/// non-zero elem_offset is added to the index, so flat views always start at their data
/// pointer). Allocate extents become one element count and DeclBuffers declare the flat view.
/// Parameter buffers keep their N-d entry in the buffer map (the calling convention); the body
/// is wrapped in a DeclBuffer of a flat view over the same data var. Runs after lower-blocks.
tir::PrimFunc flattenBuffers(const tir::PrimFunc& f);

}  // namespace loom::transform
