// lower-intrinsics: rewrite intrinsics that have a cheap exact form, so codegen sees fewer.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// The calls codegen receives after this pass are: exp, exp2, log, log2, log10, sqrt, tanh, erf,
/// fabs, floor, ceil, trunc, round, sin, cos, pow, fmod (floats), if_then_else. exp, tanh and
/// erf stay calls on purpose: the LLVM backend gives them fast vector approximations, which is
/// better than any expansion here. Rewritten:
///   rsqrt(x)   -> 1 / sqrt(x)
///   sigmoid(x) -> 1 / (1 + exp(-x))     (so only exp needs a fast vector form)
///   fmod(a, b) on integers -> truncmod(a, b)
///   fabs / floor / ceil / trunc / round on integers -> the operand (fabs: select(x < 0, -x, x))
///   pow(x, 1) -> x, pow(x, 2) -> x * x, pow(x, 0) -> 1
tir::PrimFunc lowerIntrinsics(const tir::PrimFunc& f);

}  // namespace loom::transform
