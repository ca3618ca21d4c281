// InferType: post-order typing of a graph through each op's type relation.
#include "core/graph/pass/InferType.h"

#include "core/graph/Op.h"

namespace loom::graph {

namespace {

Type typeOfNode(const Expr& e) {
  switch (e->kind) {
  case ExprKind::Var: {
    auto* v = e.as<VarNode>();
    if (!v->annotation.defined())
      LOOM_THROW(TypeError) << "variable %" << v->name << " has no type";
    return v->annotation;
  }
  case ExprKind::Constant:
    return e.type();
  case ExprKind::Call: {
    auto* c = e.as<CallNode>();
    std::vector<Type> argTypes;
    for (const Expr& a : c->args)
      argTypes.push_back(a.type());
    if (c->op) {
      LOOM_ICHECK(c->op->typeRel) << c->op->name << " has no type relation";
      return c->op->typeRel(*c, argTypes);
    }
    const FunctionNode& fn = *c->fn;
    if (fn.params.size() != c->args.size())
      LOOM_THROW(TypeError) << "call of " << calleeName(*c) << " passes " << c->args.size()
                            << " argument(s) to " << fn.params.size() << " parameter(s)";
    for (size_t i = 0; i < fn.params.size(); ++i)
      if (!typeEqual(fn.params[i]->annotation, argTypes[i]))
        LOOM_THROW(TypeError) << "call of " << calleeName(*c) << ": argument " << i << " has type "
                              << typeStr(argTypes[i]) << " but parameter %" << fn.params[i]->name
                              << " expects " << typeStr(fn.params[i]->annotation);
    return fn.body.type();
  }
  case ExprKind::Tuple: {
    std::vector<Type> f;
    for (const Expr& x : e.as<TupleNode>()->fields)
      f.push_back(x.type());
    return tupleType(f);
  }
  case ExprKind::TupleGetItem: {
    auto* g = e.as<TupleGetItemNode>();
    auto* tt = g->tuple.type().as<TupleTypeNode>();
    if (!tt)
      LOOM_THROW(TypeError) << "tuple index ." << g->index << " applied to non-tuple "
                            << typeStr(g->tuple.type());
    if (g->index < 0 || g->index >= int(tt->fields.size()))
      LOOM_THROW(TypeError) << "tuple index ." << g->index << " out of range for "
                            << typeStr(g->tuple.type());
    return Type(tt->fields[g->index]);
  }
  case ExprKind::Function:
    return e.as<FunctionNode>()->body.type();
  }
  return {};
}

} // namespace

Type inferType(const Expr& e) {
  if (e.type().defined() && e->kind != ExprKind::Function) return e.type();
  for (const Expr& n : postOrder(e, true))
    if (!n->checkedType.defined()) n->checkedType = typeOfNode(n);
  return e.type();
}

Module inferType(const Module& m) {
  for (const auto& [name, f] : m.functions)
    inferType(Expr(f));
  return m;
}

} // namespace loom::graph
