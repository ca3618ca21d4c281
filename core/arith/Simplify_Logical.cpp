// Rewrite rules for and, or and not.
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;
using tir::BinOp;

Expr RewriteSimplifier::Impl::rewriteLogical(const Expr& e) {
  if (auto k = knownFact(e)) return tir::boolImm(*k);
  PVar<0> x;
  PVar<1> y;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  auto* n = e.as<tir::BinaryNode>();
  if (n->op == BinOp::And) {
    if (rw(x && 1, x) || rw(x && 0, 0) || rw(x && x, x) || rw(x && !x, 0) || rw(!x && x, 0) ||
        rw((x && y) && x, x && y) || rw((x && y) && y, x && y) || rw(x && (x || y), x) || rw(x && (y || x), x))
      return again(rw.result());
    if (rw(x < c0 && x < c1, x < fold(min(c0, c1))) || rw(x <= c0 && x <= c1, x <= fold(min(c0, c1))) ||
        rw(x > c0 && x > c1, x > fold(max(c0, c1))) || rw(x >= c0 && x >= c1, x >= fold(max(c0, c1))))
      return again(rw.result());
  } else {
    if (rw(x < c0 || x < c1, x < fold(max(c0, c1))) || rw(x <= c0 || x <= c1, x <= fold(max(c0, c1))) ||
        rw(x > c0 || x > c1, x > fold(min(c0, c1))) || rw(x >= c0 || x >= c1, x >= fold(min(c0, c1))))
      return again(rw.result());
    if (rw(x || 0, x) || rw(x || 1, 1) || rw(x || x, x) || rw(x || !x, 1) || rw(!x || x, 1) ||
        rw((x || y) || x, x || y) || rw((x || y) || y, x || y) || rw(x || (x && y), x) || rw(x || (y && x), x))
      return again(rw.result());
  }
  return e;
}

Expr RewriteSimplifier::Impl::rewriteNot(const Expr& e) {
  if (auto k = knownFact(e)) return tir::boolImm(*k);
  PVar<0> x;
  PVar<1> y;
  Rewriter rw(e);
  if (rw(!!x, x) || rw(!(x == y), x != y) || rw(!(x != y), x == y) || rw(!(x && y), !x || !y) ||
      rw(!(x || y), !x && !y))
    return again(rw.result());
  // Negating an order comparison is exact for integers only (NaN compares false both ways).
  auto* inner = e.as<tir::NotNode>()->a.as<tir::BinaryNode>();
  if (inner && tir::isComparison(inner->op) && inner->a.dtype().isIntegral()) {
    if (rw(!(x < y), x >= y) || rw(!(x <= y), x > y) || rw(!(x > y), x <= y) || rw(!(x >= y), x < y))
      return again(rw.result());
  }
  return e;
}

}  // namespace loom::arith
