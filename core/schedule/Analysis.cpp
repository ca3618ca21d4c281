// Tree queries, block signatures, producer/consumer relations, affine-binding check, constant
// folding.
#include "core/schedule/Analysis.h"

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

// --- Tree structure -----------------------------------------------------------------------

std::vector<Stmt> childStmts(const StmtNode* s) {
  std::vector<Stmt> out;
  auto add = [&](const Stmt& c) {
    if (c.defined()) out.push_back(c);
  };
  switch (s->nodeKind) {
  case NodeKind::LetStmt:
    add(static_cast<const LetStmtNode*>(s)->body);
    break;
  case NodeKind::AttrStmt:
    add(static_cast<const AttrStmtNode*>(s)->body);
    break;
  case NodeKind::AssertStmt:
    add(static_cast<const AssertStmtNode*>(s)->body);
    break;
  case NodeKind::Allocate:
    add(static_cast<const AllocateNode*>(s)->body);
    break;
  case NodeKind::DeclBuffer:
    add(static_cast<const DeclBufferNode*>(s)->body);
    break;
  case NodeKind::SeqStmt:
    for (auto& c : static_cast<const SeqStmtNode*>(s)->seq)
      add(c);
    break;
  case NodeKind::IfThenElse: {
    auto* n = static_cast<const IfThenElseNode*>(s);
    add(n->thenCase);
    add(n->elseCase);
    break;
  }
  case NodeKind::For:
    add(static_cast<const ForNode*>(s)->body);
    break;
  case NodeKind::While:
    add(static_cast<const WhileNode*>(s)->body);
    break;
  case NodeKind::Block: {
    auto* n = static_cast<const BlockNode*>(s);
    add(n->init);
    add(n->body);
    break;
  }
  case NodeKind::BlockRealize:
    add(Stmt(static_cast<const BlockRealizeNode*>(s)->block));
    break;
  default:
    break;
  }
  return out;
}

namespace {
template <class N, class F> Stmt copyNode(const N* n, F&& f) {
  auto* c = new N(*n);
  f(*c);
  return Stmt(c);
}
} // namespace

Stmt withChildReplaced(const StmtNode* parent, const IRNode* oldChild, Stmt newChild) {
  auto is = [&](const Stmt& s) { return s.get() == oldChild; };
  auto bodyOnly = [&](auto* n) -> Stmt {
    LOOM_ICHECK(is(n->body)) << "withChildReplaced: not a child";
    if (!newChild.defined()) return Stmt();
    return copyNode(n, [&](auto& c) { c.body = newChild; });
  };
  switch (parent->nodeKind) {
  case NodeKind::LetStmt:
    return bodyOnly(static_cast<const LetStmtNode*>(parent));
  case NodeKind::AttrStmt:
    return bodyOnly(static_cast<const AttrStmtNode*>(parent));
  case NodeKind::AssertStmt:
    return bodyOnly(static_cast<const AssertStmtNode*>(parent));
  case NodeKind::Allocate:
    return bodyOnly(static_cast<const AllocateNode*>(parent));
  case NodeKind::DeclBuffer:
    return bodyOnly(static_cast<const DeclBufferNode*>(parent));
  case NodeKind::For:
    return bodyOnly(static_cast<const ForNode*>(parent));
  case NodeKind::While:
    return bodyOnly(static_cast<const WhileNode*>(parent));
  case NodeKind::SeqStmt: {
    auto* n = static_cast<const SeqStmtNode*>(parent);
    std::vector<Stmt> items;
    bool found = false;
    for (auto& c : n->seq) {
      if (is(c)) {
        found = true;
        if (newChild.defined()) items.push_back(newChild);
      } else {
        items.push_back(c);
      }
    }
    LOOM_ICHECK(found) << "withChildReplaced: not a child of the sequence";
    if (items.empty()) return Stmt();
    return seq(std::move(items));
  }
  case NodeKind::IfThenElse: {
    auto* n = static_cast<const IfThenElseNode*>(parent);
    if (is(n->thenCase)) {
      if (!newChild.defined() && !n->elseCase.defined()) return Stmt();
      if (!newChild.defined()) return ifThen(!n->condition, n->elseCase);
      return copyNode(n, [&](IfThenElseNode& c) { c.thenCase = newChild; });
    }
    LOOM_ICHECK(is(n->elseCase)) << "withChildReplaced: not a branch";
    return copyNode(n, [&](IfThenElseNode& c) { c.elseCase = newChild; });
  }
  case NodeKind::Block: {
    auto* n = static_cast<const BlockNode*>(parent);
    if (is(n->init)) return copyNode(n, [&](BlockNode& c) { c.init = newChild; });
    LOOM_ICHECK(is(n->body)) << "withChildReplaced: not a child of the block";
    return copyNode(n, [&](BlockNode& c) { c.body = newChild.defined() ? newChild : evaluate(0); });
  }
  case NodeKind::BlockRealize: {
    auto* n = static_cast<const BlockRealizeNode*>(parent);
    LOOM_ICHECK(is(Stmt(n->block))) << "withChildReplaced: not the realized block";
    if (!newChild.defined()) return Stmt();
    if (newChild->nodeKind == NodeKind::BlockRealize) return newChild;
    LOOM_ICHECK(newChild->nodeKind == NodeKind::Block) << "a BlockRealize can only realize a Block";
    return copyNode(n, [&](BlockRealizeNode& c) {
      c.block = Block(static_cast<const BlockNode*>(newChild.get()));
    });
  }
  default:
    LOOM_ICHECK(false) << "withChildReplaced: a leaf statement has no children";
  }
  return Stmt();
}

std::vector<const ForNode*> loopsAbove(const Schedule& sch, const IRNode* n) {
  std::vector<const ForNode*> loops;
  const StmtNode* p = sch.parentOf(n);
  if (n->nodeKind == NodeKind::Block && p) p = sch.parentOf(p); // skip the block's own realize
  for (; p; p = sch.parentOf(p)) {
    if (p->nodeKind == NodeKind::Block) break;
    if (p->nodeKind == NodeKind::For) loops.push_back(static_cast<const ForNode*>(p));
  }
  std::reverse(loops.begin(), loops.end());
  return loops;
}

const BlockNode* enclosingBlock(const Schedule& sch, const IRNode* n) {
  const StmtNode* p = sch.parentOf(n);
  if (n->nodeKind == NodeKind::Block && p) p = sch.parentOf(p);
  for (; p; p = sch.parentOf(p))
    if (p->nodeKind == NodeKind::Block) return static_cast<const BlockNode*>(p);
  return nullptr;
}

std::vector<const BlockNode*> childBlocks(const StmtNode* n) {
  std::vector<const BlockNode*> out;
  std::function<void(const StmtNode*)> walk = [&](const StmtNode* s) {
    if (s->nodeKind == NodeKind::Block && s != n) {
      out.push_back(static_cast<const BlockNode*>(s));
      return;
    }
    for (auto& c : childStmts(s))
      walk(c.get());
  };
  walk(n);
  return out;
}

std::vector<const BlockNode*> allBlocks(const PrimFunc& f) {
  std::vector<const BlockNode*> out;
  std::function<void(const StmtNode*)> walk = [&](const StmtNode* s) {
    if (s->nodeKind == NodeKind::Block) out.push_back(static_cast<const BlockNode*>(s));
    for (auto& c : childStmts(s))
      walk(c.get());
  };
  if (f->body.defined()) walk(f->body.get());
  return out;
}

std::vector<const BlockNode*> findBlocks(const PrimFunc& f, const std::string& name) {
  std::vector<const BlockNode*> out;
  for (auto* b : allBlocks(f))
    if (b->name == name) out.push_back(b);
  return out;
}

bool isAncestor(const Schedule& sch, const IRNode* outer, const IRNode* inner) {
  for (const StmtNode* p = sch.parentOf(inner); p; p = sch.parentOf(p))
    if (p == outer) return true;
  return false;
}

const ForNode* onlyChildLoop(const ForNode* loop) {
  return loop->body.defined() && loop->body->nodeKind == NodeKind::For
             ? static_cast<const ForNode*>(loop->body.get())
             : nullptr;
}

// --- Block signatures ---------------------------------------------------------------------

std::vector<const BlockRealizeNode*> realizesUnder(const StmtNode* s) {
  std::vector<const BlockRealizeNode*> out;
  std::function<void(const StmtNode*)> walk = [&](const StmtNode* n) {
    if (n->nodeKind == NodeKind::BlockRealize)
      out.push_back(static_cast<const BlockRealizeNode*>(n));
    for (auto& c : childStmts(n))
      walk(c.get());
  };
  walk(s);
  return out;
}

const IterVar* iterVarUsingVarOfOtherType(const BlockRealizeNode* realize, const VarNode* var,
                                          std::initializer_list<IterType> allowed) {
  const BlockNode* b = realize->block.get();
  for (size_t i = 0; i < b->iterVars.size() && i < realize->iterValues.size(); ++i) {
    if (!usesVar(realize->iterValues[i], Var(var))) continue;
    if (std::find(allowed.begin(), allowed.end(), b->iterVars[i].iterType) == allowed.end())
      return &b->iterVars[i];
  }
  return nullptr;
}

namespace {
std::vector<Buffer> uniqueBuffers(const std::vector<BufferRegion>& regions) {
  std::vector<Buffer> out;
  for (auto& r : regions)
    if (std::none_of(out.begin(), out.end(), [&](const Buffer& b) { return b.same_as(r.buffer); }))
      out.push_back(r.buffer);
  return out;
}
bool intersects(const std::vector<Buffer>& a, const std::vector<Buffer>& b) {
  for (auto& x : a)
    for (auto& y : b)
      if (x.same_as(y)) return true;
  return false;
}
std::vector<const BlockNode*> siblings(const Schedule& sch, const BlockNode* block) {
  const BlockNode* scope = enclosingBlock(sch, block);
  if (scope) return childBlocks(scope);
  return childBlocks(sch.func()->body.get());
}
} // namespace

std::vector<Buffer> readBuffers(const BlockNode* b) {
  return uniqueBuffers(b->reads);
}
std::vector<Buffer> writeBuffers(const BlockNode* b) {
  return uniqueBuffers(b->writes);
}

std::vector<const BlockNode*> producersOf(const Schedule& sch, const BlockNode* block) {
  std::vector<const BlockNode*> out;
  auto reads = readBuffers(block);
  for (auto* b : siblings(sch, block))
    if (b != block && intersects(writeBuffers(b), reads)) out.push_back(b);
  return out;
}

std::vector<const BlockNode*> consumersOf(const Schedule& sch, const BlockNode* block) {
  std::vector<const BlockNode*> out;
  auto writes = writeBuffers(block);
  for (auto* b : siblings(sch, block))
    if (b != block && intersects(readBuffers(b), writes)) out.push_back(b);
  return out;
}

// --- Affine bindings ----------------------------------------------------------------------

namespace {
/// Collects the (var, coefficient-path) terms of a quasi-affine expression; false if not affine.
/// A term is identified by the loop var and the chain of floordiv/floormod divisors above it, so
/// `floordiv(f, 8)` and `floormod(f, 8)` are different parts of `f` (fuse) while `i + i` is not.
struct AffineChecker {
  std::set<const VarNode*> loopVars;
  std::vector<std::pair<const VarNode*, std::string>> terms;

  bool check(const Expr& e, const std::string& path) {
    if (asConstInt(e)) return true;
    if (auto* v = e.as<VarNode>()) {
      if (!loopVars.count(v)) return false;
      terms.push_back({v, path});
      return true;
    }
    if (auto* c = e.as<CastNode>()) return c->dtype.isIntegral() && check(c->value, path);
    auto* b = e.as<BinaryNode>();
    if (!b) return false;
    switch (b->op) {
    case BinOp::Add:
    case BinOp::Sub:
      return check(b->a, path) && check(b->b, path);
    case BinOp::Mul:
      if (constIntValue(b->b)) return check(b->a, path);
      if (constIntValue(b->a)) return check(b->b, path);
      return false;
    case BinOp::FloorDiv:
    case BinOp::FloorMod:
    case BinOp::Div:
    case BinOp::Mod: {
      auto c = constIntValue(b->b);
      if (!c || *c <= 0) return false;
      bool isDiv = b->op == BinOp::FloorDiv || b->op == BinOp::Div;
      return check(b->a, path + (isDiv ? "/" : "%") + std::to_string(*c));
    }
    default:
      return false;
    }
  }
};
} // namespace

bool isAffineBinding(const BlockRealizeNode* realize, const std::vector<const ForNode*>& loops) {
  AffineChecker ck;
  for (auto* l : loops)
    ck.loopVars.insert(l->loopVar.get());
  for (auto& v : realize->iterValues)
    if (!ck.check(v, "")) return false;
  // The same part of a loop var must not feed two iter values (that would not be a bijection).
  std::sort(ck.terms.begin(), ck.terms.end());
  return std::adjacent_find(ck.terms.begin(), ck.terms.end()) == ck.terms.end();
}

bool isAffineBinding(const Schedule& sch, const BlockRealizeNode* realize) {
  return isAffineBinding(realize, loopsAbove(sch, realize));
}

// --- Small arithmetic ---------------------------------------------------------------------

namespace {
class ConstantFolder : public IRMutator {
protected:
  using IRMutator::visit;
  Expr visit(const BinaryNode* n, const Expr& self) override {
    Expr a = mutate(n->a), b = mutate(n->b);
    const int64_t* x = asConstInt(a);
    const int64_t* y = asConstInt(b);
    DataType t = n->dtype;
    if (x && y && t.isIntegral()) {
      int64_t r = 0;
      bool ok = true;
      switch (n->op) {
      case BinOp::Add:
        r = *x + *y;
        break;
      case BinOp::Sub:
        r = *x - *y;
        break;
      case BinOp::Mul:
        r = *x * *y;
        break;
      case BinOp::FloorDiv:
        if (*y == 0)
          ok = false;
        else
          r = *x / *y - ((*x % *y != 0) && ((*x < 0) != (*y < 0)));
        break;
      case BinOp::FloorMod:
        if (*y == 0)
          ok = false;
        else
          r = ((*x % *y) + *y) % *y;
        break;
      case BinOp::Div:
        ok = *y != 0;
        r = ok ? *x / *y : 0;
        break;
      case BinOp::Mod:
        ok = *y != 0;
        r = ok ? *x % *y : 0;
        break;
      case BinOp::Min:
        r = std::min(*x, *y);
        break;
      case BinOp::Max:
        r = std::max(*x, *y);
        break;
      default:
        ok = false;
      }
      if (ok) return intImm(t, r);
    }
    if (t.isIntegral()) {
      switch (n->op) {
      case BinOp::Add:
        if (y && *y == 0) return a;
        if (x && *x == 0) return b;
        break;
      case BinOp::Sub:
        if (y && *y == 0) return a;
        break;
      case BinOp::Mul:
        if ((y && *y == 0) || (x && *x == 0)) return intImm(t, 0);
        if (y && *y == 1) return a;
        if (x && *x == 1) return b;
        break;
      case BinOp::FloorDiv:
      case BinOp::Div:
        if (y && *y == 1) return a;
        break;
      case BinOp::FloorMod:
      case BinOp::Mod:
        if (y && *y == 1) return intImm(t, 0);
        break;
      default:
        break;
      }
    }
    if (a.same_as(n->a) && b.same_as(n->b)) return self;
    return binary(n->op, a, b);
  }
};
} // namespace

Expr foldConstants(const Expr& e) {
  ConstantFolder f;
  return f.mutate(e);
}

std::optional<int64_t> constIntValue(const Expr& e) {
  if (!e.defined()) return std::nullopt;
  if (auto* v = asConstInt(e)) return *v;
  Expr f = foldConstants(e);
  if (auto* v = asConstInt(f)) return *v;
  return std::nullopt;
}

} // namespace loom::tir
