// Rewrite rules for comparisons: facts in scope, proofs from bounds, constant moves.
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;
using tir::BinOp;

Expr RewriteSimplifier::Impl::rewriteCmp(const Expr& e) {
  auto* n = e.as<tir::BinaryNode>();
  if (auto k = knownFact(e)) return tir::boolImm(*k);
  if (!isSignedIndex(n->a.dtype())) return e;
  if (auto r = proveCompare(n->op, n->a, n->b)) return tir::boolImm(*r);
  // The rules below move terms across the comparison: right only where sums do not wrap.
  if (!isExactIndex(n->a.dtype())) return e;
  PVar<0> x;
  PVar<1> y;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  if (rw(x + c0 < c1, x < fold(c1 - c0)) ||
      rw(x + c0 <= c1, x <= fold(c1 - c0)) ||
      rw(x + c0 > c1, x > fold(c1 - c0)) ||
      rw(x + c0 >= c1, x >= fold(c1 - c0)) ||
      rw(x + c0 == c1, x == fold(c1 - c0)) ||
      rw(x + c0 != c1, x != fold(c1 - c0)) ||
      rw(c0 - x < c1, x > fold(c0 - c1)) ||
      rw(c0 - x <= c1, x >= fold(c0 - c1)) ||
      rw(c0 - x > c1, x < fold(c0 - c1)) ||
      rw(c0 - x >= c1, x <= fold(c0 - c1)) ||
      rw(c0 - x == c1, x == fold(c0 - c1)) ||
      rw(c0 - x != c1, x != fold(c0 - c1)) ||
      rw(x + c0 < y + c1, x < y + fold(c1 - c0)) ||
      rw(x + c0 <= y + c1, x <= y + fold(c1 - c0)) ||
      rw(x + c0 == y + c1, x == y + fold(c1 - c0)) ||
      rw(x - y == 0, x == y) ||
      rw(x - y != 0, x != y)) {
    return again(rw.result());
  }
  return e;
}

}  // namespace loom::arith
