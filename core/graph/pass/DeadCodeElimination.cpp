// DeadCodeElimination: forwards tuple projections of literal tuples, drops uncalled functions.
#include "core/graph/pass/DeadCodeElimination.h"

#include <unordered_set>

#include "core/graph/Mutator.h"

namespace loom::graph {

namespace {
class TupleForwarder : public ExprMutator {
  Expr rewrite(const Expr&, const Expr& e) override {
    if (auto* g = e.as<TupleGetItemNode>())
      if (auto* t = g->tuple.as<TupleNode>())
        if (g->index >= 0 && size_t(g->index) < t->fields.size()) return t->fields[g->index];
    return e;
  }
};
} // namespace

Expr eliminateDeadCode(const Expr& e) {
  return TupleForwarder().mutate(e);
}

Module eliminateDeadCode(const Module& m) {
  Module out = mapFunctions(m, [](const Expr& e) { return eliminateDeadCode(e); });
  Function main = out.main();
  if (!main) return out;
  std::unordered_set<const FunctionNode*> called;
  for (const Expr& n : postOrder(Expr(main), true))
    if (auto* f = n.as<FunctionNode>()) called.insert(f);
  for (auto it = out.functions.begin(); it != out.functions.end();)
    it = it->first != "main" && !called.count(it->second.get()) ? out.functions.erase(it)
                                                                : std::next(it);
  return out;
}

} // namespace loom::graph
