// The Winograd F(2x2, 3x3) and F(4x4, 3x3) transform matrices.
#include "core/graph/Winograd.h"

#include "core/support/Error.h"

namespace loom::graph {

namespace {

// Interpolation points 0, 1, -1 (m = 2) and 0, 1, -1, 2, -2 (m = 4), plus the point at infinity;
// the input and output transforms hold small integers, so only the kernel transform (done once,
// in double, when the weights are folded) has fractions.
WinogradMatrices makeF2() {
  WinogradMatrices w;
  w.m = 2;
  w.alpha = 4;
  w.BT = {{1, 0, -1, 0}, {0, 1, 1, 0}, {0, -1, 1, 0}, {0, 1, 0, -1}};
  w.G = {{1, 0, 0}, {0.5, 0.5, 0.5}, {0.5, -0.5, 0.5}, {0, 0, 1}};
  w.AT = {{1, 1, 1, 0}, {0, 1, -1, -1}};
  return w;
}

WinogradMatrices makeF4() {
  WinogradMatrices w;
  w.m = 4;
  w.alpha = 6;
  w.BT = {{4, 0, -5, 0, 1, 0},  {0, -4, -4, 1, 1, 0}, {0, 4, -4, -1, 1, 0},
          {0, -2, -1, 2, 1, 0}, {0, 2, -1, -2, 1, 0}, {0, 4, 0, -5, 0, 1}};
  w.G = {{1.0 / 4, 0, 0},
         {-1.0 / 6, -1.0 / 6, -1.0 / 6},
         {-1.0 / 6, 1.0 / 6, -1.0 / 6},
         {1.0 / 24, 1.0 / 12, 1.0 / 6},
         {1.0 / 24, -1.0 / 12, 1.0 / 6},
         {0, 0, 1}};
  w.AT = {{1, 1, 1, 1, 1, 0}, {0, 1, -1, 2, -2, 0}, {0, 1, 1, 4, 4, 0}, {0, 1, -1, 8, -8, 1}};
  return w;
}

}  // namespace

bool winogradTileSupported(int64_t m) { return m == 2 || m == 4; }

const WinogradMatrices& winogradMatrices(int64_t m) {
  static const WinogradMatrices f2 = makeF2(), f4 = makeF4();
  if (m == 2) return f2;
  if (m == 4) return f4;
  LOOM_THROW(ValueError) << "Winograd F(" << m << "x" << m << ", 3x3) is not available (tile size 2 or 4)";
}

}  // namespace loom::graph
