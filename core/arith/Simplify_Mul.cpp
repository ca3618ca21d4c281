// Rewrite rules for multiplication.
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;

Expr RewriteSimplifier::Impl::rewriteMul(const Expr& e) {
  PVar<0> x;
  PVar<1> y;
  PVar<2> z;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  // x * 1.0 is exactly x for every float; x * 0.0 is not 0 (NaN, inf, -0.0).
  if (rw(x * 1, x)) return rw.result();
  if (!e.dtype().isIntegral()) return e;
  if (rw(x * 0, 0) ||
      rw((x * c0) * c1, x * fold(c0 * c1)) ||
      rw((x + c0) * c1, x * c1 + fold(c0 * c1)) ||
      rw((c0 - x) * c1, fold(c0 * c1) - x * c1) ||
      rw((0 - x) * c0, x * fold(0 - c0)) ||
      rw(select(z, x, y) * c0, select(z, x * c0, y * c0))) {
    return again(rw.result());
  }
  return e;
}

}  // namespace loom::arith
