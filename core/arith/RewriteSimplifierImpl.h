// Internal: the rewrite simplifier's mutator, shared by the per-operator Simplify_*.cpp rule files.
#pragma once
#include <optional>

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

private:
  int m_depth = 0;
};

/// A signed (non-uint) scalar integer type, where index arithmetic rules hold.
inline bool isSignedIndex(DataType t) { return t.isInt() && t.isScalar(); }

}  // namespace loom::arith
