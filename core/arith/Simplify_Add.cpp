// Rewrite rules for addition.
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;

Expr RewriteSimplifier::Impl::rewriteAdd(const Expr& e) {
  // Floats: x + 0.0 is not x for x = -0.0, so only immediates fold (done by the caller).
  if (!e.dtype().isIntegral()) return e;
  PVar<0> x;
  PVar<1> y;
  PVar<2> z;
  PVar<3> w;
  PVar<4> v;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  auto c0NonZero = [&] { return rw.c(0) != 0; };
  auto bothPositive = [&] {
    __int128 p = __int128(rw.c(0)) * rw.c(1);
    return rw.c(0) > 0 && rw.c(1) > 0 && p <= __int128(ConstIntBound::ofType(e.dtype()).maxValue);
  };
  if (rw(x + 0, x) ||
      rw((x + c0) + c1, x + fold(c0 + c1)) ||
      rw((x - c0) + c1, x + fold(c1 - c0)) ||
      rw((c0 - x) + c1, fold(c0 + c1) - x) ||
      rw(x + (0 - y), x - y) ||
      rw((0 - y) + x, x - y) ||
      rw((x - y) + y, x) ||
      rw(y + (x - y), x) ||
      rw(x + x, x * 2) ||
      rw(x * c0 + x, x * fold(c0 + 1)) ||
      rw(x + x * c0, x * fold(c0 + 1)) ||
      rw(x * c0 + x * c1, x * fold(c0 + c1)) ||
      rw(select(z, x, y) + select(z, w, v), select(z, x + w, y + v))) {
    return again(rw.result());
  }
  if (!isSignedIndex(e.dtype())) return e;
  if (rw((x + c0) + y, (x + y) + c0) ||
      rw(x + (y + c0), (x + y) + c0) ||
      rw(x + (c0 - y), (x - y) + c0) ||
      rw((c0 - y) + x, (x - y) + c0) ||
      rw(floordiv(x, c0) * c0 + floormod(x, c0), x, c0NonZero) ||
      rw(floormod(x, c0) + floordiv(x, c0) * c0, x, c0NonZero) ||
      rw(truncdiv(x, c0) * c0 + truncmod(x, c0), x, c0NonZero) ||
      rw(truncmod(x, c0) + truncdiv(x, c0) * c0, x, c0NonZero) ||
      rw(floormod(floordiv(x, c0), c1) * c0 + floormod(x, c0), floormod(x, fold(c0 * c1)), bothPositive) ||
      rw(floormod(x, c0) + floormod(floordiv(x, c0), c1) * c0, floormod(x, fold(c0 * c1)), bothPositive) ||
      rw((y + floormod(x, c0)) + floormod(floordiv(x, c0), c1) * c0, y + floormod(x, fold(c0 * c1)), bothPositive) ||
      rw((y + floormod(floordiv(x, c0), c1) * c0) + floormod(x, c0), y + floormod(x, fold(c0 * c1)), bothPositive) ||
      rw((y + floordiv(x, c0) * c0) + floormod(x, c0), y + x, c0NonZero) ||
      rw((y + floormod(x, c0)) + floordiv(x, c0) * c0, y + x, c0NonZero)) {
    return again(rw.result());
  }
  // min and max of sums: exact only where sums do not wrap.
  if (!isExactIndex(e.dtype())) return e;
  if (rw(min(x, y - z) + z, min(x + z, y)) ||
      rw(max(x, y - z) + z, max(x + z, y)) ||
      rw(min(y - z, x) + z, min(y, x + z)) ||
      rw(max(y - z, x) + z, max(y, x + z))) {
    return again(rw.result());
  }
  return e;
}

}  // namespace loom::arith
