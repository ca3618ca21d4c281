// lower-blocks: TVM's block form to plain loops (iter vars bound, init and predicates as ifs).
#include "core/transform/LowerBlocks.h"

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

class BlockLowerer : public IRMutator {
public:
  std::unordered_map<const VarNode*, Expr> dimAlign;

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
  return updateBody(f, lower.mutate(f->body));
}

}  // namespace loom::transform
