// The arithmetic analyzer facade: variable bounds and facts, simplification, proofs, bounds, sets.
#pragma once
#include <cstdint>
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/arith/ConstIntBound.h"
#include "core/arith/IntSet.h"
#include "core/tir/Expr.h"

namespace loom::arith {

class RewriteSimplifier;
class CanonicalSimplifier;

/// Holds what is known about variables (ranges, values, facts under a condition) and answers
/// questions about expressions under that knowledge. Not thread-safe; cheap to create.
class Analyzer {
public:
  Analyzer();
  ~Analyzer();
  Analyzer(const Analyzer&) = delete;
  Analyzer& operator=(const Analyzer&) = delete;

  /// `v` lies in [r.min, r.min + r.extent). A range of extent 1 binds the value r.min.
  void bind(const tir::Var& v, const tir::Range& r);
  /// `v` equals `value`: simplify substitutes it, bounds follow the value's bound.
  void bind(const tir::Var& v, const tir::Expr& value);
  /// `v` lies in [lo, hi] (inclusive constants).
  void bind(const tir::Var& v, int64_t lo, int64_t hi);

  /// Rewrite and canonical simplification to a fixed point (at most `steps` rounds).
  tir::Expr simplify(const tir::Expr& e, int steps = 3);
  tir::Expr rewriteSimplify(const tir::Expr& e);
  tir::Expr canonicalSimplify(const tir::Expr& e);

  /// True only when `cond` holds for every value of the variables allowed by what is known.
  /// False means "could not prove", not "false".
  bool canProve(const tir::Expr& cond);
  bool canProveEqual(const tir::Expr& a, const tir::Expr& b);
  bool canProveGreaterEqual(const tir::Expr& e, int64_t v);
  bool canProveLess(const tir::Expr& e, int64_t v);

  ConstIntBound constIntBound(const tir::Expr& e);
  /// evalSet over `dom` with this analyzer's knowledge simplifying the ends.
  IntSet intSet(const tir::Expr& e, const IntSetMap& dom = {});

  /// Bounds known for variables (ranges, values and facts in scope). For the simplifiers.
  const VarBoundMap& varBounds() const { return m_bounds; }
  /// Facts known true (simplified conjuncts of the conditions in scope), and known false.
  const std::vector<tir::Expr>& trueFacts() const { return m_trueFacts; }
  const std::vector<tir::Expr>& falseFacts() const { return m_falseFacts; }
  /// The value bound to `v`, or undefined.
  tir::Expr boundValue(const tir::Var& v) const;

  /// Makes `cond` known true until popConstraint(token); prefer ConstraintScope. When
  /// `simplified` the condition is taken as already in simplified form.
  size_t pushConstraint(const tir::Expr& cond, bool simplified = false);
  void popConstraint(size_t token);

private:
  void addFact(const tir::Expr& cond, bool simplified);
  void refineBound(const tir::Var& v, const ConstIntBound& b);

  VarBoundMap m_bounds;
  std::unordered_map<tir::Var, tir::Expr, RefHash, RefEqual> m_values;
  std::vector<tir::Expr> m_trueFacts, m_falseFacts;
  struct Undo {
    tir::Var var;
    std::optional<ConstIntBound> old;
  };
  std::vector<Undo> m_undo;
  struct Mark {
    size_t undo, trueFacts, falseFacts;
  };
  std::vector<Mark> m_marks;
  std::unique_ptr<RewriteSimplifier> m_rewrite;
  std::unique_ptr<CanonicalSimplifier> m_canonical;
};

/// While alive, `cond` is known true in `analyzer` (inside an if, under a block predicate).
class ConstraintScope {
public:
  ConstraintScope(Analyzer& analyzer, const tir::Expr& cond, bool simplified = false)
      : m_analyzer(analyzer), m_token(analyzer.pushConstraint(cond, simplified)) {}
  ~ConstraintScope() { m_analyzer.popConstraint(m_token); }
  ConstraintScope(const ConstraintScope&) = delete;
  ConstraintScope& operator=(const ConstraintScope&) = delete;

private:
  Analyzer& m_analyzer;
  size_t m_token;
};

}  // namespace loom::arith
