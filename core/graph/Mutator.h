// ExprMutator: memoized post-order rewriting of a graph that shares every unchanged node.
#pragma once
#include <functional>
#include <unordered_map>

#include "core/graph/Expr.h"

namespace loom::graph {

/// Rebuilds a graph bottom-up: each node is first rebuilt over its already-rewritten operands
/// (the same node when no operand changed), then passed to rewrite(). Nested functions (fused
/// groups) are left as they are. Iterative, so deep graphs do not overflow the stack.
class ExprMutator {
public:
  virtual ~ExprMutator() = default;
  Expr mutate(const Expr& root);

protected:
  /// The hook: `original` is the input node, `rebuilt` the node over rewritten operands (its
  /// type is not inferred yet). Returns the replacement (default: `rebuilt`).
  virtual Expr rewrite(const Expr& original, const Expr& rebuilt) { return rebuilt; }
  /// The rewritten version of a node already visited.
  Expr rewritten(const Expr& original) const;

private:
  std::unordered_map<const ExprNode*, Expr> m_memo;
};

/// A function with `body` rewritten by `f` (same params and marks); the same function when the
/// body did not change.
Function mapBody(const Function& fn, const std::function<Expr(const Expr&)>& f);
/// Every function of `m` mapped through mapBody(f).
Module mapFunctions(const Module& m, const std::function<Expr(const Expr&)>& f);

/// How many times each node is used as an operand within `root` (not inside nested functions);
/// the root itself counts one extra use.
std::unordered_map<const ExprNode*, int> useCounts(const Expr& root);

} // namespace loom::graph
