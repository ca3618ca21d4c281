// FoldConstant: host-kernel evaluation of constant subgraphs, shape_of of static shapes.
#include "core/graph/pass/FoldConstant.h"

#include <algorithm>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {

bool isConstant(const Expr& e) {
  return e->kind == ExprKind::Constant;
}

/// Results above this many elements are not folded unless they are no bigger than the call's
/// constant inputs together (a transpose or reshape of a huge weight folds; a broadcast of a
/// scalar to a giant shape does not).
constexpr int64_t kMaxFoldedElements = int64_t(1) << 26;

class ConstantFolder : public ExprMutator {
  Expr rewrite(const Expr&, const Expr& e) override {
    if (auto* g = e.as<TupleGetItemNode>())
      if (auto* t = g->tuple.as<TupleNode>()) return t->fields.at(size_t(g->index));
    auto* c = e.as<CallNode>();
    if (!c || !c->op) return e;
    if (c->op->name == "shape_of") {
      auto* t = inferType(c->args[0]).as<TensorTypeNode>();
      if (!t || !t->isStatic()) return e;
      runtime::NDArray a =
          runtime::NDArray::empty({int64_t(t->ndim())}, toDType(DataType::Int(64)));
      for (size_t i = 0; i < t->ndim(); ++i)
        a.as<int64_t>()[i] = t->shape[i].value;
      return makeConstant(a);
    }
    if (!c->op->hostKernel || c->op->name == "nn.dropout") return e;
    for (const Expr& a : c->args)
      if (!isConstant(a)) return e;
    Type t = inferType(e);
    // Leave huge results that would grow the model (a broadcast of a scalar to a giant shape)
    // to run time.
    int64_t inputElements = 0;
    for (const Expr& a : c->args)
      inputElements += a.as<ConstantNode>()->data.numel();
    if (auto* tt = t.as<TensorTypeNode>();
        tt && (!tt->isStatic() || tt->numel() > std::max(kMaxFoldedElements, inputElements)))
      return e;
    std::vector<runtime::NDArray> in;
    for (const Expr& a : c->args)
      in.push_back(a.as<ConstantNode>()->data);
    std::vector<runtime::NDArray> out = c->op->hostKernel(*c, in, t);
    if (t.as<TensorTypeNode>()) return makeConstant(out.at(0));
    std::vector<Expr> fields;
    for (const auto& a : out)
      fields.push_back(makeConstant(a));
    return makeTuple(fields);
  }
};

} // namespace

Expr foldConstant(const Expr& e) {
  inferType(e);
  return ConstantFolder().mutate(e);
}

Module foldConstant(const Module& m) {
  return mapFunctions(m, [](const Expr& e) { return foldConstant(e); });
}

} // namespace loom::graph
