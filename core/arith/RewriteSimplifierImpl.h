// Internal: the rewrite simplifier's mutator, shared by the per-operator Simplify_*.cpp rule files.
#pragma once
#include <memory>
#include <optional>
#include <unordered_map>
#include <vector>

#include "core/arith/Analyzer.h"
#include "core/arith/Pattern.h"
#include "core/arith/RewriteSimplifier.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::arith {

class RewriteSimplifier::Impl : public tir::IRMutator {
public:
  explicit Impl(Analyzer* analyzer) : m_analyzer(analyzer) {}
  tir::Expr run(const tir::Expr& e);

  // Rule tables. Each takes a node whose operands are already simplified and returns it, or a
  // simpler equal expression (re-simplified with again()).
  tir::Expr rewriteAdd(const tir::Expr& e);
  tir::Expr rewriteSub(const tir::Expr& e);
  tir::Expr rewriteMul(const tir::Expr& e);
  /// truncdiv, truncmod, floordiv, floormod (and float division).
  tir::Expr rewriteDiv(const tir::Expr& e);
  tir::Expr rewriteMinMax(const tir::Expr& e);
  tir::Expr rewriteCmp(const tir::Expr& e);
  /// and, or.
  tir::Expr rewriteLogical(const tir::Expr& e);
  tir::Expr rewriteNot(const tir::Expr& e);
  tir::Expr rewriteSelect(const tir::Expr& e);

  /// Simplifies a rule's output once more (bounded recursion).
  tir::Expr again(const tir::Expr& e);
  ConstIntBound bound(const tir::Expr& e) { return m_analyzer->constIntBound(e); }
  /// Decides `a op b` for signed integer operands from the bound of canonical(a - b).
  std::optional<bool> proveCompare(tir::BinOp op, const tir::Expr& a, const tir::Expr& b);
  /// True / false when `e` (boolean) is a fact in scope or the negation of one.
  std::optional<bool> knownFact(const tir::Expr& e) const;

  Analyzer* m_analyzer;

protected:
  tir::Expr visit(const tir::VarNode* n, const tir::Expr& self) override;
  tir::Expr visit(const tir::CastNode* n, const tir::Expr& self) override;
  tir::Expr visit(const tir::BinaryNode* n, const tir::Expr& self) override;
  tir::Expr visit(const tir::NotNode* n, const tir::Expr& self) override;
  tir::Expr visit(const tir::SelectNode* n, const tir::Expr& self) override;
  tir::Expr visit(const tir::LetNode* n, const tir::Expr& self) override;
  tir::Expr visit(const tir::BufferLoadNode* n, const tir::Expr& self) override;

private:
  /// What the analyzer knew before the outermost select whose branch is being simplified. A
  /// select evaluates both branches (vectorized, its loads read every lane), so its condition
  /// may simplify a branch's value but not the indices of a branch's loads: a clamp it drops
  /// lets the discarded lanes read outside the buffer (ShuffleNet's channel shuffle read 100 KB
  /// before its input). Loads inside a branch are simplified with these facts only.
  struct OuterFacts {
    VarBoundMap bounds;
    std::vector<std::pair<tir::Var, tir::Expr>> values;
    std::vector<tir::Expr> trueFacts;
  };
  std::shared_ptr<const OuterFacts> m_beforeSelect;
  std::shared_ptr<const OuterFacts> snapshotFacts() const;

  tir::Expr visitBinary(const tir::BinaryNode* n, const tir::Expr& self);
  tir::Expr visitSelect(const tir::SelectNode* n, const tir::Expr& self);
  /// True when `e` was produced by this run in the current constraint context.
  bool isDone(const tir::Expr& e) const;
  tir::Expr done(const tir::Expr& e);

  friend class ContextScope;
  int m_depth = 0;
  int m_runDepth = 0;
  int m_context = 0, m_nextContext = 0;
  std::unordered_map<const tir::ExprNode*, int> m_done;
  std::vector<tir::Expr> m_keepAlive;
};

/// A constraint known true inside a rewrite; also starts a fresh memo context.
class ContextScope {
public:
  ContextScope(RewriteSimplifier::Impl& impl, const tir::Expr& cond)
      : m_impl(impl), m_saved(impl.m_context), m_scope(*impl.m_analyzer, cond, true) {
    impl.m_context = ++impl.m_nextContext;
  }
  ~ContextScope() { m_impl.m_context = m_saved; }

private:
  RewriteSimplifier::Impl& m_impl;
  int m_saved;
  ConstraintScope m_scope;
};

/// The negation of a simplified condition without simplifying again: comparisons flip.
tir::Expr negateCondition(const tir::Expr& c);

/// A signed (non-uint) scalar integer type, where index arithmetic rules hold.
inline bool isSignedIndex(DataType t) { return t.isInt() && t.isScalar(); }

/// A signed scalar integer type whose sums are taken not to wrap: 32 and 64 bits (index
/// arithmetic; the canonical simplifier's exactDomain). int8/int16 values wrap in the program,
/// the interpreter and the generated code; + - * stay exact modulo 2^bits, but rules that compare,
/// take the min/max of, divide or take the remainder of a sum need its exact value: reducing
/// (x * 6) // 3 * 2 to x * 4 changed int8 results once x * 6 wrapped (fuzz_difftest TIR seed
/// 127151, after unroll made the multiplier a constant).
inline bool isExactIndex(DataType t) { return isSignedIndex(t) && t.bits() >= 32; }

}  // namespace loom::arith
