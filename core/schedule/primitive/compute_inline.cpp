// compute_inline, reverse_compute_inline: their errors, legality checks, implementation and
// trace instructions.
#include "core/schedule/primitive/compute_inline.h"

#include <algorithm>
#include <set>

#include "core/schedule/Analysis.h"
#include "core/schedule/primitive/block_dataflow.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

namespace {

using VarMap = std::unordered_map<Var, Expr, RefHash, RefEqual>;

bool readsBuffer(const Expr& e, const Buffer& buf) {
  bool found = false;
  postOrderVisit(e, [&](const IRNode* n) {
    if (auto* l =
            n->nodeKind == NodeKind::BufferLoad ? static_cast<const BufferLoadNode*>(n) : nullptr)
      found |= l->buffer.same_as(buf);
  });
  return found;
}

/// Checks that `block` is `B[v...] = f(...)` with spatial iter vars only; returns the store.
const BufferStoreNode* checkInlinable(const Schedule& sch, const BlockNode* block,
                                      const std::string& prim, const std::string& role,
                                      bool requireVarIndices) {
  const std::string what = role + "block '" + block->name + "'";
  if (block->init.defined())
    throw InlineReductionError(prim + ": " + what + " is a reduction (it has an init statement)",
                               sch.func(), {block});
  for (auto& iv : block->iterVars)
    if (iv.iterType != IterType::DataPar)
      throw InlineReductionError(prim + ": " + what + " has the " + iterTypeName(iv.iterType) +
                                     " iter var '" + iv.var->name +
                                     "'; only blocks with spatial iter vars can be inlined",
                                 sch.func(), {block});
  if (block->writes.size() != 1)
    throw MultipleWritesError(prim + ": " + what + " writes " +
                                  std::to_string(block->writes.size()) +
                                  " buffers; only a block writing one buffer can be inlined",
                              sch.func(), {block});
  const BufferStoreNode* store = dataflow::singleStore(block);
  if (!store || !store->buffer.same_as(block->writes[0].buffer))
    throw NotInlinableBodyError(prim + ": the body of " + what +
                                    " is not a single store to buffer '" +
                                    block->writes[0].buffer->name + "'",
                                sch.func(), {block});
  if (readsBuffer(store->value, store->buffer))
    throw NotInlinableBodyError(prim + ": " + what + " reads the buffer '" + store->buffer->name +
                                    "' it writes",
                                sch.func(), {block});
  if (requireVarIndices) {
    std::set<const VarNode*> seen;
    for (size_t k = 0; k < store->indices.size(); ++k) {
      auto* v = store->indices[k].as<VarNode>();
      bool isIter = v && std::any_of(block->iterVars.begin(), block->iterVars.end(),
                                     [&](const IterVar& iv) { return iv.var.get() == v; });
      if (!isIter || !seen.insert(v).second)
        throw NotInlinableBodyError(prim + ": " + what + " stores to '" + store->buffer->name +
                                        "' at index " + std::to_string(k) +
                                        " that is not a distinct iter var of the block",
                                    sch.func(), {block});
    }
    if (seen.size() != block->iterVars.size())
      throw NotInlinableBodyError(prim + ": " + what + " has iter vars that do not index the " +
                                      "buffer '" + store->buffer->name + "' it stores to",
                                  sch.func(), {block});
  }
  return store;
}

constexpr int64_t kMaxInlinedNodes = 65536;

/// Counts the nodes of an expression as a tree (a subexpression shared by several parents counts
/// once per parent); stops descending once the count passes `cap`, so the walk costs O(cap), not
/// the size of the tree.
class TreeSize : public IRVisitor {
public:
  explicit TreeSize(int64_t cap) : m_cap(cap) {}
  int64_t nodes = 0;

  using IRVisitor::visit;
#define LOOM_TREE_SIZE_VISIT(T)                                                                    \
  void visit(const T* n) override {                                                                \
    if (++nodes <= m_cap) IRVisitor::visit(n);                                                     \
  }
  LOOM_TREE_SIZE_VISIT(IntImmNode)
  LOOM_TREE_SIZE_VISIT(FloatImmNode)
  LOOM_TREE_SIZE_VISIT(StringImmNode)
  LOOM_TREE_SIZE_VISIT(VarNode)
  LOOM_TREE_SIZE_VISIT(CastNode)
  LOOM_TREE_SIZE_VISIT(BinaryNode)
  LOOM_TREE_SIZE_VISIT(NotNode)
  LOOM_TREE_SIZE_VISIT(SelectNode)
  LOOM_TREE_SIZE_VISIT(LetNode)
  LOOM_TREE_SIZE_VISIT(RampNode)
  LOOM_TREE_SIZE_VISIT(BroadcastNode)
  LOOM_TREE_SIZE_VISIT(CallNode)
  LOOM_TREE_SIZE_VISIT(BufferLoadNode)
#undef LOOM_TREE_SIZE_VISIT

private:
  int64_t m_cap;
};

int64_t valueSize(const Expr& e) {
  TreeSize t(kMaxInlinedNodes);
  t.visitExpr(e);
  return t.nodes;
}

/// Refuses when replacing the loads of `buf` under `consumer` (a block's body or a store's value)
/// by copies of `value` would copy more than kMaxInlinedNodes nodes. One load is always fine (the
/// value moves, the tree grows by its size once); what grows exponentially is a value read k
/// times inlined into a value read k times, and so on.
template <typename Node>
void checkInlinedSize(const Schedule& sch, const std::string& prim, const Node& consumer,
                      const std::string& consumerName, const Buffer& buf, const Expr& value,
                      const std::string& producerName, std::vector<const IRNode*> marks) {
  int64_t loads = 0;
  postOrderVisit(consumer, [&](const IRNode* n) {
    loads += n->nodeKind == NodeKind::BufferLoad &&
             static_cast<const BufferLoadNode*>(n)->buffer.same_as(buf);
  });
  if (loads <= 1) return;
  int64_t size = valueSize(value);
  if (size <= kMaxInlinedNodes / loads) return;
  throw InlineTooLargeError(
      prim + ": inlining block '" + producerName + "' into block '" + consumerName +
          "' would copy its value (" + (size > kMaxInlinedNodes ? "over " : "") +
          std::to_string(std::min(size, kMaxInlinedNodes)) + " nodes) into " +
          std::to_string(loads) + " loads of buffer '" + buf->name + "', over the limit of " +
          std::to_string(kMaxInlinedNodes) + " copied nodes",
      sch.func(), std::move(marks));
}

/// Adds `r` to `regions`, merging it with a region of the same buffer (their bounding box).
void mergeRegion(std::vector<BufferRegion>& regions, const BufferRegion& r, arith::Analyzer& an) {
  for (auto& e : regions) {
    if (!e.buffer.same_as(r.buffer) || e.region.size() != r.region.size()) continue;
    for (size_t k = 0; k < r.region.size(); ++k) {
      const Range &a = e.region[k], &b = r.region[k];
      if (an.canProveEqual(a.min, b.min) && an.canProveEqual(a.extent, b.extent)) continue;
      arith::IntSet u =
          arith::unionSets(arith::IntSet::fromRange(a), arith::IntSet::fromRange(b), &an);
      e.region[k] = dataflow::toRange(u, Range(0, r.buffer->shape[k]), an);
    }
    return;
  }
  regions.push_back(r);
}

/// Replaces loads of the inlined buffer by the producer's value at the load's indices, and the
/// region of that buffer in each reading block's signature by the regions the value reads.
class InlineRewriter : public IRMutator {
public:
  InlineRewriter(const BlockNode* producer, const BufferStoreNode* store)
      : m_producer(producer), m_store(store) {}
  ReplaceMap follow;

protected:
  using IRMutator::visit;
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    auto* l = e.as<BufferLoadNode>();
    if (!l->buffer.same_as(m_store->buffer)) return e;
    VarMap vmap;
    for (size_t k = 0; k < m_store->indices.size(); ++k)
      vmap[Var(m_store->indices[k].as<VarNode>())] = l->indices[k];
    return substitute(m_store->value, vmap);
  }
  Stmt visit(const BlockNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    const BufferRegion* old = nullptr;
    for (auto& r : n->reads)
      if (r.buffer.same_as(m_store->buffer)) old = &r;
    if (!old) return s;
    auto* b = new BlockNode(*s.as<BlockNode>());
    Stmt keep(b);
    arith::Analyzer an;
    // The producer's iter vars range over the region of the buffer this block reads.
    arith::IntSetMap dom;
    for (size_t k = 0; k < m_store->indices.size(); ++k)
      dom[Var(m_store->indices[k].as<VarNode>())] = arith::IntSet::fromRange(old->region[k]);
    // The producer's reads take the place of the inlined buffer's region.
    std::vector<BufferRegion> reads;
    for (auto& r : b->reads) {
      if (!r.buffer.same_as(m_store->buffer)) {
        mergeRegion(reads, r, an);
        continue;
      }
      for (auto& pr : m_producer->reads) {
        std::vector<Range> region;
        for (size_t k = 0; k < pr.region.size(); ++k) {
          const Range& pk = pr.region[k];
          arith::IntSet lo = arith::evalSet(pk.min, dom, &an);
          arith::IntSet hi =
              arith::evalSet(pk.min + pk.extent - intImm(pk.min.dtype(), 1), dom, &an);
          region.push_back(dataflow::toRange(arith::IntSet::interval(lo.minValue, hi.maxValue),
                                             Range(0, pr.buffer->shape[k]), an));
        }
        mergeRegion(reads, BufferRegion(pr.buffer, region), an);
      }
    }
    b->reads = reads;
    follow[n] = b;
    return keep;
  }

private:
  const BlockNode* m_producer;
  const BufferStoreNode* m_store;
};

/// Replaces loads of `buf` by `value` (reverse inline: the consumer's loads of the producer's
/// buffer become the producer's value).
Expr replaceLoads(const Expr& e, const Buffer& buf, const Expr& value) {
  class R : public IRMutator {
  public:
    R(const Buffer& b, const Expr& v) : m_b(b), m_v(v) {}

  protected:
    using IRMutator::visit;
    Expr visit(const BufferLoadNode* n, const Expr& self) override {
      if (n->buffer.same_as(m_b)) return m_v;
      return IRMutator::visit(n, self);
    }

  private:
    const Buffer& m_b;
    const Expr& m_v;
  };
  return R(buf, value).mutate(e);
}

std::vector<const BufferLoadNode*> loadsOf(const Expr& e, const Buffer& buf) {
  std::vector<const BufferLoadNode*> out;
  postOrderVisit(e, [&](const IRNode* n) {
    if (auto* l =
            n->nodeKind == NodeKind::BufferLoad ? static_cast<const BufferLoadNode*>(n) : nullptr)
      if (l->buffer.same_as(buf)) out.push_back(l);
  });
  return out;
}

BufferRegion substituteRegion(const BufferRegion& r, const VarMap& vmap) {
  std::vector<Range> out;
  for (auto& x : r.region)
    out.emplace_back(foldConstants(substitute(x.min, vmap)),
                     foldConstants(substitute(x.extent, vmap)));
  return BufferRegion(r.buffer, out);
}

} // namespace

int64_t maxInlinedNodes() {
  return kMaxInlinedNodes;
}

// --- compute_inline -----------------------------------------------------------------------

void computeInline(Schedule& sch, const BlockRV& blockRV) {
  const std::string prim = "compute_inline";
  const BlockNode* block = sch.get(blockRV);
  const BlockRealizeNode* realize = sch.realizeOf(block);
  // Step 1. The block is an injective producer `B[v...] = f(...)` of an intermediate buffer.
  if (!realize || realize == sch.func()->body.get())
    throw ScheduleValueError(prim + ": block '" + block->name + "' is the function's root block",
                             sch.func(), {block});
  const BufferStoreNode* store = checkInlinable(sch, block, prim, "", true);
  const Buffer buf = store->buffer;
  if (dataflow::isParamBuffer(sch.func(), buf))
    throw OutputBlockError(prim + ": block '" + block->name + "' writes buffer '" + buf->name +
                               "', a parameter of the function; an output block cannot be inlined",
                           sch.func(), {block});
  // Step 2. No other block writes the buffer.
  for (auto* w : dataflow::writersOf(allBlocks(sch.func()), buf))
    if (w != block)
      throw NotSingleWriterError(prim + ": block '" + w->name + "' also writes buffer '" +
                                     buf->name + "' that block '" + block->name + "' produces",
                                 sch.func(), {block, w});
  // Step 3. No consumer's value grows past kMaxInlinedNodes (copies of a value that reads its
  // input several times, inlined again and again, grow exponentially).
  for (auto* r : dataflow::readersOf(allBlocks(sch.func()), buf))
    checkInlinedSize(sch, prim, r->body, r->name, buf, store->value, block->name, {block, r});
  // Step 4. Remove the block, substitute its value into the loads, drop the allocation.
  Stmt keepStore = block->body; // keeps `store` alive across the replace
  Block keepBlock = realize->block;
  sch.replace(realize, Stmt());
  InlineRewriter rw(block, store);
  PrimFunc f = withBody(sch.func(), rw.mutate(sch.func()->body));
  f = dataflow::withoutAlloc(f, buf);
  sch.replaceFunc(f, rw.follow);
  sch.record(prim, {Value(blockRV)}, {});
}

// --- reverse_compute_inline ---------------------------------------------------------------

void reverseComputeInline(Schedule& sch, const BlockRV& blockRV) {
  const std::string prim = "reverse_compute_inline";
  const BlockNode* block = sch.get(blockRV);
  const BlockRealizeNode* realize = sch.realizeOf(block);
  // Step 1. The consumer is `C[...] = g(B[v...], ...)` without a predicate.
  if (!realize || realize == sch.func()->body.get())
    throw ScheduleValueError(prim + ": block '" + block->name + "' is the function's root block",
                             sch.func(), {block});
  const BufferStoreNode* cstore = checkInlinable(sch, block, prim, "", false);
  if (!isOne(realize->predicate))
    throw NotInlinableBodyError(prim + ": block '" + block->name +
                                    "' has a predicate, which inlining would drop",
                                sch.func(), {block});
  // Step 2. Exactly one producer, writing one intermediate buffer read by this block only.
  auto producers = producersOf(sch, block);
  if (producers.size() != 1)
    throw NotSingleProducerError(prim + ": block '" + block->name + "' has " +
                                     std::to_string(producers.size()) +
                                     " producer blocks in its scope; exactly one is required",
                                 sch.func(), {block});
  const BlockNode* producer = producers[0];
  const BufferStoreNode* pstore = checkInlinable(sch, producer, prim, "producer ", false);
  const Buffer buf = pstore->buffer;
  if (dataflow::isParamBuffer(sch.func(), buf))
    throw OutputBlockError(prim + ": producer block '" + producer->name + "' writes buffer '" +
                               buf->name +
                               "', a parameter of the function, which would no longer be written",
                           sch.func(), {producer});
  for (auto* w : dataflow::writersOf(allBlocks(sch.func()), buf))
    if (w != producer)
      throw NotSingleWriterError(prim + ": block '" + w->name + "' also writes buffer '" +
                                     buf->name + "'",
                                 sch.func(), {producer, w});
  for (auto* r : dataflow::readersOf(allBlocks(sch.func()), buf))
    if (r != block)
      throw MultipleReadersError(prim + ": block '" + r->name + "' also reads buffer '" +
                                     buf->name + "' that block '" + block->name + "' would absorb",
                                 sch.func(), {block, r});
  if (cstore->buffer.same_as(buf))
    throw NotInlinableBodyError(prim + ": block '" + block->name + "' writes buffer '" + buf->name +
                                    "' it reads",
                                sch.func(), {block});
  // Step 3. Every load of the buffer uses one index: distinct iter vars spanning its shape.
  auto loads = loadsOf(cstore->value, buf);
  if (loads.empty())
    throw NotInvertibleLoadError(prim + ": block '" + block->name + "' does not load buffer '" +
                                     buf->name + "' in its value",
                                 sch.func(), {block});
  arith::Analyzer an;
  VarMap vmap;
  std::set<const VarNode*> seen;
  for (size_t k = 0; k < loads[0]->indices.size(); ++k) {
    const Expr& idx = loads[0]->indices[k];
    auto* v = idx.as<VarNode>();
    const IterVar* iv = nullptr;
    for (auto& x : block->iterVars)
      if (x.var.get() == v) iv = &x;
    if (!iv || !seen.insert(v).second || !an.canProveEqual(iv->dom.min, 0) ||
        !an.canProveEqual(iv->dom.extent, buf->shape[k]))
      throw NotInvertibleLoadError(prim + ": block '" + block->name + "' loads buffer '" +
                                       buf->name + "' at index " + std::to_string(k) +
                                       " with something other than a distinct iter var spanning "
                                       "the buffer's dimension",
                                   sch.func(), {block});
    vmap[iv->var] = pstore->indices[k];
  }
  if (seen.size() != block->iterVars.size())
    throw NotInvertibleLoadError(prim + ": block '" + block->name +
                                     "' has iter vars that do not index buffer '" + buf->name + "'",
                                 sch.func(), {block});
  for (auto* l : loads)
    for (size_t k = 0; k < l->indices.size(); ++k)
      if (!l->indices[k].same_as(loads[0]->indices[k]) &&
          !(l->indices[k].as<VarNode>() == loads[0]->indices[k].as<VarNode>() &&
            l->indices[k].as<VarNode>()))
        throw NotInvertibleLoadError(prim + ": block '" + block->name + "' loads buffer '" +
                                         buf->name + "' at different indices",
                                     sch.func(), {block});
  // Step 4. The producer stores the consumer's value, computed from its own, into C (of a
  // bounded size, as in compute_inline).
  checkInlinedSize(sch, prim, cstore->value, block->name, buf, pstore->value, producer->name,
                   {producer, block});
  Expr value = substitute(replaceLoads(cstore->value, buf, pstore->value), vmap);
  std::vector<Expr> indices;
  for (auto& i : cstore->indices)
    indices.push_back(foldConstants(substitute(i, vmap)));
  auto* nb = new BlockNode(*producer);
  Stmt keepNew(nb);
  nb->body = bufferStore(cstore->buffer, value, indices);
  nb->writes.clear();
  for (auto& w : block->writes)
    nb->writes.push_back(substituteRegion(w, vmap));
  for (auto& r : block->reads)
    if (!r.buffer.same_as(buf)) mergeRegion(nb->reads, substituteRegion(r, vmap), an);
  // Step 5. Replace the producer, remove the consumer and the buffer.
  sch.replace(producer, keepNew, {{producer, nb}});
  sch.replace(realize, Stmt());
  sch.replaceFunc(dataflow::withoutAlloc(sch.func(), buf));
  sch.record(prim, {Value(blockRV)}, {});
}

// --- Trace instructions -------------------------------------------------------------------

void registerComputeInlineInstructions() {
  registerInstructionKind({"compute_inline",
                           {{"block", vt::Block}},
                           false,
                           false,
                           false,
                           "Inline a producer block into its consumers",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             computeInline(s, in[0].asBlock());
                             return std::vector<Value>{};
                           }});
  registerInstructionKind({"reverse_compute_inline",
                           {{"block", vt::Block}},
                           false,
                           false,
                           false,
                           "Inline a consumer block into its producer",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             reverseComputeInline(s, in[0].asBlock());
                             return std::vector<Value>{};
                           }});
}

} // namespace loom::tir
