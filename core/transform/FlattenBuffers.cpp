// flatten-buffers: every buffer access becomes a 1-D access into a compact flat view.
#include "core/transform/FlattenBuffers.h"

#include <unordered_map>

#include "core/arith/Analyzer.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool isFlat(const Buffer& b) {
  return b->shape.size() == 1 && (b->strides.empty() || isConstInt(b->strides[0], 1)) &&
         (!b->elemOffset.defined() || isZero(b->elemOffset));
}

/// a * b and a + b, folded when both are constants (the simplifier cleans up the rest).
Expr mulFold(const Expr& a, const Expr& b) {
  if (auto *x = asConstInt(a), *y = asConstInt(b); x && y) return intImm(a.dtype().bits() >= b.dtype().bits() ? a.dtype() : b.dtype(), *x * *y);
  if (isConstInt(a, 1)) return b;
  if (isConstInt(b, 1)) return a;
  return a * b;
}
Expr addFold(const Expr& a, const Expr& b) {
  if (auto *x = asConstInt(a), *y = asConstInt(b); x && y) return intImm(a.dtype().bits() >= b.dtype().bits() ? a.dtype() : b.dtype(), *x + *y);
  if (isZero(a)) return b;
  if (isZero(b)) return a;
  return a + b;
}

bool hasOffset(const Buffer& b) { return b->elemOffset.defined() && !isZero(b->elemOffset); }

void checkStrides(const Buffer& b) {
  if (!b->strides.empty() && b->strides.size() != b->shape.size())
    LOOM_THROW_AT(ValueError, b->span) << "buffer '" << b->name << "' has " << b->strides.size() << " strides for "
                                       << b->shape.size() << " dimensions";
}

/// Elements a flat view must cover: offset + the furthest element + 1.
Expr flatExtent(const Buffer& b) {
  Expr n;
  if (b->strides.empty()) {
    for (auto& e : b->shape) n = n.defined() ? mulFold(n, e) : e;
    if (!n.defined()) n = 1;
  } else {
    checkStrides(b);
    n = 1;
    for (size_t i = 0; i < b->shape.size(); ++i)
      n = addFold(n, mulFold(addFold(b->shape[i], intImm(b->shape[i].dtype(), -1)), b->strides[i]));
  }
  if (hasOffset(b)) n = addFold(n, b->elemOffset);
  return n;
}

Expr flatIndex(const Buffer& b, const std::vector<Expr>& idx) {
  if (idx.size() != b->shape.size())
    LOOM_THROW(ValueError) << "buffer " << b->name << " has " << b->shape.size() << " dimensions but is indexed with "
                           << idx.size();
  checkStrides(b);
  Expr r;
  if (b->strides.empty()) {
    for (size_t i = 0; i < idx.size(); ++i) r = r.defined() ? r * b->shape[i] + idx[i] : idx[i];
    if (!r.defined()) r = 0;
  } else {
    for (size_t i = 0; i < idx.size(); ++i) {
      Expr t = isConstInt(b->strides[i], 1) ? idx[i] : idx[i] * b->strides[i];
      r = r.defined() ? r + t : t;
    }
    if (!r.defined()) r = 0;
  }
  if (hasOffset(b)) r = r + b->elemOffset;
  return r;
}

/// Row-major strides of `shape` with storage_align's entries (an Allocate's "buffer_dim_align":
/// (axis, factor, offset) tuples) applied as TVM does: from the innermost axis out, an aligned
/// axis's stride grows to the next value that is `offset` modulo `factor`.
std::vector<Expr> alignedStrides(const std::vector<Expr>& shape, const Expr& entries, arith::Analyzer& an) {
  std::vector<std::pair<int64_t, int64_t>> align(shape.size(), {0, 0});
  if (auto* list = entries.as<CallNode>())
    for (auto& e : list->args) {
      auto* t = e.as<CallNode>();
      if (!t || t->args.size() != 3) continue;
      const int64_t *axis = asConstInt(t->args[0]), *factor = asConstInt(t->args[1]), *offset = asConstInt(t->args[2]);
      if (axis && factor && offset && *axis >= 0 && size_t(*axis) < shape.size() && *factor > 0)
        align[size_t(*axis)] = {*factor, *offset};
    }
  DataType t = shape.empty() ? DataType::Int(32) : shape.back().dtype();
  std::vector<Expr> strides(shape.size());
  Expr stride = intImm(t, 1);
  for (size_t i = shape.size(); i-- > 0;) {
    if (auto [factor, offset] = align[i]; factor > 0) {
      Expr f = intImm(t, factor), o = intImm(t, offset);
      stride = an.simplify(stride + floormod(f + o - floormod(stride, f), f));
    }
    strides[i] = stride;
    stride = an.simplify(stride * shape[i]);
  }
  return strides;
}

class Flattener : public IRMutator {
public:
  /// The flat view made for `b`, or undefined when the body never accessed `b`.
  Buffer madeFor(const Buffer& b) const {
    auto it = m_flat.find(b);
    return it == m_flat.end() ? Buffer() : it->second;
  }

  /// `b` with storage_align's padded strides when its Allocate asked for them.
  Buffer aligned(const Buffer& b) const {
    auto it = m_aligned.find(b->data.get());
    if (it == m_aligned.end() || !b->strides.empty()) return b;
    auto* n = new BufferNode(*b.get());
    n->strides = it->second;
    return Buffer(n);
  }

  Buffer flat(const Buffer& b) {
    if (isFlat(b) && !m_aligned.count(b->data.get())) return b;
    auto it = m_flat.find(b);
    if (it != m_flat.end()) return it->second;
    auto* n = new BufferNode(*b.get());
    n->shape = {m_analyzer.simplify(flatExtent(aligned(b)))};
    n->strides.clear();
    n->elemOffset = intImm(n->shape[0].dtype(), 0);
    Buffer fb(n);
    m_flat[b] = fb;
    return fb;
  }

protected:
  using IRMutator::visit;

  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    std::vector<Expr> idx;
    mutateExprs(n->indices, idx);
    if (isFlat(n->buffer) && !m_aligned.count(n->buffer->data.get())) {
      if (idx.size() == n->indices.size() && !std::equal(idx.begin(), idx.end(), n->indices.begin(),
                                                          [](auto& a, auto& b) { return a.same_as(b); }))
        return withSpan(bufferLoad(n->buffer, idx), n->span);
      return self;
    }
    return withSpan(bufferLoad(flat(n->buffer), {flatIndex(aligned(n->buffer), idx)}), n->span);
  }

  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    if (isFlat(n->buffer) && !m_aligned.count(n->buffer->data.get())) return IRMutator::visit(n, self);
    std::vector<Expr> idx;
    mutateExprs(n->indices, idx);
    Expr v = mutate(n->value);
    return withSpan(Stmt(new BufferStoreNode(flat(n->buffer), v, {flatIndex(aligned(n->buffer), idx)})), n->span);
  }

  Stmt visit(const DeclBufferNode* n, const Stmt& self) override {
    Stmt body = mutate(n->body);
    Buffer fb = flat(n->buffer);
    if (fb.same_as(n->buffer) && body.same_as(n->body)) return self;
    return withSpan(declBuffer(fb, body), n->span);
  }

  Stmt visit(const AllocateNode* n, const Stmt& self) override {
    // storage_align: accesses under this Allocate use padded strides, and it allocates the
    // padded extent (the annotation is used up here).
    auto align = n->annotations.find(kBufferDimAlign);
    if (align != n->annotations.end()) {
      std::vector<Expr> strides = alignedStrides(n->extents, align->second, m_analyzer);
      m_aligned[n->bufferVar.get()] = strides;
      Stmt body = mutate(n->body);
      m_aligned.erase(n->bufferVar.get());
      Expr count = intImm(n->extents.empty() ? DataType::Int(32) : n->extents[0].dtype(), 1);
      for (size_t i = 0; i < n->extents.size(); ++i)
        count = count + (n->extents[i] - 1) * strides[i];
      Annotations rest = n->annotations;
      rest.erase(kBufferDimAlign);
      return withSpan(Stmt(new AllocateNode(n->bufferVar, n->dtype, {m_analyzer.simplify(count)}, mutate(n->condition),
                                            body, n->scope, rest)),
                      n->span);
    }
    Stmt s = IRMutator::visit(n, self);
    if (n->extents.size() == 1) return s;
    auto* a = s.as<AllocateNode>();
    Expr count;
    for (auto& e : a->extents) count = count.defined() ? mulFold(count, e) : e;
    if (!count.defined()) count = 1;
    auto* c = new AllocateNode(*a);
    c->extents = {m_analyzer.simplify(count)};
    return Stmt(c);
  }

private:
  std::unordered_map<Buffer, Buffer, RefHash, RefEqual> m_flat;
  std::unordered_map<const VarNode*, std::vector<Expr>> m_aligned;  ///< data var -> padded strides
  arith::Analyzer m_analyzer;
};

}  // namespace

PrimFunc flattenBuffers(const PrimFunc& f) {
  Flattener fl;
  Stmt body = fl.mutate(f->body);
  // Parameters: the map keeps the N-d buffers (the calling convention); the body sees flat
  // views, declared once at the top for the parameters it accesses.
  for (auto it = f->bufferMap.rbegin(); it != f->bufferMap.rend(); ++it)
    if (Buffer fb = fl.madeFor(it->second)) body = declBuffer(fb, body);
  return updateBody(f, body);
}

}  // namespace loom::transform
