// The rewrite simplifier's driver: bottom-up walk, immediate folding, casts, lets, dispatch to rules.
#include "core/arith/RewriteSimplifier.h"

#include <cmath>

#include "core/arith/Eval.h"
#include "core/arith/RewriteSimplifierImpl.h"
#include "core/tir/Visitor.h"

namespace loom::arith {

using namespace tir;

RewriteSimplifier::RewriteSimplifier(Analyzer* analyzer) : m_impl(std::make_unique<Impl>(analyzer)) {}
RewriteSimplifier::~RewriteSimplifier() = default;
Expr RewriteSimplifier::operator()(const Expr& e) { return m_impl->run(e); }

Expr RewriteSimplifier::Impl::run(const Expr& e) {
  ++m_runDepth;
  Expr r = mutate(e);
  if (--m_runDepth == 0) {
    m_done.clear();
    m_keepAlive.clear();
  }
  return r;
}

bool RewriteSimplifier::Impl::isDone(const Expr& e) const {
  auto it = m_done.find(e.get());
  return it != m_done.end() && it->second == m_context;
}

Expr RewriteSimplifier::Impl::done(const Expr& e) {
  if (m_runDepth > 0) {
    m_done[e.get()] = m_context;
    m_keepAlive.push_back(e);
  }
  return e;
}

Expr negateCondition(const Expr& c) {
  if (auto* n = c.as<NotNode>()) return n->a;
  if (auto* k = c.as<IntImmNode>()) return boolImm(k->value == 0);
  if (auto* b = c.as<BinaryNode>(); b && isComparison(b->op) && b->a.dtype().isIntegral()) {
    BinOp op = b->op;
    switch (b->op) {
    case BinOp::LT: op = BinOp::GE; break;
    case BinOp::LE: op = BinOp::GT; break;
    case BinOp::GT: op = BinOp::LE; break;
    case BinOp::GE: op = BinOp::LT; break;
    case BinOp::EQ: op = BinOp::NE; break;
    default: op = BinOp::EQ; break;
    }
    return Expr(new BinaryNode(b->dtype, op, b->a, b->b));
  }
  return Expr(new NotNode(c));
}

Expr RewriteSimplifier::Impl::again(const Expr& e) {
  if (m_depth > 16) return e;
  ++m_depth;
  Expr r = mutate(e);
  --m_depth;
  return r;
}

namespace {
/// Decides `d op 0` from a bound of d.
std::optional<bool> decideSign(BinOp op, const ConstIntBound& d) {
  switch (op) {
  case BinOp::LT:
    if (d.maxValue < 0) return true;
    if (d.minValue >= 0) return false;
    break;
  case BinOp::LE:
    if (d.maxValue <= 0) return true;
    if (d.minValue > 0) return false;
    break;
  case BinOp::GT:
    if (d.minValue > 0) return true;
    if (d.maxValue <= 0) return false;
    break;
  case BinOp::GE:
    if (d.minValue >= 0) return true;
    if (d.maxValue < 0) return false;
    break;
  case BinOp::EQ:
    if (d.isPoint() && d.minValue == 0) return true;
    if (!d.contains(0)) return false;
    break;
  case BinOp::NE:
    if (d.isPoint() && d.minValue == 0) return false;
    if (!d.contains(0)) return true;
    break;
  default: break;
  }
  return std::nullopt;
}

int64_t shiftSat(int64_t v, int64_t k) {
  if (v == ConstIntBound::kPosInf || v == ConstIntBound::kNegInf) return v;
  __int128 r = __int128(v) + k;
  if (r >= __int128(ConstIntBound::kPosInf)) return ConstIntBound::kPosInf;
  if (r <= __int128(ConstIntBound::kNegInf)) return ConstIntBound::kNegInf;
  return int64_t(r);
}
}  // namespace

namespace {
/// `floordiv(x, c) * c` (c > 0) written `x - floormod(x, c)`: bounds then see that a symbolic
/// extent rounded up to a tile, `(W + 2) // 3 * 3`, is at least `W`.
struct ExpandRoundedDown : tir::IRMutator {
  bool changed = false;
  Expr visit(const BinaryNode* n, const Expr& self) override {
    Expr e = tir::IRMutator::visit(n, self);
    auto* m = e.as<BinaryNode>();
    if (!m || m->op != BinOp::Mul) return e;
    for (int side = 0; side < 2; ++side) {
      auto* d = (side ? m->b : m->a).as<BinaryNode>();
      const int64_t* c = asConstInt(side ? m->a : m->b);
      const int64_t* dc = d && d->op == BinOp::FloorDiv ? asConstInt(d->b) : nullptr;
      if (c && dc && *c == *dc && *c > 0) {
        changed = true;
        return Expr(new BinaryNode(m->dtype, BinOp::Sub, d->a, Expr(new BinaryNode(m->dtype, BinOp::FloorMod, d->a, d->b))));
      }
    }
    return e;
  }
};
}  // namespace

std::optional<bool> RewriteSimplifier::Impl::proveCompare(BinOp op, const Expr& a, const Expr& b) {
  if (!isSignedIndex(a.dtype()) || a.dtype() != b.dtype()) return std::nullopt;
  if (!isExactIndex(a.dtype())) {
    // int8/int16: a - b wraps, and its canonical form is exact only modulo 2^bits; the sides'
    // own bounds (sound with wrap-around) decide it, their difference taken in 64 bits.
    ConstIntBound ba = bound(a), bb = bound(b);
    return decideSign(op, ConstIntBound(ba.minValue - bb.maxValue, ba.maxValue - bb.minValue));
  }
  Expr diff = m_analyzer->canonicalSimplify(Expr(new BinaryNode(a.dtype(), BinOp::Sub, a, b)));
  if (auto r = decideSign(op, bound(diff))) return r;
  {
    ExpandRoundedDown x;
    Expr expanded = x.mutate(diff);
    if (x.changed)
      if (auto r = decideSign(op, bound(m_analyzer->canonicalSimplify(expanded)))) return r;
  }
  // A fact `c op2 d` whose difference c - d differs from a - b by a constant bounds a - b too
  // (`i*4 + j < n` proves `i*4 + j <= n + 2` and refutes `j + i*4 >= n`).
  for (auto& fact : m_analyzer->trueFacts()) {
    auto* f = fact.as<BinaryNode>();
    if (!f || !isComparison(f->op) || f->op == BinOp::NE || f->a.dtype() != a.dtype()) continue;
    Expr df = m_analyzer->canonicalSimplify(Expr(new BinaryNode(a.dtype(), BinOp::Sub, f->a, f->b)));
    Expr delta = m_analyzer->canonicalSimplify(Expr(new BinaryNode(a.dtype(), BinOp::Sub, diff, df)));
    const int64_t* k = asConstInt(delta);
    if (!k) continue;
    ConstIntBound fb;
    switch (f->op) {
    case BinOp::LT: fb.maxValue = -1; break;
    case BinOp::LE: fb.maxValue = 0; break;
    case BinOp::GT: fb.minValue = 1; break;
    case BinOp::GE: fb.minValue = 0; break;
    default: fb = ConstIntBound::point(0); break;
    }
    ConstIntBound qb(shiftSat(fb.minValue, *k), shiftSat(fb.maxValue, *k));
    if (auto r = decideSign(op, qb)) return r;
  }
  return std::nullopt;
}

std::optional<bool> RewriteSimplifier::Impl::knownFact(const Expr& e) const {
  for (auto& f : m_analyzer->trueFacts())
    if (exprEqual(f, e)) return true;
  for (auto& f : m_analyzer->falseFacts())
    if (exprEqual(f, e)) return false;
  return std::nullopt;
}

Expr RewriteSimplifier::Impl::visit(const VarNode* n, const Expr& self) {
  Expr v = m_analyzer->boundValue(Var(n));
  if (v.defined()) return v;
  if (n->dtype.isBool()) {
    if (auto k = knownFact(self)) return boolImm(*k);
  }
  return self;
}

namespace {

/// Whether every value of integer type `inner` is a value of integer type `outer`.
bool holdsAllOf(DataType outer, DataType inner) {
  if (!outer.isIntegral() || !(inner.isIntegral() || inner.isBool())) return false;
  ConstIntBound o = ConstIntBound::ofType(outer), i = ConstIntBound::ofType(inner);
  if (outer.isUInt() && outer.bits() == 64) return i.minValue >= 0 && !(inner.isInt() && inner.bits() == 64);
  if (inner.isUInt() && inner.bits() == 64) return outer.isUInt() && outer.bits() == 64;
  return o.minValue <= i.minValue && i.maxValue <= o.maxValue;
}

Expr foldCast(DataType t, const Expr& v) {
  if (!t.isScalar()) return Expr();
  if (auto* i = v.as<IntImmNode>()) {
    if (t.isIntegral() || t.isBool()) return intImm(t, wrapToType(i->value, t));
    if (t == DataType::Float(64) || t == DataType::Float(32)) {
      int64_t lim = t.bits() == 64 ? (int64_t(1) << 53) : (int64_t(1) << 24);
      int64_t x = i->value;
      if (v.dtype().isUInt() && x < 0) return Expr();
      if (x <= lim && x >= -lim) return floatImm(t, double(x));  // exactly representable
    }
    return Expr();
  }
  if (auto* f = v.as<FloatImmNode>()) {
    if (t == DataType::Float(64)) return floatImm(t, f->value);
    if (t == DataType::Float(32) && v.dtype().bits() <= 64) return floatImm(t, double(float(f->value)));
    if ((t.isInt() || t.isUInt()) && std::isfinite(f->value)) {
      double tr = std::trunc(f->value);
      ConstIntBound r = ConstIntBound::ofType(t);
      if (t.bits() < 64 && tr >= double(r.minValue) && tr <= double(r.maxValue)) return intImm(t, int64_t(tr));
    }
    if (t.isBool()) return boolImm(f->value != 0);
  }
  return Expr();
}

}  // namespace

Expr RewriteSimplifier::Impl::visit(const CastNode* n, const Expr& self) {
  Expr v = mutate(n->value);
  if (Expr f = foldCast(n->dtype, v); f.defined()) return f;
  if (v.dtype() == n->dtype) return v;
  // cast(t, cast(t2, x)) with x of type t and t2 holding every value of t: the round trip is x.
  if (auto* inner = v.as<CastNode>()) {
    if (inner->value.dtype() == n->dtype && holdsAllOf(inner->dtype, n->dtype)) return inner->value;
  }
  if (v.same_as(n->value)) return self;
  return Expr(new CastNode(n->dtype, v));
}

namespace {
bool commutative(BinOp op) {
  switch (op) {
  case BinOp::Add: case BinOp::Mul: case BinOp::Min: case BinOp::Max: case BinOp::EQ: case BinOp::NE:
  case BinOp::And: case BinOp::Or: return true;
  default: return false;
  }
}
BinOp flipComparison(BinOp op) {
  switch (op) {
  case BinOp::LT: return BinOp::GT;
  case BinOp::LE: return BinOp::GE;
  case BinOp::GT: return BinOp::LT;
  case BinOp::GE: return BinOp::LE;
  default: return op;
  }
}
}  // namespace

Expr RewriteSimplifier::Impl::visit(const BinaryNode* n, const Expr& self) {
  if (isDone(self)) return self;
  return done(visitBinary(n, self));
}

Expr RewriteSimplifier::Impl::visit(const SelectNode* n, const Expr& self) {
  if (isDone(self)) return self;
  return done(visitSelect(n, self));
}

namespace {
/// A comparison of operands free of selects and logic: cheap to simplify once more.
bool isSimpleComparison(const Expr& e) {
  auto* b = e.as<BinaryNode>();
  if (!b || !isComparison(b->op)) return false;
  bool simple = true;
  postOrderVisit(e, [&](const IRNode* x) {
    if (x->nodeKind == NodeKind::Select || x->nodeKind == NodeKind::Not || x->nodeKind == NodeKind::Let ||
        (x->nodeKind == NodeKind::Binary && isLogical(static_cast<const BinaryNode*>(x)->op)))
      simple = false;
  });
  return simple;
}
}  // namespace

namespace {
/// Integer vector + - * of Ramp/Broadcast operands as one Ramp or Broadcast (TVM's vector rules):
/// `broadcast(x) + ramp(b, s)` is `ramp(x + b, s)`, so vector indices built by flattening
/// (row * stride + ramp) stay contiguous loads for the code generator. Null when not applicable.
Expr foldLaneAffine(BinOp op, const Expr& a, const Expr& b) {
  auto *ra = a.as<RampNode>(), *rb = b.as<RampNode>();
  auto *ba = a.as<BroadcastNode>(), *bb = b.as<BroadcastNode>();
  if (ba && bb) {
    if (op == BinOp::Add) return broadcast(ba->value + bb->value, ba->lanes);
    if (op == BinOp::Sub) return broadcast(ba->value - bb->value, ba->lanes);
    if (op == BinOp::Mul) return broadcast(ba->value * bb->value, ba->lanes);
    return Expr();
  }
  if (ra && bb) {
    if (op == BinOp::Add) return ramp(ra->base + bb->value, ra->stride, ra->lanes);
    if (op == BinOp::Sub) return ramp(ra->base - bb->value, ra->stride, ra->lanes);
    if (op == BinOp::Mul) return ramp(ra->base * bb->value, ra->stride * bb->value, ra->lanes);
    return Expr();
  }
  if (ba && rb) {
    if (op == BinOp::Add) return ramp(ba->value + rb->base, rb->stride, rb->lanes);
    if (op == BinOp::Sub) return ramp(ba->value - rb->base, -rb->stride, rb->lanes);
    if (op == BinOp::Mul) return ramp(ba->value * rb->base, ba->value * rb->stride, rb->lanes);
    return Expr();
  }
  if (ra && rb && ra->lanes == rb->lanes && op == BinOp::Add)
    return ramp(ra->base + rb->base, ra->stride + rb->stride, ra->lanes);
  return Expr();
}
} // namespace

Expr RewriteSimplifier::Impl::visitBinary(const BinaryNode* n, const Expr& self) {
  Expr a = mutate(n->a), b;
  if (n->op == BinOp::And || n->op == BinOp::Or) {
    // The right side is simplified knowing the left side's outcome that leaves it relevant.
    if (auto* c = a.as<IntImmNode>()) {
      bool v = c->value != 0;
      if (n->op == BinOp::And) return v ? mutate(n->b) : boolImm(false);
      return v ? boolImm(true) : mutate(n->b);
    }
    if (n->dtype.isScalar()) {
      ContextScope scope(*this, n->op == BinOp::And ? a : negateCondition(a));
      b = mutate(n->b);
    } else {
      b = mutate(n->b);
    }
  } else {
    b = mutate(n->b);
  }
  if (pat::isConstScalar(a) && pat::isConstScalar(b)) {
    Expr f = pat::foldBinary(n->op, a, b);
    if (pat::isConstScalar(f)) return f;
  }
  if ((n->op == BinOp::And || n->op == BinOp::Or) && n->dtype.isScalar() && !pat::isConstScalar(b) &&
      isSimpleComparison(a)) {
    // The left side may in turn be decided by the right one (`x > 2 and x == 3`).
    ContextScope scope(*this, n->op == BinOp::And ? b : negateCondition(b));
    Expr a2 = mutate(a);
    if (auto* c = a2.as<IntImmNode>()) {
      bool v = c->value != 0;
      if (n->op == BinOp::And) return v ? b : boolImm(false);
      return v ? boolImm(true) : b;
    }
  }
  Expr e = a.same_as(n->a) && b.same_as(n->b) ? self : Expr(new BinaryNode(n->dtype, n->op, a, b));
  if (!n->dtype.isScalar()) {
    if (n->dtype.isIntegral())
      if (Expr f = foldLaneAffine(n->op, a, b); f.defined()) return mutate(f);
    return e;
  }
  // Immediates go to the right so the rule tables need only one order.
  if (pat::isConstScalar(a) && !pat::isConstScalar(b)) {
    if (commutative(n->op)) e = Expr(new BinaryNode(n->dtype, n->op, b, a));
    else if (isComparison(n->op)) e = Expr(new BinaryNode(n->dtype, flipComparison(n->op), b, a));
  }
  // An integer value pinned to one constant by the bounds in scope is that constant.
  if (isSignedIndex(n->dtype)) {
    ConstIntBound cb = bound(e);
    if (cb.isPoint()) return intImm(n->dtype, cb.minValue);
  }
  switch (n->op) {
  case BinOp::Add: return rewriteAdd(e);
  case BinOp::Sub: return rewriteSub(e);
  case BinOp::Mul: return rewriteMul(e);
  case BinOp::Div:
  case BinOp::Mod:
  case BinOp::FloorDiv:
  case BinOp::FloorMod: return rewriteDiv(e);
  case BinOp::Min:
  case BinOp::Max: return rewriteMinMax(e);
  case BinOp::And:
  case BinOp::Or: return rewriteLogical(e);
  default: return rewriteCmp(e);
  }
}

Expr RewriteSimplifier::Impl::visit(const NotNode* n, const Expr& self) {
  Expr a = mutate(n->a);
  if (auto* c = a.as<IntImmNode>()) return boolImm(c->value == 0);
  Expr e = a.same_as(n->a) ? self : Expr(new NotNode(a));
  if (!e.dtype().isScalar()) return e;
  return rewriteNot(e);
}

std::shared_ptr<const RewriteSimplifier::Impl::OuterFacts> RewriteSimplifier::Impl::snapshotFacts() const {
  auto o = std::make_shared<OuterFacts>();
  o->bounds = m_analyzer->varBounds();
  for (auto& [v, b] : o->bounds)
    if (Expr x = m_analyzer->boundValue(v); x.defined()) o->values.emplace_back(v, x);
  o->trueFacts = m_analyzer->trueFacts();
  return o;
}

Expr RewriteSimplifier::Impl::visit(const BufferLoadNode* n, const Expr& self) {
  if (!m_beforeSelect) return IRMutator::visit(n, self);
  // Inside a select's branch: the indices are simplified by an analyzer that knows only what
  // held before the select (see OuterFacts).
  Analyzer outer;
  for (auto& [v, x] : m_beforeSelect->values)
    outer.bind(v, x);
  for (auto& [v, b] : m_beforeSelect->bounds)
    outer.bind(v, b.minValue, b.maxValue);
  for (auto& fact : m_beforeSelect->trueFacts)
    outer.pushConstraint(fact, true);
  std::vector<Expr> idx;
  bool changed = false;
  for (auto& i : n->indices) {
    idx.push_back(outer.rewriteSimplify(i));
    changed |= !idx.back().same_as(i);
  }
  if (!changed) return self;
  auto* c = new BufferLoadNode(*n);
  c->indices = idx;
  return Expr(c);
}

Expr RewriteSimplifier::Impl::visitSelect(const SelectNode* n, const Expr& self) {
  Expr c = mutate(n->condition);
  if (auto* k = c.as<IntImmNode>()) {
    // Both branches are evaluated in TIR, but the unused one has no effect on the value.
    return mutate(k->value ? n->trueValue : n->falseValue);
  }
  Expr t, f;
  if (c.dtype().isScalar()) {
    // The branches' loads are simplified without the condition (OuterFacts).
    struct Restore {
      std::shared_ptr<const OuterFacts>& slot;
      std::shared_ptr<const OuterFacts> saved;
      ~Restore() { slot = saved; }
    } restore{m_beforeSelect, m_beforeSelect};
    if (!m_beforeSelect) m_beforeSelect = snapshotFacts();
    {
      ContextScope scope(*this, c);
      t = mutate(n->trueValue);
    }
    ContextScope scope(*this, negateCondition(c));
    f = mutate(n->falseValue);
  } else {
    t = mutate(n->trueValue);
    f = mutate(n->falseValue);
  }
  Expr e = c.same_as(n->condition) && t.same_as(n->trueValue) && f.same_as(n->falseValue)
               ? self
               : Expr(new SelectNode(c, t, f));
  if (!e.dtype().isScalar()) return e;
  return rewriteSelect(e);
}

Expr RewriteSimplifier::Impl::visit(const LetNode* n, const Expr& self) {
  Expr v = mutate(n->value);
  int uses = 0;
  postOrderVisit(n->body, [&](const IRNode* x) { uses += x == static_cast<const IRNode*>(n->var.get()); });
  // Inline immediates, variables and values used once (expressions are pure, so this is exact).
  if (v.as<IntImmNode>() || v.as<VarNode>() || v.as<FloatImmNode>() || uses <= 1) {
    return mutate(substitute(n->body, [&](const Var& x) { return x.same_as(n->var) ? v : Expr(); }));
  }
  Expr body;
  if (isSignedIndex(v.dtype())) {
    ContextScope scope(*this, Expr(new BinaryNode(DataType::Bool(), BinOp::EQ, n->var, v)));
    body = mutate(n->body);
  } else {
    body = mutate(n->body);
  }
  if (!usesVar(body, n->var)) return body;
  if (v.same_as(n->value) && body.same_as(n->body)) return self;
  return Expr(new LetNode(n->var, v, body));
}

}  // namespace loom::arith
