// The Winograd F(2x2, 3x3) and F(4x4, 3x3) transform matrices, built from their interpolation
// points (the modified Toom-Cook construction).
#include "core/graph/Winograd.h"

#include <cstdlib>
#include <string>

#include "core/support/Error.h"

namespace loom::graph {

namespace {

/// Coefficients (lowest degree first) of prod (x - p) over `points`, skipping index `skip`.
std::vector<double> productPoly(const std::vector<double>& points, size_t skip) {
  std::vector<double> c{1.0};
  for (size_t k = 0; k < points.size(); ++k) {
    if (k == skip) continue;
    std::vector<double> n(c.size() + 1, 0.0);
    for (size_t i = 0; i < c.size(); ++i) {
      n[i] -= points[k] * c[i];
      n[i + 1] += c[i];
    }
    c = std::move(n);
  }
  return c;
}

double power(double p, size_t k) {
  double r = 1.0;
  while (k-- > 0) r *= p;
  return r;
}

}  // namespace

WinogradMatrices winogradFromPoints(int64_t m, const std::vector<double>& points) {
  const size_t a = size_t(m) + 2;
  LOOM_ICHECK(points.size() + 1 == a) << "F(" << m << ", 3) needs " << a - 1 << " finite points";
  WinogradMatrices w;
  w.m = m;
  w.alpha = int64_t(a);
  w.BT.assign(a, std::vector<double>(a, 0.0));
  w.G.assign(a, std::vector<double>(3, 0.0));
  w.AT.assign(size_t(m), std::vector<double>(a, 0.0));
  for (size_t i = 0; i + 1 < a; ++i) {
    // Row i of B^T: the polynomial that vanishes at every other point; G's row divides by its
    // value at p_i; column i of A^T evaluates the output polynomial at p_i.
    std::vector<double> q = productPoly(points, i);
    double norm = 1.0;
    for (size_t k = 0; k + 1 < a; ++k)
      if (k != i) norm *= points[i] - points[k];
    for (size_t j = 0; j < q.size(); ++j) w.BT[i][j] = q[j];
    for (size_t j = 0; j < 3; ++j) w.G[i][j] = power(points[i], j) / norm;
    for (size_t k = 0; k < size_t(m); ++k) w.AT[k][i] = power(points[i], k);
  }
  // The point at infinity: the leading coefficients.
  const std::vector<double> all = productPoly(points, points.size());
  for (size_t j = 0; j < all.size(); ++j) w.BT[a - 1][j] = all[j];
  w.G[a - 1][2] = 1.0;
  w.AT[size_t(m) - 1][a - 1] = 1.0;
  return w;
}

bool winogradTileSupported(int64_t m) { return m == 2 || m == 4; }

const WinogradMatrices& winogradMatrices(int64_t m) {
  // LOOM_NO_WINOGRAD_HALF_POINT=1 restores F(4x4)'s points 0, +-1, +-2 (for A/B measurements).
  static const bool halfPoint = [] {
    const char* v = std::getenv("LOOM_NO_WINOGRAD_HALF_POINT");
    return !(v && *v && std::string(v) != "0");
  }();
  static const WinogradMatrices f2 = winogradFromPoints(2, kWinogradPointsF2),
                                f4 = winogradFromPoints(4, halfPoint ? kWinogradPointsF4 : kWinogradPointsF4Lavin);
  if (m == 2) return f2;
  if (m == 4) return f4;
  LOOM_THROW(ValueError) << "Winograd F(" << m << "x" << m << ", 3x3) is not available (tile size 2 or 4)";
}

}  // namespace loom::graph
