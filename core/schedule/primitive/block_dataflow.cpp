// Block kinds, buffer writers/readers, buffer substitution and relaxed regions for the
// compute-location, inline and cache primitives.
#include "core/schedule/primitive/block_dataflow.h"

#include <set>

#include "core/schedule/Analysis.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::tir::dataflow {

std::vector<const BlockNode*> scopeBlocks(const Schedule& sch, const BlockNode* block) {
  const BlockNode* scope = enclosingBlock(sch, block);
  return scope ? childBlocks(scope) : childBlocks(sch.func()->body.get());
}

namespace {
bool regionsHave(const std::vector<BufferRegion>& rs, const Buffer& buf) {
  for (auto& r : rs)
    if (r.buffer.same_as(buf)) return true;
  return false;
}
} // namespace

std::vector<const BlockNode*> writersOf(const std::vector<const BlockNode*>& blocks,
                                        const Buffer& buf) {
  std::vector<const BlockNode*> out;
  for (auto* b : blocks)
    if (regionsHave(b->writes, buf)) out.push_back(b);
  return out;
}

std::vector<const BlockNode*> readersOf(const std::vector<const BlockNode*>& blocks,
                                        const Buffer& buf) {
  std::vector<const BlockNode*> out;
  for (auto* b : blocks)
    if (regionsHave(b->reads, buf)) out.push_back(b);
  return out;
}

bool isParamBuffer(const PrimFunc& f, const Buffer& buf) {
  for (auto& [v, b] : f->bufferMap)
    if (b.same_as(buf)) return true;
  return false;
}

bool isAllocated(const PrimFunc& f, const Buffer& buf) {
  for (auto* b : allBlocks(f))
    for (auto& a : b->allocBuffers)
      if (a.same_as(buf)) return true;
  return false;
}

std::string whyNotComplete(const BlockNode* block, const std::vector<const BlockNode*>& scope) {
  for (auto& iv : block->iterVars)
    if (iv.iterType != IterType::DataPar)
      return std::string("its iter var '") + iv.var->name + "' is " + iterTypeName(iv.iterType) +
             ", not spatial";
  for (auto& w : block->writes) {
    for (auto* other : writersOf(scope, w.buffer))
      if (other != block)
        return "block '" + other->name + "' also writes buffer '" + w.buffer->name + "'";
    if (regionsHave(block->reads, w.buffer))
      return "it both reads and writes buffer '" + w.buffer->name + "'";
  }
  return {};
}

std::string whyNotReduction(const BlockNode* block, const std::vector<const BlockNode*>& scope) {
  bool hasReduce = false;
  for (auto& iv : block->iterVars) {
    if (iv.iterType != IterType::DataPar && iv.iterType != IterType::CommReduce)
      return std::string("its iter var '") + iv.var->name + "' is " + iterTypeName(iv.iterType);
    hasReduce |= iv.iterType == IterType::CommReduce;
  }
  if (!hasReduce) return "it has no reduce iter var";
  if (!block->init.defined()) return "it has no init statement";
  for (auto& w : block->writes) {
    for (auto* other : writersOf(scope, w.buffer))
      if (other != block)
        return "block '" + other->name + "' also writes buffer '" + w.buffer->name + "'";
    for (auto& r : w.region)
      for (auto& iv : block->iterVars)
        if (iv.iterType == IterType::CommReduce &&
            (usesVar(r.min, iv.var) || usesVar(r.extent, iv.var)))
          return "the region of buffer '" + w.buffer->name + "' it writes uses reduce iter var '" +
                 iv.var->name + "'";
  }
  return {};
}

const BufferStoreNode* singleStore(const BlockNode* block) {
  return block->body.defined() ? block->body.as<BufferStoreNode>() : nullptr;
}

int varPlusConst(const Expr& e, const std::vector<IterVar>& vars, int64_t* c) {
  Expr x = foldConstants(e);
  *c = 0;
  const VarNode* v = x.as<VarNode>();
  if (!v) {
    auto* b = x.as<BinaryNode>();
    if (!b || (b->op != BinOp::Add && b->op != BinOp::Sub)) return -1;
    const int64_t* k = asConstInt(b->b);
    const VarNode* a = b->a.as<VarNode>();
    if (!k && b->op == BinOp::Add) {
      k = asConstInt(b->a);
      a = b->b.as<VarNode>();
    }
    if (!k || !a) return -1;
    *c = b->op == BinOp::Sub ? -*k : *k;
    v = a;
  }
  for (size_t i = 0; i < vars.size(); ++i)
    if (vars[i].var.get() == v) return int(i);
  return -1;
}

std::vector<arith::IntSet> relaxedRegion(const BlockRealizeNode* realize, const BufferRegion& br,
                                         const arith::IntSetMap& relaxed, arith::Analyzer& an) {
  std::unordered_map<Var, Expr, RefHash, RefEqual> bind;
  const BlockNode* b = realize->block.get();
  for (size_t i = 0; i < b->iterVars.size() && i < realize->iterValues.size(); ++i)
    bind[b->iterVars[i].var] = realize->iterValues[i];
  std::vector<arith::IntSet> out;
  for (auto& r : br.region) {
    Expr lo = substitute(r.min, bind);
    Expr hi = substitute(r.min + r.extent - intImm(r.min.dtype(), 1), bind);
    arith::IntSet a = arith::evalSet(lo, relaxed, &an);
    arith::IntSet z = arith::evalSet(hi, relaxed, &an);
    out.push_back(arith::IntSet::interval(a.minValue, z.maxValue));
  }
  return out;
}

Range toRange(const arith::IntSet& s, const Range& fallback, arith::Analyzer& an) {
  if (s.empty || !s.hasLowerBound() || !s.hasUpperBound()) return fallback;
  Expr lo = an.simplify(s.minValue);
  Expr ext = an.simplify(s.maxValue - s.minValue + intImm(s.minValue.dtype(), 1));
  return Range(lo, ext);
}

namespace {
class BufferReplacer : public IRMutator {
public:
  explicit BufferReplacer(const std::unordered_map<const BufferNode*, Buffer>& m) : m_map(m) {}

protected:
  using IRMutator::visit;
  Buffer mapped(const Buffer& b) const {
    auto it = m_map.find(b.get());
    return it == m_map.end() ? b : it->second;
  }
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    auto* l = e.as<BufferLoadNode>();
    Buffer nb = mapped(l->buffer);
    if (nb.same_as(l->buffer)) return e;
    return bufferLoad(nb, l->indices);
  }
  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto* st = s.as<BufferStoreNode>();
    Buffer nb = mapped(st->buffer);
    if (nb.same_as(st->buffer)) return s;
    return bufferStore(nb, st->value, st->indices);
  }
  Stmt visit(const BlockNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto* b = s.as<BlockNode>();
    bool changed = false;
    auto fix = [&](std::vector<BufferRegion>& rs) {
      for (auto& r : rs) {
        Buffer nb = mapped(r.buffer);
        if (!nb.same_as(r.buffer)) {
          r.buffer = nb;
          changed = true;
        }
      }
    };
    auto* copy = new BlockNode(*b);
    Stmt keep(copy);
    fix(copy->reads);
    fix(copy->writes);
    for (auto& a : copy->allocBuffers) {
      Buffer nb = mapped(a);
      if (!nb.same_as(a)) {
        a = nb;
        changed = true;
      }
    }
    return changed ? keep : s;
  }

private:
  const std::unordered_map<const BufferNode*, Buffer>& m_map;
};

/// Rebuilds the blocks for which `edit` returns true (it edits a copy).
class BlockEditor : public IRMutator {
public:
  explicit BlockEditor(std::function<bool(const BlockNode* old, BlockNode* copy)> edit)
      : m_edit(std::move(edit)) {}
  std::unordered_map<const BlockNode*, const BlockNode*> rebuilt;

protected:
  using IRMutator::visit;
  Stmt visit(const BlockNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto* copy = new BlockNode(*s.as<BlockNode>());
    Stmt keep(copy);
    if (!m_edit(n, copy)) return s;
    rebuilt[n] = copy;
    return keep;
  }

private:
  std::function<bool(const BlockNode*, BlockNode*)> m_edit;
};
} // namespace

Stmt replaceBuffers(const Stmt& s, const std::unordered_map<const BufferNode*, Buffer>& map) {
  return BufferReplacer(map).mutate(s);
}

PrimFunc withoutAlloc(const PrimFunc& f, const Buffer& buf) {
  BlockEditor ed([&](const BlockNode*, BlockNode* b) {
    size_t before = b->allocBuffers.size();
    std::erase_if(b->allocBuffers, [&](const Buffer& a) { return a.same_as(buf); });
    return b->allocBuffers.size() != before;
  });
  return withBody(f, ed.mutate(f->body));
}

PrimFunc withAlloc(const PrimFunc& f, const BlockNode* scope, const Buffer& buf,
                   const BlockNode** newScope) {
  const BlockNode* target = scope;
  if (!target) {
    auto* r = f->body.as<BlockRealizeNode>();
    LOOM_ICHECK(r) << "withAlloc: the function has no root block";
    target = r->block.get();
  }
  BlockEditor ed([&](const BlockNode* old, BlockNode* b) {
    if (old != target) return false;
    b->allocBuffers.push_back(buf);
    return true;
  });
  PrimFunc out = withBody(f, ed.mutate(f->body));
  if (newScope) *newScope = ed.rebuilt.count(target) ? ed.rebuilt[target] : nullptr;
  return out;
}

std::string freshBlockName(const PrimFunc& f, const std::string& base) {
  std::set<std::string> names;
  for (auto* b : allBlocks(f))
    names.insert(b->name);
  if (!names.count(base)) return base;
  for (int k = 1;; ++k)
    if (!names.count(base + "_" + std::to_string(k))) return base + "_" + std::to_string(k);
}

} // namespace loom::tir::dataflow
