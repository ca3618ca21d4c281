// simplify: arithmetic simplification of every expression, with loop ranges and if conditions known.
#pragma once
#include "core/tir/Function.h"

namespace loom::transform {

/// Simplifies every expression with arith::Analyzer, knowing each loop var's range (and each
/// thread_extent var's), the condition of the enclosing ifs, and the constant bound of each let
/// value. Statement-level: an if whose condition is provably true or false keeps only the
/// taken branch; a loop of extent 1 becomes its body with the var replaced by the min; a loop of
/// constant extent <= 0 disappears; a let bound to a constant is substituted.
tir::PrimFunc simplifyFunc(const tir::PrimFunc& f);

}  // namespace loom::transform
