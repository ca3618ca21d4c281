// cache_read, cache_write, set_scope, storage_align: their errors, legality checks,
// implementation and trace instructions.
#include "core/schedule/primitive/cache_read_write.h"

#include <algorithm>
#include <array>

#include "core/schedule/Analysis.h"
#include "core/schedule/primitive/block_dataflow.h"
#include "core/schedule/primitive/compute_inline.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

namespace {

void checkScope(const Schedule& sch, const std::string& prim, const std::string& scope) {
  static const char* kBases[] = {"global", "shared", "local", "warp", "wmma", "texture"};
  std::string base = scope.substr(0, scope.find('.'));
  bool tagOk = scope.find('.') == std::string::npos || scope.find('.') + 1 < scope.size();
  bool known =
      std::any_of(std::begin(kBases), std::end(kBases), [&](const char* b) { return base == b; });
  if (!known || !tagOk)
    throw InvalidStorageScopeError(prim + ": '" + scope +
                                       "' is not a storage scope (global, shared, local, warp, "
                                       "wmma.*, texture, optionally with a '.tag')",
                                   sch.func());
}

const BufferRegion& regionAt(const Schedule& sch, const BlockNode* block,
                             const std::vector<BufferRegion>& regions, int64_t index,
                             const std::string& prim, const char* kind) {
  if (index < 0 || index >= int64_t(regions.size()))
    throw BufferIndexOutOfRangeError(prim + ": block '" + block->name + "' " + kind + " " +
                                         std::to_string(regions.size()) + " buffer" +
                                         (regions.size() == 1 ? "" : "s") + ", index " +
                                         std::to_string(index) + " is out of range",
                                     sch.func(), {block});
  return regions[size_t(index)];
}

/// The scope block of `block` (its enclosing block) and the statements of its body.
struct ScopeLayout {
  const BlockNode* scope = nullptr;
  std::vector<Stmt> kids;
  /// The index of the child of the scope body containing `n`.
  int indexOf(const Schedule& sch, const IRNode* n) const {
    const IRNode* cur = n;
    while (const StmtNode* p = sch.parentOf(cur)) {
      if (p == scope) break;
      for (size_t i = 0; i < kids.size(); ++i)
        if (kids[i].get() == cur && (p == scope->body.get() || p == scope)) return int(i);
      cur = p;
    }
    for (size_t i = 0; i < kids.size(); ++i)
      if (kids[i].get() == cur) return int(i);
    return -1;
  }
};

ScopeLayout layoutOf(const Schedule& sch, const BlockNode* block, const std::string& prim) {
  ScopeLayout l;
  l.scope = enclosingBlock(sch, block);
  if (!l.scope)
    throw ScheduleValueError(prim + ": block '" + block->name +
                                 "' is not inside a block that could allocate the cache buffer",
                             sch.func(), {block});
  if (auto* s = l.scope->body.as<SeqStmtNode>())
    l.kids = s->seq;
  else
    l.kids = {l.scope->body};
  return l;
}

std::string cacheName(const Buffer& buf, const std::string& scope) {
  std::string s = scope;
  std::replace(s.begin(), s.end(), '.', '_');
  return buf->name + "_" + s;
}

/// for ax0, ax1, ...: with T.block(name): dst[v0, v1, ...] = src[v0, v1, ...]
Stmt copyNest(const std::string& name, const Buffer& src, const Buffer& dst, Block* out) {
  auto* b = new BlockNode();
  Block blk(b);
  b->name = name;
  std::vector<Expr> idx;
  std::vector<Range> region;
  std::vector<Var> loops;
  for (size_t k = 0; k < src->shape.size(); ++k) {
    DataType t = src->shape[k].dtype();
    Var v = makeVar("v" + std::to_string(k), t);
    b->iterVars.emplace_back(v, Range(intImm(t, 0), src->shape[k]), IterType::DataPar);
    idx.push_back(v);
    region.emplace_back(v, intImm(t, 1));
    loops.push_back(makeVar("ax" + std::to_string(k), t));
  }
  b->reads = {BufferRegion(src, region)};
  b->writes = {BufferRegion(dst, region)};
  b->body = bufferStore(dst, bufferLoad(src, idx), idx);
  std::vector<Expr> values(loops.begin(), loops.end());
  Stmt s = blockRealize(values, boolImm(true), blk);
  for (size_t k = loops.size(); k-- > 0;)
    s = forLoop(loops[k], intImm(loops[k]->dtype, 0), src->shape[k], ForKind::Serial, s);
  *out = blk;
  return s;
}

/// Replaces each block of `blocks` by its new version, then inserts `stmt` at position `at` of
/// their scope's body and allocates `buf` in the scope block.
void placeCopy(Schedule& sch, const std::vector<std::pair<const BlockNode*, Stmt>>& blocks,
               const Stmt& stmt, int at, const Buffer& buf) {
  for (auto& [old, nb] : blocks)
    sch.replace(old, nb, {{old, nb.get()}});
  const BlockNode* scope =
      enclosingBlock(sch, static_cast<const BlockNode*>(blocks[0].second.get()));
  auto* ns = new BlockNode(*scope);
  Stmt keep(ns);
  std::vector<Stmt> kids;
  if (auto* s = scope->body.as<SeqStmtNode>())
    kids = s->seq;
  else
    kids = {scope->body};
  kids.insert(kids.begin() + at, stmt);
  ns->body = seq(kids);
  ns->allocBuffers.push_back(buf);
  sch.replace(scope, keep, {{scope, ns}});
}

} // namespace

// --- cache_read ---------------------------------------------------------------------------

BlockRV cacheRead(Schedule& sch, const BlockRV& blockRV, int64_t readBufferIndex,
                  const std::string& scope, const std::vector<BlockRV>& consumerBlocks) {
  const std::string prim = "cache_read";
  const BlockNode* block = sch.get(blockRV);
  // Step 1. Check the index and the scope; find the block's place in its scope.
  const Buffer buf = regionAt(sch, block, block->reads, readBufferIndex, prim, "reads").buffer;
  checkScope(sch, prim, scope);
  ScopeLayout l = layoutOf(sch, block, prim);
  // Step 2. The blocks that read the copy: the given consumers (and `block`), else every block
  // of the scope reading the buffer. Each must be in the scope and read the buffer.
  auto siblings = childBlocks(l.scope);
  std::vector<const BlockNode*> consumers;
  if (consumerBlocks.empty()) {
    consumers = dataflow::readersOf(siblings, buf);
  } else {
    consumers.push_back(block);
    for (auto& rv : consumerBlocks) {
      const BlockNode* c = sch.get(rv);
      if (std::find(siblings.begin(), siblings.end(), c) == siblings.end() ||
          dataflow::readersOf({c}, buf).empty())
        throw ScheduleValueError(prim + ": consumer block '" + c->name +
                                     "' does not read buffer '" + buf->name +
                                     "' in the scope of block '" + block->name + "'",
                                 sch.func(), {c});
      if (std::find(consumers.begin(), consumers.end(), c) == consumers.end())
        consumers.push_back(c);
    }
  }
  int first = int(l.kids.size()), last = -1;
  for (auto* c : consumers) {
    first = std::min(first, l.indexOf(sch, c));
    last = std::max(last, l.indexOf(sch, c));
  }
  // Step 3. The copy goes after the last writer of the buffer before the consumers (or first);
  // no writer may run among them.
  int at = 0;
  for (auto* w : dataflow::writersOf(siblings, buf)) {
    int wi = l.indexOf(sch, w);
    if (wi >= first && wi <= last) {
      const BlockNode* c = consumers[0];
      for (auto* x : consumers)
        if (l.indexOf(sch, x) >= wi) {
          c = x;
          break;
        }
      throw CachePositionError(
          prim + ": block '" + w->name + "' writes buffer '" + buf->name + "' " +
              (l.indexOf(sch, c) == wi ? "inside the same loop nest as" : "before") + " block '" +
              c->name + "', so no place in the scope can hold the copy",
          sch.func(), {c, w});
    }
    if (wi < first) at = std::max(at, wi + 1);
  }
  // Step 4. The cache buffer, the copy block, and the consumers reading the cache.
  std::string name = dataflow::freshBlockName(sch.func(), cacheName(buf, scope));
  Buffer cache = makeBuffer(name, buf->dtype, buf->shape, scope);
  Block copy;
  Stmt nest = copyNest(name, buf, cache, &copy);
  std::vector<std::pair<const BlockNode*, Stmt>> rewritten;
  for (auto* c : consumers)
    rewritten.push_back({c, dataflow::replaceBuffers(Stmt(c), {{buf.get(), cache}})});
  // Step 5. Place the copy and allocate the cache.
  placeCopy(sch, rewritten, nest, at, cache);
  BlockRV out = sch.addRV(copy.get());
  std::vector<Value> given;
  for (auto& rv : consumerBlocks)
    given.push_back(Value(rv));
  sch.record(prim,
             {Value(blockRV), Value(readBufferIndex), Value(scope),
              consumerBlocks.empty() ? Value() : Value(given)},
             {Value(out)});
  return out;
}

// --- cache_write --------------------------------------------------------------------------

BlockRV cacheWrite(Schedule& sch, const BlockRV& blockRV, int64_t writeBufferIndex,
                   const std::string& scope) {
  const std::string prim = "cache_write";
  const BlockNode* block = sch.get(blockRV);
  // Step 1. Check the index and the scope; find the block's place in its scope.
  const Buffer buf = regionAt(sch, block, block->writes, writeBufferIndex, prim, "writes").buffer;
  checkScope(sch, prim, scope);
  ScopeLayout l = layoutOf(sch, block, prim);
  int t = l.indexOf(sch, block);
  // Step 2. The block is the only writer; nothing else in its loop nest reads the buffer.
  auto siblings = childBlocks(l.scope);
  for (auto* w : dataflow::writersOf(siblings, buf))
    if (w != block)
      throw NotSingleWriterError(prim + ": block '" + w->name + "' also writes buffer '" +
                                     buf->name + "'; only the single writer can be cached",
                                 sch.func(), {block, w});
  for (auto* r : dataflow::readersOf(siblings, buf))
    if (r != block && l.indexOf(sch, r) == t)
      throw CachePositionError(prim + ": block '" + r->name + "' reads buffer '" + buf->name +
                                   "' inside the same loop nest as block '" + block->name +
                                   "', before the copy back could run",
                               sch.func(), {block, r});
  // Step 3. The cache buffer, the block writing it, and the copy back.
  std::string name = dataflow::freshBlockName(sch.func(), cacheName(buf, scope));
  Buffer cache = makeBuffer(name, buf->dtype, buf->shape, scope);
  Block copy;
  Stmt nest = copyNest(name, cache, buf, &copy);
  Stmt nb = dataflow::replaceBuffers(Stmt(block), {{buf.get(), cache}});
  // Step 4. Place the copy right after the block's loop nest and allocate the cache.
  placeCopy(sch, {{block, nb}}, nest, t + 1, cache);
  BlockRV out = sch.addRV(copy.get());
  sch.record(prim, {Value(blockRV), Value(writeBufferIndex), Value(scope)}, {Value(out)});
  return out;
}

// --- set_scope ----------------------------------------------------------------------------

void setScope(Schedule& sch, const BlockRV& blockRV, int64_t bufferIndex,
              const std::string& scope) {
  const std::string prim = "set_scope";
  const BlockNode* block = sch.get(blockRV);
  // Step 1. An allocated buffer the block writes, and a valid scope.
  const Buffer buf = regionAt(sch, block, block->writes, bufferIndex, prim, "writes").buffer;
  checkScope(sch, prim, scope);
  if (!dataflow::isAllocated(sch.func(), buf))
    throw NotAllocatedBufferError(prim + ": buffer '" + buf->name + "' written by block '" +
                                      block->name +
                                      "' is a parameter of the function, not an allocated buffer",
                                  sch.func(), {block});
  // Step 2. Replace the buffer everywhere by a copy in the new scope.
  Buffer nb = withScope(buf, scope);
  Stmt body = dataflow::replaceBuffers(sch.func()->body, {{buf.get(), nb}});
  sch.replaceFunc(withBody(sch.func(), body));
  sch.record(prim, {Value(blockRV), Value(bufferIndex), Value(scope)}, {});
}

// --- storage_align ------------------------------------------------------------------------

namespace {
using AlignList = std::vector<std::vector<std::array<int64_t, 3>>>;
constexpr const char* kDimAlign = "buffer_dim_align";

Expr tuple(std::vector<Expr> items) {
  return call(DataType::Handle(), "tvm_tuple", std::move(items));
}

AlignList decodeAlign(const Expr& e) {
  AlignList out;
  auto* outer = e.as<CallNode>();
  if (!outer || outer->op != "tvm_tuple") return out;
  for (auto& perBuf : outer->args) {
    out.emplace_back();
    auto* pb = perBuf.as<CallNode>();
    if (!pb) continue;
    for (auto& entry : pb->args) {
      auto* en = entry.as<CallNode>();
      if (!en || en->args.size() != 3) continue;
      std::array<int64_t, 3> a{};
      bool ok = true;
      for (size_t k = 0; k < 3; ++k) {
        const int64_t* v = asConstInt(en->args[k]);
        ok &= v != nullptr;
        if (v) a[k] = *v;
      }
      if (ok) out.back().push_back(a);
    }
  }
  return out;
}

Expr encodeAlign(const AlignList& list) {
  std::vector<Expr> perBuf;
  for (auto& entries : list) {
    std::vector<Expr> es;
    for (auto& a : entries)
      es.push_back(tuple({intImm(DataType::Int(32), a[0]), intImm(DataType::Int(32), a[1]),
                          intImm(DataType::Int(32), a[2])}));
    perBuf.push_back(tuple(es));
  }
  return tuple(perBuf);
}
} // namespace

void storageAlign(Schedule& sch, const BlockRV& blockRV, int64_t bufferIndex, int64_t axis,
                  int64_t factor, int64_t offset) {
  const std::string prim = "storage_align";
  const BlockNode* block = sch.get(blockRV);
  // Step 1. An allocated buffer the block writes; an axis inside it; factor > 0 <= offset.
  const Buffer buf = regionAt(sch, block, block->writes, bufferIndex, prim, "writes").buffer;
  if (!dataflow::isAllocated(sch.func(), buf))
    throw NotAllocatedBufferError(prim + ": buffer '" + buf->name + "' written by block '" +
                                      block->name +
                                      "' is a parameter of the function; its layout is fixed",
                                  sch.func(), {block});
  int64_t ndim = int64_t(buf->ndim());
  if (axis < -ndim || axis >= ndim)
    throw InvalidStorageAlignError(prim + ": axis " + std::to_string(axis) +
                                       " is outside buffer '" + buf->name + "' of " +
                                       std::to_string(ndim) + " dimensions",
                                   sch.func(), {block});
  if (axis < 0) axis += ndim;
  if (factor <= 0)
    throw InvalidStorageAlignError(
        prim + ": factor " + std::to_string(factor) + " must be positive", sch.func(), {block});
  if (offset < 0 || offset >= factor)
    throw InvalidStorageAlignError(prim + ": offset " + std::to_string(offset) +
                                       " must be in [0, factor " + std::to_string(factor) + ")",
                                   sch.func(), {block});
  // Step 2. Update the block's "buffer_dim_align" entry for (buffer, axis).
  AlignList list;
  auto it = block->annotations.find(kDimAlign);
  if (it != block->annotations.end()) list = decodeAlign(it->second);
  if (int64_t(list.size()) <= bufferIndex) list.resize(size_t(bufferIndex + 1));
  auto& entries = list[size_t(bufferIndex)];
  std::erase_if(entries, [&](const std::array<int64_t, 3>& a) { return a[0] == axis; });
  entries.push_back({axis, factor, offset});
  std::sort(entries.begin(), entries.end());
  auto* nb = new BlockNode(*block);
  Stmt keep(nb);
  nb->annotations[kDimAlign] = encodeAlign(list);
  sch.replace(block, keep, {{block, nb}});
  sch.record(prim, {Value(blockRV), Value(bufferIndex), Value(axis), Value(factor), Value(offset)},
             {});
}

// --- Trace instructions -------------------------------------------------------------------

void registerCacheReadWriteInstructions() {
  registerInstructionKind({"cache_read",
                           {{"block", vt::Block},
                            {"read_buffer_index", vt::Int},
                            {"storage_scope", vt::String},
                            {"consumer_blocks", vt::None | vt::List, vt::Block, Value(), true}},
                           false,
                           false,
                           false,
                           "Read a buffer through a cache copied before its consumers",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             std::vector<BlockRV> consumers;
                             if (!in[3].isNone())
                               for (auto& v : in[3].asList())
                                 consumers.push_back(v.asBlock());
                             BlockRV b = cacheRead(s, in[0].asBlock(), in[1].asInt(),
                                                   in[2].asString(), consumers);
                             return std::vector<Value>{Value(b)};
                           }});
  registerInstructionKind(
      {"cache_write",
       {{"block", vt::Block}, {"write_buffer_index", vt::Int}, {"storage_scope", vt::String}},
       false,
       false,
       false,
       "Write a block's output through a cache buffer copied back after it",
       [](Schedule& s, const std::vector<Value>& in, const Value&) {
         BlockRV b = cacheWrite(s, in[0].asBlock(), in[1].asInt(), in[2].asString());
         return std::vector<Value>{Value(b)};
       }});
  registerInstructionKind(
      {"set_scope",
       {{"block", vt::Block}, {"buffer_index", vt::Int}, {"storage_scope", vt::String}},
       false,
       false,
       false,
       "Move an allocated buffer to another storage scope",
       [](Schedule& s, const std::vector<Value>& in, const Value&) {
         setScope(s, in[0].asBlock(), in[1].asInt(), in[2].asString());
         return std::vector<Value>{};
       }});
  registerInstructionKind({"storage_align",
                           {{"block", vt::Block},
                            {"buffer_index", vt::Int},
                            {"axis", vt::Int},
                            {"factor", vt::Int},
                            {"offset", vt::Int}},
                           false,
                           false,
                           false,
                           "Pad the stride of a buffer dimension to factor * k + offset",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             storageAlign(s, in[0].asBlock(), in[1].asInt(), in[2].asInt(),
                                          in[3].asInt(), in[4].asInt());
                             return std::vector<Value>{};
                           }});
}

} // namespace loom::tir
