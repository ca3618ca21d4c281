// The analyzer: variable knowledge with scoped facts, and the simplify / prove / bound entry points.
#include "core/arith/Analyzer.h"

#include "core/arith/CanonicalSimplify.h"
#include "core/arith/ExprOrder.h"
#include "core/arith/RewriteSimplifier.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"

namespace loom::arith {

using namespace tir;

Analyzer::Analyzer()
    : m_rewrite(std::make_unique<RewriteSimplifier>(this)), m_canonical(std::make_unique<CanonicalSimplifier>(this)) {}
Analyzer::~Analyzer() = default;

void Analyzer::bind(const Var& v, const Range& r) {
  LOOM_ICHECK(v.defined() && r.min.defined() && r.extent.defined()) << "bind of an undefined range";
  if (isConstInt(r.extent, 1)) {
    bind(v, r.min);
    return;
  }
  ConstIntBound lo = constIntBound(r.min);
  Expr last = simplify(r.min + r.extent - 1);
  ConstIntBound hi = constIntBound(last);
  m_bounds[v] = intersect(ConstIntBound(lo.minValue, hi.maxValue), ConstIntBound::ofType(v->dtype));
}

void Analyzer::bind(const Var& v, const Expr& value) {
  LOOM_ICHECK(v.defined() && value.defined()) << "bind of an undefined value";
  Expr s = simplify(value);
  m_bounds[v] = constIntBound(s);
  m_values[v] = s;
}

void Analyzer::bind(const Var& v, int64_t lo, int64_t hi) {
  m_bounds[v] = intersect(ConstIntBound(lo, hi), ConstIntBound::ofType(v->dtype));
}

Expr Analyzer::boundValue(const Var& v) const {
  auto it = m_values.find(v);
  return it == m_values.end() ? Expr() : it->second;
}

Expr Analyzer::rewriteSimplify(const Expr& e) { return (*m_rewrite)(e); }
Expr Analyzer::canonicalSimplify(const Expr& e) { return (*m_canonical)(e); }

Expr Analyzer::simplify(const Expr& e, int steps) {
  if (!e.defined()) return e;
  Expr r = e;
  for (int i = 0; i < steps; ++i) {
    Expr next = canonicalSimplify(rewriteSimplify(r));
    bool done = exprEqual(next, r);
    r = next;
    if (done) break;
  }
  return r;
}

bool Analyzer::canProve(const Expr& cond) {
  if (!cond.defined()) return false;
  if (auto* c = cond.as<IntImmNode>()) return c->value != 0;
  return isConstInt(simplify(cond), 1);
}

bool Analyzer::canProveEqual(const Expr& a, const Expr& b) {
  if (exprEqual(a, b)) return true;
  if (a.dtype().isIntegral() && b.dtype().isIntegral()) return isConstInt(simplify(a - b), 0);
  return canProve(eq(a, b));
}

bool Analyzer::canProveGreaterEqual(const Expr& e, int64_t v) {
  if (constIntBound(e).minValue >= v) return true;
  return canProve(e >= intImm(e.dtype(), v));
}

bool Analyzer::canProveLess(const Expr& e, int64_t v) {
  if (constIntBound(e).maxValue < v) return true;
  return canProve(e < intImm(e.dtype(), v));
}

ConstIntBound Analyzer::constIntBound(const Expr& e) { return arith::constIntBound(e, m_bounds); }

IntSet Analyzer::intSet(const Expr& e, const IntSetMap& dom) { return evalSet(e, dom, this); }

size_t Analyzer::pushConstraint(const Expr& cond, bool simplified) {
  m_marks.push_back(Mark{m_undo.size(), m_trueFacts.size(), m_falseFacts.size()});
  size_t token = m_marks.size() - 1;
  addFact(cond, simplified);
  return token;
}

void Analyzer::popConstraint(size_t token) {
  LOOM_ICHECK(token < m_marks.size()) << "constraint scopes closed out of order";
  Mark m = m_marks[token];
  while (m_undo.size() > m.undo) {
    Undo& u = m_undo.back();
    if (u.old) m_bounds[u.var] = *u.old;
    else m_bounds.erase(u.var);
    m_undo.pop_back();
  }
  m_trueFacts.resize(m.trueFacts);
  m_falseFacts.resize(m.falseFacts);
  m_marks.resize(token);
}

void Analyzer::refineBound(const Var& v, const ConstIntBound& b) {
  auto it = m_bounds.find(v);
  std::optional<ConstIntBound> old = it == m_bounds.end() ? std::nullopt : std::optional(it->second);
  m_undo.push_back(Undo{v, old});
  ConstIntBound cur = old ? *old : ConstIntBound::ofType(v->dtype);
  m_bounds[v] = intersect(cur, b);
}

namespace {
BinOp negateComparison(BinOp op) {
  switch (op) {
  case BinOp::LT: return BinOp::GE;
  case BinOp::LE: return BinOp::GT;
  case BinOp::GT: return BinOp::LE;
  case BinOp::GE: return BinOp::LT;
  case BinOp::EQ: return BinOp::NE;
  default: return BinOp::EQ;
  }
}
BinOp mirror(BinOp op) {
  switch (op) {
  case BinOp::LT: return BinOp::GT;
  case BinOp::LE: return BinOp::GE;
  case BinOp::GT: return BinOp::LT;
  case BinOp::GE: return BinOp::LE;
  default: return op;
  }
}
int64_t addOne(int64_t v, int64_t d) {
  if (v == ConstIntBound::kPosInf || v == ConstIntBound::kNegInf) return v;
  return v + d;
}
}  // namespace

void Analyzer::addFact(const Expr& cond, bool simplified) {
  Expr c = simplified ? cond : simplify(cond);
  if (!c.defined() || c.as<IntImmNode>()) return;
  if (auto* b = c.as<BinaryNode>(); b && b->op == BinOp::And) {
    addFact(b->a, true);
    addFact(b->b, true);
    return;
  }
  m_trueFacts.push_back(c);
  const BinaryNode* cmp = c.as<BinaryNode>();
  BinOp op{};
  bool negated = false;
  if (auto* nn = c.as<NotNode>()) {
    m_falseFacts.push_back(nn->a);
    cmp = nn->a.as<BinaryNode>();
    negated = true;
  }
  if (!cmp || !isComparison(cmp->op)) return;
  op = negated ? negateComparison(cmp->op) : cmp->op;
  if (!negated) {
    bool integral = cmp->a.dtype().isIntegral();
    if (integral || op == BinOp::EQ || op == BinOp::NE)
      m_falseFacts.push_back(Expr(new BinaryNode(c.dtype(), negateComparison(op), cmp->a, cmp->b)));
  }
  if (!(cmp->a.dtype().isInt() && cmp->a.dtype().isScalar())) return;
  // Bounds of a variable compared with something bounded.
  auto refine = [&](const Expr& lhs, BinOp o, const Expr& rhs) {
    auto* v = lhs.as<VarNode>();
    if (!v) return;
    ConstIntBound r = constIntBound(rhs);
    ConstIntBound nb;
    switch (o) {
    case BinOp::LT: nb.maxValue = addOne(r.maxValue, -1); break;
    case BinOp::LE: nb.maxValue = r.maxValue; break;
    case BinOp::GT: nb.minValue = addOne(r.minValue, 1); break;
    case BinOp::GE: nb.minValue = r.minValue; break;
    case BinOp::EQ: nb = r; break;
    case BinOp::NE: {
      if (!r.isPoint()) return;
      ConstIntBound cur = constIntBound(lhs);
      if (cur.minValue == r.minValue) nb.minValue = addOne(r.minValue, 1);
      else if (cur.maxValue == r.minValue) nb.maxValue = addOne(r.minValue, -1);
      else return;
      break;
    }
    default: return;
    }
    refineBound(Var(v), nb);
  };
  refine(cmp->a, op, cmp->b);
  refine(cmp->b, mirror(op), cmp->a);
}

}  // namespace loom::arith
