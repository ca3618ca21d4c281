// Splitting a condition at its && (a block predicate, an if's condition) into its conjuncts.
// Kept out of Op.h, which the whole tree includes.
#pragma once

#include <vector>

#include "core/tir/Op.h"

namespace loom::tir {

/// Appends the conjuncts of `e` to `out`, left to right: `a && (b && c)` gives a, b, c. Literal
/// `true` conjuncts are left out unless `keepTrue` (so a predicate of `true` has none).
inline void conjuncts(const Expr& e, std::vector<Expr>& out, bool keepTrue = false) {
  if (auto* b = e.as<BinaryNode>(); b && b->op == BinOp::And) {
    conjuncts(b->a, out, keepTrue);
    conjuncts(b->b, out, keepTrue);
    return;
  }
  if (keepTrue || !isOne(e)) out.push_back(e);
}

/// The conjuncts of `e` (see above) as a new vector.
inline std::vector<Expr> conjuncts(const Expr& e, bool keepTrue = false) {
  std::vector<Expr> out;
  conjuncts(e, out, keepTrue);
  return out;
}

}  // namespace loom::tir
