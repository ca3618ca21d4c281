// hoist-symbolic-terms: a symbolic kernel's shape arithmetic computed once, at the top.
#include "core/transform/HoistSymbolicTerms.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/arith/ExprOrder.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool isRingOp(BinOp op) { return op == BinOp::Add || op == BinOp::Sub || op == BinOp::Mul; }
bool isDivision(BinOp op) {
  return op == BinOp::FloorDiv || op == BinOp::FloorMod || op == BinOp::Div || op == BinOp::Mod;
}
bool isScalarInt(const Expr& e) {
  return e.dtype().isInt() && e.dtype().lanes() == 1 && (e.dtype().bits() == 32 || e.dtype().bits() == 64);
}

/// A product `coef * factors[0] * factors[1] * ...` of a sum; factors are neither constants nor
/// +, -, * of scalar integers.
struct Term {
  int64_t coef = 1;
  std::vector<Expr> factors;
};

/// Sums with more terms than this (a product of long sums) are left as they are.
constexpr size_t kMaxTerms = 64;

/// Divisions by a non-constant divide by `select(b == 0, 1, b)` and give 0 there: the hoisted
/// value is computed where a guard may have kept the original from running.
class SafeDivisions : public IRMutator {
protected:
  using IRMutator::visit;
  Expr visit(const BinaryNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    auto* bin = e.as<BinaryNode>();
    if (!bin || !isDivision(bin->op) || asConstInt(bin->b) || !e.dtype().isIntegral()) return e;
    const DataType t = bin->b.dtype();
    Expr zero = intImm(t, 0);
    return select(eq(bin->b, zero), intImm(e.dtype(), 0), binary(bin->op, bin->a, select(eq(bin->b, zero), intImm(t, 1), bin->b)));
  }
};

class Hoister : public IRMutator {
public:
  explicit Hoister(const PrimFunc& f) {
    for (const Var& p : f->params)
      if (isScalarInt(p)) m_params.insert(p.get());
  }

  bool any() const { return !m_params.empty(); }

  /// `body` under the lets, the first outermost.
  Stmt wrap(Stmt body) const {
    for (size_t k = m_lets.size(); k-- > 0;) body = letStmt(m_lets[k].first, m_lets[k].second, body);
    return body;
  }

protected:
  using IRMutator::visit;

  Expr visit(const BinaryNode* n, const Expr& self) override {
    if (!isScalarInt(self)) return IRMutator::visit(n, self);
    if (!isRingOp(n->op)) return invariant(self) ? hoist(self) : IRMutator::visit(n, self);
    std::vector<Term> terms;
    if (!flatten(self, terms)) return invariant(self) ? hoist(self) : IRMutator::visit(n, self);
    return regroup(self, terms);
  }

private:
  /// Reads only the parameters and constants, and is not a leaf (a leaf costs nothing).
  bool invariant(const Expr& e) const {
    if (e.as<VarNode>() || e.as<IntImmNode>()) return false;
    bool ok = true;
    postOrderVisit(e, [&](const IRNode* x) {
      if (!ok) return;
      switch (x->nodeKind) {
      case NodeKind::IntImm: break;
      case NodeKind::Var: ok = m_params.count(static_cast<const VarNode*>(x)) > 0; break;
      case NodeKind::Binary: ok = static_cast<const BinaryNode*>(x)->dtype.isInt(); break;
      case NodeKind::Cast: ok = static_cast<const CastNode*>(x)->dtype.isInt(); break;
      default: ok = false;
      }
    });
    return ok && e.dtype().lanes() == 1;
  }

  /// A factor of a term that goes into the hoisted coefficient: a parameter, or invariant.
  bool invariantFactor(const Expr& e) const {
    if (auto* v = e.as<VarNode>()) return m_params.count(v) > 0;
    return invariant(e);
  }

  /// `v` as a constant of type `t` (int32 arithmetic wraps).
  static Expr constant(DataType t, int64_t v) {
    return intImm(t, t.bits() == 32 ? int64_t(int32_t(uint32_t(uint64_t(v)))) : v);
  }

  Expr hoist(const Expr& e) {
    if (e.as<VarNode>() || e.as<IntImmNode>()) return e;
    const size_t h = structuralHash(e);
    for (size_t k : m_byHash[h])
      if (arith::exprEqual(m_lets[k].second, e) || arith::exprEqual(m_original[k], e)) return m_lets[k].first;
    Var v = makeVar("sym" + std::to_string(m_lets.size()), e.dtype());
    m_byHash[h].push_back(m_lets.size());
    m_lets.emplace_back(v, SafeDivisions().mutate(e));
    m_original.push_back(e);
    return v;
  }

  /// `e` as a sum of products (distributing * over +), or false when that has too many terms
  /// or a coefficient leaves the int32 range.
  bool flatten(const Expr& e, std::vector<Term>& out) const {
    if (auto* imm = e.as<IntImmNode>()) {
      out.push_back(Term{imm->value, {}});
      return true;
    }
    auto* b = e.as<BinaryNode>();
    if (!b || !isRingOp(b->op) || !isScalarInt(e)) {
      out.push_back(Term{1, {e}});
      return true;
    }
    std::vector<Term> x, y;
    if (!flatten(b->a, x) || !flatten(b->b, y)) return false;
    if (b->op == BinOp::Add || b->op == BinOp::Sub) {
      for (Term& t : y) {
        if (b->op == BinOp::Sub) t.coef = -t.coef;
        x.push_back(std::move(t));
      }
    } else {
      if (x.size() * y.size() > kMaxTerms) return false;
      std::vector<Term> p;
      for (const Term& s : x)
        for (const Term& t : y) {
          Term r{s.coef * t.coef, s.factors};
          r.factors.insert(r.factors.end(), t.factors.begin(), t.factors.end());
          p.push_back(std::move(r));
        }
      x = std::move(p);
    }
    for (const Term& t : x)
      if (t.coef > std::numeric_limits<int32_t>::max() || t.coef < std::numeric_limits<int32_t>::min()) return false;
    if (x.size() > kMaxTerms) return false;
    out.insert(out.end(), x.begin(), x.end());
    return true;
  }

  /// The sum regrouped by the factors that are not invariant, each group's invariant
  /// coefficient hoisted; `self` (with its parts mutated) when no factor is invariant.
  Expr regroup(const Expr& self, const std::vector<Term>& terms) {
    bool anyInvariant = false;
    for (const Term& t : terms)
      for (const Expr& f : t.factors) anyInvariant |= invariantFactor(f);
    if (!anyInvariant) return IRMutator::visit(self.as<BinaryNode>(), self);
    const DataType dt = self.dtype();
    struct Group {
      std::vector<Expr> variant;  ///< mutated, in order of first appearance
      std::vector<Expr> coef;     ///< invariant parts, one summand each
      int64_t lastScale = 1;      ///< the constant factor of the last summand of `coef`
      Expr lastProduct;           ///< that summand without it
      int64_t constant = 0;       ///< the constant summands of the coefficient
    };
    std::vector<Group> groups;
    std::unordered_map<size_t, std::vector<size_t>> byKey;
    for (const Term& t : terms) {
      std::vector<Expr> variant, inv;
      for (const Expr& f : t.factors) (invariantFactor(f) ? inv : variant).push_back(f);
      std::sort(variant.begin(), variant.end(),
                [](const Expr& a, const Expr& b) { return structuralHash(a) < structuralHash(b); });
      size_t key = variant.size();
      for (const Expr& f : variant) key = key * 1000003u + structuralHash(f);
      Group* g = nullptr;
      for (size_t k : byKey[key]) {
        bool same = groups[k].variant.size() == variant.size();
        for (size_t i = 0; same && i < variant.size(); ++i) same = arith::exprEqual(groups[k].variant[i], variant[i]);
        if (same) g = &groups[k];
      }
      if (!g) {
        byKey[key].push_back(groups.size());
        groups.push_back(Group{variant, {}, 0});
        g = &groups.back();
      }
      if (inv.empty()) {
        g->constant += t.coef;
      } else {
        Expr p = inv[0];
        for (size_t i = 1; i < inv.size(); ++i) p = p * inv[i];
        g->coef.push_back(t.coef == 1 ? p : p * constant(dt, t.coef));
        g->lastScale = t.coef;
        g->lastProduct = p;
      }
    }
    Expr sum;
    auto add = [&](const Expr& e) { sum = sum.defined() ? sum + e : e; };
    std::optional<int64_t> lastConstant;
    for (Group& g : groups) {
      // The coefficient: a constant, or invariant (hoisted).
      // An offset (no other factor): its constant part stays outside the let, so that the
      // offsets `s + 16`, `s + 32`, ... of an unrolled body share one let (LLVM folds the
      // constant into the address).
      if (g.variant.empty()) {
        lastConstant = g.constant;
        if (g.coef.size() == 1) {
          add(scaled(g.lastProduct, g.lastScale));
        } else if (!g.coef.empty()) {
          Expr s = g.coef[0];
          for (size_t i = 1; i < g.coef.size(); ++i) s = s + g.coef[i];
          add(hoist(s));
        }
        continue;
      }
      Expr c;
      if (g.coef.size() == 1 && constant(dt, g.constant).as<IntImmNode>()->value == 0) {
        c = scaled(g.lastProduct, g.lastScale);
      } else if (!g.coef.empty()) {
        Expr s = g.coef[0];
        for (size_t i = 1; i < g.coef.size(); ++i) s = s + g.coef[i];
        if (constant(dt, g.constant).as<IntImmNode>()->value) s = s + constant(dt, g.constant);
        c = hoist(s);
      } else if (g.constant == 0) {
        continue;
      }
      Expr p = mutate(g.variant[0]);
      for (size_t i = 1; i < g.variant.size(); ++i) p = p * mutate(g.variant[i]);
      if (c.defined()) p = p * c;
      else if (g.constant != 1) p = p * constant(dt, g.constant);
      add(p);
    }
    if (lastConstant && constant(dt, *lastConstant).as<IntImmNode>()->value) add(constant(dt, *lastConstant));
    return sum.defined() ? sum : intImm(dt, 0);
  }

  /// `product * scale` with only the product hoisted: one let serves every multiple (the rows
  /// of a tile strided by `batch * 256` at `batch * 256`, `batch * 512`, ...), and a multiply
  /// by a constant costs less than a register held across the kernel for each.
  Expr scaled(const Expr& product, int64_t scale) {
    Expr h = hoist(product);
    return scale == 1 ? h : h * constant(product.dtype(), scale);
  }

  std::unordered_set<const VarNode*> m_params;
  std::vector<std::pair<Var, Expr>> m_lets;
  std::vector<Expr> m_original;
  std::unordered_map<size_t, std::vector<size_t>> m_byHash;
};

}  // namespace

PrimFunc hoistSymbolicTerms(const PrimFunc& f) {
  Hoister h(f);
  if (!h.any()) return f;
  Stmt body = h.mutate(f->body);
  auto* node = new PrimFuncNode(*f.get());
  node->body = h.wrap(body);
  node->attrs["loom.signed_no_wrap"] = intImm(DataType::Int(32), 1);
  return PrimFunc(node);
}

}  // namespace loom::transform
