// Interval sets of integer expressions over variable domains: the region a loop nest touches.
#pragma once
#include <unordered_map>
#include <vector>

#include "core/tir/Expr.h"

namespace loom::arith {

class Analyzer;

/// The integers in [minValue, maxValue] (inclusive, possibly symbolic). An undefined end is
/// unbounded (-inf for minValue, +inf for maxValue). The empty set has `empty` set.
struct IntSet {
  tir::Expr minValue, maxValue;
  bool empty = false;

  static IntSet everything() { return {}; }
  static IntSet nothing();
  static IntSet point(const tir::Expr& v) { return interval(v, v); }
  static IntSet interval(const tir::Expr& lo, const tir::Expr& hi);
  /// [r.min, r.min + r.extent - 1].
  static IntSet fromRange(const tir::Range& r);

  bool hasLowerBound() const { return !empty && minValue.defined(); }
  bool hasUpperBound() const { return !empty && maxValue.defined(); }
  bool isEverything() const { return !empty && !minValue.defined() && !maxValue.defined(); }
  /// True when min and max are the same expression (structurally).
  bool isSinglePoint() const;
  /// The range [min, max + 1) covering the set; `maxRange` where either end is unbounded.
  tir::Range coverRange(const tir::Range& maxRange) const;
};

using IntSetMap = std::unordered_map<tir::Var, IntSet, RefHash, RefEqual>;

/// The smallest interval containing both (ends simplified with `analyzer` when given).
IntSet unionSets(const IntSet& a, const IntSet& b, Analyzer* analyzer = nullptr);
/// The overlap of both (ends simplified with `analyzer` when given; empty when provably so).
IntSet intersectSets(const IntSet& a, const IntSet& b, Analyzer* analyzer = nullptr);

/// An interval containing every value `e` takes when each variable in `dom` ranges over its set
/// (other variables are fixed symbols). Ends are simplified with `analyzer` (a fresh one when
/// null), so `i*4 + ii` with i in [0, 7], ii in [0, 3] gives [0, 31].
IntSet evalSet(const tir::Expr& e, const IntSetMap& dom, Analyzer* analyzer = nullptr);
IntSet evalSet(const tir::Expr& e, const std::unordered_map<tir::Var, tir::Range, RefHash, RefEqual>& dom,
               Analyzer* analyzer = nullptr);

/// The range each index covers when variables range over `dom`, as [min, extent). An index
/// unbounded on a side takes 0 / shape[k] there when `shape` is given; otherwise such an index
/// throws ValueError naming it.
std::vector<tir::Range> evalRegion(const std::vector<tir::Expr>& indices, const IntSetMap& dom,
                                   Analyzer* analyzer = nullptr, const std::vector<tir::Expr>* shape = nullptr);

}  // namespace loom::arith
