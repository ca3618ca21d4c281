// Deep equality and a deterministic total order of expressions, used to sort and match terms.
#pragma once
#include "core/tir/Expr.h"

namespace loom::arith {

/// Structural equality of expressions; free variables compare by identity (Let-bound variables
/// too, which is stricter than tir::structuralEqual but what term matching needs).
bool exprEqual(const tir::Expr& a, const tir::Expr& b);

/// A total order consistent with exprEqual: <0, 0 or >0. Variables order by name, then by
/// identity, so sums print in a stable order.
int exprCompare(const tir::Expr& a, const tir::Expr& b);

struct ExprLess {
  bool operator()(const tir::Expr& a, const tir::Expr& b) const { return exprCompare(a, b) < 0; }
};

}  // namespace loom::arith
