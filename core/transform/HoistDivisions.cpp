// hoist-divisions: integer divisions by a run-time value computed once per loop iteration.
#include "core/transform/HoistDivisions.h"

#include <limits>
#include <unordered_map>

#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

bool isDivision(BinOp op) {
  return op == BinOp::FloorDiv || op == BinOp::FloorMod || op == BinOp::Div || op == BinOp::Mod;
}

/// The hoisted form of `a op b`: the same value where b != 0, and 0 (never a trap) where b == 0.
Expr safeDivision(BinOp op, const Expr& a, const Expr& b) {
  const DataType t = b.dtype();
  Expr zero = intImm(t, 0), one = intImm(t, 1);
  Expr divisor = select(eq(b, zero), one, b);
  return select(eq(b, zero), intImm(a.dtype(), 0), binary(op, a, divisor));
}

class DivisionHoister : public IRMutator {
public:
  explicit DivisionHoister(const PrimFunc& f) {
    for (const Var& p : f->params) m_level[p.get()] = 0;
  }

protected:
  using IRMutator::visit;

  Expr visit(const BinaryNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    auto* bin = e.as<BinaryNode>();
    if (!bin || !isDivision(bin->op) || !e.dtype().isIntegral() || e.dtype().lanes() != 1) return e;
    if (asConstInt(bin->b) || m_loops.empty()) return e;
    // The loop whose body it goes to: the deepest one a variable of it needs.
    size_t home = 1;
    bool ok = true;
    postOrderVisit(e, [&](const IRNode* x) {
      if (x->nodeKind == NodeKind::BufferLoad || x->nodeKind == NodeKind::Call || x->nodeKind == NodeKind::Let) ok = false;
      if (auto* v = dynamic_cast<const VarNode*>(x)) {
        auto it = m_level.find(v);
        if (it == m_level.end()) ok = false;
        else home = std::max(home, it->second);
      }
    });
    if (!ok || home > m_loops.size()) return e;
    Scope& s = m_loops[home - 1];
    const size_t h = structuralHash(e);
    for (size_t k : s.byHash[h])
      if (structuralEqual(s.lets[k].second, e)) return s.lets[k].first;
    Var v = makeVar(std::string(bin->op == BinOp::FloorMod || bin->op == BinOp::Mod ? "rem" : "quot") +
                        std::to_string(m_count++),
                    e.dtype());
    s.byHash[h].push_back(s.lets.size());
    s.lets.emplace_back(v, e);
    m_level[v.get()] = home;
    return v;
  }

  Stmt visit(const ForNode* n, const Stmt& self) override {
    Expr mn = mutate(n->min), ext = mutate(n->extent);
    m_loops.emplace_back();
    m_level[n->loopVar.get()] = m_loops.size();
    Stmt body = mutate(n->body);
    Scope s = std::move(m_loops.back());
    m_loops.pop_back();
    m_level.erase(n->loopVar.get());
    for (size_t k = s.lets.size(); k-- > 0;) {
      const auto* bin = s.lets[k].second.as<BinaryNode>();
      body = letStmt(s.lets[k].first, safeDivision(bin->op, bin->a, bin->b), body);
      m_level.erase(s.lets[k].first.get());
    }
    if (mn.same_as(n->min) && ext.same_as(n->extent) && body.same_as(n->body)) return self;
    auto* c = new ForNode(*n);
    c->min = mn;
    c->extent = ext;
    c->body = body;
    return Stmt(c);
  }

  Stmt visit(const LetStmtNode* n, const Stmt& self) override {
    Expr v = mutate(n->value);
    // Available at the top of the bodies of loops inside this let.
    m_level[n->var.get()] = m_loops.size() + 1;
    Stmt body = mutate(n->body);
    m_level.erase(n->var.get());
    if (v.same_as(n->value) && body.same_as(n->body)) return self;
    return withSpan(letStmt(n->var, v, body), n->span);
  }

private:
  struct Scope {
    std::vector<std::pair<Var, Expr>> lets;
    std::unordered_map<size_t, std::vector<size_t>> byHash;
  };
  std::vector<Scope> m_loops;  ///< the enclosing loops, outermost first
  /// Variables that can be read at the top of the body of loop number `level` (1 = outermost)
  /// and deeper: parameters 0, a loop's variable its own depth. Others (expression lets, thread
  /// indices) are absent: a division that reads them stays where it is.
  std::unordered_map<const VarNode*, size_t> m_level;
  int m_count = 0;
};

}  // namespace

PrimFunc hoistDivisions(const PrimFunc& f) {
  Stmt body = DivisionHoister(f).mutate(f->body);
  return body.same_as(f->body) ? f : updateBody(f, body);
}

}  // namespace loom::transform
