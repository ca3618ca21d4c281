// hoist-workspaces: a buffer of run-time size allocated once around a loop, not once per iteration.
#include "core/transform/HoistWorkspaces.h"

#include <vector>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool constantSize(const AllocateNode* a) {
  for (const Expr& e : a->extents)
    if (!asConstInt(e)) return false;
  return true;
}

bool bufferUses(const Buffer& b, const Var& v) {
  for (const Expr& e : b->shape)
    if (usesVar(e, v)) return true;
  for (const Expr& e : b->strides)
    if (usesVar(e, v)) return true;
  return (b->elemOffset.defined() && usesVar(b->elemOffset, v)) || b->data.same_as(v);
}

class WorkspaceHoister : public IRMutator {
protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* n, const Stmt& self) override {
    // Inner loops first: their buffers rise to the top of this loop's body, then maybe past it.
    Stmt s = IRMutator::visit(n, self);
    auto* f = s.as<ForNode>();
    if (!f || (f->kind != ForKind::Serial && f->kind != ForKind::Unrolled)) return s;
    std::vector<Stmt> chain;  // the Allocates and DeclBuffers leading the body, outermost first
    bool runTimeSize = false;
    Stmt body = f->body;
    for (;;) {
      if (auto* a = body.as<AllocateNode>()) {
        if (!isOne(a->condition)) break;
        bool uses = false;
        for (const Expr& e : a->extents) uses = uses || usesVar(e, f->loopVar);
        if (uses) break;
        runTimeSize = runTimeSize || !constantSize(a);
        chain.push_back(body);
        body = a->body;
      } else if (auto* d = body.as<DeclBufferNode>()) {
        if (bufferUses(d->buffer, f->loopVar)) break;
        chain.push_back(body);
        body = d->body;
      } else {
        break;
      }
    }
    if (!runTimeSize) return s;
    Stmt out(new ForNode(f->loopVar, f->min, f->extent, f->kind, body, f->threadTag, f->annotations));
    for (size_t k = chain.size(); k-- > 0;) {
      if (auto* a = chain[k].as<AllocateNode>())
        out = Stmt(new AllocateNode(a->bufferVar, a->dtype, a->extents, a->condition, out, a->scope, a->annotations));
      else
        out = Stmt(new DeclBufferNode(chain[k].as<DeclBufferNode>()->buffer, out));
    }
    return out;
  }
};

}  // namespace

PrimFunc hoistWorkspaces(const PrimFunc& f) {
  Stmt body = WorkspaceHoister().mutate(f->body);
  return body.same_as(f->body) ? f : updateBody(f, body);
}

}  // namespace loom::transform
