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
///    parallel loop becomes per-iteration (per-thread) memory instead of one shared array; a
///    "shared" buffer may also move into the body of the innermost `blockIdx` thread_extent attr
///    around its accesses (one buffer per block), a "local" one into a `blockIdx` or `threadIdx`
///    attr, so GPU memory of those scopes lives inside its kernel;
///  - each dimension shrinks to the constant extent of the index range the accesses cover
///    inside that place, and indices are rebased by its (possibly symbolic) minimum.
/// GPU thread indices (`attr thread_extent` regions) are relaxed by storage scope as in TVM:
/// "shared" memory covers every threadIdx and vthread of one block (blockIdx stays a symbol, so
/// a shared-memory tile is the tile, not the whole matrix); "local" memory is per thread (no
/// thread index relaxed; only the loops inside the allocation); other (global) memory covers every
/// thread and block. As in TVM, a buffer's contents are taken to live within one iteration of that
/// loop, which is how compute_at, cache_read and cache_write place their blocks — except a buffer
/// that a reduction writes: lower-blocks marks its Allocate (kCompactMaxLoops, consumed and removed
/// here) so that it never moves into a loop one of the reduction's reduce iter values uses, since
/// its partial sums live across those loops (a consumer moved under a reduction loop by
/// reverse_compute_at; as TVM's buffer access LCA after apache/tvm#17799). Dimensions whose
/// extent is not a constant keep their size; a buffer whose handle escapes (used as a value, or
/// viewed by another buffer) is left alone.
tir::PrimFunc compactBuffers(const tir::PrimFunc& f);

}  // namespace loom::transform
