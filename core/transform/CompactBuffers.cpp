// compact-buffers: allocations sink to the innermost loop around their uses and shrink to the region used.
#include "core/transform/CompactBuffers.h"

#include <functional>
#include <optional>
#include <unordered_set>

#include "core/arith/Analyzer.h"
#include "core/arith/IntSet.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

/// A GPU thread index in scope: `attr [threadIdx.x] "thread_extent" = extent`.
struct ThreadVar {
  Var var;
  Expr extent;
  /// Under an allocation: how many places (see Access::places) enclose the attr.
  size_t depth = 0;
};

/// A place an allocation can move into the body of: a loop, or (for shared memory) the
/// `blockIdx` thread_extent attr that makes the buffer one per block.
struct Place {
  const StmtNode* node = nullptr;
  const ForNode* loop = nullptr;  ///< null for an attr
};

/// One access of the buffer: its indices, the places around it (outermost first) and the thread
/// indices bound between the allocation and it.
struct Access {
  std::vector<Expr> indices;
  std::vector<Place> places;
  std::vector<ThreadVar> threads;
};

const VarNode* threadVarOf(const AttrStmtNode* n) {
  return n->key == "thread_extent" ? n->node.as<VarNode>() : nullptr;
}

bool hasPrefix(const std::string& s, const char* p) { return s.rfind(p, 0) == 0; }
bool isBlockIdx(const VarNode* v) { return hasPrefix(v->name, "blockIdx"); }

/// Whether an access's index ranges over thread `t` (instead of keeping it a symbol) for a buffer
/// of `scope`, as in TVM's CompactBufferAllocation: memory the threads of a block share ("shared")
/// covers every threadIdx and vthread but one block (blockIdx stays a symbol) unless the
/// allocation sits outside that block's attr; "local" memory is per thread; other memory is global.
bool relaxThread(const std::string& scope, const VarNode* t, bool allocOutsideAttr) {
  if (scope == "local") return false;
  if (scope == "shared") return !isBlockIdx(t) || allocOutsideAttr;
  return true;
}

/// Finds every access of `buffer` under an allocation, the loops around each, and the variables
/// defined under the allocation. Fails (escaped) when the handle is used otherwise.
class AccessCollector : public IRVisitor {
public:
  AccessCollector(const Buffer& b, bool blockPlaces) : m_buffer(b), m_blockPlaces(blockPlaces) {}
  std::vector<Access> accesses;
  std::unordered_set<const VarNode*> definedInside;
  bool escaped = false;

protected:
  using IRVisitor::visit;
  void note(const Buffer& b, const std::vector<Expr>& indices) {
    if (b->data.get() != m_buffer->data.get()) return;
    if (!b.same_as(m_buffer)) {
      escaped = true;
      return;
    }
    accesses.push_back({indices, m_places, m_threads});
  }
  void visit(const VarNode* n) override { escaped |= n == m_buffer->data.get(); }
  void visit(const BufferLoadNode* n) override {
    note(n->buffer, n->indices);
    IRVisitor::visit(n);
  }
  void visit(const BufferStoreNode* n) override {
    note(n->buffer, n->indices);
    IRVisitor::visit(n);
  }
  void visit(const DeclBufferNode* n) override {
    if (n->buffer->data.get() == m_buffer->data.get() && !n->buffer.same_as(m_buffer)) escaped = true;
    IRVisitor::visit(n);
  }
  void visit(const LetStmtNode* n) override {
    definedInside.insert(n->var.get());
    IRVisitor::visit(n);
  }
  void visit(const LetNode* n) override {
    definedInside.insert(n->var.get());
    IRVisitor::visit(n);
  }
  void visit(const ForNode* n) override {
    definedInside.insert(n->loopVar.get());
    visitExpr(n->min);
    visitExpr(n->extent);
    m_places.push_back({n, n});
    visitStmt(n->body);
    m_places.pop_back();
  }
  void visit(const AttrStmtNode* n) override {
    const VarNode* tv = threadVarOf(n);
    if (tv) m_threads.push_back({Var(tv), n->value, m_places.size()});
    bool place = tv && m_blockPlaces && isBlockIdx(tv);
    if (place) m_places.push_back({n, nullptr});
    IRVisitor::visit(n);
    if (place) m_places.pop_back();
    if (tv) m_threads.pop_back();
  }

private:
  Buffer m_buffer;
  bool m_blockPlaces;
  std::vector<Place> m_places;
  std::vector<ThreadVar> m_threads;
};

bool usesAny(const Expr& e, const std::unordered_set<const VarNode*>& vars) {
  bool found = false;
  postOrderVisit(e, [&](const IRNode* x) {
    if (x->nodeKind == NodeKind::Var) found |= vars.count(static_cast<const VarNode*>(x)) > 0;
  });
  return found;
}

/// Rewrites the accesses of `from` into `to` with indices rebased by `offsets`, and places the
/// allocation `wrap` around the body of loop or attr `at` (or leaves placement to the caller when null).
class AccessRewriter : public IRMutator {
public:
  AccessRewriter(Buffer from, Buffer to, std::vector<Expr> offsets, const StmtNode* at,
                 std::function<Stmt(Stmt)> wrap)
      : m_from(std::move(from)), m_to(std::move(to)), m_offsets(std::move(offsets)), m_at(at),
        m_wrap(std::move(wrap)) {}

protected:
  using IRMutator::visit;
  std::vector<Expr> rebase(const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) out.push_back(m_offsets[d].defined() ? idx[d] - m_offsets[d] : idx[d]);
    return out;
  }
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    if (!n->buffer.same_as(m_from)) return e;
    auto* l = e.as<BufferLoadNode>();
    return withSpan(bufferLoad(m_to, rebase(l->indices)), n->span);
  }
  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    if (!n->buffer.same_as(m_from)) return s;
    auto* st = s.as<BufferStoreNode>();
    return withSpan(bufferStore(m_to, st->value, rebase(st->indices)), n->span);
  }
  Stmt visit(const ForNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    if (n != m_at) return s;
    auto* f = s.as<ForNode>();
    auto* copy = new ForNode(*f);
    copy->body = m_wrap(f->body);
    return withSpan(Stmt(copy), n->span);
  }
  Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    if (n != m_at) return s;
    auto* a = s.as<AttrStmtNode>();
    return withSpan(attrStmt(a->node, a->key, a->value, m_wrap(a->body)), n->span);
  }

private:
  Buffer m_from, m_to;
  std::vector<Expr> m_offsets;
  const StmtNode* m_at;
  std::function<Stmt(Stmt)> m_wrap;
};

class Compactor : public IRMutator {
protected:
  using IRMutator::visit;

  Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
    const VarNode* tv = threadVarOf(n);
    if (tv) m_threads.push_back({Var(tv), n->value});
    Stmt s = IRMutator::visit(n, self);
    if (tv) m_threads.pop_back();
    return s;
  }

  Stmt visit(const AllocateNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto* alloc = s.as<AllocateNode>();
    auto* decl = alloc->body.as<DeclBufferNode>();
    if (!decl || !decl->buffer->data.same_as(alloc->bufferVar)) return s;
    const Buffer& buf = decl->buffer;
    if (!buf->strides.empty() || (buf->elemOffset.defined() && !isZero(buf->elemOffset))) return s;
    if (buf->shape.size() != alloc->extents.size()) return s;

    std::string scope = !buf->scope.empty() && buf->scope != "global" ? buf->scope : alloc->scope;
    bool shared = scope == "shared";
    AccessCollector c(buf, shared);
    c.visitStmt(decl->body);
    if (c.escaped || c.accesses.empty()) return s;

    // The deepest place around every access (never entering vector or thread loops).
    const auto& first = c.accesses.front().places;
    size_t depth = first.size();
    for (auto& a : c.accesses) {
      size_t d = 0;
      while (d < depth && d < a.places.size() && a.places[d].node == first[d].node) ++d;
      depth = d;
    }
    for (size_t d = 0; d < depth; ++d)
      if (first[d].loop && (first[d].loop->kind == ForKind::Vectorized || first[d].loop->kind == ForKind::ThreadBinding)) {
        depth = d;
        break;
      }
    const StmtNode* at = depth > 0 ? first[depth - 1].node : nullptr;

    // Variables that are not in scope where the buffer will live: those of the loops and lets
    // under it. Loops inside range over their domains; outer ones stay symbols.
    std::unordered_set<const VarNode*> inner = c.definedInside;
    for (size_t d = 0; d < depth; ++d)
      if (first[d].loop) inner.erase(first[d].loop->loopVar.get());

    arith::Analyzer an;
    size_t ndim = buf->shape.size();
    std::vector<Expr> lo(ndim), hi(ndim);
    std::vector<bool> ok(ndim, true);
    for (auto& a : c.accesses) {
      if (a.indices.size() != ndim) return s;
      arith::IntSetMap dom;
      for (size_t d = depth; d < a.places.size(); ++d)
        if (const ForNode* l = a.places[d].loop) dom[l->loopVar] = arith::IntSet::fromRange(Range(l->min, l->extent));
      // Thread indices the buffer is shared over range over their extents (relaxThread); the
      // others stay symbols (one buffer per block, per thread).
      for (auto& t : m_threads)
        if (relaxThread(scope, t.var.get(), false)) dom[t.var] = arith::IntSet::fromRange(Range(0, t.extent));
      for (auto& t : a.threads)
        if (relaxThread(scope, t.var.get(), t.depth >= depth)) dom[t.var] = arith::IntSet::fromRange(Range(0, t.extent));
      for (size_t d = 0; d < ndim; ++d) {
        if (!ok[d]) continue;
        arith::IntSet set = arith::evalSet(a.indices[d], dom, &an);
        // A nested loop whose bounds use another inner loop's variable: evaluate twice.
        if (set.hasLowerBound() && set.hasUpperBound() &&
            (usesAny(set.minValue, inner) || usesAny(set.maxValue, inner))) {
          arith::IntSet lo2 = arith::evalSet(set.minValue, dom, &an);
          arith::IntSet hi2 = arith::evalSet(set.maxValue, dom, &an);
          set = arith::IntSet::interval(lo2.minValue, hi2.maxValue);
        }
        if (!set.hasLowerBound() || !set.hasUpperBound() || usesAny(set.minValue, inner) ||
            usesAny(set.maxValue, inner)) {
          ok[d] = false;
          continue;
        }
        lo[d] = lo[d].defined() ? an.simplify(min(lo[d], set.minValue)) : set.minValue;
        hi[d] = hi[d].defined() ? an.simplify(max(hi[d], set.maxValue)) : set.maxValue;
      }
    }
    std::vector<Expr> shape = buf->shape, offsets(ndim);
    bool changed = at != nullptr;
    for (size_t d = 0; d < ndim; ++d) {
      if (!ok[d]) continue;
      Expr extent = an.simplify(hi[d] - lo[d] + 1);
      const int64_t* e = asConstInt(extent);
      const int64_t* old = asConstInt(buf->shape[d]);
      if (!e || *e <= 0 || (old && *e >= *old)) continue;
      shape[d] = intImm(buf->shape[d].dtype(), *e);
      if (!isZero(lo[d])) offsets[d] = lo[d];
      changed = true;
    }
    if (!changed) return s;

    Buffer nb = withShape(buf, shape);
    auto wrap = [&](Stmt body) {
      Stmt inner = declBuffer(nb, std::move(body));
      return withSpan(Stmt(new AllocateNode(alloc->bufferVar, alloc->dtype, shape, alloc->condition, inner,
                                            alloc->scope, alloc->annotations)),
                      n->span);
    };
    AccessRewriter rw(buf, nb, offsets, at, wrap);
    Stmt body = rw.mutate(decl->body);
    return at ? body : wrap(body);
  }

private:
  std::vector<ThreadVar> m_threads;  ///< thread indices bound around the statement being visited
};

}  // namespace

PrimFunc compactBuffers(const PrimFunc& f) {
  Stmt body = Compactor().mutate(f->body);
  return body.same_as(f->body) ? f : updateBody(f, body);
}

}  // namespace loom::transform
