// compact-buffers: allocations sink to the innermost loop around their uses and shrink to the region used.
#include "core/transform/CompactBuffers.h"

#include <functional>
#include <numeric>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "core/arith/Analyzer.h"
#include "core/arith/IntSet.h"
#include "core/arith/Linear.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

/// The most elements a compacted allocation with a constant extent in place of a symbolic one
/// may hold as constants (see Compactor::visit(AllocateNode)): 64 MiB of float32.
constexpr int64_t kMaxTileElements = int64_t(1) << 24;

/// The lower (`upper` false) or upper bound of a buffer dimension after one more access whose
/// bound is `v`. Bounds that differ by a constant keep the extreme one, so the many accesses of an
/// unrolled nest (a Winograd tile's 36 positions) give one short bound, not a chain of min/max
/// that every further access simplifies again.
Expr widen(arith::Analyzer& an, const Expr& cur, const Expr& v, bool upper) {
  if (!cur.defined()) return v;
  // The difference is kept: asConstInt points into its argument, and a temporary's node was freed
  // before the pointer was read (ASan: heap-use-after-free).
  Expr diff = an.simplify(v - cur);
  if (const int64_t* d = asConstInt(diff)) return (upper ? *d > 0 : *d < 0) ? v : cur;
  return an.simplify(upper ? max(cur, v) : min(cur, v));
}

/// A GPU thread index in scope: `attr [threadIdx.x] "thread_extent" = extent`.
struct ThreadVar {
  Var var;
  Expr extent;
  /// Under an allocation: how many places (see Access::places) enclose the attr.
  size_t depth = 0;
};

/// A place an allocation can move into the body of: a loop, or a thread_extent attr (for shared
/// memory a `blockIdx` one, making the buffer one per block; for local memory also a `threadIdx`
/// one), so that GPU memory of those scopes lives inside its kernel.
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

/// Whether the thread_extent attr of `t` is a place for an allocation of `scope` (see Place).
bool attrIsPlace(const std::string& scope, const VarNode* t) {
  if (scope == "shared") return isBlockIdx(t);
  if (scope == "local") return isBlockIdx(t) || hasPrefix(t->name, "threadIdx");
  return false;
}

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
  AccessCollector(const Buffer& b, std::string scope) : m_buffer(b), m_scope(std::move(scope)) {}
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
    // An access like one already seen (same indices under the same loops) bounds nothing new:
    // an unrolled Winograd transform's select reads each of its 36 input positions once per
    // tile position, 1296 loads of 36 distinct elements.
    size_t h = m_places.size();
    for (const Expr& i : indices) h = h * 31 + structuralHash(i);
    if (!m_places.empty()) h = h * 31 + std::hash<const void*>()(m_places.back().node);
    std::vector<size_t>& same = m_seen[h];
    for (size_t k : same)
      if (sameAccess(accesses[k], indices)) return;
    same.push_back(accesses.size());
    accesses.push_back({indices, m_places, m_threads});
  }
  bool sameAccess(const Access& a, const std::vector<Expr>& indices) const {
    if (a.places.size() != m_places.size() || a.threads.size() != m_threads.size() || a.indices.size() != indices.size())
      return false;
    for (size_t k = 0; k < m_places.size(); ++k)
      if (a.places[k].node != m_places[k].node) return false;
    for (size_t k = 0; k < m_threads.size(); ++k)
      if (a.threads[k].var.get() != m_threads[k].var.get() || a.threads[k].depth != m_threads[k].depth) return false;
    for (size_t k = 0; k < indices.size(); ++k)
      if (!structuralEqual(a.indices[k], indices[k])) return false;
    return true;
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
    bool place = tv && attrIsPlace(m_scope, tv);
    if (place) m_places.push_back({n, nullptr});
    IRVisitor::visit(n);
    if (place) m_places.pop_back();
    if (tv) m_threads.pop_back();
  }

private:
  std::unordered_map<size_t, std::vector<size_t>> m_seen;  ///< access hash -> positions in accesses
  Buffer m_buffer;
  std::string m_scope;
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
  AccessRewriter(Buffer from, Buffer to, std::vector<Expr> offsets, std::vector<int64_t> strides,
                 const StmtNode* at, std::function<Stmt(Stmt)> wrap)
      : m_from(std::move(from)), m_to(std::move(to)), m_offsets(std::move(offsets)), m_strides(std::move(strides)),
        m_at(at), m_wrap(std::move(wrap)) {}

protected:
  using IRMutator::visit;
  std::vector<Expr> rebase(const std::vector<Expr>& idx) {
    std::vector<Expr> out;
    for (size_t d = 0; d < idx.size(); ++d) {
      Expr i = m_offsets[d].defined() ? idx[d] - m_offsets[d] : idx[d];
      out.push_back(m_strides[d] > 1 ? floordiv(i, intImm(i.dtype(), m_strides[d])) : i);
    }
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
  std::vector<int64_t> m_strides;
  const StmtNode* m_at;
  std::function<Stmt(Stmt)> m_wrap;
};

/// Whether every index of one dimension, over the ranges of the relaxed variables, lands on a
/// multiple of a common stride from its minimum: each index affine in them with constant
/// coefficients, the same symbolic base (up to constants), all those multiples of the stride.
struct Stride {
  bool ok = false;
  int64_t gcd = 0;
  Expr base;
  std::vector<int64_t> residues;  ///< must be multiples of the stride

  void note(const Expr& index, const arith::IntSetMap& dom, arith::Analyzer& an) {
    std::vector<Var> vars;
    for (auto& [v, set] : dom) vars.push_back(v);
    auto lf = arith::linearize(index, vars, &an);
    if (!lf) {
      ok = false;
      return;
    }
    for (size_t i = 0; i < vars.size() && ok; ++i) {
      std::optional<int64_t> c = lf->constCoeff(i);
      if (!c) {
        ok = false;
        break;
      }
      if (*c == 0) continue;
      gcd = std::gcd(gcd, *c < 0 ? -*c : *c);
      const arith::IntSet& set = dom.at(vars[i]);
      const int64_t* m = set.hasLowerBound() ? asConstInt(set.minValue) : nullptr;
      if (!m) ok = false;
      else residues.push_back(*c * *m);
    }
    if (!ok) return;
    if (!base.defined()) {
      base = lf->base;
      return;
    }
    Expr diffExpr = an.simplify(lf->base - base);  // kept alive: asConstInt points into it
    const int64_t* diff = asConstInt(diffExpr);
    if (!diff) ok = false;
    else residues.push_back(*diff);
  }

  /// The stride (1 when there is none).
  int64_t divisor() const {
    if (!ok || gcd <= 1) return 1;
    for (int64_t r : residues)
      if (r % gcd != 0) return 1;
    return gcd;
  }
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
    // lower-blocks' bound for a reduction's buffer (kCompactMaxLoops), consumed here.
    std::optional<int64_t> maxLoops;
    if (auto* a = s.as<AllocateNode>(); a->annotations.count(kCompactMaxLoops)) {
      if (const int64_t* m = asConstInt(a->annotations.at(kCompactMaxLoops))) maxLoops = *m;
      Annotations rest = a->annotations;
      rest.erase(kCompactMaxLoops);
      s = withSpan(Stmt(new AllocateNode(a->bufferVar, a->dtype, a->extents, a->condition, a->body, a->scope, rest)),
                   n->span);
    }
    auto* alloc = s.as<AllocateNode>();
    auto* decl = alloc->body.as<DeclBufferNode>();
    if (!decl || !decl->buffer->data.same_as(alloc->bufferVar)) return s;
    const Buffer& buf = decl->buffer;
    if (!buf->strides.empty() || (buf->elemOffset.defined() && !isZero(buf->elemOffset))) return s;
    if (buf->shape.size() != alloc->extents.size()) return s;

    std::string scope = !buf->scope.empty() && buf->scope != "global" ? buf->scope : alloc->scope;
    AccessCollector c(buf, scope);
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
    // A buffer a reduction writes stays outside the loops its reduce iter values use (the
    // accumulator must live across them): at most `maxLoops` loops isCountedLoop accepts.
    if (maxLoops) {
      int64_t counted = 0;
      for (size_t d = 0; d < depth; ++d)
        if (first[d].loop && isCountedLoop(first[d].loop) && ++counted > *maxLoops) {
          depth = d;
          break;
        }
    }
    const StmtNode* at = depth > 0 ? first[depth - 1].node : nullptr;

    // Variables that are not in scope where the buffer will live: those of the loops and lets
    // under it. Loops inside range over their domains; outer ones stay symbols.
    std::unordered_set<const VarNode*> inner = c.definedInside;
    for (size_t d = 0; d < depth; ++d)
      if (first[d].loop) inner.erase(first[d].loop->loopVar.get());

    // The loops the buffer will live under keep their variables as symbols, over their ranges
    // (so `i // 4 % 3` of a loop of 12 is `i // 4`, and bounds of one access against another
    // differ by a constant).
    arith::Analyzer an;
    for (size_t d = 0; d < depth; ++d)
      if (const ForNode* l = first[d].loop) an.bind(l->loopVar, Range(l->min, l->extent));
    size_t ndim = buf->shape.size();
    std::vector<Expr> lo(ndim), hi(ndim);
    std::vector<bool> ok(ndim, true);
    // Per-thread memory of a GPU kernel also drops strides: a "local" accumulator indexed by
    // `vthread * 8 + threadIdx` keeps one element per virtual thread, not a box of 9.
    bool inKernel = !m_threads.empty();
    for (auto& a : c.accesses) inKernel |= !a.threads.empty();
    std::vector<Stride> strides(ndim);
    for (auto& st : strides) st.ok = inKernel && scope == "local";
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
        lo[d] = widen(an, lo[d], set.minValue, false);
        hi[d] = widen(an, hi[d], set.maxValue, true);
        if (strides[d].ok) strides[d].note(a.indices[d], dom, an);
      }
    }
    std::vector<Expr> shape = buf->shape, offsets(ndim);
    std::vector<int64_t> divisors(ndim, 1);
    // Symbolic dimensions given a constant extent that is not provably within them.
    std::vector<bool> unproven(ndim, false);
    bool changed = at != nullptr;
    for (size_t d = 0; d < ndim; ++d) {
      if (!ok[d]) continue;
      Expr span = an.simplify(hi[d] - lo[d]);
      const int64_t* e = asConstInt(span);
      const int64_t* old = asConstInt(buf->shape[d]);
      if (!e || *e < 0) continue;
      int64_t g = strides[d].divisor();
      int64_t extent = *e / g + 1;
      if (old && extent >= *old) continue;
      // A symbolic dimension: a region bounded only through the index type's range (a floormod
      // by a symbolic divisor has no tighter set) is a constant as large as the dimension can be,
      // so nothing to gain.
      if (!old && extent >= an.constIntBound(buf->shape[d]).maxValue) continue;
      shape[d] = intImm(buf->shape[d].dtype(), extent);
      if (!isZero(lo[d])) offsets[d] = lo[d];
      divisors[d] = g;
      unproven[d] = !old && !an.canProve(buf->shape[d] >= shape[d]);
      changed = true;
    }
    // A tile (a register accumulator, a padded input tile) keeps constant extents: at most the
    // tile's size, where the dimension is smaller, and never overflowing. Past kMaxTileElements
    // the constant came from loose bounds: a Winograd conv's pad_temp of ((H + 1) // 2 + 3) // 4
    // * 4 + 2 rows became 2^31 - 2 rows and columns, whose product overflowed the flattened
    // index and the kernel wrote past its allocation. There an unproven dimension is narrowed
    // as TVM's compact-buffer-region does: min(dimension, constant), from max(low end, 0) (the
    // accesses are in bounds, so the region lies in both).
    int64_t elems = 1;
    for (const Expr& e : shape)
      if (const int64_t* c = asConstInt(e)) elems = *c > 0 && elems > kMaxTileElements / *c ? kMaxTileElements + 1 : elems * *c;
    if (elems > kMaxTileElements)
      for (size_t d = 0; d < ndim; ++d) {
        if (!unproven[d]) continue;
        if (divisors[d] != 1) {
          shape[d] = buf->shape[d];
          offsets[d] = Expr();
          divisors[d] = 1;
          continue;
        }
        shape[d] = an.simplify(min(buf->shape[d], shape[d]));
        Expr from = an.canProveGreaterEqual(lo[d], 0) ? lo[d] : an.simplify(max(lo[d], makeZero(lo[d].dtype())));
        offsets[d] = isZero(from) ? Expr() : from;
      }
    if (!changed) return s;

    Buffer nb = withShape(buf, shape);
    auto wrap = [&](Stmt body) {
      Stmt inner = declBuffer(nb, std::move(body));
      return withSpan(Stmt(new AllocateNode(alloc->bufferVar, alloc->dtype, shape, alloc->condition, inner,
                                            alloc->scope, alloc->annotations)),
                      n->span);
    };
    AccessRewriter rw(buf, nb, offsets, divisors, at, wrap);
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
