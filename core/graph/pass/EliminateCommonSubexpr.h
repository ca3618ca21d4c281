// EliminateCommonSubexpr: merges calls of the same op on the same operands with equal attributes.
#pragma once
#include "core/graph/Expr.h"

namespace loom::graph {

/// Merges structurally equal calls (same op, same operand nodes, equal attributes), tuple
/// projections, and small constants (at most 64 elements) with equal type and bytes, so that
/// calls over equal constants merge too.
Expr eliminateCommonSubexpr(const Expr& e);
Module eliminateCommonSubexpr(const Module& m);

} // namespace loom::graph
