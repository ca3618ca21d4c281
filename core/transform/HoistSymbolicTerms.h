// hoist-symbolic-terms: a symbolic kernel's shape arithmetic computed once, at the top.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// In a kernel with scalar integer parameters (a dynamic model's shape symbols `H`, `W`,
/// `batch`), every integer expression that reads only those parameters and constants (a stride
/// such as `((H + 1) // 2 + 1) // 2 * (((W + 1) // 2 + 1) // 2) * 64`, a bound `W // 2 - 13`)
/// becomes a let at the top of the body, equal ones one let. A sum of products that mixes such
/// terms with loop variables is first regrouped by its other factors:
/// `i * 256 + i * Ho * 128 + i * Ho * Wo * 64 + j * 16` becomes `i * s0 + j * 16` with
/// `s0 = 256 + Ho * 128 + Ho * Wo * 64` (integer +, - and * only, which wrap alike in any
/// order). A hoisted division by a non-constant divides by `select(b == 0, 1, b)` (it may now
/// run where a guard kept the original from running). The function gets the attribute
/// "loom.signed_no_wrap": its signed integer +, - and * of 32 bits and more do not overflow (LLVM
/// codegen marks them nsw, as TVM does for every kernel). Functions without such parameters
/// (every static kernel) are returned unchanged.
///
/// Why: flattening writes a symbolic buffer's strides into every index as sums of products of
/// floor divisions, and codegen emits each occurrence (a floor division is seven instructions):
/// an unrolled direct conv over a symbolic image was 40-145 thousand lines of LLVM IR against
/// 2-5 thousand for a static shape, and LLVM's loop passes (IndVarSimplify's ScalarEvolution
/// work above all) spent 1-2 s on each such kernel.
tir::PrimFunc hoistSymbolicTerms(const tir::PrimFunc& f);

}  // namespace loom::transform
