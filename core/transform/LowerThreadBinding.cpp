// lower-thread-binding: thread_binding loops become `attr [threadIdx.x] "thread_extent"` regions.
#include "core/transform/LowerThreadBinding.h"

#include <map>

#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

class ThreadBindingLowerer : public IRMutator {
protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* n, const Stmt& self) override {
    if (n->kind != ForKind::ThreadBinding) return IRMutator::visit(n, self);
    if (n->threadTag.empty())
      LOOM_THROW_AT(ValueError, n->span) << "loop " << n->loopVar->name << " is a thread_binding loop without a thread tag";
    // A virtual thread: its iterations run one after the other in the real thread.
    if (n->threadTag.rfind("vthread", 0) == 0)
      return withSpan(forLoop(n->loopVar, n->min, n->extent, ForKind::Serial, mutate(n->body), {}, n->annotations),
                      n->span);
    auto it = m_threads.find(n->threadTag);
    if (it == m_threads.end()) it = m_threads.emplace(n->threadTag, makeVar(n->threadTag, n->loopVar->dtype)).first;
    Var tx = it->second;
    Expr value = isZero(n->min) ? Expr(tx) : Expr(tx) + n->min;
    Stmt body = substitute(n->body, [&](const Var& v) { return v.same_as(n->loopVar) ? value : Expr(); });
    body = mutate(body);
    return withSpan(attrStmt(Expr(tx), "thread_extent", n->extent, body), n->span);
  }

private:
  std::map<std::string, Var> m_threads;
};

}  // namespace

PrimFunc lowerThreadBinding(const PrimFunc& f) { return updateBody(f, ThreadBindingLowerer().mutate(f->body)); }

}  // namespace loom::transform
