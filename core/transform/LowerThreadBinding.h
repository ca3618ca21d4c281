// lower-thread-binding: thread_binding loops become `attr [threadIdx.x] "thread_extent"` regions.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// GPU pipeline only. Each `for v in T.thread_binding(min, min + n, thread="threadIdx.x")`
/// becomes `attr [tx] "thread_extent" = n` over the body with v replaced by `tx + min`, where
/// `tx` is one Var per thread tag (named after it) shared by every loop bound to that tag.
/// The launch dimensions are then the thread_extent attrs, as in TVM's lowered form.
/// A loop bound to a virtual thread (`vthread`, `vthread.x/y/z`) becomes a serial loop at its
/// place: the work of each virtual thread runs in turn in the one real thread (TVM interleaves
/// it; the result is the same). It runs before compact-buffers, so a "local" buffer used inside
/// it is one per virtual thread (allocated in the loop body), or covers every virtual thread
/// when it lives across the loop; a "shared" buffer covers the virtual threads inside it.
tir::PrimFunc lowerThreadBinding(const tir::PrimFunc& f);

}  // namespace loom::transform
