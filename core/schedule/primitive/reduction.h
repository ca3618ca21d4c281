// Reduction primitives: decompose_reduction (init into its own block) and rfactor (a reduction
// split into a partial-result block and a write-back block).
#pragma once
#include <optional>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// The block is not a reduction block (spatial/reduce iter vars, an init, the only writer of
/// its output, written indices free of reduce iter vars).
LOOM_DECLARE_ERROR(NotReductionBlockError, ScheduleError);
/// decompose_reduction: the loop is not above the block, or a loop of a reduce iter var lies
/// outside it (the init would rerun at every iteration of that loop).
LOOM_DECLARE_ERROR(LoopPositionError, ScheduleError);
/// The block's update is not `B[idx] = B[idx] op value` (op: +, *, max, min) with an init
/// `B[idx] = identity of op`.
LOOM_DECLARE_ERROR(UnrecognizedReducerError, ScheduleError);
/// rfactor: the loop is bound to a spatial iter var of the block, or to no iter var at all.
LOOM_DECLARE_ERROR(RFactorLoopError, ScheduleError);
/// rfactor: factor_axis is outside [-(ndim + 1), ndim] for the block's output buffer.
LOOM_DECLARE_ERROR(FactorAxisOutOfRangeError, ScheduleError);

/// A commutative reducer recognized in a block: `combine(x, y)` = x op y, `identity` its unit.
struct Reducer {
  BinOp op = BinOp::Add;
  Expr identity;
  Expr combine(const Expr& a, const Expr& b) const;
};
/// The reducer of a reduction block whose body is `B[idx] = B[idx] op rhs` (either operand order)
/// and whose init is `B[idx] = identity`; `rhs` receives the other operand. nullopt otherwise.
std::optional<Reducer> matchReducer(const BlockNode* block, Expr* rhs = nullptr);

/// Moves the init of reduction `block` into a new block `<name>_init` placed right before
/// `loop` (an ancestor of the block above every loop of its reduce iter vars), under copies of
/// the loops between them that its spatial iter vars use. Returns the init block.
BlockRV decomposeReduction(Schedule& sch, const BlockRV& block, const LoopRV& loop);
/// Factorizes the reduction over `loop` (a loop of reduce iter vars only, with a single block
/// under it): block `<name>_rf` computes partial results into a new buffer `<buf>_rf` that has
/// the loop's extent as dimension `factorAxis`; the original block becomes the write-back that
/// reduces them over a copy of the loop. Returns the rfactor block.
BlockRV rfactor(Schedule& sch, const LoopRV& loop, int64_t factorAxis = 0);

void registerReductionInstructions();

} // namespace loom::tir
