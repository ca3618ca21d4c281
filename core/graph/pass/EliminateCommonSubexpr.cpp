// EliminateCommonSubexpr: hash-consing of calls, projections and small constants.
#include "core/graph/pass/EliminateCommonSubexpr.h"

#include <cstring>
#include <map>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"

namespace loom::graph {

namespace {

class CSE : public ExprMutator {
  std::multimap<std::string, Expr> m_seen;

  static std::string key(const Expr& e) {
    std::string k;
    auto addPtr = [&](const void* p) { k.append(reinterpret_cast<const char*>(&p), sizeof p); };
    if (auto* c = e.as<CallNode>()) {
      k = "C";
      addPtr(c->op);
      addPtr(c->fn.get());
      for (const Expr& a : c->args)
        addPtr(a.get());
      return k;
    }
    if (auto* g = e.as<TupleGetItemNode>()) {
      k = "G" + std::to_string(g->index);
      addPtr(g->tuple.get());
      return k;
    }
    if (auto* c = e.as<ConstantNode>()) {
      if (c->data.numel() > 64) return {};
      k = "K" + c->data.dtype().str();
      for (int64_t d : c->data.shape())
        k += "," + std::to_string(d);
      k += ":";
      k.append(static_cast<const char*>(c->data.data()), c->data.byteSize());
      return k;
    }
    return {};
  }

  static bool same(const Expr& a, const Expr& b) {
    if (auto* ca = a.as<CallNode>()) return ca->attrs == b.as<CallNode>()->attrs;
    return true; // projections and constants: the key is the whole identity
  }

  Expr rewrite(const Expr&, const Expr& e) override {
    std::string k = key(e);
    if (k.empty()) return e;
    auto [lo, hi] = m_seen.equal_range(k);
    for (auto it = lo; it != hi; ++it)
      if (same(it->second, e)) return it->second;
    m_seen.emplace(k, e);
    return e;
  }
};

} // namespace

Expr eliminateCommonSubexpr(const Expr& e) {
  return CSE().mutate(e);
}

Module eliminateCommonSubexpr(const Module& m) {
  return mapFunctions(m, [](const Expr& e) { return eliminateCommonSubexpr(e); });
}

} // namespace loom::graph
