// lower-cross-thread-reduction: a reduction whose loop is bound to threadIdx becomes a shared-memory tree.
#include "core/transform/CrossThreadReduction.h"

#include <unordered_map>
#include <unordered_set>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

class Reducer : public IRMutator {
protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* n, const Stmt& self) override {
    if (n->kind != ForKind::ThreadBinding || n->threadTag.rfind("threadIdx.", 0) != 0) return IRMutator::visit(n, self);
    std::vector<const ForNode*> chain;
    Stmt cur = n->body;
    while (auto* f = cur.as<ForNode>()) {
      chain.push_back(f);
      cur = f->body;
    }
    auto* br = cur.as<BlockRealizeNode>();
    if (!br) return IRMutator::visit(n, self);
    const BlockNode* b = br->block.get();
    const Var& t = n->loopVar;
    std::unordered_set<const VarNode*> inner = {t.get()};
    for (auto* f : chain) inner.insert(f->loopVar.get());
    bool threadReduces = false;
    for (size_t i = 0; i < b->iterVars.size(); ++i)
      if (b->iterVars[i].iterType == IterType::CommReduce && usesVar(br->iterValues[i], t)) threadReduces = true;
    if (!threadReduces) return IRMutator::visit(n, self);

    auto fail = [&](const std::string& why) {
      LOOM_THROW_AT(CrossThreadReductionError, b->span)
          << "block '" << b->name << "': loop '" << t->name << "' bound to " << n->threadTag
          << " reduces across threads, but " << why;
    };
    for (size_t i = 0; i < b->iterVars.size(); ++i) {
      bool spatial = b->iterVars[i].iterType == IterType::DataPar;
      postOrderVisit(br->iterValues[i], [&](const IRNode* node) {
        if (node->nodeKind != NodeKind::Var) return;
        bool isInner = inner.count(static_cast<const VarNode*>(node)) > 0;
        if (spatial && isInner)
          fail("its spatial index " + b->iterVars[i].var->name + " depends on the loops under the thread loop");
      });
      if (!spatial && b->iterVars[i].iterType != IterType::CommReduce) fail("it has a non-reduction iter var");
    }
    // Every loop var a reduce index uses must be the thread loop or under it.
    std::unordered_set<const VarNode*> spatialVars;
    for (size_t i = 0; i < b->iterVars.size(); ++i)
      if (b->iterVars[i].iterType == IterType::DataPar)
        postOrderVisit(br->iterValues[i], [&](const IRNode* node) {
          if (node->nodeKind == NodeKind::Var) spatialVars.insert(static_cast<const VarNode*>(node));
        });
    for (size_t i = 0; i < b->iterVars.size(); ++i)
      if (b->iterVars[i].iterType == IterType::CommReduce)
        postOrderVisit(br->iterValues[i], [&](const IRNode* node) {
          if (node->nodeKind != NodeKind::Var) return;
          auto* v = static_cast<const VarNode*>(node);
          if (!inner.count(v) && !spatialVars.count(v))
            fail("reduction loop '" + v->name + "' is outside it (put every reduction loop under the thread loop)");
        });
    auto* st = b->body.as<BufferStoreNode>();
    auto* init = b->init.defined() ? b->init.as<BufferStoreNode>() : nullptr;
    auto* upd = st ? st->value.as<BinaryNode>() : nullptr;
    auto* self_ = upd ? upd->a.as<BufferLoadNode>() : nullptr;
    if (!st || !init || !upd || !self_ || !self_->buffer.same_as(st->buffer) ||
        !(upd->op == BinOp::Add || upd->op == BinOp::Mul || upd->op == BinOp::Min || upd->op == BinOp::Max))
      fail("its body is not `O[...] = O[...] op x` (op +, *, min, max) with an init");
    if (!b->allocBuffers.empty()) fail("it allocates buffers");
    const int64_t* ext = asConstInt(n->extent);
    if (!ext || *ext < 1 || *ext > 1024 || (*ext & (*ext - 1)) != 0)
      fail("its extent is not a constant power of two up to 1024");
    int64_t T = *ext;

    std::unordered_map<const VarNode*, Expr> bind;
    for (size_t i = 0; i < b->iterVars.size(); ++i) bind[b->iterVars[i].var.get()] = br->iterValues[i];
    auto sub = [&](const Expr& e) {
      return substitute(e, [&](const Var& v) {
        auto it = bind.find(v.get());
        return it == bind.end() ? Expr() : it->second;
      });
    };
    DataType dt = st->buffer->dtype;
    BinOp op = upd->op;
    Buffer red = makeBuffer(st->buffer->name + "_red", dt, {Expr(T)}, "shared");
    Buffer acc = makeBuffer(st->buffer->name + "_acc", dt, {Expr(1)}, "local");
    Expr zero = intImm(t->dtype, 0);
    Stmt fold = bufferStore(acc, binary(op, bufferLoad(acc, {zero}), sub(upd->b)), {zero});
    if (br->predicate.defined() && !isOne(br->predicate)) fold = ifThen(sub(br->predicate), fold);
    for (size_t i = chain.size(); i-- > 0;) {
      const ForNode* f = chain[i];
      fold = forLoop(f->loopVar, f->min, f->extent, f->kind, fold, f->threadTag, f->annotations);
    }
    Expr tid = isZero(n->min) ? Expr(t) : Expr(t) - n->min;
    std::vector<Stmt> body;
    body.push_back(bufferStore(acc, sub(init->value), {zero}));
    body.push_back(fold);
    body.push_back(bufferStore(red, bufferLoad(acc, {zero}), {tid}));
    for (int64_t s = T / 2; s >= 1; s /= 2) {
      Expr other = bufferLoad(red, {tid + intImm(t->dtype, s)});
      body.push_back(ifThen(tid < intImm(t->dtype, s),
                            bufferStore(red, binary(op, bufferLoad(red, {tid}), other), {tid})));
    }
    std::vector<Expr> outIdx;
    for (auto& e : st->indices) outIdx.push_back(sub(e));
    body.push_back(ifThen(eq(tid, zero), bufferStore(st->buffer, bufferLoad(red, {zero}), outIdx)));
    Stmt inside = allocate(acc->data, dt, {Expr(1)}, declBuffer(acc, seq(body)), "local");
    inside = allocate(red->data, dt, {Expr(T)}, declBuffer(red, inside), "shared");
    auto* nf = new ForNode(*n);
    nf->body = inside;
    return withSpan(Stmt(nf), n->span);
  }
};

}  // namespace

PrimFunc lowerCrossThreadReduction(const PrimFunc& f) { return updateBody(f, Reducer().mutate(f->body)); }

}  // namespace loom::transform
