// loop-partition: peel the predicated tail of a non-divisible split so the main loop has no if.
#include "core/transform/LoopPartition.h"

#include <algorithm>
#include <map>
#include <optional>
#include <unordered_set>

#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pass.h"

namespace loom::transform {

using namespace tir;

namespace {

/// An affine form: sum coef[var] * var + sym + cst.
struct Affine {
  std::map<const VarNode*, int64_t> coef;
  Expr sym;
  int64_t cst = 0;
  void addSym(const Expr& e) { sym = sym.defined() ? sym + e : e; }
};

/// A loop between the partitioned loop and the if: its var and constant-free range.
struct InnerLoop {
  Expr min, extent;
};

class AffineReader {
public:
  AffineReader(const VarNode* v, const std::map<const VarNode*, InnerLoop>& inner,
               const std::unordered_set<const VarNode*>& local)
      : m_v(v), m_inner(inner), m_local(local) {}

  bool read(const Expr& e, int64_t scale, Affine& out) const {
    if (!e.dtype().isIntegral() || !e.dtype().isScalar()) return false;
    if (auto* i = e.as<IntImmNode>()) {
      out.cst += scale * i->value;
      return true;
    }
    if (auto* v = e.as<VarNode>()) {
      if (v == m_v || m_inner.count(v)) {
        out.coef[v] += scale;
        return true;
      }
      if (m_local.count(v)) return false;
      out.addSym(scale == 1 ? e : e * intImm(e.dtype(), scale));
      return true;
    }
    if (auto* b = e.as<BinaryNode>()) {
      if (b->op == BinOp::Add) return read(b->a, scale, out) && read(b->b, scale, out);
      if (b->op == BinOp::Sub) return read(b->a, scale, out) && read(b->b, -scale, out);
      if (b->op == BinOp::Mul) {
        if (auto* c = asConstInt(b->b)) return read(b->a, scale * *c, out);
        if (auto* c = asConstInt(b->a)) return read(b->b, scale * *c, out);
      }
    }
    if (auto* c = e.as<CastNode>()) {
      // Widening integer casts keep values; narrowing ones might wrap, so they stop the proof.
      if (c->value.dtype().isIntegral() && c->value.dtype().bits() <= e.dtype().bits() &&
          (c->value.dtype().isInt() || c->value.dtype().bits() < e.dtype().bits()))
        return read(c->value, scale, out);
    }
    if (invariantFails(e)) return false;
    out.addSym(scale == 1 ? e : e * intImm(e.dtype(), scale));
    return true;
  }

private:
  /// True when `e` uses the loop var, an inner loop var or a var bound inside the loop.
  /// Also true for loads and calls: a buffer may be written inside the loop, so a load is
  /// not a loop invariant that can be evaluated once before it.
  bool invariantFails(const Expr& e) const {
    bool bad = false;
    postOrderVisit(e, [&](const IRNode* n) {
      if (n->nodeKind == NodeKind::BufferLoad || n->nodeKind == NodeKind::Call) bad = true;
      auto* v = dynamic_cast<const VarNode*>(n);
      if (v && (v == m_v || m_inner.count(v) || m_local.count(v))) bad = true;
    });
    return bad;
  }

  const VarNode* m_v;
  const std::map<const VarNode*, InnerLoop>& m_inner;
  const std::unordered_set<const VarNode*>& m_local;
};

/// A comparison (one conjunct of an if or if_then_else condition inside loop `v`) that holds
/// for every v < bound (`upper`) or every v >= bound (lower), whatever the inner loops do.
struct Candidate {
  const BinaryNode* leaf;
  bool upper;
  Expr bound;
  std::optional<int64_t> constBound;
};

/// The comparison leaves of a condition's && tree.
void conjuncts(const Expr& e, std::vector<const BinaryNode*>& out) {
  auto* b = e.as<BinaryNode>();
  if (!b) return;
  if (b->op == BinOp::And) {
    conjuncts(b->a, out);
    conjuncts(b->b, out);
  } else if (b->op == BinOp::LT || b->op == BinOp::LE || b->op == BinOp::GT || b->op == BinOp::GE) {
    out.push_back(b);
  }
}

int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/// Finds the conjuncts under loop `v` that can be proven on a prefix or suffix of v's range.
class CandidateFinder : public IRVisitor {
public:
  explicit CandidateFinder(const VarNode* v) : m_v(v) {}
  std::vector<Candidate> found;
  /// Leaves that could not be proven somewhere (a shared node must be provable everywhere).
  std::unordered_set<const BinaryNode*> failed;

  using IRVisitor::visit;
  void visit(const ForNode* n) override {
    visitExpr(n->min);
    visitExpr(n->extent);
    bool ok = !usesAny(n->min) && !usesAny(n->extent);
    if (ok) m_inner[n->loopVar.get()] = {n->min, n->extent};
    else m_local.insert(n->loopVar.get());
    visitStmt(n->body);
    m_inner.erase(n->loopVar.get());
    m_local.erase(n->loopVar.get());
  }
  void visit(const LetStmtNode* n) override {
    visitExpr(n->value);
    m_local.insert(n->var.get());
    visitStmt(n->body);
    m_local.erase(n->var.get());
  }
  /// A thread index bound inside the loop (`attr(threadIdx_x, "thread_extent", 2)` under a
  /// vthread loop made serial) is defined only there: a condition on it cannot bound the loop
  /// (fuzz_difftest TIR seed 760070: the bound `min(max(threadIdx_x * -1 // 2 + 1, 0), 2)` was
  /// computed outside the thread scope, and the kernel's host part used threadIdx.x).
  void visit(const AttrStmtNode* n) override {
    auto* tv = n->node.as<VarNode>();
    const bool binds = tv && (n->key == "thread_extent" || n->key == "virtual_thread");
    visitExpr(n->value);
    if (binds) m_local.insert(tv);
    visitStmt(n->body);
    if (binds) m_local.erase(tv);
  }
  void visit(const LetNode* n) override {
    visitExpr(n->value);
    m_local.insert(n->var.get());
    visitExpr(n->body);
    m_local.erase(n->var.get());
  }
  void visit(const IfThenElseNode* n) override {
    consider(n->condition);
    IRVisitor::visit(n);
  }
  void visit(const CallNode* n) override {
    if (n->op == "if_then_else" && n->args.size() == 3) consider(n->args[0]);
    IRVisitor::visit(n);
  }

private:
  void consider(const Expr& cond) {
    std::vector<const BinaryNode*> leaves;
    conjuncts(cond, leaves);
    for (auto* leaf : leaves) {
      if (auto c = prove(leaf)) found.push_back(*c);
      else failed.insert(leaf);
    }
  }

  bool usesAny(const Expr& e) const {
    bool bad = false;
    postOrderVisit(e, [&](const IRNode* x) {
      if (x->nodeKind == NodeKind::BufferLoad || x->nodeKind == NodeKind::Call) bad = true;
      auto* v = dynamic_cast<const VarNode*>(x);
      if (v && (v == m_v || m_inner.count(v) || m_local.count(v))) bad = true;
    });
    return bad;
  }

  std::optional<Candidate> prove(const BinaryNode* cmp) const {
    Expr lhs, rhs;
    int64_t adjust = 0;  // the condition is d = lhs - rhs + adjust < 0
    switch (cmp->op) {
    case BinOp::LT: lhs = cmp->a, rhs = cmp->b; break;
    case BinOp::LE: lhs = cmp->a, rhs = cmp->b, adjust = -1; break;
    case BinOp::GT: lhs = cmp->b, rhs = cmp->a; break;
    case BinOp::GE: lhs = cmp->b, rhs = cmp->a, adjust = -1; break;
    default: return std::nullopt;
    }
    AffineReader reader(m_v, m_inner, m_local);
    Affine d;
    if (!reader.read(lhs, 1, d) || !reader.read(rhs, -1, d)) return std::nullopt;
    d.cst += adjust;
    int64_t s = d.coef.count(m_v) ? d.coef.at(m_v) : 0;
    if (s == 0) return std::nullopt;
    // rmax = the largest value of r = d - s*v over the inner loops.
    Expr rmaxSym = d.sym;
    int64_t rmaxCst = d.cst;
    for (auto& [var, c] : d.coef) {
      if (var == m_v || c == 0) continue;
      const InnerLoop& r = m_inner.at(var);
      auto* mn = asConstInt(r.min);
      auto* ext = asConstInt(r.extent);
      if (mn && (c < 0 || ext)) {
        rmaxCst += c * (c > 0 ? *mn + *ext - 1 : *mn);
      } else {
        Expr at = c > 0 ? r.min + r.extent - 1 : r.min;
        Expr t = at * intImm(at.dtype(), c);
        rmaxSym = rmaxSym.defined() ? rmaxSym + t : t;
      }
    }
    Candidate cand{cmp, s > 0, Expr(), std::nullopt};
    if (s > 0) {
      // s*v + rmax < 0  <=>  v <= floor((-rmax - 1) / s)  <=>  v < floordiv(-rmax - 1, s) + 1.
      if (!rmaxSym.defined()) {
        cand.constBound = floorDiv(-rmaxCst - 1, s) + 1;
      } else {
        Expr num = intImm(rmaxSym.dtype(), -rmaxCst - 1) - rmaxSym;
        cand.bound = s == 1 ? num + 1 : floordiv(num, intImm(num.dtype(), s)) + 1;
      }
    } else {
      // -s'*v + rmax < 0  <=>  v > rmax / s'  <=>  v >= floordiv(rmax, s') + 1.
      int64_t sp = -s;
      if (!rmaxSym.defined()) {
        cand.constBound = floorDiv(rmaxCst, sp) + 1;
      } else {
        Expr num = rmaxSym + intImm(rmaxSym.dtype(), rmaxCst);
        cand.bound = sp == 1 ? num + 1 : floordiv(num, intImm(num.dtype(), sp)) + 1;
      }
    }
    if (cand.constBound) cand.bound = intImm(DataType::Int(32), *cand.constBound);
    return cand;
  }

  const VarNode* m_v;
  std::map<const VarNode*, InnerLoop> m_inner;
  std::unordered_set<const VarNode*> m_local;
};

/// In the middle part every chosen conjunct holds: drop them from conditions, and an if (or
/// if_then_else) left with no condition becomes its then-branch (true value).
class ConditionDropper : public IRMutator {
public:
  explicit ConditionDropper(std::unordered_set<const BinaryNode*> leaves) : m_leaves(std::move(leaves)) {}

protected:
  using IRMutator::visit;
  Stmt visit(const IfThenElseNode* n, const Stmt& self) override {
    Expr c = drop(n->condition);
    if (c.same_as(n->condition)) return IRMutator::visit(n, self);
    if (isConstInt(c, 1)) return mutate(n->thenCase);
    Stmt t = mutate(n->thenCase), e = mutate(n->elseCase);
    return withSpan(ifThen(c, t, e), n->span);
  }
  Expr visit(const CallNode* n, const Expr& self) override {
    if (n->op != "if_then_else" || n->args.size() != 3) return IRMutator::visit(n, self);
    Expr c = drop(n->args[0]);
    if (c.same_as(n->args[0])) return IRMutator::visit(n, self);
    if (isConstInt(c, 1)) return mutate(n->args[1]);
    return call(n->dtype, n->op, {c, mutate(n->args[1]), mutate(n->args[2])});
  }

private:
  Expr drop(const Expr& e) const {
    auto* b = e.as<BinaryNode>();
    if (!b) return e;
    if (m_leaves.count(b)) return boolImm(true);
    if (b->op != BinOp::And) return e;
    Expr x = drop(b->a), y = drop(b->b);
    if (x.same_as(b->a) && y.same_as(b->b)) return e;
    if (isConstInt(x, 1)) return y;
    if (isConstInt(y, 1)) return x;
    return x && y;
  }

  std::unordered_set<const BinaryNode*> m_leaves;
};

class Partitioner : public IRMutator {
protected:
  using IRMutator::visit;

  Stmt visit(const ForNode* n, const Stmt& self) override {
    if (n->kind == ForKind::ThreadBinding) return IRMutator::visit(n, self);
    CandidateFinder finder(n->loopVar.get());
    finder.visitStmt(n->body);
    auto* mn = asConstInt(n->min);
    auto* ext = asConstInt(n->extent);
    // A leaf is dropped from conditions only when every occurrence of it was proven and kept.
    std::unordered_set<const BinaryNode*> skipped = finder.failed;
    for (auto& c : finder.found)
      // With constant bounds, skip conjuncts that hold nowhere in the loop's range.
      if (mn && ext && c.constBound && (c.upper ? *c.constBound <= *mn : *c.constBound >= *mn + *ext))
        skipped.insert(c.leaf);
    std::vector<Candidate> use;
    std::unordered_set<const BinaryNode*> dropped;
    for (auto& c : finder.found)
      if (!skipped.count(c.leaf)) use.push_back(c), dropped.insert(c.leaf);
    if (use.empty()) return IRMutator::visit(n, self);

    bool constant = mn && ext && std::all_of(use.begin(), use.end(), [](auto& c) { return c.constBound.has_value(); });
    if (constant) {
      int64_t end = *mn + *ext, lo = *mn, hi = end;
      for (auto& c : use) (c.upper ? hi : lo) = c.upper ? std::min(hi, *c.constBound) : std::max(lo, *c.constBound);
      if (lo >= hi) {
        // Heads and tails overlap: peel only one side, the one leaving the larger middle.
        bool keepUpper = hi - *mn >= end - lo;
        std::erase_if(use, [&](auto& c) { return c.upper != keepUpper; });
        dropped.clear();
        for (auto& c : use) dropped.insert(c.leaf);
        (keepUpper ? lo : hi) = keepUpper ? *mn : end;
      }
      Stmt middle = ConditionDropper(dropped).mutate(n->body);
      if (n->kind == ForKind::Parallel) {
        // A parallel loop's iterations run at once; peeled, its head and tail would run after
        // one another and after the middle (a parallel loop of 2 would become two serial
        // halves). It is partitioned in place instead: each iteration picks the middle's body
        // or the conditional one (with the loop var's value in a head or tail of one iteration).
        if (lo == *mn && hi == end) return withSpan(rebuildLoop(n, n->loopVar, n->min, n->extent, mutate(middle)), n->span);
        Expr v = n->loopVar;
        auto imm = [&](int64_t x) { return intImm(v.dtype(), x); };
        auto edgeBody = [&](int64_t from, int64_t to) { return to - from == 1 ? at(n, n->body, from) : n->body; };
        Expr inMiddle;
        Stmt edge;
        if (lo > *mn && hi < end) {
          inMiddle = v >= imm(lo) && v < imm(hi);
          edge = ifThen(v < imm(lo), edgeBody(*mn, lo), edgeBody(hi, end));
        } else if (lo > *mn) {
          inMiddle = v >= imm(lo);
          edge = edgeBody(*mn, lo);
        } else {
          inMiddle = v < imm(hi);
          edge = edgeBody(hi, end);
        }
        Stmt body = ifThen(inMiddle, mutate(middle), mutate(edge));
        return withSpan(rebuildLoop(n, n->loopVar, n->min, n->extent, body), n->span);
      }
      std::vector<Stmt> parts;
      if (lo > *mn) parts.push_back(piece(n, *mn, lo - *mn, "_head"));
      if (hi - lo == 1) parts.push_back(mutate(at(n, middle, lo)));
      else parts.push_back(rebuildLoop(n, n->loopVar, intImm(n->min.dtype(), lo), intImm(n->extent.dtype(), hi - lo), mutate(middle)));
      if (hi < end) parts.push_back(piece(n, hi, end - hi, "_tail"));
      return withSpan(seq(parts), n->span);
    }
    // Symbolic parts cannot be vectorized or unrolled: leave those loops to their own passes.
    // A parallel loop keeps its parts in place only with constant bounds (above).
    if (n->kind == ForKind::Vectorized || n->kind == ForKind::Unrolled || n->kind == ForKind::Parallel)
      return IRMutator::visit(n, self);
    Expr end = addFold(n->min, n->extent);
    Expr lo, hi;
    for (auto& c : use) {
      Expr& side = c.upper ? hi : lo;
      side = !side.defined() ? c.bound : c.upper ? min(side, c.bound) : max(side, c.bound);
    }
    std::vector<std::pair<Var, Expr>> lets;
    Expr start = n->min, stop = end;
    if (lo.defined()) {
      Var v = makeVar(n->loopVar->name + "_lo", lo.dtype());
      lets.emplace_back(v, min(max(lo, n->min), end));
      start = v;
    }
    if (hi.defined()) {
      Var v = makeVar(n->loopVar->name + "_hi", hi.dtype());
      lets.emplace_back(v, max(min(hi, end), start));
      stop = v;
    }
    Stmt middle = mutate(ConditionDropper(dropped).mutate(n->body));
    std::vector<Stmt> parts;
    if (lo.defined()) parts.push_back(symbolicPiece(n, n->min, subFold(start, n->min), "_head"));
    parts.push_back(rebuildLoop(n, n->loopVar, start, subFold(stop, start), middle));
    if (hi.defined()) parts.push_back(symbolicPiece(n, stop, end - stop, "_tail"));
    Stmt out = seq(parts);
    for (auto it = lets.rbegin(); it != lets.rend(); ++it) out = letStmt(it->first, it->second, out);
    return withSpan(out, n->span);
  }

private:
  static Expr addFold(const Expr& a, const Expr& b) {
    if (isZero(a)) return b;
    if (isZero(b)) return a;
    return a + b;
  }
  static Expr subFold(const Expr& a, const Expr& b) { return isZero(b) ? a : a - b; }

  Stmt rebuildLoop(const ForNode* n, Var v, Expr mn, Expr ext, Stmt body) {
    return forLoop(std::move(v), std::move(mn), std::move(ext), n->kind, std::move(body), n->threadTag, n->annotations);
  }
  /// `body` with the loop var at `value`.
  static Stmt at(const ForNode* n, const Stmt& body, int64_t value) {
    Expr v = intImm(n->min.dtype(), value);
    return substitute(body, [&](const Var& x) { return x.same_as(n->loopVar) ? v : Expr(); });
  }
  /// The loop body with the loop var renamed to `tv`.
  static Stmt renamed(const ForNode* n, const Var& tv) {
    return substitute(n->body, [&](const Var& v) { return v.same_as(n->loopVar) ? Expr(tv) : Expr(); });
  }
  /// A head or tail keeps the conditions; being a loop of constant range itself, it is
  /// partitioned again (its range is strictly smaller, so this ends).
  Stmt piece(const ForNode* n, int64_t start, int64_t ext, const char* suffix) {
    if (ext == 1) return mutate(at(n, n->body, start));
    Var tv = makeVar(n->loopVar->name + suffix, n->loopVar->dtype);
    return mutate(rebuildLoop(n, tv, intImm(n->min.dtype(), start), intImm(n->extent.dtype(), ext), renamed(n, tv)));
  }
  Stmt symbolicPiece(const ForNode* n, Expr start, Expr ext, const char* suffix) {
    Var tv = makeVar(n->loopVar->name + suffix, n->loopVar->dtype);
    return rebuildLoop(n, tv, std::move(start), std::move(ext), mutate(renamed(n, tv)));
  }
};

}  // namespace

PrimFunc partitionLoops(const PrimFunc& f) { return updateBody(f, Partitioner().mutate(f->body)); }

}  // namespace loom::transform
