// Loop transformations: split, fuse, reorder, add_unit_loop.
#pragma once
#include <vector>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// The loops given to fuse/reorder do not lie on one path of nested loops.
LOOM_DECLARE_ERROR(LoopsNotAChainError, ScheduleError);
/// The same loop is given twice.
LOOM_DECLARE_ERROR(DuplicateLoopError, ScheduleError);
/// A loop's min or extent depends on another loop being fused/reordered.
LOOM_DECLARE_ERROR(DependentLoopError, ScheduleError);
/// split factors: more than one None, a non-positive factor, or a product below the extent.
LOOM_DECLARE_ERROR(InvalidFactorsError, ScheduleError);

/// Splits `loop` into nested loops of extents `factors` (ints or ExprRVs; at most one None, which
/// is inferred). When the factors' product exceeds the extent, the blocks under the loop get the
/// predicate `fused index < extent`. Returns the new loops, outermost first.
std::vector<LoopRV> split(Schedule& sch, const LoopRV& loop, const std::vector<Value>& factors,
                          bool preserveUnitIters = true);
/// Fuses a chain of perfectly nested loops (each the only child of the previous) into one.
LoopRV fuse(Schedule& sch, const std::vector<LoopRV>& loops, bool preserveUnitIters = true);
/// Reorders loops of one chain (single-child nesting from the outermost to the innermost given
/// loop); the given loops take the given order in their positions, other loops stay put.
void reorder(Schedule& sch, const std::vector<LoopRV>& order);
/// Adds a loop of extent 1 directly above a block (around its realize) or a loop.
LoopRV addUnitLoop(Schedule& sch, const BlockRV& block);
LoopRV addUnitLoop(Schedule& sch, const LoopRV& loop);

void registerLoopTransformationInstructions();

} // namespace loom::tir
