// Constant [min, max] bounds of integer expressions given bounds of their variables.
#pragma once
#include <cstdint>
#include <limits>
#include <string>
#include <unordered_map>

#include "core/tir/Expr.h"

namespace loom::arith {

/// An inclusive interval of int64 values; kNegInf / kPosInf stand for unbounded ends (so int64's
/// own extreme values read as unbounded, which is never wrong for a bound).
struct ConstIntBound {
  static constexpr int64_t kPosInf = std::numeric_limits<int64_t>::max();
  static constexpr int64_t kNegInf = std::numeric_limits<int64_t>::min();
  int64_t minValue = kNegInf;
  int64_t maxValue = kPosInf;

  ConstIntBound() = default;
  ConstIntBound(int64_t lo, int64_t hi) : minValue(lo), maxValue(hi) {}
  static ConstIntBound everything() { return {}; }
  static ConstIntBound point(int64_t v) { return {v, v}; }
  /// Every value of integer type `t` (unbounded for non-integer types).
  static ConstIntBound ofType(DataType t);

  bool isEverything() const { return minValue == kNegInf && maxValue == kPosInf; }
  bool isPoint() const { return minValue == maxValue && minValue != kNegInf && minValue != kPosInf; }
  bool isEmpty() const { return minValue > maxValue; }
  bool contains(int64_t v) const { return minValue <= v && v <= maxValue; }
  bool operator==(const ConstIntBound&) const = default;
  /// "[lo, hi]" with -inf / +inf.
  std::string str() const;
};

ConstIntBound intersect(const ConstIntBound& a, const ConstIntBound& b);
ConstIntBound unionOf(const ConstIntBound& a, const ConstIntBound& b);

using VarBoundMap = std::unordered_map<tir::Var, ConstIntBound, RefHash, RefEqual>;

/// The bound of scalar integer / bool expression `e` when each variable in `vars` lies in its
/// bound (other variables range over their type). Handles + - * truncdiv truncmod floordiv
/// floormod min max, comparisons, logic, select, let, casts, ramp and broadcast; anything else
/// gets its type's range. Arithmetic saturates at +-inf instead of overflowing. Division by
/// zero is assumed not to happen (a divisor bound [0, n] is read as [1, n]).
ConstIntBound constIntBound(const tir::Expr& e, const VarBoundMap& vars = {});

}  // namespace loom::arith
