// Random integer expressions over bounded variables, for the arith tests' evaluation checks.
#pragma once
#include <cstdint>
#include <random>
#include <vector>

#include "core/arith/Eval.h"
#include "core/tir/Op.h"

namespace loom::arith::testing {

struct BoundedVar {
  tir::Var var;
  int64_t lo, hi;  // inclusive
};

class RandomExprGen {
public:
  RandomExprGen(uint32_t seed, std::vector<BoundedVar> vars) : m_rng(seed), m_vars(std::move(vars)) {}

  int64_t uniform(int64_t lo, int64_t hi) { return std::uniform_int_distribution<int64_t>(lo, hi)(m_rng); }
  std::mt19937& rng() { return m_rng; }

  tir::Expr leaf() {
    if (uniform(0, 3) == 0) return tir::Expr(int(uniform(-9, 9)));
    return m_vars[size_t(uniform(0, int64_t(m_vars.size()) - 1))].var;
  }

  tir::Expr smallConst(bool nonZero) {
    int64_t v = 0;
    while (v == 0) {
      v = uniform(-6, 8);
      if (!nonZero) break;
    }
    return tir::Expr(int(v));
  }

  /// An integer expression of depth at most `depth`; products keep a constant or a leaf on one
  /// side so values stay far from int32 overflow.
  tir::Expr intExpr(int depth) {
    using namespace tir;
    if (depth <= 0 || uniform(0, 9) == 0) return leaf();
    switch (uniform(0, 13)) {
    case 0:
    case 1: return intExpr(depth - 1) + intExpr(depth - 1);
    case 2:
    case 3: return intExpr(depth - 1) - intExpr(depth - 1);
    case 4: return intExpr(depth - 1) * smallConst(false);
    case 5: return uniform(0, 1) ? leaf() * leaf() : smallConst(false) * intExpr(depth - 1);
    case 6: return floordiv(intExpr(depth - 1), divisor(depth));
    case 7: return floormod(intExpr(depth - 1), divisor(depth));
    case 8: return truncdiv(intExpr(depth - 1), divisor(depth));
    case 9: return truncmod(intExpr(depth - 1), divisor(depth));
    case 10: return min(intExpr(depth - 1), intExpr(depth - 1));
    case 11: return max(intExpr(depth - 1), intExpr(depth - 1));
    case 12: return select(boolExpr(depth - 1), intExpr(depth - 1), intExpr(depth - 1));
    default: return intExpr(depth - 1) + smallConst(false);
    }
  }

  tir::Expr boolExpr(int depth) {
    using namespace tir;
    int64_t k = uniform(0, 9);
    if (depth > 1 && k == 0) return boolExpr(depth - 1) && boolExpr(depth - 1);
    if (depth > 1 && k == 1) return boolExpr(depth - 1) || boolExpr(depth - 1);
    if (depth > 1 && k == 2) return !boolExpr(depth - 1);
    Expr a = intExpr(std::max(0, depth - 1)), b = intExpr(std::max(0, depth - 2));
    switch (uniform(0, 5)) {
    case 0: return a < b;
    case 1: return a <= b;
    case 2: return a > b;
    case 3: return a >= b;
    case 4: return eq(a, b);
    default: return ne(a, b);
    }
  }

  /// A random point inside every variable's range.
  VarValueMap point() {
    VarValueMap env;
    for (auto& v : m_vars) env[v.var] = uniform(v.lo, v.hi);
    return env;
  }

  const std::vector<BoundedVar>& vars() const { return m_vars; }

private:
  tir::Expr divisor(int depth) {
    // Mostly constants (positive and negative); sometimes an expression that may be zero.
    if (uniform(0, 4) == 0) return intExpr(std::max(0, depth - 3));
    return smallConst(true);
  }

  std::mt19937 m_rng;
  std::vector<BoundedVar> m_vars;
};

}  // namespace loom::arith::testing
