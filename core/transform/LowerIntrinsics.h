// lower-intrinsics: rewrite intrinsics that have a cheap exact form, so codegen sees fewer.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// The calls codegen receives after this pass are: exp, exp2, log, log2, log10, sqrt, tanh, erf,
/// sigmoid, fabs, floor, ceil, trunc, round, sin, cos, pow, fmod (all on floats), if_then_else.
/// exp, tanh, erf and sigmoid stay calls on purpose: the LLVM backend gives them fast vector
/// approximations (codegen/FastMath.h), better than any expansion into other calls here.
/// Rewritten:
///   rsqrt(x)   -> 1 / sqrt(x)
///   fmod(a, b) on integers -> truncmod(a, b)
///   fabs / floor / ceil / trunc / round on integers -> the operand (fabs: select(x < 0, -x, x))
///   pow(x, 1) -> x, pow(x, 2) -> x * x, pow(x, 0) -> 1
/// Integer operands matter: the backends implement intrinsics for floating-point types only.
tir::PrimFunc lowerIntrinsics(const tir::PrimFunc& f);

}  // namespace loom::transform
