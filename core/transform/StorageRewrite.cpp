// storage-rewrite: intermediate allocations whose lifetimes do not overlap share memory.
#include "core/transform/StorageRewrite.h"

#include <unordered_map>
#include <unordered_set>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

using VarMap = std::unordered_map<const VarNode*, Var>;

/// Rebinds buffers whose data var was merged into another allocation.
class DataRebinder : public IRMutator {
public:
  explicit DataRebinder(const VarMap& map) : m_map(map) {}

protected:
  using IRMutator::visit;

  Buffer rebind(const Buffer& b) {
    auto it = m_map.find(b->data.get());
    if (it == m_map.end()) return b;
    auto memo = m_buffers.find(b.get());
    if (memo != m_buffers.end()) return memo->second;
    auto* n = new BufferNode(*b.get());
    n->data = it->second;
    Buffer nb(n);
    m_buffers[b.get()] = nb;
    return nb;
  }

  Expr visit(const VarNode* n, const Expr& self) override {
    auto it = m_map.find(n);
    return it == m_map.end() ? self : Expr(it->second);
  }
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    Buffer b = rebind(n->buffer);
    if (b.same_as(n->buffer)) return e;
    auto* l = e.as<BufferLoadNode>();
    return withSpan(bufferLoad(b, l->indices), n->span);
  }
  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    Buffer b = rebind(n->buffer);
    if (b.same_as(n->buffer)) return s;
    auto* st = s.as<BufferStoreNode>();
    return withSpan(Stmt(new BufferStoreNode(b, st->value, st->indices)), n->span);
  }
  Stmt visit(const DeclBufferNode* n, const Stmt& self) override {
    Stmt body = mutate(n->body);
    Buffer b = rebind(n->buffer);
    if (b.same_as(n->buffer) && body.same_as(n->body)) return self;
    return withSpan(declBuffer(b, body), n->span);
  }

private:
  const VarMap& m_map;
  std::unordered_map<const BufferNode*, Buffer> m_buffers;
};

/// The data vars statement `s` mentions (directly or through a buffer on them), among `vars`.
/// One walk of `s` for all of them: a walk per allocation cost 0.2 s per unrolled Winograd
/// kernel over a symbolic image.
std::unordered_set<const VarNode*> mentioned(const Stmt& s, const std::unordered_set<const VarNode*>& vars) {
  std::unordered_set<const VarNode*> found;
  auto note = [&](const IRNode* v) {
    auto* var = static_cast<const VarNode*>(v);
    if (vars.count(var)) found.insert(var);
  };
  postOrderVisit(s, [&](const IRNode* n) {
    switch (n->nodeKind) {
    case NodeKind::Var: note(n); break;
    case NodeKind::BufferLoad: note(static_cast<const BufferLoadNode*>(n)->buffer->data.get()); break;
    case NodeKind::BufferStore: note(static_cast<const BufferStoreNode*>(n)->buffer->data.get()); break;
    case NodeKind::DeclBuffer: note(static_cast<const DeclBufferNode*>(n)->buffer->data.get()); break;
    default: break;
    }
  });
  return found;
}

class StorageMerger : public IRMutator {
protected:
  using IRMutator::visit;

  Stmt visit(const AllocateNode* n, const Stmt& self) override {
    // Peel the chain of allocations (and the DeclBuffers that view them) down to the body.
    std::vector<const AllocateNode*> allocs;
    std::vector<const DeclBufferNode*> decls;
    Stmt body = self;
    while (true) {
      if (auto* a = body.as<AllocateNode>()) allocs.push_back(a), body = a->body;
      else if (auto* d = body.as<DeclBufferNode>()) decls.push_back(d), body = d->body;
      else break;
    }
    auto* q = body.as<SeqStmtNode>();
    if (allocs.size() < 2 || !q) return IRMutator::visit(n, self);

    struct Life {
      const AllocateNode* alloc;
      int64_t size;
      int first = -1, last = -1;
      int slot = -1;
    };
    std::vector<Life> lives;
    std::unordered_set<const VarNode*> vars;
    for (auto* a : allocs) vars.insert(a->bufferVar.get());
    std::vector<std::unordered_set<const VarNode*>> uses;
    for (const Stmt& st : q->seq) uses.push_back(mentioned(st, vars));
    for (auto* a : allocs) {
      Life l{a, -1};
      if (a->extents.size() == 1)
        if (auto* c = asConstInt(a->extents[0])) l.size = *c;
      for (int i = 0; i < int(q->seq.size()); ++i)
        if (uses[size_t(i)].count(a->bufferVar.get())) {
          if (l.first < 0) l.first = i;
          l.last = i;
        }
      lives.push_back(l);
    }
    // Greedy: in order of first use, join the earliest slot that is free again.
    std::vector<int> order(lives.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = int(i);
    std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return lives[a].first < lives[b].first; });
    struct Slot {
      int owner;  ///< index into lives of the allocation that survives
      int freeAfter;
      int64_t size;
    };
    std::vector<Slot> slots;
    VarMap rebind;
    for (int i : order) {
      Life& l = lives[i];
      if (l.size >= 0 && l.first >= 0) {
        for (size_t s = 0; s < slots.size(); ++s) {
          const AllocateNode* o = lives[slots[s].owner].alloc;
          if (slots[s].freeAfter < l.first && o->dtype == l.alloc->dtype && o->scope == l.alloc->scope) {
            l.slot = int(s);
            slots[s].freeAfter = l.last;
            slots[s].size = std::max(slots[s].size, l.size);
            rebind[l.alloc->bufferVar.get()] = o->bufferVar;
            break;
          }
        }
      }
      if (l.slot < 0 && l.size >= 0 && l.first >= 0) {
        l.slot = int(slots.size());
        slots.push_back({i, l.last, l.size});
      }
    }
    if (rebind.empty()) return IRMutator::visit(n, self);

    // Rebuild: surviving allocations (resized), then the DeclBuffers, around the rebound body.
    Stmt inner = mutate(body);
    DataRebinder rb(rebind);
    inner = rb.mutate(inner);
    for (auto it = decls.rbegin(); it != decls.rend(); ++it) {
      Stmt d = rb.mutate(Stmt(new DeclBufferNode((*it)->buffer, inner)));
      inner = d;
    }
    for (int i = int(lives.size()) - 1; i >= 0; --i) {
      const AllocateNode* a = lives[i].alloc;
      if (rebind.count(a->bufferVar.get())) continue;
      auto* c = new AllocateNode(*a);
      if (lives[i].slot >= 0 && slots[lives[i].slot].owner == i)
        c->extents = {intImm(a->extents[0].dtype(), slots[lives[i].slot].size)};
      c->body = inner;
      inner = Stmt(c);
    }
    return withSpan(inner, n->span);
  }
};

}  // namespace

PrimFunc rewriteStorage(const PrimFunc& f) { return updateBody(f, StorageMerger().mutate(f->body)); }

}  // namespace loom::transform
