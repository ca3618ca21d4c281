// Rewrite rules for subtraction.
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;

Expr RewriteSimplifier::Impl::rewriteSub(const Expr& e) {
  PVar<0> x;
  PVar<1> y;
  PVar<2> z;
  PVar<3> w;
  PVar<4> v;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  // x - 0.0 is exactly x for every float, -0.0 and NaN included.
  if (rw(x - 0, x)) return rw.result();
  if (!e.dtype().isIntegral()) return e;
  auto c0NonZero = [&] { return rw.c(0) != 0; };
  if (rw(x - x, 0) ||
      rw(x - c0, x + fold(0 - c0)) ||
      rw((x + y) - x, y) ||
      rw((x + y) - y, x) ||
      rw(x - (x + y), 0 - y) ||
      rw(y - (x + y), 0 - x) ||
      rw((x - y) - x, 0 - y) ||
      rw(x - (x - y), y) ||
      rw((x + c0) - (y + c1), (x - y) + fold(c0 - c1)) ||
      rw(c0 - (x + c1), fold(c0 - c1) - x) ||
      rw(c0 - (c1 - x), x + fold(c0 - c1)) ||
      rw((c0 - x) - (c1 - y), (y - x) + fold(c0 - c1)) ||
      rw(x * c0 - x, x * fold(c0 - 1)) ||
      rw(x - x * c0, x * fold(1 - c0)) ||
      rw(x * c0 - x * c1, x * fold(c0 - c1)) ||
      rw(select(z, x, y) - select(z, w, v), select(z, x - w, y - v))) {
    return again(rw.result());
  }
  if (!isSignedIndex(e.dtype())) return e;
  if (rw((x + c0) - y, (x - y) + c0) ||
      rw(x - (y + c0), (x - y) + fold(0 - c0)) ||
      rw((x + y) - (x + z), y - z) ||
      rw((y + x) - (z + x), y - z) ||
      rw((x + y) - (z + x), y - z) ||
      rw((y + x) - (x + z), y - z) ||
      rw(x - floordiv(x, c0) * c0, floormod(x, c0), c0NonZero) ||
      rw(x - truncdiv(x, c0) * c0, truncmod(x, c0), c0NonZero)) {
    return again(rw.result());
  }
  // min and max of sums: exact only where sums do not wrap.
  if (!isExactIndex(e.dtype())) return e;
  if (rw(min(x, y) - x, min(0, y - x)) ||
      rw(max(x, y) - x, max(0, y - x)) ||
      rw(min(y, x) - x, min(y - x, 0)) ||
      rw(max(y, x) - x, max(y - x, 0))) {
    return again(rw.result());
  }
  return e;
}

}  // namespace loom::arith
