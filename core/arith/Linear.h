// Affine decomposition of index expressions: a coefficient per variable plus a remainder.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "core/tir/Expr.h"

namespace loom::arith {

class Analyzer;

/// e == sum(coeffs[i] * vars[i]) + base, where neither coeffs nor base use any of vars.
struct LinearForm {
  std::vector<tir::Expr> coeffs;
  tir::Expr base;
  /// The coefficient of vars[i] as a constant, when it is one.
  std::optional<int64_t> constCoeff(size_t i) const;
};

/// The affine form of `e` in `vars` (coefficients and base simplified with `analyzer`, a fresh
/// one when null), or std::nullopt when `e` is not affine in them (a product of two of them, a
/// division or min of an expression using them, ...). Other variables are symbols.
std::optional<LinearForm> linearize(const tir::Expr& e, const std::vector<tir::Var>& vars,
                                    Analyzer* analyzer = nullptr);

/// True when `e` is quasi-affine in `vars`: built from them with +, -, multiplication by
/// expressions free of them, and floordiv / floormod by positive constants.
bool isQuasiAffine(const tir::Expr& e, const std::vector<tir::Var>& vars);

}  // namespace loom::arith
