// blockize (a loop's subtree into a block of its own) and tensorize (such a block replaced by a
// registered tensor intrinsic's implementation).
#pragma once
#include <string>

#include "core/schedule/Schedule.h"
#include "core/schedule/TensorIntrin.h"

namespace loom::tir {

/// blockize: an iter var's binding cannot be divided into a part outside the loop (the outer
/// block's iter var) and a part inside it, or the block's predicate uses loops outside it.
LOOM_DECLARE_ERROR(BlockizeError, ScheduleError);
/// tensorize: no tensor intrinsic has the requested name.
LOOM_DECLARE_ERROR(TensorIntrinNotFoundError, ScheduleError);
/// tensorize: the code does not match the intrinsic's description (loop nest, iter types,
/// operations, buffer accesses or dtypes differ).
LOOM_DECLARE_ERROR(TensorizeMismatchError, ScheduleError);

/// Turns the subtree under `loop` (one block under it) into a new block `<name>_o` in its
/// place: the outer block's iter vars are the parts of the block's bindings that come from loops
/// outside `loop`; the block's bindings become `outer * c + inner loops`. When the outer block
/// has a reduce iter var, the block's init moves to the outer block (as a loop nest over the
/// inner spatial loops). Returns the outer block.
BlockRV blockize(Schedule& sch, const LoopRV& loop);
/// Replaces the computation under `loop` (blockized first) or inside `block` (a block whose body
/// is a loop nest over one block, e.g. from blockize) by the implementation of tensor intrinsic
/// `intrinName`, after checking it computes what the intrinsic's description does, modulo buffer
/// renaming and index offsets. The block keeps its iter vars, signature and init.
void tensorize(Schedule& sch, const LoopRV& loop, const std::string& intrinName);
void tensorize(Schedule& sch, const BlockRV& block, const std::string& intrinName);

void registerBlockizeTensorizeInstructions();

} // namespace loom::tir
