// Rewrite rules for min and max.
#include "core/arith/RewriteSimplifierImpl.h"

namespace loom::arith {

using namespace pat;
using tir::BinOp;

Expr RewriteSimplifier::Impl::rewriteMinMax(const Expr& e) {
  auto* n = e.as<tir::BinaryNode>();
  if (!isSignedIndex(e.dtype())) return e;
  bool isMin = n->op == BinOp::Min;
  // Decided by the bound of a - b.
  if (auto le = proveCompare(BinOp::LE, n->a, n->b)) {
    if (*le) return isMin ? n->a : n->b;
  }
  if (auto ge = proveCompare(BinOp::GE, n->a, n->b)) {
    if (*ge) return isMin ? n->b : n->a;
  }
  // The rules below look into sums: right only where they do not wrap.
  if (!isExactIndex(e.dtype())) return e;
  PVar<0> x;
  PVar<1> y;
  PVar<2> z;
  PVar<3> w;
  PVar<4> v;
  PConst<0> c0;
  PConst<1> c1;
  Rewriter rw(e);
  auto c0Pos = [&] { return rw.c(0) > 0; };
  auto c0Neg = [&] { return rw.c(0) < 0; };
  if (isMin) {
    if (rw(min(x, x), x) ||
        rw(min(min(x, y), x), min(x, y)) ||
        rw(min(min(x, y), y), min(x, y)) ||
        rw(min(x, min(x, y)), min(x, y)) ||
        rw(min(y, min(x, y)), min(x, y)) ||
        rw(min(max(x, y), x), x) ||
        rw(min(max(x, y), y), y) ||
        rw(min(x, max(x, y)), x) ||
        rw(min(y, max(x, y)), y) ||
        rw(min(min(x, c0), c1), min(x, fold(min(c0, c1)))) ||
        rw(min(x + c0, y + c0), min(x, y) + c0) ||
        rw(min(x + y, x + z), x + min(y, z)) ||
        rw(min(y + x, z + x), min(y, z) + x) ||
        rw(min(x + y, z + x), x + min(y, z)) ||
        rw(min(y + x, x + z), x + min(y, z)) ||
        rw(min(x - y, x - z), x - max(y, z)) ||
        rw(min(y - x, z - x), min(y, z) - x) ||
        rw(min(x * c0, y * c0), min(x, y) * c0, c0Pos) ||
        rw(min(x * c0, y * c0), max(x, y) * c0, c0Neg) ||
        rw(min(floordiv(x, c0), floordiv(y, c0)), floordiv(min(x, y), c0), c0Pos) ||
        rw(min(select(z, x, y), select(z, w, v)), select(z, min(x, w), min(y, v)))) {
      return again(rw.result());
    }
  } else {
    if (rw(max(x, x), x) ||
        rw(max(max(x, y), x), max(x, y)) ||
        rw(max(max(x, y), y), max(x, y)) ||
        rw(max(x, max(x, y)), max(x, y)) ||
        rw(max(y, max(x, y)), max(x, y)) ||
        rw(max(min(x, y), x), x) ||
        rw(max(min(x, y), y), y) ||
        rw(max(x, min(x, y)), x) ||
        rw(max(y, min(x, y)), y) ||
        rw(max(max(x, c0), c1), max(x, fold(max(c0, c1)))) ||
        rw(max(x + c0, y + c0), max(x, y) + c0) ||
        rw(max(x + y, x + z), x + max(y, z)) ||
        rw(max(y + x, z + x), max(y, z) + x) ||
        rw(max(x + y, z + x), x + max(y, z)) ||
        rw(max(y + x, x + z), x + max(y, z)) ||
        rw(max(x - y, x - z), x - min(y, z)) ||
        rw(max(y - x, z - x), max(y, z) - x) ||
        rw(max(x * c0, y * c0), max(x, y) * c0, c0Pos) ||
        rw(max(x * c0, y * c0), min(x, y) * c0, c0Neg) ||
        rw(max(floordiv(x, c0), floordiv(y, c0)), floordiv(max(x, y), c0), c0Pos) ||
        rw(max(select(z, x, y), select(z, w, v)), select(z, max(x, w), max(y, v)))) {
      return again(rw.result());
    }
  }
  return e;
}

}  // namespace loom::arith
