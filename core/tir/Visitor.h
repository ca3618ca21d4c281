// IRVisitor (read-only walk) and IRMutator (rebuilds only what changed) over TIR.
#pragma once
#include <functional>
#include <unordered_map>

#include "core/tir/Function.h"
#include "core/tir/Stmt.h"

namespace loom::tir {

/// Walks expressions and statements. Each visit() recurses into children by default; override
/// the ones you care about and call the base to keep walking.
class IRVisitor {
public:
  virtual ~IRVisitor() = default;
  void visitExpr(const Expr& e);
  void visitStmt(const Stmt& s);
  /// Visits the index expressions of a region (min and extent of each range).
  virtual void visitRegion(const std::vector<Range>& region);

  virtual void visit(const IntImmNode*) {}
  virtual void visit(const FloatImmNode*) {}
  virtual void visit(const StringImmNode*) {}
  virtual void visit(const VarNode*) {}
  virtual void visit(const CastNode*);
  virtual void visit(const BinaryNode*);
  virtual void visit(const NotNode*);
  virtual void visit(const SelectNode*);
  virtual void visit(const LetNode*);
  virtual void visit(const BufferLoadNode*);
  virtual void visit(const RampNode*);
  virtual void visit(const BroadcastNode*);
  virtual void visit(const CallNode*);

  virtual void visit(const BufferStoreNode*);
  virtual void visit(const LetStmtNode*);
  virtual void visit(const AttrStmtNode*);
  virtual void visit(const AssertStmtNode*);
  virtual void visit(const AllocateNode*);
  virtual void visit(const DeclBufferNode*);
  virtual void visit(const SeqStmtNode*);
  virtual void visit(const IfThenElseNode*);
  virtual void visit(const ForNode*);
  virtual void visit(const WhileNode*);
  virtual void visit(const EvaluateNode*);
  virtual void visit(const BlockNode*);
  virtual void visit(const BlockRealizeNode*);
};

/// Rebuilds expressions and statements bottom-up. A node none of whose children changed is
/// returned as is (same identity), so untouched subtrees stay shared.
class IRMutator {
public:
  virtual ~IRMutator() = default;
  Expr mutate(const Expr& e);
  Stmt mutate(const Stmt& s);
  std::vector<Range> mutateRegion(const std::vector<Range>& region);

protected:
  virtual Expr visit(const IntImmNode*, const Expr& self) { return self; }
  virtual Expr visit(const FloatImmNode*, const Expr& self) { return self; }
  virtual Expr visit(const StringImmNode*, const Expr& self) { return self; }
  virtual Expr visit(const VarNode*, const Expr& self) { return self; }
  virtual Expr visit(const CastNode*, const Expr& self);
  virtual Expr visit(const BinaryNode*, const Expr& self);
  virtual Expr visit(const NotNode*, const Expr& self);
  virtual Expr visit(const SelectNode*, const Expr& self);
  virtual Expr visit(const LetNode*, const Expr& self);
  virtual Expr visit(const BufferLoadNode*, const Expr& self);
  virtual Expr visit(const RampNode*, const Expr& self);
  virtual Expr visit(const BroadcastNode*, const Expr& self);
  virtual Expr visit(const CallNode*, const Expr& self);

  virtual Stmt visit(const BufferStoreNode*, const Stmt& self);
  virtual Stmt visit(const LetStmtNode*, const Stmt& self);
  virtual Stmt visit(const AttrStmtNode*, const Stmt& self);
  virtual Stmt visit(const AssertStmtNode*, const Stmt& self);
  virtual Stmt visit(const AllocateNode*, const Stmt& self);
  virtual Stmt visit(const DeclBufferNode*, const Stmt& self);
  virtual Stmt visit(const SeqStmtNode*, const Stmt& self);
  virtual Stmt visit(const IfThenElseNode*, const Stmt& self);
  virtual Stmt visit(const ForNode*, const Stmt& self);
  virtual Stmt visit(const WhileNode*, const Stmt& self);
  virtual Stmt visit(const EvaluateNode*, const Stmt& self);
  virtual Stmt visit(const BlockNode*, const Stmt& self);
  virtual Stmt visit(const BlockRealizeNode*, const Stmt& self);

  /// Mutates a list; returns true (and fills `out`) when any element changed.
  bool mutateExprs(const std::vector<Expr>& in, std::vector<Expr>& out);
};

/// Calls `f` on every expression and statement node, children before parents.
void postOrderVisit(const Stmt& s, const std::function<void(const IRNode*)>& f);
void postOrderVisit(const Expr& e, const std::function<void(const IRNode*)>& f);

/// Replaces variables by expressions (by identity); returns the input when nothing is replaced.
Expr substitute(const Expr& e, const std::function<Expr(const Var&)>& vmap);
Stmt substitute(const Stmt& s, const std::function<Expr(const Var&)>& vmap);
Expr substitute(const Expr& e, const std::unordered_map<Var, Expr, RefHash, RefEqual>& vmap);
Stmt substitute(const Stmt& s, const std::unordered_map<Var, Expr, RefHash, RefEqual>& vmap);

/// True when `v` occurs in `e`.
bool usesVar(const Expr& e, const Var& v);
bool usesVar(const Stmt& s, const Var& v);

}  // namespace loom::tir
