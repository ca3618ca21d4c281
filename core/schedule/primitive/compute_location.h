// Moving a block under a loop: compute_at (a producer under a loop of its consumers) and
// reverse_compute_at (a consumer under a loop of its producers).
#pragma once
#include "core/schedule/Schedule.h"

namespace loom::tir {

/// The block is neither a complete block (spatial iter vars only, the only writer of its
/// outputs, no buffer both read and written) nor a reduction block.
LOOM_DECLARE_ERROR(NotCompleteOrReductionBlockError, ScheduleError);
/// A block under the target loop is neither complete nor a reduction block, so the region it
/// needs cannot be produced at that loop ("compact dataflow").
LOOM_DECLARE_ERROR(NotCompactDataFlowError, ScheduleError);
/// The block and the loop are in different block scopes (or the loop is the block's own).
LOOM_DECLARE_ERROR(NotInSameScopeError, ScheduleError);
/// The block has no consumer (compute_at) / producer (reverse_compute_at) at all.
LOOM_DECLARE_ERROR(NoRequiredBlockError, ScheduleError);
/// A consumer (compute_at) / producer (reverse_compute_at) of the block is not under the loop.
LOOM_DECLARE_ERROR(NotAllRequiredBlocksUnderLoopError, ScheduleError);
/// Moving the block would make it run before a block it depends on or after one depending on it.
LOOM_DECLARE_ERROR(BrokenDependencyError, ScheduleError);
/// A buffer index of the block is not one of its iter vars plus a constant, so the iter ranges
/// cannot be derived from the region needed.
LOOM_DECLARE_ERROR(UnsupportedAccessPatternError, ScheduleError);

/// Moves producer `block` under `loop` (an ancestor of all its consumers), regenerating its loops
/// to cover exactly the region the consumers under `loop` need in one iteration of it (iter vars
/// the needed region leaves out get their whole domain; a region reaching past an iter var's
/// domain is guarded by a predicate). Loops of extent 1 are kept only with `preserveUnitLoops`.
/// `index` picks the place in the loop body among those keeping every dependency: -1 the last
/// (before the first consumer), -2 the first, n >= 0 that position (TVM's meaning).
void computeAt(Schedule& sch, const BlockRV& block, const LoopRV& loop,
               bool preserveUnitLoops = false, int64_t index = -1);
/// Moves consumer `block` under `loop` (an ancestor of all its producers), after them, covering
/// the region they produce in one iteration of it. When one producer writes one element per
/// instance and those elements do not fill the box of that region (a fused loop split unevenly),
/// the block runs over copies of the producer's loops instead, once per element written (as TVM's
/// affine form), so it never reads what other iterations write. `index` as for computeAt (-1: the
/// last place, before the first block reading what `block` writes, or the end of the body).
void reverseComputeAt(Schedule& sch, const BlockRV& block, const LoopRV& loop,
                      bool preserveUnitLoops = false, int64_t index = -1);

void registerComputeLocationInstructions();

} // namespace loom::tir
