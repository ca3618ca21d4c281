// lower-blocks: TVM's block form to plain loops (iter vars bound, init and predicates as ifs).
#include "core/transform/LowerBlocks.h"

#include <algorithm>

#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool isPragma(const std::string& key) { return key.rfind("pragma_", 0) == 0; }

/// storage_align's block annotation "buffer_dim_align" (one tuple per written buffer, of
/// (axis, factor, offset) tuples), regrouped by the written buffer's data var, so the Allocate of
/// that buffer can carry its entries on to flatten-buffers.
class DimAlignCollector : public IRVisitor {
public:
  std::unordered_map<const VarNode*, Expr> byData;

protected:
  using IRVisitor::visit;
  void visit(const BlockNode* n) override {
    auto it = n->annotations.find(kBufferDimAlign);
    if (it != n->annotations.end())
      if (auto* perBuf = it->second.as<CallNode>())
        for (size_t i = 0; i < perBuf->args.size() && i < n->writes.size(); ++i)
          if (auto* entries = perBuf->args[i].as<CallNode>(); entries && !entries->args.empty())
            byData[n->writes[i].buffer->data.get()] = perBuf->args[i];
    IRVisitor::visit(n);
  }
};

/// For each allocated buffer that a block with reduce iter vars writes: how many loops lie between
/// its allocating block and the outermost loop that a reduce iter value of such a writer uses
/// (only the loops isCountedLoop accepts: lower-thread-binding turns the others into attrs). The minimum
/// over the writers; see kCompactMaxLoops.
class ReductionLoopCounter : public IRVisitor {
public:
  std::unordered_map<const VarNode*, int64_t> maxLoops;

protected:
  using IRVisitor::visit;
  void visit(const ForNode* n) override {
    bool counted = isCountedLoop(n);
    if (counted) m_loopIndex[n->loopVar.get()] = int64_t(m_depth++);
    IRVisitor::visit(n);
    if (counted) {
      --m_depth;
      m_loopIndex.erase(n->loopVar.get());
    }
  }
  void visit(const BlockRealizeNode* n) override {
    const BlockNode* b = n->block.get();
    for (auto& buf : b->allocBuffers) m_allocDepth[buf->data.get()] = int64_t(m_depth);
    int64_t outermost = -1;
    for (size_t i = 0; i < b->iterVars.size() && i < n->iterValues.size(); ++i) {
      int64_t idx = outermostLoop(n->iterValues[i]);
      m_iterLoop[b->iterVars[i].var.get()] = idx;
      IterType t = b->iterVars[i].iterType;
      if ((t == IterType::CommReduce || t == IterType::Ordered) && idx >= 0)
        outermost = outermost < 0 ? idx : std::min(outermost, idx);
    }
    if (outermost >= 0)
      for (auto& w : b->writes) {
        auto a = m_allocDepth.find(w.buffer->data.get());
        if (a == m_allocDepth.end()) continue;
        int64_t between = std::max<int64_t>(0, outermost - a->second);
        auto [it, fresh] = maxLoops.emplace(w.buffer->data.get(), between);
        if (!fresh) it->second = std::min(it->second, between);
      }
    IRVisitor::visit(n);
  }

private:
  /// The index of the outermost counted loop whose variable `e` uses (through the bound values of
  /// enclosing blocks' iter vars), or -1.
  int64_t outermostLoop(const Expr& e) const {
    int64_t best = -1;
    postOrderVisit(e, [&](const IRNode* x) {
      if (x->nodeKind != NodeKind::Var) return;
      auto* v = static_cast<const VarNode*>(x);
      int64_t idx = -1;
      if (auto l = m_loopIndex.find(v); l != m_loopIndex.end()) idx = l->second;
      else if (auto it = m_iterLoop.find(v); it != m_iterLoop.end()) idx = it->second;
      if (idx >= 0) best = best < 0 ? idx : std::min(best, idx);
    });
    return best;
  }
  size_t m_depth = 0;
  std::unordered_map<const VarNode*, int64_t> m_loopIndex, m_iterLoop, m_allocDepth;
};

class BlockLowerer : public IRMutator {
public:
  std::unordered_map<const VarNode*, Expr> dimAlign;
  std::unordered_map<const VarNode*, int64_t> maxLoops;

protected:
  using IRMutator::visit;

  Stmt visit(const BlockRealizeNode* n, const Stmt&) override {
    const BlockNode* b = n->block.get();
    if (b->iterVars.size() != n->iterValues.size())
      LOOM_THROW_AT(ValueError, b->span.defined() ? b->span : n->span)
          << "block '" << b->name << "' binds " << n->iterValues.size() << " values to its " << b->iterVars.size()
          << " iter vars";
    // Nested blocks are lowered first (mutate(b->body)); their bound values may mention this
    // block's iter vars, which the substitution below then replaces as well.
    std::unordered_map<Var, Expr, RefHash, RefEqual> bind;
    std::vector<Expr> values;
    for (size_t i = 0; i < b->iterVars.size(); ++i) {
      values.push_back(mutate(n->iterValues[i]));
      bind[b->iterVars[i].var] = values.back();
    }
    Stmt body = substitute(mutate(b->body), bind);
    if (b->init.defined()) {
      Stmt init = substitute(mutate(b->init), bind);
      Expr first;
      for (size_t i = 0; i < b->iterVars.size(); ++i) {
        const IterVar& iv = b->iterVars[i];
        if (iv.iterType != IterType::CommReduce && iv.iterType != IterType::Ordered) continue;
        Expr c = eq(values[i], substitute(iv.dom.min, bind));
        first = first.defined() ? (first && c) : c;
      }
      body = seq({first.defined() ? ifThen(first, init) : init, body});
    }
    Expr pred = mutate(n->predicate);
    if (pred.defined() && !isConstInt(pred, 1)) body = ifThen(substitute(pred, bind), body);
    for (auto it = b->allocBuffers.rbegin(); it != b->allocBuffers.rend(); ++it) {
      const Buffer& buf = *it;
      body = declBuffer(buf, body);
      Annotations ann;
      if (auto a = dimAlign.find(buf->data.get()); a != dimAlign.end()) ann[kBufferDimAlign] = a->second;
      if (auto m = maxLoops.find(buf->data.get()); m != maxLoops.end())
        ann[kCompactMaxLoops] = intImm(DataType::Int(32), m->second);
      body = Stmt(new AllocateNode(buf->data, buf->dtype, buf->shape, boolImm(true), body, buf->scope, ann));
    }
    for (auto it = b->annotations.rbegin(); it != b->annotations.rend(); ++it)
      if (isPragma(it->first)) body = attrStmt(Expr(), it->first, it->second, body);
    return withSpan(body, b->span.defined() ? b->span : n->span);
  }

  Stmt visit(const BlockNode* n, const Stmt&) override {
    LOOM_ICHECK(false) << "block " << n->name << " outside a BlockRealize";
    return Stmt();
  }

  Stmt visit(const ForNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    bool hasPragma = false;
    for (auto& [k, v] : n->annotations) hasPragma |= isPragma(k);
    if (!hasPragma) return s;
    auto* f = s.as<ForNode>();
    Annotations rest;
    for (auto& [k, v] : f->annotations)
      if (!isPragma(k)) rest[k] = v;
    Stmt out = withSpan(forLoop(f->loopVar, f->min, f->extent, f->kind, f->body, f->threadTag, rest), f->span);
    for (auto it = n->annotations.rbegin(); it != n->annotations.rend(); ++it)
      if (isPragma(it->first)) out = attrStmt(Expr(n->loopVar), it->first, it->second, out);
    return out;
  }
};

}  // namespace

PrimFunc lowerBlocks(const PrimFunc& f) {
  DimAlignCollector align;
  align.visitStmt(f->body);
  BlockLowerer lower;
  lower.dimAlign = std::move(align.byData);
  ReductionLoopCounter reductions;
  reductions.visitStmt(f->body);
  lower.maxLoops = std::move(reductions.maxLoops);
  return updateBody(f, lower.mutate(f->body));
}

}  // namespace loom::transform
