// Interval arithmetic on int64 with saturating infinities.
#include "core/arith/ConstIntBound.h"

#include <algorithm>
#include <optional>

#include "core/arith/Eval.h"
#include "core/tir/Op.h"

namespace loom::arith {

using namespace tir;

namespace {

using B = ConstIntBound;
constexpr int64_t kPos = B::kPosInf, kNeg = B::kNegInf;

bool isInf(int64_t v) { return v == kPos || v == kNeg; }

int64_t saturate(__int128 v) {
  if (v >= __int128(kPos)) return kPos;
  if (v <= __int128(kNeg)) return kNeg;
  return int64_t(v);
}

int64_t addSat(int64_t a, int64_t b) {
  if (isInf(a)) return a;
  if (isInf(b)) return b;
  return saturate(__int128(a) + b);
}

int64_t negSat(int64_t a) {
  if (a == kPos) return kNeg;
  if (a == kNeg) return kPos;
  return -a;
}

int64_t mulSat(int64_t a, int64_t b) {
  if (a == 0 || b == 0) return 0;
  if (isInf(a) || isInf(b)) return ((a < 0) != (b < 0)) ? kNeg : kPos;
  return saturate(__int128(a) * b);
}

int64_t floorDivInt(int64_t a, int64_t b) {
  int64_t q = a / b, r = a % b;
  return (r != 0 && ((r < 0) != (b < 0))) ? q - 1 : q;
}

/// a / b for finite non-zero b, a possibly infinite.
int64_t divCorner(int64_t a, int64_t b, bool floor) {
  if (isInf(a)) return ((a < 0) != (b < 0)) ? kNeg : kPos;
  if (b == -1) return saturate(-__int128(a));
  return floor ? floorDivInt(a, b) : a / b;
}

int64_t maxAbs(const B& a) {
  if (isInf(a.minValue) || isInf(a.maxValue)) return kPos;
  return std::max(a.minValue < 0 ? -a.minValue : a.minValue, a.maxValue < 0 ? -a.maxValue : a.maxValue);
}

B fromCorners(int64_t c0, int64_t c1, int64_t c2, int64_t c3) {
  return {std::min({c0, c1, c2, c3}), std::max({c0, c1, c2, c3})};
}

/// The divisor bound with 0 removed from its ends; nullopt when it is exactly {0}.
std::optional<B> divisorBound(B b) {
  if (b.minValue == 0) b.minValue = 1;
  if (b.maxValue == 0) b.maxValue = -1;
  if (b.minValue > b.maxValue) return std::nullopt;
  return b;
}

B divBound(const B& a, const B& bIn, bool floor) {
  auto b = divisorBound(bIn);
  if (!b) return B::everything();
  if (b->minValue > 0 || b->maxValue < 0) {
    if (!isInf(b->minValue) && !isInf(b->maxValue)) {
      return fromCorners(divCorner(a.minValue, b->minValue, floor), divCorner(a.minValue, b->maxValue, floor),
                         divCorner(a.maxValue, b->minValue, floor), divCorner(a.maxValue, b->maxValue, floor));
    }
  }
  // |a / b| <= |a| for any non-zero integer b, for both roundings.
  int64_t m = maxAbs(a);
  if (a.minValue >= 0 && b->minValue > 0) return {0, m};
  return {negSat(m), m};
}

B truncModBound(const B& a, const B& bIn) {
  auto b = divisorBound(bIn);
  if (!b) return B::everything();
  int64_t m = maxAbs(*b);
  int64_t lim = m == kPos ? kPos : m - 1;  // |result| <= |b| - 1 and |result| <= |a|, sign of a
  // Smallest |b|: a dividend of smaller magnitude is its own remainder.
  int64_t minAbs = b->minValue > 0 ? b->minValue : (b->maxValue < 0 ? negSat(b->maxValue) : 1);
  if (a.minValue >= 0) return {a.maxValue < minAbs ? a.minValue : 0, std::min(a.maxValue, lim)};
  if (a.maxValue <= 0) return {std::max(a.minValue, negSat(lim)), negSat(a.minValue) < minAbs ? a.maxValue : 0};
  return {std::max(a.minValue, negSat(lim)), std::min(a.maxValue, lim)};
}

B floorModBound(const B& a, const B& bIn) {
  auto b = divisorBound(bIn);
  if (!b) return B::everything();
  if (b->minValue > 0) {
    if (a.minValue >= 0 && a.maxValue < b->minValue) return a;  // the dividend is the remainder
    int64_t hi = b->maxValue == kPos ? kPos : b->maxValue - 1;
    if (a.minValue >= 0) return {0, std::min(a.maxValue, hi)};
    return {0, hi};
  }
  if (b->maxValue < 0) {
    int64_t lo = b->minValue == kNeg ? kNeg : b->minValue + 1;
    if (a.maxValue <= 0) return {std::max(a.minValue, lo), 0};
    return {lo, 0};
  }
  return {b->minValue == kNeg ? kNeg : b->minValue + 1, b->maxValue == kPos ? kPos : b->maxValue - 1};
}

B boolBound(std::optional<bool> known) {
  if (!known) return {0, 1};
  return B::point(*known ? 1 : 0);
}

std::optional<bool> compareBounds(BinOp op, const B& a, const B& b) {
  switch (op) {
  case BinOp::LT:
    if (a.maxValue < b.minValue) return true;
    if (a.minValue >= b.maxValue) return false;
    return std::nullopt;
  case BinOp::LE:
    if (a.maxValue <= b.minValue) return true;
    if (a.minValue > b.maxValue) return false;
    return std::nullopt;
  case BinOp::GT: return compareBounds(BinOp::LT, b, a);
  case BinOp::GE: return compareBounds(BinOp::LE, b, a);
  case BinOp::EQ:
    if (a.isPoint() && b.isPoint() && a.minValue == b.minValue) return true;
    if (a.maxValue < b.minValue || b.maxValue < a.minValue) return false;
    return std::nullopt;
  case BinOp::NE: {
    auto r = compareBounds(BinOp::EQ, a, b);
    if (r) return !*r;
    return std::nullopt;
  }
  default: return std::nullopt;
  }
}

class BoundEvaluator {
public:
  explicit BoundEvaluator(const VarBoundMap& vars) : m_vars(vars) {}

  B eval(const Expr& e) {
    if (!e.defined()) return B::everything();
    DataType t = e.dtype();
    if (!(t.isIntegral() || t.isBool())) return B::everything();
    B raw = evalRaw(e), type = B::ofType(t.element());
    // An int8/int16 (or uint8/uint16) sum beyond its type wraps: any value of the type (the
    // intersection, [0, 127] for an int8 x * 6 with x in [0, 30], would exclude the wrapped
    // -106 of x = 25). Wider sums are taken not to wrap (index arithmetic).
    if (t.isIntegral() && t.bits() < 32 && (raw.minValue < type.minValue || raw.maxValue > type.maxValue)) return type;
    return intersect(raw, type);
  }

private:
  B evalRaw(const Expr& e) {
    switch (e->nodeKind) {
    case NodeKind::IntImm: {
      // The value the immediate has in its type (an out-of-range literal wraps like C).
      int64_t v = wrapToType(e.as<IntImmNode>()->value, e.dtype().element());
      if (e.dtype().isUInt() && v < 0) return B::ofType(e.dtype());
      return B::point(v);
    }
    case NodeKind::Var: {
      Var v(e.as<VarNode>());
      if (auto it = m_locals.find(v); it != m_locals.end()) return it->second;
      if (auto it = m_vars.find(v); it != m_vars.end()) return it->second;
      return B::ofType(e.dtype());
    }
    case NodeKind::Cast: {
      auto* n = e.as<CastNode>();
      DataType from = n->value.dtype();
      if (!(from.isIntegral() || from.isBool())) return B::ofType(n->dtype);
      B v = eval(n->value);
      B range = B::ofType(n->dtype.element());
      if (range.minValue <= v.minValue && v.maxValue <= range.maxValue) return v;
      return range;
    }
    case NodeKind::Binary: return evalBinary(e.as<BinaryNode>());
    case NodeKind::Not: {
      B a = eval(e.as<NotNode>()->a);
      if (a.isPoint()) return B::point(a.minValue == 0);
      if (!a.contains(0)) return B::point(0);
      return {0, 1};
    }
    case NodeKind::Select: {
      auto* n = e.as<SelectNode>();
      B c = eval(n->condition);
      if (c.isPoint()) return c.minValue ? eval(n->trueValue) : eval(n->falseValue);
      if (!c.contains(0)) return eval(n->trueValue);
      return unionOf(eval(n->trueValue), eval(n->falseValue));
    }
    case NodeKind::Let: {
      auto* n = e.as<LetNode>();
      B v = eval(n->value);
      auto it = m_locals.find(n->var);
      std::optional<B> saved = it != m_locals.end() ? std::optional(it->second) : std::nullopt;
      m_locals[n->var] = v;
      B r = eval(n->body);
      if (saved) m_locals[n->var] = *saved;
      else m_locals.erase(n->var);
      return r;
    }
    case NodeKind::Ramp: {
      auto* n = e.as<RampNode>();
      B base = eval(n->base), stride = eval(n->stride);
      B last = {addSat(base.minValue, std::min(int64_t(0), mulSat(stride.minValue, n->lanes - 1))),
                addSat(base.maxValue, std::max(int64_t(0), mulSat(stride.maxValue, n->lanes - 1)))};
      return last;
    }
    case NodeKind::Broadcast: return eval(e.as<BroadcastNode>()->value);
    default: return B::ofType(e.dtype().element());
    }
  }

  B evalBinary(const BinaryNode* n) {
    B a = eval(n->a), b = eval(n->b);
    switch (n->op) {
    case BinOp::Add: return {addSat(a.minValue, b.minValue), addSat(a.maxValue, b.maxValue)};
    case BinOp::Sub: return {addSat(a.minValue, negSat(b.maxValue)), addSat(a.maxValue, negSat(b.minValue))};
    case BinOp::Mul:
      return fromCorners(mulSat(a.minValue, b.minValue), mulSat(a.minValue, b.maxValue),
                         mulSat(a.maxValue, b.minValue), mulSat(a.maxValue, b.maxValue));
    case BinOp::Div: return divBound(a, b, false);
    case BinOp::FloorDiv: return divBound(a, b, true);
    case BinOp::Mod: return truncModBound(a, b);
    case BinOp::FloorMod: return floorModBound(a, b);
    case BinOp::Min: return {std::min(a.minValue, b.minValue), std::min(a.maxValue, b.maxValue)};
    case BinOp::Max: return {std::max(a.minValue, b.minValue), std::max(a.maxValue, b.maxValue)};
    case BinOp::And:
      if (a.maxValue == 0 || b.maxValue == 0) return B::point(0);
      if (!a.contains(0) && !b.contains(0)) return B::point(1);
      return {0, 1};
    case BinOp::Or:
      if (!a.contains(0) || !b.contains(0)) return B::point(1);
      if (a.maxValue == 0 && b.maxValue == 0 && a.minValue == 0 && b.minValue == 0) return B::point(0);
      return {0, 1};
    default:
      if (n->a.dtype().isUInt()) return {0, 1};  // bounds are signed; stay conservative
      return boolBound(compareBounds(n->op, a, b));
    }
  }

  const VarBoundMap& m_vars;
  VarBoundMap m_locals;
};

}  // namespace

ConstIntBound ConstIntBound::ofType(DataType t) {
  if (t.isBool()) return {0, 1};
  if (!t.isIntegral() || t.bits() >= 64) return t.isUInt() ? ConstIntBound(0, kPos) : everything();
  if (t.isUInt()) return {0, int64_t((uint64_t(1) << t.bits()) - 1)};
  int64_t half = int64_t(1) << (t.bits() - 1);
  return {-half, half - 1};
}

std::string ConstIntBound::str() const {
  auto s = [](int64_t v) {
    if (v == kPos) return std::string("+inf");
    if (v == kNeg) return std::string("-inf");
    return std::to_string(v);
  };
  return "[" + s(minValue) + ", " + s(maxValue) + "]";
}

ConstIntBound intersect(const ConstIntBound& a, const ConstIntBound& b) {
  return {std::max(a.minValue, b.minValue), std::min(a.maxValue, b.maxValue)};
}

ConstIntBound unionOf(const ConstIntBound& a, const ConstIntBound& b) {
  if (a.isEmpty()) return b;
  if (b.isEmpty()) return a;
  return {std::min(a.minValue, b.minValue), std::max(a.maxValue, b.maxValue)};
}

ConstIntBound constIntBound(const Expr& e, const VarBoundMap& vars) { return BoundEvaluator(vars).eval(e); }

}  // namespace loom::arith
