// Rewrite rules for select.
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;

Expr RewriteSimplifier::Impl::rewriteSelect(const Expr& e) {
  PVar<0> x;
  PVar<1> y;
  PVar<2> z;
  PVar<3> w;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  if (rw(select(z, x, x), x) ||
      rw(select(!z, x, y), select(z, y, x)) ||
      rw(select(z, select(w, x, y), y), select(z && w, x, y)) ||
      rw(select(z, x, select(w, x, y)), select(z || w, x, y)))
    return again(rw.result());
  auto* sel = e.as<tir::SelectNode>();
  if (!isSignedIndex(sel->trueValue.dtype())) return e;
  if (rw(select(x < y, x, y), min(x, y)) ||
      rw(select(x <= y, x, y), min(x, y)) ||
      rw(select(x < y, y, x), max(x, y)) ||
      rw(select(x <= y, y, x), max(x, y)) ||
      rw(select(x > y, x, y), max(x, y)) ||
      rw(select(x >= y, x, y), max(x, y)) ||
      rw(select(x > y, y, x), min(x, y)) ||
      rw(select(x >= y, y, x), min(x, y)) ||
      rw(select(z, x + c0, x + c1), x + select(z, c0, c1)) ||
      rw(select(z, x - y, x - w), x - select(z, y, w)) ||
      rw(select(z, x + y, x + w), x + select(z, y, w)))
    return again(rw.result());
  return e;
}

}  // namespace loom::arith
