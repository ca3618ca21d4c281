// loop-partition: peel the predicated tail of a non-divisible split so the main loop has no if.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// For a loop `v` whose body holds an `if (cond)` with cond affine in `v` and in the vars of the
/// loops between them (e.g. `io * 32 + ii < n`), splits the loop at the first `v` for which
/// cond may fail: the main part [min, k) runs the then-branch unconditionally, the tail
/// [k, min + extent) keeps the if. Only tails are peeled (positive coefficient of `v`); k is
/// a constant when the bounds are, else an expression clamped to the loop's range.
tir::PrimFunc partitionLoops(const tir::PrimFunc& f);

}  // namespace loom::transform
