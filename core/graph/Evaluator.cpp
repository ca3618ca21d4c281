// The graph evaluator: post-order interpretation with each op's host kernel.
#include "core/graph/Evaluator.h"

#include <map>
#include <memory>
#include <unordered_map>

#include "core/graph/DataDependent.h"
#include "core/graph/Op.h"
#include "core/graph/SymDim.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {

/// A value: the flat list of tensors of a (possibly tuple) type.
using Value = std::vector<runtime::NDArray>;

/// Number of tensors in a type, flattened.
size_t flatCount(const Type& t) {
  if (auto* tt = t.as<TupleTypeNode>()) {
    size_t n = 0;
    for (const auto& f : tt->fields)
      n += flatCount(Type(f));
    return n;
  }
  return 1;
}

using SymbolValues = std::map<std::string, int64_t>;

/// `t` with its symbolic dims evaluated at the symbols' values.
Type concreteType(const Type& t, const SymbolValues& syms) {
  if (auto* tt = t.as<TupleTypeNode>()) {
    std::vector<Type> fs;
    for (const auto& f : tt->fields) fs.push_back(concreteType(Type(f), syms));
    return tupleType(fs);
  }
  auto* tt = t.as<TensorTypeNode>();
  if (tt->isStatic()) return t;
  Shape s;
  for (const Dim& d : tt->shape) {
    auto v = evalDim(d, syms);
    if (!v || *v < 0)
      LOOM_THROW(ValueError) << "evaluate: dimension " << d.str() << " of " << typeStr(t)
                             << " has no value for the given inputs";
    s.push_back(Dim(*v));
  }
  return tensorType(s, tt->dtype);
}

class Evaluator {
public:
  /// `syms` is shared with the evaluators of nested (fused) functions, so a symbol that a
  /// data-dependent call binds inside one group is known in the others.
  explicit Evaluator(std::shared_ptr<SymbolValues> syms = std::make_shared<SymbolValues>()) : m_syms(std::move(syms)) {}

  Value run(const Expr& root, std::unordered_map<const ExprNode*, Value> env) {
    m_env = std::move(env);
    for (const Expr& n : postOrder(root, false)) {
      if (m_env.count(n.get())) continue;
      m_env[n.get()] = eval(n);
    }
    return m_env.at(root.get());
  }

private:
  std::unordered_map<const ExprNode*, Value> m_env;
  std::shared_ptr<SymbolValues> m_syms;

  /// The value of `sym`: the extent of the first result dim that is the symbol alone.
  void bindDataSymbol(const std::string& sym, const Type& t, const Value& r) {
    std::vector<Type> ts;
    if (auto* tt = t.as<TupleTypeNode>())
      for (const auto& f : tt->fields) ts.push_back(Type(f));
    else ts.push_back(t);
    for (size_t i = 0; i < ts.size() && i < r.size(); ++i) {
      const Shape& s = ts[i].as<TensorTypeNode>()->shape;
      for (size_t k = 0; k < s.size(); ++k)
        if (!s[k].isStatic() && s[k].name == sym) {
          (*m_syms)[sym] = r[i].shape().at(k);
          return;
        }
    }
  }

  Value eval(const Expr& e) {
    switch (e->kind) {
    case ExprKind::Var:
      LOOM_THROW(ValueError) << "evaluate: free variable %" << e.as<VarNode>()->name;
    case ExprKind::Constant:
      return {e.as<ConstantNode>()->data};
    case ExprKind::Function:
      return {};
    case ExprKind::Tuple: {
      Value v;
      for (const Expr& f : e.as<TupleNode>()->fields) {
        const Value& fv = m_env.at(f.get());
        v.insert(v.end(), fv.begin(), fv.end());
      }
      return v;
    }
    case ExprKind::TupleGetItem: {
      auto* g = e.as<TupleGetItemNode>();
      auto* tt = g->tuple.type().as<TupleTypeNode>();
      size_t off = 0;
      for (int i = 0; i < g->index; ++i)
        off += flatCount(Type(tt->fields[i]));
      const Value& tv = m_env.at(g->tuple.get());
      size_t n = flatCount(Type(tt->fields[g->index]));
      return Value(tv.begin() + off, tv.begin() + off + n);
    }
    case ExprKind::Call: {
      auto* c = e.as<CallNode>();
      Value args;
      for (const Expr& a : c->args) {
        const Value& av = m_env.at(a.get());
        args.insert(args.end(), av.begin(), av.end());
      }
      if (c->op) {
        if (!c->op->hostKernel)
          LOOM_THROW(UnsupportedError) << c->op->name << " has no host kernel";
        // A data-dependent op (dyn.nonzero, ...) binds its symbol from the result's shape.
        if (auto sym = dataDependentSymbol(*c)) {
          Value r = c->op->hostKernel(*c, args, e.type());
          bindDataSymbol(*sym, e.type(), r);
          return r;
        }
        return c->op->hostKernel(*c, args, m_syms->empty() ? e.type() : concreteType(e.type(), *m_syms));
      }
      std::unordered_map<const ExprNode*, Value> env;
      for (size_t i = 0; i < c->fn->params.size(); ++i)
        env[c->fn->params[i].get()] = m_env.at(c->args[i].get());
      return Evaluator(m_syms).run(c->fn->body, std::move(env));
    }
    }
    return {};
  }
};

} // namespace

std::vector<runtime::NDArray> evaluate(const Function& f,
                                       const std::vector<runtime::NDArray>& args) {
  inferType(Expr(f));
  if (args.size() != f->params.size())
    LOOM_THROW(TypeError) << "evaluate: " << args.size() << " argument(s) for " << f->params.size()
                          << " parameter(s)";
  std::unordered_map<const ExprNode*, Value> env;
  // The symbols' values: from the parameters' dims that are a symbol alone.
  SymbolValues syms;
  for (size_t i = 0; i < args.size(); ++i) {
    auto* pt = f->params[i]->annotation.as<TensorTypeNode>();
    if (!pt || pt->ndim() != args[i].shape().size()) continue;
    for (size_t k = 0; k < pt->ndim(); ++k) {
      const Dim& d = pt->shape[k];
      if (!d.isStatic() && !d.name.empty() && dimSymbols(d) == std::vector<std::string>{d.name})
        syms.emplace(d.name, args[i].shape()[k]);
    }
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Var& p = f->params[i];
    Type t = tensorType(args[i].shape(), toDataType(args[i].dtype()));
    bool ok = false;
    try {
      ok = typeEqual(t, concreteType(p->annotation, syms));
    } catch (const ValueError&) {
    }
    if (!ok)
      LOOM_THROW(TypeError) << "evaluate: argument " << i << " is " << typeStr(t) << " but %"
                            << p->name << " is " << typeStr(p->annotation);
    env[p.get()] = {args[i]};
  }
  return Evaluator(std::make_shared<SymbolValues>(std::move(syms))).run(f->body, std::move(env));
}

std::vector<runtime::NDArray> evaluateClosed(const Expr& e) {
  inferType(e);
  return Evaluator().run(e, {});
}

} // namespace loom::graph
