// Symbolic interval arithmetic over variable domains; union, intersection and region covering.
#include "core/arith/IntSet.h"

#include <unordered_set>

#include "core/arith/Analyzer.h"
#include "core/arith/ExprOrder.h"
#include "core/arith/ExprText.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::arith {

using namespace tir;

IntSet IntSet::nothing() {
  IntSet s;
  s.empty = true;
  return s;
}

IntSet IntSet::interval(const Expr& lo, const Expr& hi) {
  IntSet s;
  s.minValue = lo;
  s.maxValue = hi;
  return s;
}

IntSet IntSet::fromRange(const Range& r) {
  if (isConstInt(r.extent, 1)) return point(r.min);
  Analyzer a;
  return interval(r.min, a.simplify(r.min + r.extent - 1));
}

bool IntSet::isSinglePoint() const {
  return !empty && minValue.defined() && maxValue.defined() && exprEqual(minValue, maxValue);
}

Range IntSet::coverRange(const Range& maxRange) const {
  if (empty) return Range(maxRange.min.defined() ? maxRange.min : Expr(0), makeZero(maxRange.min.defined() ? maxRange.min.dtype() : DataType::Int(32)));
  if (!minValue.defined() || !maxValue.defined()) return maxRange;
  if (exprEqual(minValue, maxValue)) return Range(minValue, makeConst(minValue.dtype(), 1));
  Analyzer a;
  return Range(minValue, a.simplify(maxValue - minValue + 1));
}

namespace {

Expr simplified(Analyzer* a, const Expr& e) { return e.defined() ? a->simplify(e) : e; }

/// min / max of two ends where undefined is -inf (forMin) or +inf (!forMin).
Expr combineEnds(Analyzer* a, const Expr& x, const Expr& y, BinOp op, bool undefinedWins) {
  if (!x.defined() || !y.defined()) {
    if (undefinedWins) return Expr();
    return x.defined() ? x : y;
  }
  if (exprEqual(x, y)) return x;
  return a->simplify(binary(op, x, y));
}

}  // namespace

IntSet unionSets(const IntSet& x, const IntSet& y, Analyzer* analyzer) {
  if (x.empty) return y;
  if (y.empty) return x;
  Analyzer local;
  Analyzer* a = analyzer ? analyzer : &local;
  return IntSet::interval(combineEnds(a, x.minValue, y.minValue, BinOp::Min, true),
                          combineEnds(a, x.maxValue, y.maxValue, BinOp::Max, true));
}

IntSet intersectSets(const IntSet& x, const IntSet& y, Analyzer* analyzer) {
  if (x.empty || y.empty) return IntSet::nothing();
  Analyzer local;
  Analyzer* a = analyzer ? analyzer : &local;
  IntSet r = IntSet::interval(combineEnds(a, x.minValue, y.minValue, BinOp::Max, false),
                              combineEnds(a, x.maxValue, y.maxValue, BinOp::Min, false));
  if (r.minValue.defined() && r.maxValue.defined() && a->canProve(r.maxValue < r.minValue)) return IntSet::nothing();
  return r;
}

namespace {

class SetEvaluator {
public:
  SetEvaluator(const IntSetMap& dom, Analyzer* a) : m_dom(dom), m_a(a) {}

  IntSet eval(const Expr& e) {
    if (!usesDom(e) && e.dtype().lanes() == 1) return IntSet::point(e);
    IntSet r = evalRaw(e);
    if (r.empty) return r;
    return IntSet::interval(simplified(m_a, r.minValue), simplified(m_a, r.maxValue));
  }

private:
  bool usesDom(const Expr& e) {
    bool found = false;
    postOrderVisit(e, [&](const IRNode* n) {
      if (found || n->nodeKind != NodeKind::Var) return;
      Var v(static_cast<const VarNode*>(n));
      if (m_dom.count(v) || m_locals.count(v)) found = true;
    });
    return found;
  }

  /// The constant bound of `e` over the domains, as a set (the fallback).
  IntSet constFallback(const Expr& e) {
    if (!(e.dtype().isIntegral() || e.dtype().isBool())) return IntSet::everything();
    VarBoundMap bounds = m_a->varBounds();
    auto addDom = [&](const Var& v, const IntSet& s) {
      if (s.empty) return;
      ConstIntBound lo = s.minValue.defined() ? m_a->constIntBound(s.minValue) : ConstIntBound();
      ConstIntBound hi = s.maxValue.defined() ? m_a->constIntBound(s.maxValue) : ConstIntBound();
      bounds[v] = ConstIntBound(lo.minValue, hi.maxValue);
    };
    for (auto& [v, s] : m_dom) addDom(v, s);
    for (auto& [v, s] : m_locals) addDom(v, s);
    ConstIntBound b = constIntBound(e, bounds);
    DataType t = e.dtype();
    return IntSet::interval(b.minValue == ConstIntBound::kNegInf ? Expr() : intImm(t, b.minValue),
                            b.maxValue == ConstIntBound::kPosInf ? Expr() : intImm(t, b.maxValue));
  }

  static const int64_t* constPoint(const IntSet& s) {
    return s.isSinglePoint() ? asConstInt(s.minValue) : nullptr;
  }

  static Expr addEnds(const Expr& x, const Expr& y) {
    if (!x.defined() || !y.defined()) return Expr();
    return x + y;
  }
  static Expr subEnds(const Expr& x, const Expr& y) {
    if (!x.defined() || !y.defined()) return Expr();
    return x - y;
  }

  IntSet scale(const IntSet& s, const Expr& k, bool nonNegative) {
    auto mul = [&](const Expr& x) { return x.defined() ? x * k : x; };
    if (nonNegative) return IntSet::interval(mul(s.minValue), mul(s.maxValue));
    return IntSet::interval(mul(s.maxValue), mul(s.minValue));
  }

  IntSet evalRaw(const Expr& e) {
    switch (e->nodeKind) {
    case NodeKind::Var: {
      Var v(e.as<VarNode>());
      if (auto it = m_locals.find(v); it != m_locals.end()) return it->second;
      if (auto it = m_dom.find(v); it != m_dom.end()) return it->second;
      return IntSet::point(e);
    }
    case NodeKind::Binary: return evalBinary(e.as<BinaryNode>(), e);
    case NodeKind::Select: {
      auto* n = e.as<SelectNode>();
      IntSet c = eval(n->condition);
      if (c.isSinglePoint()) {
        if (isConstInt(c.minValue, 1)) return eval(n->trueValue);
        if (isConstInt(c.minValue, 0)) return eval(n->falseValue);
      }
      return unionSets(eval(n->trueValue), eval(n->falseValue), m_a);
    }
    case NodeKind::Cast: {
      auto* n = e.as<CastNode>();
      IntSet v = eval(n->value);
      if (v.isSinglePoint()) return IntSet::point(cast(n->dtype, v.minValue));
      DataType from = n->value.dtype(), to = n->dtype;
      if (from.isIntegral() && to.isIntegral() && to.bits() >= from.bits() && from.isInt() == to.isInt()) {
        auto c = [&](const Expr& x) { return x.defined() ? cast(to, x) : x; };
        return IntSet::interval(c(v.minValue), c(v.maxValue));
      }
      return constFallback(e);
    }
    case NodeKind::Let: {
      auto* n = e.as<LetNode>();
      IntSet v = eval(n->value);
      auto saved = m_locals.find(n->var) != m_locals.end() ? std::optional(m_locals[n->var]) : std::nullopt;
      m_locals[n->var] = v;
      IntSet r = eval(n->body);
      if (saved) m_locals[n->var] = *saved;
      else m_locals.erase(n->var);
      return r;
    }
    case NodeKind::Ramp: {
      // The lanes' values: base + [0, stride * (lanes - 1)] (vector indices of tensorized code).
      auto* n = e.as<RampNode>();
      IntSet b = eval(n->base), st = eval(n->stride);
      if (b.empty || !st.isSinglePoint()) return constFallback(e);
      auto s = sign(st.minValue);
      if (!s) return constFallback(e);
      Expr span = st.minValue * intImm(st.minValue.dtype(), n->lanes - 1);
      // Canonical ends, so they compare with the scalar accesses of the same elements.
      auto canon = [&](const Expr& x) { return x.defined() ? m_a->canonicalSimplify(x) : x; };
      return *s >= 0 ? IntSet::interval(canon(b.minValue), canon(addEnds(b.maxValue, span)))
                     : IntSet::interval(canon(addEnds(b.minValue, span)), canon(b.maxValue));
    }
    case NodeKind::Broadcast: return eval(e.as<BroadcastNode>()->value);
    default: return constFallback(e);
    }
  }

  IntSet evalBinary(const BinaryNode* n, const Expr& e) {
    // Vector + - * act lane by lane: the union over the lanes is within the scalar rule's set.
    bool laneWise = n->op == BinOp::Add || n->op == BinOp::Sub || n->op == BinOp::Mul;
    if ((!n->dtype.isScalar() && !laneWise) || isComparison(n->op) || isLogical(n->op)) return constFallback(e);
    IntSet a = eval(n->a), b = eval(n->b);
    if (a.empty || b.empty) return IntSet::nothing();
    if (a.isSinglePoint() && b.isSinglePoint()) return IntSet::point(binary(n->op, a.minValue, b.minValue));
    switch (n->op) {
    case BinOp::Add: return IntSet::interval(addEnds(a.minValue, b.minValue), addEnds(a.maxValue, b.maxValue));
    case BinOp::Sub: return IntSet::interval(subEnds(a.minValue, b.maxValue), subEnds(a.maxValue, b.minValue));
    case BinOp::Mul: {
      if (b.isSinglePoint()) {
        if (auto s = sign(b.minValue)) return scale(a, b.minValue, *s >= 0);
      }
      if (a.isSinglePoint()) {
        if (auto s = sign(a.minValue)) return scale(b, a.minValue, *s >= 0);
      }
      return constFallback(e);
    }
    case BinOp::Div:
    case BinOp::FloorDiv: {
      if (b.isSinglePoint()) {
        if (auto s = sign(b.minValue); s && *s != 0) {
          auto d = [&](const Expr& x) { return x.defined() ? binary(n->op, x, b.minValue) : x; };
          if (*s > 0) return IntSet::interval(d(a.minValue), d(a.maxValue));
          return IntSet::interval(d(a.maxValue), d(a.minValue));
        }
      }
      return constFallback(e);
    }
    case BinOp::FloorMod:
    case BinOp::Mod: {
      const int64_t* c = constPoint(b);
      if (c && *c > 0 && a.minValue.defined() && a.maxValue.defined()) {
        BinOp div = n->op == BinOp::FloorMod ? BinOp::FloorDiv : BinOp::Div;
        bool sameBlock = m_a->canProveEqual(binary(div, a.minValue, b.minValue), binary(div, a.maxValue, b.minValue));
        bool nonNeg = n->op == BinOp::FloorMod || m_a->canProveGreaterEqual(a.minValue, 0);
        if (sameBlock && nonNeg)
          return IntSet::interval(binary(n->op, a.minValue, b.minValue), binary(n->op, a.maxValue, b.minValue));
      }
      return constFallback(e);
    }
    case BinOp::Min:
      return IntSet::interval(combineEnds(m_a, a.minValue, b.minValue, BinOp::Min, true),
                              combineEnds(m_a, a.maxValue, b.maxValue, BinOp::Min, false));
    case BinOp::Max:
      return IntSet::interval(combineEnds(m_a, a.minValue, b.minValue, BinOp::Max, false),
                              combineEnds(m_a, a.maxValue, b.maxValue, BinOp::Max, true));
    default: return constFallback(e);
    }
  }

  /// -1, 0 or 1 when the sign of `e` is provable.
  std::optional<int> sign(const Expr& e) {
    ConstIntBound b = m_a->constIntBound(e);
    if (b.isPoint() && b.minValue == 0) return 0;
    if (b.minValue >= 0) return 1;
    if (b.maxValue <= 0) return -1;
    return std::nullopt;
  }

  const IntSetMap& m_dom;
  Analyzer* m_a;
  IntSetMap m_locals;
};

}  // namespace

IntSet evalSet(const Expr& e, const IntSetMap& dom, Analyzer* analyzer) {
  Analyzer local;
  Analyzer* a = analyzer ? analyzer : &local;
  Expr s = e.dtype().isInt() && e.dtype().isScalar() ? a->simplify(e) : e;
  return SetEvaluator(dom, a).eval(s);
}

IntSet evalSet(const Expr& e, const std::unordered_map<Var, Range, RefHash, RefEqual>& dom, Analyzer* analyzer) {
  IntSetMap sets;
  for (auto& [v, r] : dom) sets[v] = IntSet::fromRange(r);
  return evalSet(e, sets, analyzer);
}

std::vector<Range> evalRegion(const std::vector<Expr>& indices, const IntSetMap& dom, Analyzer* analyzer,
                              const std::vector<Expr>* shape) {
  Analyzer local;
  Analyzer* a = analyzer ? analyzer : &local;
  std::vector<Range> out;
  for (size_t k = 0; k < indices.size(); ++k) {
    IntSet s = evalSet(indices[k], dom, a);
    Expr lo = s.minValue, hi = s.maxValue;
    bool haveShape = shape && k < shape->size() && (*shape)[k].defined();
    if (s.empty) {
      out.emplace_back(haveShape ? makeZero((*shape)[k].dtype()) : makeZero(indices[k].dtype()), makeZero(indices[k].dtype()));
      continue;
    }
    if (!lo.defined() || !hi.defined()) {
      if (!haveShape)
        LOOM_THROW(ValueError) << "cannot bound index " << k << " (" << exprText(indices[k])
                               << ") over the loop domain: it is unbounded " << (lo.defined() ? "above" : "below");
      if (!lo.defined()) lo = makeZero((*shape)[k].dtype());
      if (!hi.defined()) hi = a->simplify((*shape)[k] - 1);
    }
    out.emplace_back(lo, a->simplify(hi - lo + 1));
  }
  return out;
}

}  // namespace loom::arith
