// hoist-divisions: integer divisions by a run-time value computed once per loop iteration.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// Every scalar integer division or modulo (floordiv, floormod, truncdiv, truncmod) whose divisor
/// is not a constant (a dynamic model's `f // ((W + 3) // 4)`) and whose operands read only
/// loop variables, the function's scalar parameters and lets outside the loop becomes a let at
/// the top of the body of the innermost loop whose variable it uses (of the outermost enclosing
/// loop when it uses none); equal divisions share one let.
///
/// Why: codegen emits a guarded load (`if_then_else(inside, load, 0)`, zero padding inlined into
/// a Winograd transform) as a branch, and LLVM may neither merge the same division in two
/// branches nor hoist one out of a branch (a division may trap). An unrolled 6x6 transform over a
/// symbolic width had 486 divisions per tile (6x slower than the static kernel, and long IR).
/// The hoisted value divides by `select(b == 0, 1, b)` and is 0 where b is 0, so it never traps
/// where the guarded original was not evaluated. Divisions by constants are left to LLVM
/// (multiplications). CPU kernels only (the pipeline runs it when not lowering for a GPU).
tir::PrimFunc hoistDivisions(const tir::PrimFunc& f);

}  // namespace loom::transform
