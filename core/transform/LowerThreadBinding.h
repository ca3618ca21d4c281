// lower-thread-binding: thread_binding loops become `attr [threadIdx.x] "thread_extent"` regions.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// GPU pipeline only. Each `for v in T.thread_binding(min, min + n, thread="threadIdx.x")`
/// becomes `attr [tx] "thread_extent" = n` over the body with v replaced by `tx + min`, where
/// `tx` is one Var per thread tag (named after it) shared by every loop bound to that tag.
/// The launch dimensions are then the thread_extent attrs, as in TVM's lowered form.
tir::PrimFunc lowerThreadBinding(const tir::PrimFunc& f);

}  // namespace loom::transform
