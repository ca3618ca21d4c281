// remove-no-op: drop statements that do nothing.
#include "core/transform/RemoveNoOp.h"

#include "core/tir/Intrinsics.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool isNoOp(const Stmt& s) {
  if (!s.defined()) return true;
  if (auto* e = s.as<EvaluateNode>()) return e->value.as<IntImmNode>() || e->value.as<FloatImmNode>();
  if (auto* q = s.as<SeqStmtNode>()) return q->seq.empty();
  return false;
}

bool isPure(const Expr& e) {
  bool pure = true;
  postOrderVisit(e, [&](const IRNode* n) {
    if (auto* c = dynamic_cast<const CallNode*>(n)) {
      const Intrinsic* in = findIntrinsic(c->op);
      if (!in || !in->pure) pure = false;
    }
  });
  return pure;
}

bool sameIndices(const std::vector<Expr>& a, const std::vector<Expr>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (!structuralEqual(a[i], b[i])) return false;
  return true;
}

class NoOpRemover : public IRMutator {
protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* n, const Stmt& self) override {
    if (isConstInt(n->extent, 0) || (asConstInt(n->extent) && *asConstInt(n->extent) < 0)) return Stmt();
    Stmt s = IRMutator::visit(n, self);
    if (auto* f = s.as<ForNode>(); f && isNoOp(f->body)) return Stmt();
    return s;
  }
  Stmt visit(const IfThenElseNode* n, const Stmt& self) override {
    if (auto* c = asConstInt(n->condition)) return *c ? mutate(n->thenCase) : mutate(n->elseCase);
    Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
    bool tn = isNoOp(t), en = isNoOp(e);
    if (tn && en && isPure(n->condition)) return Stmt();
    if (t.same_as(n->thenCase) && e.same_as(n->elseCase)) return self;
    if (tn) return withSpan(ifThen(!n->condition, e), n->span);
    return withSpan(ifThen(n->condition, t, en ? Stmt() : e), n->span);
  }
  Stmt visit(const EvaluateNode* n, const Stmt& self) override { return isNoOp(self) ? Stmt() : self; }
  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    if (auto* l = n->value.as<BufferLoadNode>())
      if (l->buffer.same_as(n->buffer) && sameIndices(l->indices, n->indices)) return Stmt();
    return IRMutator::visit(n, self);
  }
  Stmt visit(const LetStmtNode* n, const Stmt& self) override {
    Stmt body = mutate(n->body);
    if (isPure(n->value) && !usesVar(body, n->var)) return body;
    if (body.same_as(n->body)) return self;
    return withSpan(letStmt(n->var, n->value, body), n->span);
  }
  Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    if (auto* a = s.as<AttrStmtNode>(); a && isNoOp(a->body)) return Stmt();
    return s;
  }
  Stmt visit(const DeclBufferNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    if (auto* d = s.as<DeclBufferNode>(); d && isNoOp(d->body)) return Stmt();
    return s;
  }
  Stmt visit(const AllocateNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto* a = s.as<AllocateNode>();
    if (!a) return s;
    if (isNoOp(a->body)) return Stmt();
    bool used = false;
    postOrderVisit(a->body, [&](const IRNode* x) {
      if (used) return;
      if (x == n->bufferVar.get()) used = true;
      else if (x->nodeKind == NodeKind::BufferLoad) used = static_cast<const BufferLoadNode*>(x)->buffer->data.same_as(n->bufferVar);
      else if (x->nodeKind == NodeKind::BufferStore) used = static_cast<const BufferStoreNode*>(x)->buffer->data.same_as(n->bufferVar);
    });
    if (used) return s;
    // Unused: drop the allocation and the DeclBuffers that view it.
    Stmt body = a->body;
    while (auto* d = body.as<DeclBufferNode>()) {
      if (!d->buffer->data.same_as(n->bufferVar)) break;
      body = d->body;
    }
    return body;
  }
  Stmt visit(const SeqStmtNode* n, const Stmt& self) override {
    std::vector<Stmt> out;
    bool ch = false;
    for (auto& s : n->seq) {
      Stmt m = mutate(s);
      ch |= !m.same_as(s);
      if (!isNoOp(m)) out.push_back(m);
      else ch = true;
    }
    if (!ch) return self;
    if (out.empty()) return Stmt();
    return seq(std::move(out));
  }
};

}  // namespace

PrimFunc removeNoOps(const PrimFunc& f) {
  Stmt body = NoOpRemover().mutate(f->body);
  if (!body.defined()) body = evaluate(0);
  if (f->body.as<EvaluateNode>() && isNoOp(f->body)) return f;
  return updateBody(f, body);
}

}  // namespace loom::transform
