// Rewrite rules for truncdiv, truncmod, floordiv and floormod (and float division by one).
#include "core/arith/Eval.h"
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;
using tir::BinOp;
using tir::intImm;

namespace {
bool divides(int64_t d, int64_t v) { return d != 0 && d != -1 ? v % d == 0 : d == -1; }
}  // namespace

Expr RewriteSimplifier::Impl::rewriteDiv(const Expr& e) {
  auto* n = e.as<tir::BinaryNode>();
  PVar<0> x;
  PVar<1> y;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  if (!e.dtype().isIntegral()) {
    // x / 1.0 is exactly x for every float.
    if (n->op == BinOp::Div && rw(truncdiv(x, 1), x)) return rw.result();
    return e;
  }
  if (rw(truncdiv(x, 1), x) || rw(floordiv(x, 1), x) || rw(truncmod(x, 1), 0) || rw(floormod(x, 1), 0))
    return rw.result();
  if (!isSignedIndex(e.dtype())) return e;
  const int64_t* divisor = tir::asConstInt(n->b);
  if (!divisor || *divisor == 0) return e;
  const int64_t d = *divisor;
  DataType t = e.dtype();

  // Bound rule: when the quotient is the same at both ends of the dividend's bound, it is that
  // constant and the remainder is the dividend minus a constant.
  ConstIntBound nb = bound(n->a);
  if (nb.minValue != ConstIntBound::kNegInf && nb.maxValue != ConstIntBound::kPosInf) {
    bool isFloor = n->op == BinOp::FloorDiv || n->op == BinOp::FloorMod;
    BinOp div = isFloor ? BinOp::FloorDiv : BinOp::Div;
    auto q0 = foldIntBinary(div, nb.minValue, d, t), q1 = foldIntBinary(div, nb.maxValue, d, t);
    if (q0 && q1 && *q0 == *q1) {
      if (n->op == div) return intImm(t, *q0);
      if (*q0 == 0) return n->a;
      return again(n->a - intImm(t, *q0 * d));
    }
    // A non-negative dividend with a positive divisor rounds the same both ways.
    if (!isFloor && nb.minValue >= 0 && d > 0) {
      return again(Expr(new tir::BinaryNode(t, n->op == BinOp::Div ? BinOp::FloorDiv : BinOp::FloorMod, n->a, n->b)));
    }
  }
  // The rules below look into the dividend's sum or product, whose value wraps for int8/int16.
  if (!isExactIndex(t)) return e;
  auto c0DivisibleByC1 = [&] { return divides(rw.c(1), rw.c(0)); };
  auto quotient = [&] { return intImm(t, rw.c(0) / rw.c(1)); };
  // 0 <= y < c0 for c0 > 0, from y's bound.
  auto yBelowC0 = [&] {
    ConstIntBound b = bound(rw.x(1));
    return rw.c(0) > 0 && b.minValue >= 0 && b.maxValue < rw.c(0);
  };
  auto c1MultipleOfC0 = [&] { return rw.c(0) > 0 && rw.c(1) > 0 && rw.c(1) % rw.c(0) == 0; };
  auto innerQuotient = [&] { return intImm(t, rw.c(1) / rw.c(0)); };
  switch (n->op) {
  case BinOp::FloorDiv: {
    auto productFits = [&] {
      __int128 p = __int128(rw.c(0)) * rw.c(1);
      return rw.c(0) > 0 && rw.c(1) > 0 && p <= __int128(ConstIntBound::ofType(t).maxValue);
    };
    if (rw(floordiv(x * c0, c1), x * PFunc(quotient), c0DivisibleByC1) ||
        rw(floordiv(x * c0, c1), floordiv(x, PFunc(innerQuotient)), c1MultipleOfC0) ||
        rw(floordiv(x * c0 + y, c1), x * PFunc(quotient) + floordiv(y, c1), c0DivisibleByC1) ||
        rw(floordiv(y + x * c0, c1), floordiv(y, c1) + x * PFunc(quotient), c0DivisibleByC1) ||
        rw(floordiv(x + c0, c1), floordiv(x, c1) + PFunc(quotient), c0DivisibleByC1) ||
        rw(floordiv(x * c0 + y, c1), floordiv(x, PFunc(innerQuotient)), [&] { return c1MultipleOfC0() && yBelowC0(); }) ||
        rw(floordiv(y + x * c0, c1), floordiv(x, PFunc(innerQuotient)), [&] { return c1MultipleOfC0() && yBelowC0(); }) ||
        rw(floordiv(floordiv(x, c0), c1), floordiv(x, fold(c0 * c1)), productFits) ||
        rw(floordiv(x, -1), 0 - x)) {
      return again(rw.result());
    }
    break;
  }
  case BinOp::FloorMod: {
    auto constOutside = [&] { return rw.c(1) > 0 && (rw.c(0) < 0 || rw.c(0) >= rw.c(1)); };
    auto reducedConst = [&] { return intImm(t, *foldIntBinary(BinOp::FloorMod, rw.c(0), rw.c(1), t)); };
    if (rw(floormod(x * c0, c1), 0, c0DivisibleByC1) ||
        rw(floormod(x * c0 + y, c1), floormod(y, c1), c0DivisibleByC1) ||
        rw(floormod(y + x * c0, c1), floormod(y, c1), c0DivisibleByC1) ||
        rw(floormod(x + c0, c1), floormod(x, c1), c0DivisibleByC1) ||
        rw(floormod(x + c0, c1), floormod(x + PFunc(reducedConst), c1), constOutside) ||
        rw(floormod(floormod(x, c0), c1), floormod(x, c1), c0DivisibleByC1) ||
        rw(floormod(x * c0 + y, c1), floormod(x, PFunc(innerQuotient)) * c0 + y,
           [&] { return c1MultipleOfC0() && yBelowC0(); }) ||
        rw(floormod(y + x * c0, c1), floormod(x, PFunc(innerQuotient)) * c0 + y,
           [&] { return c1MultipleOfC0() && yBelowC0(); }) ||
        rw(floormod(x, -1), 0)) {
      return again(rw.result());
    }
    break;
  }
  case BinOp::Div: {
    if (rw(truncdiv(x * c0, c1), x * PFunc(quotient), c0DivisibleByC1) || rw(truncdiv(x, -1), 0 - x))
      return again(rw.result());
    break;
  }
  case BinOp::Mod: {
    if (rw(truncmod(x * c0, c1), 0, c0DivisibleByC1) || rw(truncmod(x, -1), 0)) return again(rw.result());
    break;
  }
  default: break;
  }
  return e;
}

}  // namespace loom::arith
