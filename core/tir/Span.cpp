// Attaching source spans to TIR nodes (by copying the node, since nodes are immutable).
#include "core/support/Error.h"
#include "core/tir/Op.h"

namespace loom::tir {

namespace {
template <class T> const T* cloneAs(const IRNode* n, const Span& span) {
  auto* c = new T(*static_cast<const T*>(n));
  c->span = span;
  return c;
}
}  // namespace

#define LOOM_CLONE_CASE(K)                                                                       \
  case NodeKind::K: return cloneAs<K##Node>(n, span);

Expr withSpan(Expr e, const Span& span) {
  if (!e.defined()) return e;
  const IRNode* n = e.get();
  switch (n->nodeKind) {
    LOOM_CLONE_CASE(IntImm)
    LOOM_CLONE_CASE(FloatImm)
    LOOM_CLONE_CASE(StringImm)
    LOOM_CLONE_CASE(Cast)
    LOOM_CLONE_CASE(Binary)
    LOOM_CLONE_CASE(Not)
    LOOM_CLONE_CASE(Select)
    LOOM_CLONE_CASE(Let)
    LOOM_CLONE_CASE(BufferLoad)
    LOOM_CLONE_CASE(Ramp)
    LOOM_CLONE_CASE(Broadcast)
    LOOM_CLONE_CASE(Call)
  case NodeKind::Var:
    // A Var's identity is its node: setting its span in place keeps every use pointing at it.
    const_cast<IRNode*>(n)->span = span;
    return e;
  default: break;
  }
  LOOM_ICHECK(false) << "withSpan on a statement node";
  return e;
}

Stmt withSpan(Stmt s, const Span& span) {
  if (!s.defined()) return s;
  const IRNode* n = s.get();
  switch (n->nodeKind) {
    LOOM_CLONE_CASE(BufferStore)
    LOOM_CLONE_CASE(LetStmt)
    LOOM_CLONE_CASE(AttrStmt)
    LOOM_CLONE_CASE(AssertStmt)
    LOOM_CLONE_CASE(Allocate)
    LOOM_CLONE_CASE(DeclBuffer)
    LOOM_CLONE_CASE(SeqStmt)
    LOOM_CLONE_CASE(IfThenElse)
    LOOM_CLONE_CASE(For)
    LOOM_CLONE_CASE(While)
    LOOM_CLONE_CASE(Evaluate)
    LOOM_CLONE_CASE(Block)
    LOOM_CLONE_CASE(BlockRealize)
  default: break;
  }
  LOOM_ICHECK(false) << "withSpan on an expression node";
  return s;
}

}  // namespace loom::tir
