// compact-buffers: an intermediate buffer moves into the innermost loop around all its uses and
// shrinks to the region used in one iteration of that loop (TVM's PlanAndUpdateBufferAllocation-
// Location + CompactBufferAllocation).
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// Runs on the output of lower-blocks (multi-dimensional accesses in loop variables). For every
/// Allocate whose buffer is used only through its own DeclBuffer:
///  - the allocation moves down into the body of the deepest loop that encloses every access
///    (never into a vectorized or thread-bound loop): a cache_read/compute_at copy under a
///    parallel loop becomes per-iteration (per-thread) memory instead of one shared array;
///  - each dimension shrinks to the constant extent of the index range the accesses cover
///    inside that loop, and indices are rebased by its (possibly symbolic) minimum.
/// Memory GPU threads share (every scope but "local") keeps the region of all threads: thread
/// indices of `attr thread_extent` regions range over their extents; a "local" buffer is per
/// thread. As in TVM, a buffer's contents are taken to live within one iteration of that loop, which is
/// how compute_at, cache_read and cache_write place their blocks. Dimensions whose extent is not
/// a constant keep their size; a buffer whose handle escapes (used as a value, or viewed by
/// another buffer) is left alone.
tir::PrimFunc compactBuffers(const tir::PrimFunc& f);

}  // namespace loom::transform
