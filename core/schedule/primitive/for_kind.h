// Loop kinds: parallel, vectorize, unroll, bind (to a GPU thread axis).
#pragma once
#include <string>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// bind() was given a thread tag that is not blockIdx.x/y/z, threadIdx.x/y/z or vthread[.x/y/z].
LOOM_DECLARE_ERROR(WrongThreadTagError, ScheduleError);

/// Marks `loop` parallel. Every block under it must bind the loop only to spatial iter vars
/// (else WrongBlockIterTypeError), affinely (else NotAffineBindingError).
void parallel(Schedule& sch, const LoopRV& loop);
/// Marks `loop` vectorized (same legality as parallel).
void vectorize(Schedule& sch, const LoopRV& loop);
/// Marks `loop` unrolled (always legal).
void unroll(Schedule& sch, const LoopRV& loop);
/// Binds `loop` to `thread` ("blockIdx.x", "threadIdx.y", ...). Reduce iter vars may only be
/// bound to threadIdx.* (cross-thread reduction).
void bind(Schedule& sch, const LoopRV& loop, const std::string& thread);

void registerForKindInstructions();

} // namespace loom::tir
