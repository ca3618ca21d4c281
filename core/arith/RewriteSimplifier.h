// Rule-based simplification: constant folding, identities and bound-aware rewrites per operator.
#pragma once
#include <memory>

#include "core/tir/Expr.h"

namespace loom::arith {

class Analyzer;

/// Rewrites an expression bottom-up with the rule tables of the Simplify_*.cpp files, using
/// `analyzer` for variable bounds, bound values and facts in scope.
class RewriteSimplifier {
public:
  explicit RewriteSimplifier(Analyzer* analyzer);
  ~RewriteSimplifier();
  tir::Expr operator()(const tir::Expr& e);

  class Impl;

private:
  std::unique_ptr<Impl> m_impl;
};

}  // namespace loom::arith
