// DeadCodeElimination: forwards tuple projections and no-op calls, drops uncalled functions.
#include "core/graph/pass/DeadCodeElimination.h"

#include <unordered_set>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {
/// True when `call` returns its argument unchanged: a reshape to the same shape, a transpose
/// with the identity permutation, a cast to the same type, a copy, a pad of nothing (torch
/// exports an AvgPool2d with a Pad of zero widths before it).
bool isNoOp(const CallNode& call) {
  if (!call.op || call.args.size() != 1) return false;
  const std::string& op = call.op->name;
  Type in = inferType(call.args[0]);
  auto* t = in.as<TensorTypeNode>();
  if (!t) return false;
  if (op == "copy") return true;
  if (op == "cast") return call.attrs.getDType("dtype") == t->dtype;
  if (op == "reshape") {
    const auto& ns = call.attrs.getInts("newshape");
    return t->isStatic() && ns == t->staticShape();
  }
  if (op == "nn.pad") {
    for (int64_t w : call.attrs.getInts("pad_width"))
      if (w != 0) return false;
    return true;
  }
  if (op == "transpose") {
    const auto& axes = call.attrs.getInts("axes");
    if (axes.empty()) return t->ndim() <= 1;
    for (size_t i = 0; i < axes.size(); ++i)
      if (axes[i] != int64_t(i) && axes[i] != int64_t(i) - int64_t(axes.size())) return false;
    return true;
  }
  return false;
}

class DeadCodeEliminator : public ExprMutator {
  Expr rewrite(const Expr&, const Expr& e) override {
    if (auto* g = e.as<TupleGetItemNode>())
      if (auto* t = g->tuple.as<TupleNode>())
        if (g->index >= 0 && size_t(g->index) < t->fields.size()) return t->fields[g->index];
    if (auto* c = e.as<CallNode>(); c && isNoOp(*c)) return c->args[0];
    return e;
  }
};
} // namespace

Expr eliminateDeadCode(const Expr& e) {
  inferType(e);
  return DeadCodeEliminator().mutate(e);
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
