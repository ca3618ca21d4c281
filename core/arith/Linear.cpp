// Affine decomposition by a walk over + - * with coefficients kept as expressions.
#include "core/arith/Linear.h"

#include <unordered_map>

#include "core/arith/Analyzer.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::arith {

using namespace tir;

std::optional<int64_t> LinearForm::constCoeff(size_t i) const {
  if (i >= coeffs.size()) return std::nullopt;
  if (auto* c = asConstInt(coeffs[i])) return *c;
  return std::nullopt;
}

namespace {

class Linearizer {
public:
  explicit Linearizer(const std::vector<Var>& vars) {
    for (size_t i = 0; i < vars.size(); ++i) m_index[vars[i].get()] = i;
    m_count = vars.size();
  }

  bool usesAny(const Expr& e) const {
    bool found = false;
    postOrderVisit(e, [&](const IRNode* n) {
      if (!found && n->nodeKind == NodeKind::Var && m_index.count(static_cast<const VarNode*>(n))) found = true;
    });
    return found;
  }

  std::optional<LinearForm> walk(const Expr& e) {
    DataType t = e.dtype();
    if (!usesAny(e)) return constant(e);
    if (auto* v = e.as<VarNode>()) {
      LinearForm f = constant(makeZero(t));
      f.coeffs[m_index.at(v)] = makeConst(t, 1);
      return f;
    }
    auto* n = e.as<BinaryNode>();
    if (!n) return std::nullopt;
    switch (n->op) {
    case BinOp::Add:
    case BinOp::Sub: {
      auto a = walk(n->a), b = walk(n->b);
      if (!a || !b) return std::nullopt;
      bool add = n->op == BinOp::Add;
      for (size_t i = 0; i < m_count; ++i) a->coeffs[i] = add ? a->coeffs[i] + b->coeffs[i] : a->coeffs[i] - b->coeffs[i];
      a->base = add ? a->base + b->base : a->base - b->base;
      return a;
    }
    case BinOp::Mul: {
      const Expr* scaleBy = nullptr;
      std::optional<LinearForm> f;
      if (!usesAny(n->b)) {
        f = walk(n->a);
        scaleBy = &n->b;
      } else if (!usesAny(n->a)) {
        f = walk(n->b);
        scaleBy = &n->a;
      }
      if (!f) return std::nullopt;
      for (auto& c : f->coeffs) c = c * *scaleBy;
      f->base = f->base * *scaleBy;
      return f;
    }
    default: return std::nullopt;
    }
  }

  bool quasiAffine(const Expr& e) const {
    if (!usesAny(e)) return true;
    if (e.as<VarNode>()) return true;
    auto* n = e.as<BinaryNode>();
    if (!n) return false;
    switch (n->op) {
    case BinOp::Add:
    case BinOp::Sub: return quasiAffine(n->a) && quasiAffine(n->b);
    case BinOp::Mul:
      if (!usesAny(n->a)) return quasiAffine(n->b);
      if (!usesAny(n->b)) return quasiAffine(n->a);
      return false;
    case BinOp::FloorDiv:
    case BinOp::FloorMod: {
      auto* c = asConstInt(n->b);
      return c && *c > 0 && quasiAffine(n->a);
    }
    default: return false;
    }
  }

private:
  LinearForm constant(const Expr& e) const {
    LinearForm f;
    f.coeffs.assign(m_count, makeZero(e.dtype()));
    f.base = e;
    return f;
  }

  std::unordered_map<const VarNode*, size_t> m_index;
  size_t m_count = 0;
};

}  // namespace

std::optional<LinearForm> linearize(const Expr& e, const std::vector<Var>& vars, Analyzer* analyzer) {
  if (!e.defined() || !e.dtype().isScalar() || !(e.dtype().isIntegral())) return std::nullopt;
  auto f = Linearizer(vars).walk(e);
  if (!f) return std::nullopt;
  Analyzer local;
  Analyzer* a = analyzer ? analyzer : &local;
  for (auto& c : f->coeffs) c = a->simplify(c);
  f->base = a->simplify(f->base);
  return f;
}

bool isQuasiAffine(const Expr& e, const std::vector<Var>& vars) {
  if (!e.defined()) return false;
  return Linearizer(vars).quasiAffine(e);
}

}  // namespace loom::arith
