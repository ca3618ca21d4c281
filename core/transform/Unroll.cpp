// unroll: expand loops marked unroll, and small inner loops under pragma_auto_unroll_max_step.
#include "core/transform/Unroll.h"

#include <optional>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

/// Statements a body executes once (loops count their extent times their body).
int64_t stepCount(const Stmt& s) {
  if (!s.defined()) return 0;
  if (auto* q = s.as<SeqStmtNode>()) {
    int64_t n = 0;
    for (auto& x : q->seq) n += stepCount(x);
    return n;
  }
  if (auto* f = s.as<ForNode>()) {
    auto* e = asConstInt(f->extent);
    return e ? *e * stepCount(f->body) : INT64_MAX / 4;
  }
  if (auto* i = s.as<IfThenElseNode>()) return 1 + std::max(stepCount(i->thenCase), stepCount(i->elseCase));
  if (auto* l = s.as<LetStmtNode>()) return 1 + stepCount(l->body);
  if (auto* a = s.as<AttrStmtNode>()) return stepCount(a->body);
  if (auto* d = s.as<DeclBufferNode>()) return stepCount(d->body);
  if (auto* a = s.as<AllocateNode>()) return 1 + stepCount(a->body);
  return 1;
}

bool containsLoop(const Stmt& s) {
  bool found = false;
  postOrderVisit(s, [&](const IRNode* n) { found |= n->nodeKind == NodeKind::For || n->nodeKind == NodeKind::While; });
  return found;
}

/// Gives the loop and let vars bound inside a copy fresh Vars, so each copy binds its own.
class FreshBinder : public IRMutator {
protected:
  using IRMutator::visit;
  Stmt visit(const ForNode* n, const Stmt& self) override {
    Var v = makeVar(n->loopVar->name, n->loopVar->dtype);
    Stmt body = mutate(substitute(n->body, [&](const Var& x) { return x.same_as(n->loopVar) ? Expr(v) : Expr(); }));
    return withSpan(forLoop(v, mutate(n->min), mutate(n->extent), n->kind, body, n->threadTag, n->annotations), n->span);
  }
  Stmt visit(const LetStmtNode* n, const Stmt& self) override {
    Var v = makeVar(n->var->name, n->var->dtype);
    Stmt body = mutate(substitute(n->body, [&](const Var& x) { return x.same_as(n->var) ? Expr(v) : Expr(); }));
    return withSpan(letStmt(v, mutate(n->value), body), n->span);
  }
};

/// The value of a condition where constants decide it (`x == 0 && 1 == 2` is false whatever x
/// is), else nothing.
std::optional<bool> decided(const Expr& c) {
  if (auto* v = asConstInt(c)) return *v != 0;
  if (auto* b = c.as<BroadcastNode>()) return decided(b->value);
  if (auto* n = c.as<NotNode>()) {
    auto a = decided(n->a);
    return a ? std::optional<bool>(!*a) : std::nullopt;
  }
  auto* b = c.as<BinaryNode>();
  if (!b) return std::nullopt;
  if (b->op == BinOp::And || b->op == BinOp::Or) {
    const bool absorbing = b->op == BinOp::Or;  // true absorbs an or, false an and
    auto x = decided(b->a), y = decided(b->b);
    if ((x && *x == absorbing) || (y && *y == absorbing)) return absorbing;
    if (x && y) return !absorbing;
    return std::nullopt;
  }
  if (!isComparison(b->op)) return std::nullopt;
  auto *x = asConstInt(b->a), *y = asConstInt(b->b);
  if (!x || !y) return std::nullopt;
  switch (b->op) {
    case BinOp::EQ: return *x == *y;
    case BinOp::NE: return *x != *y;
    case BinOp::LT: return *x < *y;
    case BinOp::LE: return *x <= *y;
    case BinOp::GT: return *x > *y;
    case BinOp::GE: return *x >= *y;
    default: return std::nullopt;
  }
}

/// Substitutes the loop variable's value into one unrolled copy, and a select or if_then_else
/// whose condition that decides becomes the branch it picks, the other branch never copied.
/// (A Winograd transform's entry is a select over its 36 (x, y) positions, each a sum of loads:
/// without this each of the 36 copies carried all 36 sums into the simplifier, which spent
/// two thirds of a dynamic model's lowering folding them away.)
class CopySubstituter : public IRMutator {
public:
  CopySubstituter(const Var& v, Expr value) : m_var(v), m_value(std::move(value)) {}

protected:
  using IRMutator::visit;
  Expr visit(const VarNode* n, const Expr& self) override { return n == m_var.get() ? m_value : self; }
  Expr visit(const SelectNode* n, const Expr& self) override {
    Expr c = mutate(n->condition);
    if (auto d = decided(c)) return mutate(*d ? n->trueValue : n->falseValue);
    return IRMutator::visit(n, self);
  }
  Expr visit(const CallNode* n, const Expr& self) override {
    if (n->op == "if_then_else" && n->args.size() == 3) {
      Expr c = mutate(n->args[0]);
      if (auto d = decided(c)) return mutate(*d ? n->args[1] : n->args[2]);
    }
    return IRMutator::visit(n, self);
  }

private:
  Var m_var;
  Expr m_value;
};

class Unroller : public IRMutator {
public:
  explicit Unroller(PassContext& ctx) : m_ctx(ctx) {}

protected:
  using IRMutator::visit;

  Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
    // Unrolling here always copies the body, so the explicit/implicit choice has no effect.
    if (n->key == "pragma_unroll_explicit") return mutate(n->body);
    if (n->key != "pragma_auto_unroll_max_step") return IRMutator::visit(n, self);
    auto* v = asConstInt(n->value);
    int64_t saved = m_autoMax;
    if (v) m_autoMax = *v;
    Stmt body = mutate(n->body);
    m_autoMax = saved;
    return body;
  }

  Stmt visit(const ForNode* n, const Stmt& self) override {
    Stmt body = mutate(n->body);
    auto* ext = asConstInt(n->extent);
    bool explicitUnroll = n->kind == ForKind::Unrolled;
    if (explicitUnroll && !ext) {
      m_ctx.note("loop " + n->loopVar->name + " not unrolled (runs serially): its extent is not a constant", n->span);
      return withSpan(forLoop(n->loopVar, n->min, n->extent, ForKind::Serial, body, n->threadTag, n->annotations),
                      n->span);
    }
    bool autoUnroll = n->kind == ForKind::Serial && ext && m_autoMax > 0 && !containsLoop(body) &&
                      *ext * stepCount(body) <= m_autoMax;
    if (!(explicitUnroll || autoUnroll)) {
      if (body.same_as(n->body)) return self;
      return withSpan(forLoop(n->loopVar, n->min, n->extent, n->kind, body, n->threadTag, n->annotations), n->span);
    }
    std::vector<Stmt> copies;
    for (int64_t i = 0; i < *ext; ++i) {
      Expr value = isZero(n->min) ? intImm(n->loopVar->dtype, i) : n->min + intImm(n->loopVar->dtype, i);
      Stmt copy = CopySubstituter(n->loopVar, value).mutate(body);
      copies.push_back(i == 0 ? copy : FreshBinder().mutate(copy));
    }
    if (copies.empty()) return evaluate(0);
    return seq(std::move(copies));
  }

private:
  PassContext& m_ctx;
  int64_t m_autoMax = 0;
};

}  // namespace

PrimFunc unrollLoops(const PrimFunc& f, PassContext& ctx) { return updateBody(f, Unroller(ctx).mutate(f->body)); }

}  // namespace loom::transform
