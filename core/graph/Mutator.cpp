// ExprMutator: post-order rebuild over the rewritten operands, then the rewrite hook.
#include "core/graph/Mutator.h"

#include "core/support/Error.h"

namespace loom::graph {

Expr ExprMutator::rewritten(const Expr& original) const {
  auto it = m_memo.find(original.get());
  LOOM_ICHECK(it != m_memo.end()) << "ExprMutator: operand not visited yet";
  return it->second;
}

Expr ExprMutator::mutate(const Expr& root) {
  for (const Expr& n : postOrder(root, false)) {
    if (m_memo.count(n.get())) continue;
    Expr rebuilt = n;
    if (auto* c = n.as<CallNode>()) {
      std::vector<Expr> args;
      bool changed = false;
      for (const Expr& a : c->args) {
        args.push_back(rewritten(a));
        changed |= !args.back().same_as(a);
      }
      if (changed) rebuilt = withArgs(*c, std::move(args));
    } else if (auto* t = n.as<TupleNode>()) {
      std::vector<Expr> fields;
      bool changed = false;
      for (const Expr& f : t->fields) {
        fields.push_back(rewritten(f));
        changed |= !fields.back().same_as(f);
      }
      if (changed) rebuilt = makeTuple(std::move(fields));
    } else if (auto* g = n.as<TupleGetItemNode>()) {
      Expr t = rewritten(g->tuple);
      if (!t.same_as(g->tuple)) rebuilt = makeTupleGetItem(t, g->index);
    }
    m_memo[n.get()] = rewrite(n, rebuilt);
  }
  return rewritten(root);
}

Function mapBody(const Function& fn, const std::function<Expr(const Expr&)>& f) {
  Expr body = f(fn->body);
  if (body.same_as(fn->body)) return fn;
  return makeFunction(fn->params, body, fn->primitive, fn->name);
}

Module mapFunctions(const Module& m, const std::function<Expr(const Expr&)>& f) {
  Module out;
  for (const auto& [name, fn] : m.functions)
    out.functions[name] = mapBody(fn, f);
  return out;
}

std::unordered_map<const ExprNode*, int> useCounts(const Expr& root) {
  std::unordered_map<const ExprNode*, int> uses;
  uses[root.get()] = 1;
  for (const Expr& n : postOrder(root, false)) {
    if (auto* c = n.as<CallNode>())
      for (const Expr& a : c->args)
        ++uses[a.get()];
    if (auto* t = n.as<TupleNode>())
      for (const Expr& f : t->fields)
        ++uses[f.get()];
    if (auto* g = n.as<TupleGetItemNode>()) ++uses[g->tuple.get()];
  }
  return uses;
}

} // namespace loom::graph
