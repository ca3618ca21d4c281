// Pattern matcher support: immediate folding when results are built, literal matching.
#include "core/arith/Pattern.h"

#include <cmath>

#include "core/arith/Eval.h"
#include "core/tir/Op.h"

namespace loom::arith::pat {

using namespace tir;

bool isConstScalar(const Expr& e) {
  return (e.as<IntImmNode>() || e.as<FloatImmNode>()) && e.dtype().isScalar();
}

namespace {
std::optional<double> foldFloat(BinOp op, double a, double b) {
  switch (op) {
  case BinOp::Add: return a + b;
  case BinOp::Sub: return a - b;
  case BinOp::Mul: return a * b;
  case BinOp::Div:
    if (b == 0) return std::nullopt;
    return a / b;
  case BinOp::Min: return std::fmin(a, b);
  case BinOp::Max: return std::fmax(a, b);
  case BinOp::EQ: return a == b;
  case BinOp::NE: return a != b;
  case BinOp::LT: return a < b;
  case BinOp::LE: return a <= b;
  case BinOp::GT: return a > b;
  case BinOp::GE: return a >= b;
  default: return std::nullopt;
  }
}
}  // namespace

Expr foldBinary(BinOp op, const Expr& a, const Expr& b) {
  auto *ia = a.as<IntImmNode>(), *ib = b.as<IntImmNode>();
  if (ia && ib && a.dtype() == b.dtype() && a.dtype().isScalar()) {
    if (auto v = foldIntBinary(op, ia->value, ib->value, a.dtype())) {
      DataType t = isComparison(op) || isLogical(op) ? DataType::Bool() : a.dtype();
      return intImm(t, *v);
    }
  }
  auto *fa = a.as<FloatImmNode>(), *fb = b.as<FloatImmNode>();
  DataType t = a.dtype();
  // Fold floats only where the host computes exactly what the target type would: float64, and
  // float32 by rounding the double result once (exact for + - * / of two floats).
  if (fa && fb && t == b.dtype() && t.isScalar() && (t == DataType::Float(64) || t == DataType::Float(32))) {
    if (auto v = foldFloat(op, fa->value, fb->value)) {
      if (isComparison(op)) return boolImm(*v != 0);
      double r = t.bits() == 32 ? double(float(*v)) : *v;
      return floatImm(t, r);
    }
  }
  return binary(op, a, b);
}

bool PLit::match(const Expr& e, MatchState&) const {
  if (auto* i = e.as<IntImmNode>()) return i->value == v && e.dtype().isScalar();
  if (auto* f = e.as<FloatImmNode>()) return f->value == double(v) && e.dtype().isScalar();
  return false;
}

Expr PLit::build(MatchState&, DataType t) const {
  if (!(t.isIntegral() || t.isFloat() || t.isBool())) t = DataType::Int(32);
  return makeConst(t.element(), double(v));
}

Expr buildNot(const Expr& a) {
  if (auto* i = a.as<IntImmNode>()) return boolImm(i->value == 0);
  return !a;
}

Expr buildSelect(const Expr& c, const Expr& t, const Expr& f) {
  if (auto* i = c.as<IntImmNode>()) return i->value ? t : f;
  return select(c, t, f);
}

int64_t Rewriter::c(int i) const {
  if (auto* n = m_state.c[i].as<IntImmNode>()) return n->value;
  return 0;
}

bool Rewriter::condTrue(const Expr& e) { return isConstInt(e, 1); }

}  // namespace loom::arith::pat
