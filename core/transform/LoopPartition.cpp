// loop-partition: peel the predicated tail of a non-divisible split so the main loop has no if.
#include "core/transform/LoopPartition.h"

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
  bool invariantFails(const Expr& e) const {
    bool bad = false;
    postOrderVisit(e, [&](const IRNode* n) {
      auto* v = dynamic_cast<const VarNode*>(n);
      if (v && (v == m_v || m_inner.count(v) || m_local.count(v))) bad = true;
    });
    return bad;
  }

  const VarNode* m_v;
  const std::map<const VarNode*, InnerLoop>& m_inner;
  const std::unordered_set<const VarNode*>& m_local;
};

/// A condition of an if inside loop `v` that holds for every v < bound.
struct Candidate {
  const IfThenElseNode* ifNode;
  Expr bound;                  ///< v < bound proves the condition
  std::optional<int64_t> constBound;
};

/// Finds the ifs under loop `v` whose condition can be proven on a prefix of v's range.
class CandidateFinder : public IRVisitor {
public:
  explicit CandidateFinder(const VarNode* v) : m_v(v) {}
  std::vector<Candidate> found;

  using IRVisitor::visit;
  void visit(const ForNode* n) override {
    bool ok = !usesAny(n->min) && !usesAny(n->extent);
    if (ok) m_inner[n->loopVar.get()] = {n->min, n->extent};
    else m_local.insert(n->loopVar.get());
    visitStmt(n->body);
    m_inner.erase(n->loopVar.get());
    m_local.erase(n->loopVar.get());
  }
  void visit(const LetStmtNode* n) override {
    m_local.insert(n->var.get());
    visitStmt(n->body);
    m_local.erase(n->var.get());
  }
  void visit(const IfThenElseNode* n) override {
    if (auto c = prove(n)) found.push_back(*c);
    IRVisitor::visit(n);
  }

private:
  bool usesAny(const Expr& e) const {
    bool bad = false;
    postOrderVisit(e, [&](const IRNode* x) {
      auto* v = dynamic_cast<const VarNode*>(x);
      if (v && (v == m_v || m_inner.count(v) || m_local.count(v))) bad = true;
    });
    return bad;
  }

  std::optional<Candidate> prove(const IfThenElseNode* n) const {
    auto* cmp = n->condition.as<BinaryNode>();
    if (!cmp) return std::nullopt;
    Expr lhs, rhs;
    int64_t adjust = 0;  // d = lhs - rhs + adjust < 0 is the condition
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
    if (s <= 0) return std::nullopt;
    // rmax = the largest value of d - s*v over the inner loops.
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
    // s*v + rmax < 0  <=>  v <= floor((-rmax - 1) / s)  <=>  v < floordiv(-rmax - 1, s) + 1.
    Candidate cand{n, Expr(), std::nullopt};
    if (!rmaxSym.defined()) {
      int64_t num = -rmaxCst - 1;
      int64_t q = num >= 0 ? num / s : -((-num + s - 1) / s);
      cand.constBound = q + 1;
      cand.bound = intImm(DataType::Int(32), q + 1);
    } else {
      Expr num = intImm(rmaxSym.dtype(), -rmaxCst - 1) - rmaxSym;
      cand.bound = s == 1 ? num + 1 : floordiv(num, intImm(num.dtype(), s)) + 1;
    }
    return cand;
  }

  const VarNode* m_v;
  std::map<const VarNode*, InnerLoop> m_inner;
  std::unordered_set<const VarNode*> m_local;
};

/// Replaces the listed ifs by their then-branches.
class IfRemover : public IRMutator {
public:
  explicit IfRemover(std::unordered_set<const IfThenElseNode*> ifs) : m_ifs(std::move(ifs)) {}

protected:
  using IRMutator::visit;
  Stmt visit(const IfThenElseNode* n, const Stmt& self) override {
    if (m_ifs.count(n)) return mutate(n->thenCase);
    return IRMutator::visit(n, self);
  }

private:
  std::unordered_set<const IfThenElseNode*> m_ifs;
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
    bool constant = mn && ext;
    std::vector<Candidate> use;
    for (auto& c : finder.found) {
      // With constant bounds, skip conditions that fail from the first iteration on.
      if (constant && c.constBound && *c.constBound <= *mn) continue;
      use.push_back(c);
    }
    if (use.empty()) return IRMutator::visit(n, self);

    std::unordered_set<const IfThenElseNode*> ifs;
    for (auto& c : use) ifs.insert(c.ifNode);
    Stmt mainBody = mutate(IfRemover(ifs).mutate(n->body));

    if (constant && std::all_of(use.begin(), use.end(), [](auto& c) { return c.constBound.has_value(); })) {
      int64_t end = *mn + *ext;
      int64_t k = end;
      for (auto& c : use) k = std::min(k, *c.constBound);
      if (k >= end) return withSpan(loop(n, n->loopVar, *mn, k - *mn, mainBody), n->span);
      return withSpan(seq({loop(n, n->loopVar, *mn, k - *mn, mainBody), tail(n, k, end - k)}), n->span);
    }
    Expr end = addFold(n->min, n->extent);
    Expr k;
    for (auto& c : use) k = k.defined() ? min(k, c.bound) : c.bound;
    k = min(max(k, n->min), end);
    Var kv = makeVar(n->loopVar->name + "_split", k.dtype());
    Stmt mainLoop = rebuildLoop(n, n->loopVar, n->min, subFold(kv, n->min), mainBody);
    Var tv = makeVar(n->loopVar->name + "_tail", n->loopVar->dtype);
    Stmt tailLoop = rebuildLoop(n, tv, kv, subFold(end, kv), mutate(renamed(n, tv)));
    return withSpan(letStmt(kv, k, seq({mainLoop, tailLoop})), n->span);
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
  /// A loop over [mn, mn + ext) with `body`, or the body alone at v = mn when ext is 1.
  Stmt loop(const ForNode* n, const Var& v, int64_t mn, int64_t ext, const Stmt& body) {
    Expr start = intImm(n->min.dtype(), mn);
    if (ext == 1) return substitute(body, [&](const Var& x) { return x.same_as(v) ? start : Expr(); });
    return rebuildLoop(n, v, start, intImm(n->extent.dtype(), ext), body);
  }
  /// The loop body with the loop var renamed to `tv`.
  static Stmt renamed(const ForNode* n, const Var& tv) {
    return substitute(n->body, [&](const Var& v) { return v.same_as(n->loopVar) ? Expr(tv) : Expr(); });
  }
  /// The tail keeps its ifs, under a fresh loop var (or at its single value).
  Stmt tail(const ForNode* n, int64_t start, int64_t ext) {
    if (ext == 1) {
      Expr v = intImm(n->min.dtype(), start);
      return mutate(substitute(n->body, [&](const Var& x) { return x.same_as(n->loopVar) ? v : Expr(); }));
    }
    Var tv = makeVar(n->loopVar->name + "_tail", n->loopVar->dtype);
    return loop(n, tv, start, ext, mutate(renamed(n, tv)));
  }
};

}  // namespace

PrimFunc partitionLoops(const PrimFunc& f) { return updateBody(f, Partitioner().mutate(f->body)); }

}  // namespace loom::transform
