// simplify: arithmetic simplification of every expression, with loop ranges and if conditions known.
#include "core/transform/Simplify.h"

#include <algorithm>
#include <optional>

#include "core/arith/Analyzer.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

/// if_then_else / select with a constant condition (or a broadcast one) becomes the branch it
/// picks; the other branch (perhaps an out-of-bounds load) is then never emitted.
class ConstantBranchFolder : public IRMutator {
protected:
  using IRMutator::visit;
  static const int64_t* constCond(const Expr& c) {
    if (auto* b = c.as<BroadcastNode>()) return asConstInt(b->value);
    return asConstInt(c);
  }
  Expr visit(const CallNode* n, const Expr& self) override {
    if (n->op == "if_then_else" && n->args.size() == 3)
      if (auto* c = constCond(n->args[0])) return mutate(*c ? n->args[1] : n->args[2]);
    return IRMutator::visit(n, self);
  }
  Expr visit(const SelectNode* n, const Expr& self) override {
    if (auto* c = constCond(n->condition)) return mutate(*c ? n->trueValue : n->falseValue);
    return IRMutator::visit(n, self);
  }
};

Expr foldSelects(const Expr& e) { return ConstantBranchFolder().mutate(e); }

/// Nodes of `e`, counting up to `limit` (then `limit`).
int64_t nodeCount(const Expr& e, int64_t limit) {
  int64_t n = 0;
  postOrderVisit(e, [&](const IRNode*) { n = std::min(limit, n + 1); });
  return n;
}

/// A stored value of at least this many nodes inside an unrolled loop of a kernel with shape
/// symbols is left for the simplify after unroll (below).
constexpr int64_t kDeferredValueNodes = 4096;

bool readsMemory(const Expr& e) {
  bool reads = false;
  postOrderVisit(e, [&](const IRNode* n) {
    reads |= n->nodeKind == NodeKind::BufferLoad || n->nodeKind == NodeKind::Call;
  });
  return reads;
}

class StmtSimplifier : public IRMutator {
public:
  /// `symbolic`: the kernel takes shape symbols (scalar params).
  explicit StmtSimplifier(bool symbolic) : m_symbolic(symbolic) {}

protected:
  using IRMutator::visit;

  /// Expressions are simplified whole (the analyzer recurses itself), bottom-up loads first so
  /// their indices are simplified too.
  Expr simplifyExpr(const Expr& e) {
    if (!e.defined()) return e;
    Expr inner = IRMutator::mutate(e);
    if (inner.dtype().isHandle() || inner.dtype().isVoid()) return inner;
    Expr s = foldSelects(m_analyzer.simplify(inner));
    if (s.dtype() != inner.dtype()) return inner;
    // Keep the original node when nothing really changed, so "unchanged" stays detectable.
    return structuralEqual(s, e) ? e : s;
  }

  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    std::vector<Expr> idx;
    bool ch = false;
    for (auto& i : n->indices) {
      idx.push_back(simplifyExpr(i));
      ch |= !idx.back().same_as(i);
    }
    if (!ch) return self;
    return withSpan(bufferLoad(n->buffer, idx), n->span);
  }

  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    // A kernel over shape symbols: a huge value under an unrolled loop (a Winograd transform's
    // 36-way select of padded loads over `(W + 3) // 4` tiles, 50 thousand nodes) is simplified
    // once unroll has substituted the loop's constants and folded the selects on them; before,
    // each of the two simplify passes ahead of unroll spent 0.7-1.3 s on it, bounding the same
    // symbolic division chains again and again, for code the later one simplified anyway.
    const bool defer = m_symbolic && m_unrolled > 0 && nodeCount(n->value, kDeferredValueNodes) >= kDeferredValueNodes;
    Expr v = defer ? n->value : simplifyExpr(n->value);
    std::vector<Expr> idx;
    bool ch = !v.same_as(n->value);
    for (auto& i : n->indices) {
      idx.push_back(simplifyExpr(i));
      ch |= !idx.back().same_as(i);
    }
    if (!ch) return self;
    return withSpan(Stmt(new BufferStoreNode(n->buffer, v, idx)), n->span);
  }

  Stmt visit(const ForNode* n, const Stmt& self) override {
    Expr mn = simplifyExpr(n->min), ext = simplifyExpr(n->extent);
    if (auto* e = asConstInt(ext)) {
      if (*e <= 0) return evaluate(0);
      if (*e == 1 && n->kind != ForKind::ThreadBinding) {
        return mutate(substitute(n->body, [&](const Var& v) { return v.same_as(n->loopVar) ? mn : Expr(); }));
      }
    }
    bindRange(n->loopVar, mn, ext);
    m_unrolled += n->kind == ForKind::Unrolled;
    Stmt body = mutate(n->body);
    m_unrolled -= n->kind == ForKind::Unrolled;
    if (mn.same_as(n->min) && ext.same_as(n->extent) && body.same_as(n->body)) return self;
    return withSpan(forLoop(n->loopVar, mn, ext, n->kind, body, n->threadTag, n->annotations), n->span);
  }

  Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
    Expr v = simplifyExpr(n->value);
    if (n->key == "thread_extent")
      if (auto* tv = n->node.as<VarNode>()) bindRange(Var(tv), intImm(v.dtype(), 0), v);
    Stmt body = mutate(n->body);
    if (v.same_as(n->value) && body.same_as(n->body)) return self;
    return withSpan(attrStmt(n->node, n->key, v, body), n->span);
  }

  Stmt visit(const IfThenElseNode* n, const Stmt& self) override {
    Expr c = simplifyExpr(n->condition);
    if (m_analyzer.canProve(c)) return mutate(n->thenCase);
    if (m_analyzer.canProve(!c)) return n->elseCase.defined() ? mutate(n->elseCase) : evaluate(0);
    Stmt t, e;
    // A condition that reads memory is no fact inside the branch: the branch may write it.
    bool pure = !readsMemory(c);
    {
      std::optional<arith::ConstraintScope> scope;
      if (pure) scope.emplace(m_analyzer, c);
      t = mutate(n->thenCase);
    }
    if (n->elseCase.defined()) {
      std::optional<arith::ConstraintScope> scope;
      if (pure) scope.emplace(m_analyzer, !c);
      e = mutate(n->elseCase);
    }
    if (c.same_as(n->condition) && t.same_as(n->thenCase) && e.same_as(n->elseCase)) return self;
    return withSpan(ifThen(c, t, e), n->span);
  }

  Stmt visit(const LetStmtNode* n, const Stmt& self) override {
    Expr v = simplifyExpr(n->value);
    if (v.as<IntImmNode>() || v.as<FloatImmNode>())
      return mutate(substitute(n->body, [&](const Var& x) { return x.same_as(n->var) ? v : Expr(); }));
    if (v.dtype().isIntegral() && v.dtype().isScalar()) {
      arith::ConstIntBound b = m_analyzer.constIntBound(v);
      m_analyzer.bind(n->var, b.minValue, b.maxValue);
    }
    Stmt body = mutate(n->body);
    if (v.same_as(n->value) && body.same_as(n->body)) return self;
    return withSpan(letStmt(n->var, v, body), n->span);
  }

  Stmt visit(const AllocateNode* n, const Stmt& self) override {
    std::vector<Expr> ext;
    bool ch = false;
    for (auto& e : n->extents) {
      ext.push_back(simplifyExpr(e));
      ch |= !ext.back().same_as(e);
    }
    Stmt body = mutate(n->body);
    if (!ch && body.same_as(n->body)) return self;
    auto* c = new AllocateNode(*n);
    c->extents = ext;
    c->body = body;
    return Stmt(c);
  }

  Stmt visit(const EvaluateNode* n, const Stmt& self) override {
    Expr v = simplifyExpr(n->value);
    if (v.same_as(n->value)) return self;
    return evaluate(v);
  }

  Stmt visit(const AssertStmtNode* n, const Stmt& self) override {
    Expr c = simplifyExpr(n->condition);
    Stmt body = mutate(n->body);
    if (c.same_as(n->condition) && body.same_as(n->body)) return self;
    return withSpan(assertStmt(c, n->message, body), n->span);
  }

private:
  /// Binds `v` to [mn, mn + ext) as a range only: a var can be bound again by a later loop
  /// (the same Var in sequential loops), so it must never be pinned to a value.
  void bindRange(const Var& v, const Expr& mn, const Expr& ext) {
    if (isConstInt(ext, 1)) {
      arith::ConstIntBound b = m_analyzer.constIntBound(mn);
      m_analyzer.bind(v, b.minValue, b.maxValue);
    } else {
      m_analyzer.bind(v, Range(mn, ext));
    }
  }

  arith::Analyzer m_analyzer;
  const bool m_symbolic;
  int m_unrolled = 0;  ///< unrolled loops around the statement being simplified
};

}  // namespace

PrimFunc simplifyFunc(const PrimFunc& f) {
  bool symbolic = false;
  for (const Var& p : f->params) symbolic |= !p->dtype.isHandle();
  return updateBody(f, StmtSimplifier(symbolic).mutate(f->body));
}

}  // namespace loom::transform
