// TE computes of the elementwise and broadcast graph ops: unary math, binary arithmetic,
// comparisons, logic, where, cast, clip.
#include <cmath>
#include <limits>
#include <vector>

#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

using UnaryExpr = std::function<Expr(Expr x, const graph::CallNode& call)>;
using BinaryExpr = std::function<Expr(Expr a, Expr b)>;

void unary(const std::string& name, UnaryExpr f) {
  setSimple(
      name,
      [f](const graph::CallNode& call, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        return f(in[0](exprs(i)), call);
      },
      "elemwise");
}

void binary(const std::string& name, BinaryExpr f) {
  setSimple(
      name,
      [f](const graph::CallNode&, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        return f(broadcastLoad(in[0], i, in), broadcastLoad(in[1], i, in));
      },
      "broadcast");
}

Expr fcall(const char* fn, Expr x) { return tir::call(x.dtype(), fn, {x}); }
Expr fconst(const Expr& like, double v) { return tir::makeConst(like.dtype(), v); }

/// Float math of an integer argument goes through float64 and back.
UnaryExpr floatMath(std::function<Expr(Expr)> f) {
  return [f](Expr x, const graph::CallNode&) {
    if (x.dtype().isFloat()) return f(x);
    return tir::cast(x.dtype(), f(tir::cast(DataType::Float(64), x)));
  };
}

Expr isNaN(Expr x) { return tir::ne(x, x); }

/// atan in float64 without a libm intrinsic: |x| > 1 through pi/2 - atan(1/x), |x| > tan(pi/8)
/// through pi/4 + atan((x-1)/(x+1)), then the odd Taylor series (error < 1e-10).
Expr atan64(Expr x) {
  DataType f = DataType::Float(64);
  auto c = [&](double v) { return tir::makeConst(f, v); };
  Expr ax = tir::call(f, "fabs", {x});
  Expr big = ax > c(1.0);
  Expr u = tir::select(big, c(1.0) / tir::max(ax, c(1.0)), ax);
  Expr mid = u > c(0.41421356237309503);
  Expr t = tir::select(mid, (u - c(1.0)) / (u + c(1.0)), u);
  Expr t2 = t * t;
  Expr poly = c(0.0);
  for (int k = 21; k >= 1; k -= 2) poly = poly * t2 + c((k % 4 == 1 ? 1.0 : -1.0) / k);
  Expr r = tir::select(mid, c(0.78539816339744831) + t * poly, t * poly);
  r = tir::select(big, c(1.5707963267948966) - r, r);
  return tir::select(x < c(0.0), -r, r);
}

UnaryExpr viaFloat64(std::function<Expr(Expr)> f) {
  return [f](Expr x, const graph::CallNode&) {
    DataType d = DataType::Float(64);
    return tir::cast(x.dtype(), f(x.dtype() == d ? x : tir::cast(d, x)));
  };
}

/// exp(x) - 1 accurate near 0, from exp and arithmetic only (so every backend has it): for
/// |x| < 0.5 the Taylor series x * (1 + x/2 + x^2/6 + ...) in Horner form, truncated where the
/// next term is below the type's rounding (relative error a few ulp); elsewhere exp(x) - 1, whose
/// result is at least 0.39 in magnitude there, so the absolute error of exp is a small relative
/// one. float16 and bfloat16 compute in float32.
Expr expm1(Expr x) {
  DataType t = x.dtype();
  if (t.bits() < 32) return tir::cast(t, expm1(tir::cast(DataType::Float(32, t.lanes()), x)));
  auto c = [&](double v) { return tir::makeConst(t, v); };
  // 0.5^n / (n + 1)! below 2^-26 (float32) or 2^-55 (float64).
  int terms = t.bits() == 64 ? 15 : 9;
  double inv = 1;
  std::vector<double> coef;  // 1/1!, 1/2!, ..., 1/terms!
  for (int k = 1; k <= terms; ++k) coef.push_back(inv /= k);
  Expr poly = c(coef.back());
  for (int k = terms - 2; k >= 0; --k) poly = poly * x + c(coef[size_t(k)]);
  Expr small = tir::call(t, "fabs", {x}) < c(0.5);
  return tir::select(small, x * poly, fcall("exp", x) - c(1.0));
}

/// log(1 + x) accurate near 0, from log and arithmetic only: for |x| < 0.5 the series
/// 2 atanh(s) = 2 (s + s^3/3 + s^5/5 + ...) of s = x / (2 + x) (|s| <= 1/3, s has one rounding),
/// truncated below the type's rounding; elsewhere log(1 + x), at least 0.28 in magnitude there.
/// float16 and bfloat16 compute in float32.
Expr log1p(Expr x) {
  DataType t = x.dtype();
  if (t.bits() < 32) return tir::cast(t, log1p(tir::cast(DataType::Float(32, t.lanes()), x)));
  auto c = [&](double v) { return tir::makeConst(t, v); };
  // (1/9)^k / (2k + 1) below 2^-26 (float32) or 2^-55 (float64).
  int terms = t.bits() == 64 ? 17 : 8;
  Expr s = x / (c(2.0) + x);
  Expr s2 = s * s;
  Expr poly = c(1.0 / (2 * terms - 1));
  for (int k = terms - 2; k >= 0; --k) poly = poly * s2 + c(1.0 / (2 * k + 1));
  Expr small = tir::call(t, "fabs", {x}) < c(0.5);
  return tir::select(small, c(2.0) * s * poly, fcall("log", c(1.0) + x));
}

/// sinh without exp(x) - exp(-x)'s cancellation near 0: for |x| < 0.5 the series
/// x (1 + x^2/3! + x^4/5! + ...), elsewhere (exp(x) - exp(-x)) / 2.
Expr sinh(Expr x) {
  DataType t = x.dtype();
  if (t.bits() < 32) return tir::cast(t, sinh(tir::cast(DataType::Float(32, t.lanes()), x)));
  auto c = [&](double v) { return tir::makeConst(t, v); };
  int terms = t.bits() == 64 ? 9 : 5;  // 0.5^(2n) / (2n + 1)! below the type's rounding
  std::vector<double> coef;            // 1/1!, 1/3!, 1/5!, ...
  double f = 1;
  for (int k = 0; k < terms; ++k) {
    coef.push_back(1 / f);
    f *= double((2 * k + 2) * (2 * k + 3));
  }
  Expr x2 = x * x;
  Expr poly = c(coef.back());
  for (int k = terms - 2; k >= 0; --k) poly = poly * x2 + c(coef[size_t(k)]);
  Expr small = tir::call(t, "fabs", {x}) < c(0.5);
  return tir::select(small, x * poly, (fcall("exp", x) - fcall("exp", -x)) * c(0.5));
}

/// asinh(x) = sign(x) log1p(|x| + x^2 / (1 + sqrt(x^2 + 1))): no cancellation near 0 (log(x + ...))
/// nor for negative x (x + sqrt(x^2 + 1) was 0 at x = -1e4 in float32: -inf); above 1e8,
/// log(|x|) + log(2), before x^2 overflows.
Expr asinh(Expr x) {
  DataType t = x.dtype();
  if (t.bits() < 32) return tir::cast(t, asinh(tir::cast(DataType::Float(32, t.lanes()), x)));
  auto c = [&](double v) { return tir::makeConst(t, v); };
  Expr a = tir::call(t, "fabs", {x});
  Expr a2 = a * a;
  Expr r = log1p(a + a2 / (c(1.0) + fcall("sqrt", a2 + c(1.0))));
  r = tir::select(a > c(1e8), fcall("log", a) + c(0.69314718055994531), r);
  return tir::select(x < c(0.0), -r, r);
}

}  // namespace

void registerElemwiseComputes() {
  unary("nn.relu", [](Expr x, const graph::CallNode&) { return tir::max(x, tir::makeZero(x.dtype())); });
  unary("nn.leaky_relu", [](Expr x, const graph::CallNode& c) {
    return tir::select(x >= tir::makeZero(x.dtype()), x, x * fconst(x, c.attrs.getFloat("alpha")));
  });
  unary("sigmoid", floatMath([](Expr x) { return fcall("sigmoid", x); }));
  unary("tanh", floatMath([](Expr x) { return fcall("tanh", x); }));
  unary("exp", floatMath([](Expr x) { return fcall("exp", x); }));
  unary("expm1", floatMath([](Expr x) { return expm1(x); }));
  unary("log1p", floatMath([](Expr x) { return log1p(x); }));
  unary("log", floatMath([](Expr x) { return fcall("log", x); }));
  unary("sqrt", floatMath([](Expr x) { return fcall("sqrt", x); }));
  unary("rsqrt", floatMath([](Expr x) { return fconst(x, 1.0) / fcall("sqrt", x); }));
  unary("erf", floatMath([](Expr x) { return fcall("erf", x); }));
  unary("sin", floatMath([](Expr x) { return fcall("sin", x); }));
  unary("cos", floatMath([](Expr x) { return fcall("cos", x); }));
  unary("tan", floatMath([](Expr x) { return fcall("sin", x) / fcall("cos", x); }));
  unary("atan", viaFloat64([](Expr x) { return atan64(x); }));
  unary("asin", viaFloat64([](Expr x) {
    DataType f = DataType::Float(64);
    Expr one = tir::makeConst(f, 1.0);
    // asin(x) = atan(x / sqrt(1 - x^2)); +-1 map to +-pi/2 through the |x| > 1 branch of atan.
    Expr r = tir::select(x > tir::makeConst(f, 1.0) || x < tir::makeConst(f, -1.0), tir::makeConst(f, NAN),
                         atan64(x / tir::call(f, "sqrt", {tir::max(one - x * x, tir::makeConst(f, 1e-300))})));
    return r;
  }));
  unary("acos", viaFloat64([](Expr x) {
    DataType f = DataType::Float(64);
    Expr one = tir::makeConst(f, 1.0);
    Expr asin = atan64(x / tir::call(f, "sqrt", {tir::max(one - x * x, tir::makeConst(f, 1e-300))}));
    return tir::select(x > one || x < -one, tir::makeConst(f, NAN), tir::makeConst(f, 1.5707963267948966) - asin);
  }));
  unary("sinh", floatMath([](Expr x) { return sinh(x); }));
  unary("cosh", floatMath([](Expr x) { return (fcall("exp", x) + fcall("exp", -x)) * fconst(x, 0.5); }));
  unary("asinh", floatMath([](Expr x) { return asinh(x); }));
  unary("acosh", floatMath([](Expr x) { return fcall("log", x + fcall("sqrt", x * x - fconst(x, 1.0))); }));
  // 0.5 log1p(2x / (1 - x)): log((1 + x) / (1 - x)) lost x's digits near 0.
  unary("atanh", floatMath([](Expr x) { return fconst(x, 0.5) * log1p(fconst(x, 2.0) * x / (fconst(x, 1.0) - x)); }));
  unary("negative", [](Expr x, const graph::CallNode&) { return -x; });
  unary("abs", [](Expr x, const graph::CallNode&) {
    if (x.dtype().isFloat()) return fcall("fabs", x);
    if (x.dtype().isUInt() || x.dtype().isBool()) return x;
    return tir::select(x < tir::makeZero(x.dtype()), -x, x);
  });
  for (const char* r : {"floor", "ceil", "round"})
    unary(r, [r](Expr x, const graph::CallNode&) { return x.dtype().isFloat() ? fcall(r, x) : x; });
  unary("sign", [](Expr x, const graph::CallNode&) {
    Expr z = tir::makeZero(x.dtype());
    return tir::select(x > z, fconst(x, 1), tir::select(x < z, fconst(x, -1), z));
  });
  unary("copy", [](Expr x, const graph::CallNode&) { return x; });
  unary("float_fence", [](Expr x, const graph::CallNode&) { return x.dtype().isFloat() ? fcall("float_fence", x) : x; });
  unary("nn.dropout", [](Expr x, const graph::CallNode&) { return x; });
  unary("isnan", [](Expr x, const graph::CallNode&) {
    return x.dtype().isFloat() ? isNaN(x) : tir::boolImm(false);
  });
  unary("isinf", [](Expr x, const graph::CallNode& c) -> Expr {
    if (!x.dtype().isFloat()) return tir::boolImm(false);
    Expr inf = fconst(x, std::numeric_limits<double>::infinity());
    Expr pos = c.attrs.getInt("detect_positive") ? tir::eq(x, inf) : tir::boolImm(false);
    Expr neg = c.attrs.getInt("detect_negative") ? tir::eq(x, -inf) : tir::boolImm(false);
    return pos || neg;
  });
  unary("logical_not", [](Expr x, const graph::CallNode&) {
    return x.dtype().isBool() ? !x : tir::eq(x, tir::makeZero(x.dtype()));
  });
  unary("clip", [](Expr x, const graph::CallNode& c) {
    double lo = c.attrs.getFloat("a_min"), hi = c.attrs.getFloat("a_max");
    Expr r = x;
    auto fits = [&](double v) {
      if (std::isinf(v)) return false;
      if (x.dtype().isFloat()) return true;
      return v > -9.2e18 && v < 9.2e18;
    };
    if (fits(lo)) r = tir::max(r, fconst(x, lo));
    if (fits(hi)) r = tir::min(r, fconst(x, hi));
    return r;
  });
  unary("cast", [](Expr x, const graph::CallNode& c) -> Expr {
    DataType t = c.attrs.getDType("dtype");
    if (t == x.dtype()) return x;
    if (t.isBool()) return tir::ne(x, tir::makeZero(x.dtype()));
    return tir::cast(t, x);
  });

  binary("add", [](Expr a, Expr b) { return a + b; });
  binary("subtract", [](Expr a, Expr b) { return a - b; });
  binary("multiply", [](Expr a, Expr b) { return a * b; });
  binary("divide", [](Expr a, Expr b) -> Expr {
    if (a.dtype().isFloat()) return a / b;
    Expr z = tir::makeZero(b.dtype());
    // Division by zero gives 0 (the reference kernel's choice) instead of a trap.
    Expr safe = tir::select(tir::eq(b, z), tir::makeConst(b.dtype(), 1), b);
    return tir::select(tir::eq(b, z), z, tir::truncdiv(a, safe));
  });
  binary("floor_mod", [](Expr a, Expr b) -> Expr {
    if (a.dtype().isFloat()) {
      Expr r = tir::call(a.dtype(), "fmod", {a, b});
      Expr z = tir::makeZero(a.dtype());
      return tir::select(tir::ne(r, z) && tir::ne(r < z, b < z), r + b, r);
    }
    Expr z = tir::makeZero(b.dtype());
    Expr safe = tir::select(tir::eq(b, z), tir::makeConst(b.dtype(), 1), b);
    return tir::select(tir::eq(b, z), z, tir::floormod(a, safe));
  });
  binary("trunc_mod", [](Expr a, Expr b) -> Expr {
    if (a.dtype().isFloat()) return tir::call(a.dtype(), "fmod", {a, b});
    Expr z = tir::makeZero(b.dtype());
    Expr safe = tir::select(tir::eq(b, z), tir::makeConst(b.dtype(), 1), b);
    return tir::select(tir::eq(b, z), z, tir::truncmod(a, safe));
  });
  binary("power", [](Expr a, Expr b) -> Expr {
    if (a.dtype().isFloat()) return tir::call(a.dtype(), "pow", {a, b});
    DataType f = DataType::Float(64);
    return tir::cast(a.dtype(), tir::call(f, "pow", {tir::cast(f, a), tir::cast(f, b)}));
  });
  binary("maximum", [](Expr a, Expr b) { return tir::max(a, b); });
  binary("minimum", [](Expr a, Expr b) { return tir::min(a, b); });
  binary("equal", [](Expr a, Expr b) { return tir::eq(a, b); });
  binary("not_equal", [](Expr a, Expr b) { return tir::ne(a, b); });
  binary("less", [](Expr a, Expr b) { return a < b; });
  binary("less_equal", [](Expr a, Expr b) { return a <= b; });
  binary("greater", [](Expr a, Expr b) { return a > b; });
  binary("greater_equal", [](Expr a, Expr b) { return a >= b; });
  binary("logical_and", [](Expr a, Expr b) { return a && b; });
  binary("logical_or", [](Expr a, Expr b) { return a || b; });
  binary("logical_xor", [](Expr a, Expr b) { return tir::ne(a, b); });
  setSimple(
      "where",
      [](const graph::CallNode&, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        return tir::select(broadcastLoad(in[0], i, in), broadcastLoad(in[1], i, in), broadcastLoad(in[2], i, in));
      },
      "broadcast");
  setSimple(
      "nn.bias_add",
      [](const graph::CallNode& c, const std::vector<te::Tensor>& in, const std::vector<Var>& i) {
        int64_t axis = normAxis(c.attrs.getInt("axis"), int64_t(i.size()));
        return in[0](exprs(i)) + in[1](Expr(i[size_t(axis)]));
      },
      "broadcast");
}

}  // namespace loom::topi::nn
