// lower-cross-thread-reduction: a reduction whose loop is bound to threadIdx becomes a shared-memory tree.
#pragma once
#include "core/support/Error.h"
#include "core/tir/Function.h"

namespace loom {
/// A reduction bound to threads in a form the tree lowering does not handle (names the block).
LOOM_DECLARE_ERROR(CrossThreadReductionError, Error);
}  // namespace loom

namespace loom::transform {

/// Runs on block form, before the GPU pipeline (driver::lowerOperator applies it for GPU targets). For a threadIdx-bound loop `t` of
/// extent T (a power of two, at most 1024) whose body is a chain of serial loops ending in one
/// reduction block (init `O[I] = id`, update `O[I] = O[I] op x` with op +, *, min or max) where
/// `t` feeds a reduce iter var: each thread folds its share into a local accumulator, writes it
/// to a shared T-element buffer, the threads combine it in log2(T) halving steps (barriers come
/// from thread-sync), and thread 0 stores the result. Every reduction loop must be `t` or inside
/// it, and the spatial indices must not depend on them; otherwise CrossThreadReductionError.
tir::PrimFunc lowerCrossThreadReduction(const tir::PrimFunc& f);

}  // namespace loom::transform
