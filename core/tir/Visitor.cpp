// IRVisitor and IRMutator: the default walks, and substitution built on them.
#include "core/tir/Visitor.h"

#include "core/support/Error.h"
#include "core/tir/Op.h"

namespace loom::tir {

// --- IRVisitor ---------------------------------------------------------------------------

#define LOOM_DISPATCH(K)                                                                         \
  case NodeKind::K: return visit(static_cast<const K##Node*>(n));

void IRVisitor::visitExpr(const Expr& e) {
  if (!e.defined()) return;
  const IRNode* n = e.get();
  switch (n->nodeKind) {
    LOOM_DISPATCH(IntImm)
    LOOM_DISPATCH(FloatImm)
    LOOM_DISPATCH(StringImm)
    LOOM_DISPATCH(Var)
    LOOM_DISPATCH(Cast)
    LOOM_DISPATCH(Binary)
    LOOM_DISPATCH(Not)
    LOOM_DISPATCH(Select)
    LOOM_DISPATCH(Let)
    LOOM_DISPATCH(BufferLoad)
    LOOM_DISPATCH(Ramp)
    LOOM_DISPATCH(Broadcast)
    LOOM_DISPATCH(Call)
  default: LOOM_ICHECK(false) << "statement in expression position";
  }
}

void IRVisitor::visitStmt(const Stmt& s) {
  if (!s.defined()) return;
  const IRNode* n = s.get();
  switch (n->nodeKind) {
    LOOM_DISPATCH(BufferStore)
    LOOM_DISPATCH(LetStmt)
    LOOM_DISPATCH(AttrStmt)
    LOOM_DISPATCH(AssertStmt)
    LOOM_DISPATCH(Allocate)
    LOOM_DISPATCH(DeclBuffer)
    LOOM_DISPATCH(SeqStmt)
    LOOM_DISPATCH(IfThenElse)
    LOOM_DISPATCH(For)
    LOOM_DISPATCH(While)
    LOOM_DISPATCH(Evaluate)
    LOOM_DISPATCH(Block)
    LOOM_DISPATCH(BlockRealize)
  default: LOOM_ICHECK(false) << "expression in statement position";
  }
}
#undef LOOM_DISPATCH

void IRVisitor::visitRegion(const std::vector<Range>& region) {
  for (auto& r : region) {
    visitExpr(r.min);
    visitExpr(r.extent);
  }
}

void IRVisitor::visit(const CastNode* n) { visitExpr(n->value); }
void IRVisitor::visit(const BinaryNode* n) {
  visitExpr(n->a);
  visitExpr(n->b);
}
void IRVisitor::visit(const NotNode* n) { visitExpr(n->a); }
void IRVisitor::visit(const SelectNode* n) {
  visitExpr(n->condition);
  visitExpr(n->trueValue);
  visitExpr(n->falseValue);
}
void IRVisitor::visit(const LetNode* n) {
  visitExpr(n->value);
  visitExpr(n->body);
}
void IRVisitor::visit(const BufferLoadNode* n) {
  for (auto& i : n->indices) visitExpr(i);
}
void IRVisitor::visit(const RampNode* n) {
  visitExpr(n->base);
  visitExpr(n->stride);
}
void IRVisitor::visit(const BroadcastNode* n) { visitExpr(n->value); }
void IRVisitor::visit(const CallNode* n) {
  for (auto& a : n->args) visitExpr(a);
}

void IRVisitor::visit(const BufferStoreNode* n) {
  visitExpr(n->value);
  for (auto& i : n->indices) visitExpr(i);
}
void IRVisitor::visit(const LetStmtNode* n) {
  visitExpr(n->value);
  visitStmt(n->body);
}
void IRVisitor::visit(const AttrStmtNode* n) {
  visitExpr(n->node);
  visitExpr(n->value);
  visitStmt(n->body);
}
void IRVisitor::visit(const AssertStmtNode* n) {
  visitExpr(n->condition);
  visitStmt(n->body);
}
void IRVisitor::visit(const AllocateNode* n) {
  for (auto& e : n->extents) visitExpr(e);
  visitExpr(n->condition);
  visitStmt(n->body);
}
void IRVisitor::visit(const DeclBufferNode* n) { visitStmt(n->body); }
void IRVisitor::visit(const SeqStmtNode* n) {
  for (auto& s : n->seq) visitStmt(s);
}
void IRVisitor::visit(const IfThenElseNode* n) {
  visitExpr(n->condition);
  visitStmt(n->thenCase);
  visitStmt(n->elseCase);
}
void IRVisitor::visit(const ForNode* n) {
  visitExpr(n->min);
  visitExpr(n->extent);
  visitStmt(n->body);
}
void IRVisitor::visit(const WhileNode* n) {
  visitExpr(n->condition);
  visitStmt(n->body);
}
void IRVisitor::visit(const EvaluateNode* n) { visitExpr(n->value); }
void IRVisitor::visit(const BlockNode* n) {
  for (auto& iv : n->iterVars) {
    visitExpr(iv.dom.min);
    visitExpr(iv.dom.extent);
  }
  for (auto& r : n->reads) visitRegion(r.region);
  for (auto& w : n->writes) visitRegion(w.region);
  visitStmt(n->init);
  visitStmt(n->body);
}
void IRVisitor::visit(const BlockRealizeNode* n) {
  for (auto& v : n->iterValues) visitExpr(v);
  visitExpr(n->predicate);
  visitStmt(Stmt(n->block));
}

// --- IRMutator ---------------------------------------------------------------------------

#define LOOM_DISPATCH(K)                                                                         \
  case NodeKind::K: return visit(static_cast<const K##Node*>(n), self);

Expr IRMutator::mutate(const Expr& self) {
  if (!self.defined()) return self;
  const IRNode* n = self.get();
  switch (n->nodeKind) {
    LOOM_DISPATCH(IntImm)
    LOOM_DISPATCH(FloatImm)
    LOOM_DISPATCH(StringImm)
    LOOM_DISPATCH(Var)
    LOOM_DISPATCH(Cast)
    LOOM_DISPATCH(Binary)
    LOOM_DISPATCH(Not)
    LOOM_DISPATCH(Select)
    LOOM_DISPATCH(Let)
    LOOM_DISPATCH(BufferLoad)
    LOOM_DISPATCH(Ramp)
    LOOM_DISPATCH(Broadcast)
    LOOM_DISPATCH(Call)
  default: LOOM_ICHECK(false) << "statement in expression position";
  }
  return self;
}

Stmt IRMutator::mutate(const Stmt& self) {
  if (!self.defined()) return self;
  const IRNode* n = self.get();
  switch (n->nodeKind) {
    LOOM_DISPATCH(BufferStore)
    LOOM_DISPATCH(LetStmt)
    LOOM_DISPATCH(AttrStmt)
    LOOM_DISPATCH(AssertStmt)
    LOOM_DISPATCH(Allocate)
    LOOM_DISPATCH(DeclBuffer)
    LOOM_DISPATCH(SeqStmt)
    LOOM_DISPATCH(IfThenElse)
    LOOM_DISPATCH(For)
    LOOM_DISPATCH(While)
    LOOM_DISPATCH(Evaluate)
    LOOM_DISPATCH(Block)
    LOOM_DISPATCH(BlockRealize)
  default: LOOM_ICHECK(false) << "expression in statement position";
  }
  return self;
}
#undef LOOM_DISPATCH

bool IRMutator::mutateExprs(const std::vector<Expr>& in, std::vector<Expr>& out) {
  bool changed = false;
  out.clear();
  out.reserve(in.size());
  for (auto& e : in) {
    out.push_back(mutate(e));
    changed |= !out.back().same_as(e);
  }
  return changed;
}

std::vector<Range> IRMutator::mutateRegion(const std::vector<Range>& region) {
  std::vector<Range> out;
  out.reserve(region.size());
  for (auto& r : region) out.emplace_back(mutate(r.min), mutate(r.extent));
  return out;
}

namespace {
/// Copies node `n` of type T, lets `f` edit the copy, and wraps it.
template <class H, class T, class F> H rebuild(const T* n, F&& f) {
  auto* c = new T(*n);
  f(*c);
  return H(c);
}
}  // namespace

Expr IRMutator::visit(const CastNode* n, const Expr& self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return rebuild<Expr>(n, [&](CastNode& c) { c.value = v; });
}
Expr IRMutator::visit(const BinaryNode* n, const Expr& self) {
  Expr a = mutate(n->a), b = mutate(n->b);
  if (a.same_as(n->a) && b.same_as(n->b)) return self;
  return rebuild<Expr>(n, [&](BinaryNode& c) {
    c.a = a;
    c.b = b;
  });
}
Expr IRMutator::visit(const NotNode* n, const Expr& self) {
  Expr a = mutate(n->a);
  if (a.same_as(n->a)) return self;
  return rebuild<Expr>(n, [&](NotNode& c) { c.a = a; });
}
Expr IRMutator::visit(const SelectNode* n, const Expr& self) {
  Expr c0 = mutate(n->condition), t = mutate(n->trueValue), f = mutate(n->falseValue);
  if (c0.same_as(n->condition) && t.same_as(n->trueValue) && f.same_as(n->falseValue)) return self;
  return rebuild<Expr>(n, [&](SelectNode& c) {
    c.condition = c0;
    c.trueValue = t;
    c.falseValue = f;
  });
}
Expr IRMutator::visit(const LetNode* n, const Expr& self) {
  Expr v = mutate(n->value), b = mutate(n->body);
  if (v.same_as(n->value) && b.same_as(n->body)) return self;
  return rebuild<Expr>(n, [&](LetNode& c) {
    c.value = v;
    c.body = b;
    c.dtype = b.dtype();
  });
}
Expr IRMutator::visit(const BufferLoadNode* n, const Expr& self) {
  std::vector<Expr> idx;
  if (!mutateExprs(n->indices, idx)) return self;
  return rebuild<Expr>(n, [&](BufferLoadNode& c) { c.indices = idx; });
}
Expr IRMutator::visit(const RampNode* n, const Expr& self) {
  Expr b = mutate(n->base), s = mutate(n->stride);
  if (b.same_as(n->base) && s.same_as(n->stride)) return self;
  return rebuild<Expr>(n, [&](RampNode& c) {
    c.base = b;
    c.stride = s;
  });
}
Expr IRMutator::visit(const BroadcastNode* n, const Expr& self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return rebuild<Expr>(n, [&](BroadcastNode& c) { c.value = v; });
}
Expr IRMutator::visit(const CallNode* n, const Expr& self) {
  std::vector<Expr> args;
  if (!mutateExprs(n->args, args)) return self;
  return rebuild<Expr>(n, [&](CallNode& c) { c.args = args; });
}

Stmt IRMutator::visit(const BufferStoreNode* n, const Stmt& self) {
  Expr v = mutate(n->value);
  std::vector<Expr> idx;
  bool ch = mutateExprs(n->indices, idx);
  if (!ch && v.same_as(n->value)) return self;
  return rebuild<Stmt>(n, [&](BufferStoreNode& c) {
    c.value = v;
    c.indices = idx;
  });
}
Stmt IRMutator::visit(const LetStmtNode* n, const Stmt& self) {
  Expr v = mutate(n->value);
  Stmt b = mutate(n->body);
  if (v.same_as(n->value) && b.same_as(n->body)) return self;
  return rebuild<Stmt>(n, [&](LetStmtNode& c) {
    c.value = v;
    c.body = b;
  });
}
Stmt IRMutator::visit(const AttrStmtNode* n, const Stmt& self) {
  Expr v = mutate(n->value);
  Stmt b = mutate(n->body);
  if (v.same_as(n->value) && b.same_as(n->body)) return self;
  return rebuild<Stmt>(n, [&](AttrStmtNode& c) {
    c.value = v;
    c.body = b;
  });
}
Stmt IRMutator::visit(const AssertStmtNode* n, const Stmt& self) {
  Expr v = mutate(n->condition);
  Stmt b = mutate(n->body);
  if (v.same_as(n->condition) && b.same_as(n->body)) return self;
  return rebuild<Stmt>(n, [&](AssertStmtNode& c) {
    c.condition = v;
    c.body = b;
  });
}
Stmt IRMutator::visit(const AllocateNode* n, const Stmt& self) {
  std::vector<Expr> ext;
  bool ch = mutateExprs(n->extents, ext);
  Expr cond = mutate(n->condition);
  Stmt b = mutate(n->body);
  if (!ch && cond.same_as(n->condition) && b.same_as(n->body)) return self;
  return rebuild<Stmt>(n, [&](AllocateNode& c) {
    c.extents = ext;
    c.condition = cond;
    c.body = b;
  });
}
Stmt IRMutator::visit(const DeclBufferNode* n, const Stmt& self) {
  Stmt b = mutate(n->body);
  if (b.same_as(n->body)) return self;
  return rebuild<Stmt>(n, [&](DeclBufferNode& c) { c.body = b; });
}
Stmt IRMutator::visit(const SeqStmtNode* n, const Stmt& self) {
  std::vector<Stmt> out;
  bool ch = false;
  for (auto& s : n->seq) {
    out.push_back(mutate(s));
    ch |= !out.back().same_as(s);
  }
  if (!ch) return self;
  return seq(std::move(out));
}
Stmt IRMutator::visit(const IfThenElseNode* n, const Stmt& self) {
  Expr cond = mutate(n->condition);
  Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
  if (cond.same_as(n->condition) && t.same_as(n->thenCase) && e.same_as(n->elseCase)) return self;
  return rebuild<Stmt>(n, [&](IfThenElseNode& c) {
    c.condition = cond;
    c.thenCase = t;
    c.elseCase = e;
  });
}
Stmt IRMutator::visit(const ForNode* n, const Stmt& self) {
  Expr mn = mutate(n->min), ext = mutate(n->extent);
  Stmt b = mutate(n->body);
  if (mn.same_as(n->min) && ext.same_as(n->extent) && b.same_as(n->body)) return self;
  return rebuild<Stmt>(n, [&](ForNode& c) {
    c.min = mn;
    c.extent = ext;
    c.body = b;
  });
}
Stmt IRMutator::visit(const WhileNode* n, const Stmt& self) {
  Expr cond = mutate(n->condition);
  Stmt b = mutate(n->body);
  if (cond.same_as(n->condition) && b.same_as(n->body)) return self;
  return rebuild<Stmt>(n, [&](WhileNode& c) {
    c.condition = cond;
    c.body = b;
  });
}
Stmt IRMutator::visit(const EvaluateNode* n, const Stmt& self) {
  Expr v = mutate(n->value);
  if (v.same_as(n->value)) return self;
  return rebuild<Stmt>(n, [&](EvaluateNode& c) { c.value = v; });
}
Stmt IRMutator::visit(const BlockNode* n, const Stmt& self) {
  bool ch = false;
  std::vector<IterVar> ivs = n->iterVars;
  for (auto& iv : ivs) {
    Expr mn = mutate(iv.dom.min), ext = mutate(iv.dom.extent);
    ch |= !mn.same_as(iv.dom.min) || !ext.same_as(iv.dom.extent);
    iv.dom = Range(mn, ext);
  }
  auto regions = [&](const std::vector<BufferRegion>& in) {
    std::vector<BufferRegion> out;
    for (auto& r : in) {
      auto reg = mutateRegion(r.region);
      for (size_t i = 0; i < reg.size(); ++i)
        ch |= !reg[i].min.same_as(r.region[i].min) || !reg[i].extent.same_as(r.region[i].extent);
      out.emplace_back(r.buffer, std::move(reg));
    }
    return out;
  };
  auto reads = regions(n->reads);
  auto writes = regions(n->writes);
  Stmt init = mutate(n->init);
  Stmt body = mutate(n->body);
  ch |= !init.same_as(n->init) || !body.same_as(n->body);
  if (!ch) return self;
  return rebuild<Stmt>(n, [&](BlockNode& c) {
    c.iterVars = ivs;
    c.reads = reads;
    c.writes = writes;
    c.init = init;
    c.body = body;
  });
}
Stmt IRMutator::visit(const BlockRealizeNode* n, const Stmt& self) {
  std::vector<Expr> vals;
  bool ch = mutateExprs(n->iterValues, vals);
  Expr pred = mutate(n->predicate);
  Stmt blk = mutate(Stmt(n->block));
  auto* b = blk.as<BlockNode>();
  LOOM_ICHECK(b) << "a BlockRealize's block must stay a block";
  if (!ch && pred.same_as(n->predicate) && b == n->block.get()) return self;
  return rebuild<Stmt>(n, [&](BlockRealizeNode& c) {
    c.iterValues = vals;
    c.predicate = pred;
    c.block = Block(b);
  });
}

// --- Utilities ---------------------------------------------------------------------------

namespace {
class PostOrder : public IRVisitor {
public:
  explicit PostOrder(const std::function<void(const IRNode*)>& f) : m_f(f) {}
  void visitAll(const IRNode* n, auto&& recurse) {
    recurse();
    m_f(n);
  }
#define LOOM_PO(T)                                                                               \
  void visit(const T* n) override { visitAll(n, [&] { IRVisitor::visit(n); }); }
  LOOM_PO(IntImmNode) LOOM_PO(FloatImmNode) LOOM_PO(StringImmNode) LOOM_PO(VarNode)
  LOOM_PO(CastNode) LOOM_PO(BinaryNode) LOOM_PO(NotNode) LOOM_PO(SelectNode) LOOM_PO(LetNode)
  LOOM_PO(BufferLoadNode) LOOM_PO(RampNode) LOOM_PO(BroadcastNode) LOOM_PO(CallNode)
  LOOM_PO(BufferStoreNode) LOOM_PO(LetStmtNode) LOOM_PO(AttrStmtNode) LOOM_PO(AssertStmtNode)
  LOOM_PO(AllocateNode) LOOM_PO(DeclBufferNode) LOOM_PO(SeqStmtNode) LOOM_PO(IfThenElseNode)
  LOOM_PO(ForNode) LOOM_PO(WhileNode) LOOM_PO(EvaluateNode) LOOM_PO(BlockNode)
  LOOM_PO(BlockRealizeNode)
#undef LOOM_PO
private:
  const std::function<void(const IRNode*)>& m_f;
};

class Substituter : public IRMutator {
public:
  explicit Substituter(const std::function<Expr(const Var&)>& f) : m_f(f) {}

protected:
  Expr visit(const VarNode* n, const Expr& self) override {
    Expr r = m_f(Var(n));
    return r.defined() ? r : self;
  }
  using IRMutator::visit;

private:
  const std::function<Expr(const Var&)>& m_f;
};
}  // namespace

void postOrderVisit(const Stmt& s, const std::function<void(const IRNode*)>& f) { PostOrder(f).visitStmt(s); }
void postOrderVisit(const Expr& e, const std::function<void(const IRNode*)>& f) { PostOrder(f).visitExpr(e); }

Expr substitute(const Expr& e, const std::function<Expr(const Var&)>& vmap) { return Substituter(vmap).mutate(e); }
Stmt substitute(const Stmt& s, const std::function<Expr(const Var&)>& vmap) { return Substituter(vmap).mutate(s); }

Expr substitute(const Expr& e, const std::unordered_map<Var, Expr, RefHash, RefEqual>& vmap) {
  return substitute(e, [&](const Var& v) {
    auto it = vmap.find(v);
    return it == vmap.end() ? Expr() : it->second;
  });
}
Stmt substitute(const Stmt& s, const std::unordered_map<Var, Expr, RefHash, RefEqual>& vmap) {
  return substitute(s, [&](const Var& v) {
    auto it = vmap.find(v);
    return it == vmap.end() ? Expr() : it->second;
  });
}

bool usesVar(const Expr& e, const Var& v) {
  bool found = false;
  postOrderVisit(e, [&](const IRNode* n) { found |= n == v.get(); });
  return found;
}
bool usesVar(const Stmt& s, const Var& v) {
  bool found = false;
  postOrderVisit(s, [&](const IRNode* n) { found |= n == v.get(); });
  return found;
}

}  // namespace loom::tir
