// Canonical sum-of-products form of integer index expressions.
#pragma once
#include <memory>

#include "core/tir/Expr.h"

namespace loom::arith {

class Analyzer;

/// Rewrites signed integer arithmetic into a sum of terms `coef * atom*atom...` plus a constant:
/// like terms collected, terms sorted (variables by name first), constant last, so that equal
/// affine expressions written differently become identical. floordiv / floormod by a positive
/// constant split off the multiples of the divisor (`(i*4 + j) // 4` -> `i + j // 4`), and drop
/// to a constant or to the dividend when `analyzer`'s bounds allow (truncdiv / truncmod too when
/// the dividend is provably non-negative). Comparisons become `positive terms op other terms`
/// with common factors divided out. Everything else is an atom with canonical children.
class CanonicalSimplifier {
public:
  explicit CanonicalSimplifier(Analyzer* analyzer);
  ~CanonicalSimplifier();
  tir::Expr operator()(const tir::Expr& e);

  class Impl;

private:
  std::unique_ptr<Impl> m_impl;
};

}  // namespace loom::arith
