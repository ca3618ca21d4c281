// share-loads: a load an unrolled block reads in several stores, loaded once.
#include "core/transform/ShareLoads.h"

#include <unordered_map>
#include <unordered_set>

#include "core/arith/ExprOrder.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool readsMemoryOrBinds(const Expr& e) {
  bool found = false;
  postOrderVisit(e, [&](const IRNode* n) {
    found |= n->nodeKind == NodeKind::BufferLoad || n->nodeKind == NodeKind::Call || n->nodeKind == NodeKind::Let;
  });
  return found;
}

bool isConstant(const Expr& e) {
  if (auto* b = e.as<BroadcastNode>()) return isConstant(b->value);
  return e.as<IntImmNode>() || e.as<FloatImmNode>();
}

/// The candidates of one sequence, by structural equality, with their use counts.
struct Candidates {
  std::unordered_set<const VarNode*> written;  ///< data vars of the buffers the sequence stores to
  std::vector<std::pair<Expr, int>> list;
  std::unordered_map<size_t, std::vector<size_t>> byHash;

  /// A load of a buffer not written here, whose indices read no memory.
  bool isLoad(const Expr& e) const {
    auto* l = e.as<BufferLoadNode>();
    if (!l || written.count(l->buffer->data.get())) return false;
    for (const Expr& i : l->indices)
      if (readsMemoryOrBinds(i)) return false;
    return true;
  }
  /// A candidate: such a load, or select(c, load, constant) / select(c, constant, load) with c
  /// reading no memory.
  bool isCandidate(const Expr& e) const {
    if (auto* s = e.as<SelectNode>())
      return !readsMemoryOrBinds(s->condition) && ((isLoad(s->trueValue) && isConstant(s->falseValue)) ||
                                                     (isConstant(s->trueValue) && isLoad(s->falseValue)));
    return isLoad(e);
  }
  /// Index of e in the list (added when new). Equal means the same buffers and variables
  /// (arith::exprEqual): tir::structuralEqual defines a buffer first met at a use there, so
  /// `B[i]` and `C[i]` of two same-shaped buffers would compare equal. The hash is
  /// structuralHash, which exprEqual refines.
  size_t find(const Expr& e, bool add) {
    const size_t h = structuralHash(e);
    for (size_t k : byHash[h])
      if (arith::exprEqual(list[k].first, e)) return k;
    if (!add) return SIZE_MAX;
    byHash[h].push_back(list.size());
    list.emplace_back(e, 0);
    return list.size() - 1;
  }
};

/// Counts the candidates of stored values (outermost ones: a shared select shares its load).
class Counter : public IRMutator {
public:
  explicit Counter(Candidates& c) : m_c(c) {}

protected:
  using IRMutator::visit;
  Expr visit(const SelectNode* n, const Expr& self) override {
    if (m_c.isCandidate(self)) return count(self);
    return IRMutator::visit(n, self);
  }
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    if (m_c.isCandidate(self)) return count(self);
    return IRMutator::visit(n, self);
  }
  /// if_then_else evaluates only the branch its condition picks (a guarded load's index may be
  /// out of bounds on the other side): only its condition is always read.
  Expr visit(const CallNode* n, const Expr& self) override {
    if (n->op == "if_then_else" && n->args.size() == 3) {
      mutate(n->args[0]);
      return self;
    }
    return IRMutator::visit(n, self);
  }

private:
  Expr count(const Expr& e) {
    ++m_c.list[m_c.find(e, true)].second;
    return e;
  }
  Candidates& m_c;
};

/// Replaces the candidates read twice or more by their let vars.
class Replacer : public IRMutator {
public:
  Replacer(Candidates& c, const std::vector<Var>& vars) : m_c(c), m_vars(vars) {}

protected:
  using IRMutator::visit;
  Expr visit(const SelectNode* n, const Expr& self) override {
    if (m_c.isCandidate(self)) return replace(self);
    return IRMutator::visit(n, self);
  }
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    if (m_c.isCandidate(self)) return replace(self);
    return IRMutator::visit(n, self);
  }

private:
  Expr replace(const Expr& e) {
    size_t k = m_c.find(e, false);
    return k != SIZE_MAX && m_vars[k].defined() ? Expr(m_vars[k]) : e;
  }
  Candidates& m_c;
  const std::vector<Var>& m_vars;
};

/// The stores of a sequence (nested sequences flattened), or false when it holds anything else.
bool storesOf(const Stmt& s, std::vector<const BufferStoreNode*>& out) {
  if (auto* q = s.as<SeqStmtNode>()) {
    for (const Stmt& x : q->seq)
      if (!storesOf(x, out)) return false;
    return true;
  }
  auto* st = s.as<BufferStoreNode>();
  if (!st) return false;
  bool binds = false;
  postOrderVisit(st->value, [&](const IRNode* n) { binds |= n->nodeKind == NodeKind::Let; });
  if (binds) return false;
  out.push_back(st);
  return true;
}

class LoadSharer : public IRMutator {
protected:
  using IRMutator::visit;
  Stmt visit(const SeqStmtNode* n, const Stmt& self) override {
    std::vector<const BufferStoreNode*> stores;
    if (!storesOf(self, stores)) return IRMutator::visit(n, self);
    if (stores.size() < 2) return self;
    Candidates c;
    for (const BufferStoreNode* st : stores) c.written.insert(st->buffer->data.get());
    Counter counter(c);
    for (const BufferStoreNode* st : stores) counter.mutate(st->value);
    std::vector<Var> vars(c.list.size());
    std::vector<std::pair<Var, Expr>> lets;
    for (size_t k = 0; k < c.list.size(); ++k)
      if (c.list[k].second >= 2) {
        vars[k] = makeVar("shared" + std::to_string(m_count++), c.list[k].first.dtype());
        lets.emplace_back(vars[k], c.list[k].first);
      }
    if (lets.empty()) return self;
    Replacer replacer(c, vars);
    std::vector<Stmt> out;
    for (const BufferStoreNode* st : stores) {
      Stmt s(new BufferStoreNode(st->buffer, replacer.mutate(st->value), st->indices));
      out.push_back(withSpan(s, st->span));
    }
    Stmt body = seq(std::move(out));
    for (size_t k = lets.size(); k-- > 0;) body = letStmt(lets[k].first, lets[k].second, body);
    return body;
  }

private:
  int m_count = 0;
};

}  // namespace

PrimFunc shareLoads(const PrimFunc& f) {
  Stmt body = LoadSharer().mutate(f->body);
  return body.same_as(f->body) ? f : updateBody(f, body);
}

PrimFunc shareLoadsOfSymbolicKernels(const PrimFunc& f) {
  for (const auto& [param, buf] : f->bufferMap)
    for (const tir::Expr& d : buf->shape)
      if (!tir::asConstInt(d)) return shareLoads(f);
  return f;
}

}  // namespace loom::transform
