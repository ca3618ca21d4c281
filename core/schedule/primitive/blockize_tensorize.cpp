// blockize and tensorize: their errors, legality checks, implementation and trace instructions.
#include "core/schedule/primitive/blockize_tensorize.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "core/arith/Analyzer.h"
#include "core/schedule/Analysis.h"
#include "core/schedule/primitive/block_dataflow.h"
#include "core/tir/Conjuncts.h"
#include "core/tir/Op.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

using VarMap = std::unordered_map<Var, Expr, RefHash, RefEqual>;

namespace {

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

/// `e` as sum(coeff * var) + constant, or false when it is not linear in its vars.
struct Linear {
  std::vector<std::pair<Var, int64_t>> terms;
  int64_t constant = 0;
};
bool linearize(const Expr& e, int64_t scale, Linear& out) {
  if (auto* i = e.as<IntImmNode>()) {
    out.constant += scale * i->value;
    return true;
  }
  if (auto* v = e.as<VarNode>()) {
    for (auto& [var, c] : out.terms)
      if (var.get() == v) {
        c += scale;
        return true;
      }
    out.terms.push_back({Var(v), scale});
    return true;
  }
  if (auto* c = e.as<CastNode>()) return c->dtype.isIntegral() && linearize(c->value, scale, out);
  auto* b = e.as<BinaryNode>();
  if (!b) return false;
  switch (b->op) {
  case BinOp::Add:
    return linearize(b->a, scale, out) && linearize(b->b, scale, out);
  case BinOp::Sub:
    return linearize(b->a, scale, out) && linearize(b->b, -scale, out);
  case BinOp::Mul:
    if (auto c = constIntValue(b->b)) return linearize(b->a, scale * *c, out);
    if (auto c = constIntValue(b->a)) return linearize(b->b, scale * *c, out);
    return false;
  default:
    return false;
  }
}

Expr fromTerms(const std::vector<std::pair<Var, int64_t>>& terms, int64_t constant, DataType t) {
  Expr out;
  for (auto& [v, c] : terms) {
    if (c == 0) continue;
    Expr term = c == 1 ? Expr(v) : Expr(v) * intImm(t, c);
    out = out.defined() ? out + term : term;
  }
  if (constant != 0 || !out.defined())
    out = out.defined() ? out + intImm(t, constant) : intImm(t, constant);
  return out;
}

bool usesAny(const Expr& e, const std::vector<Var>& vars) {
  return std::any_of(vars.begin(), vars.end(), [&](const Var& v) { return usesVar(e, v); });
}

Expr conjunction(const std::vector<Expr>& parts) {
  Expr out;
  for (auto& p : parts)
    out = out.defined() ? (out && p) : p;
  return out.defined() ? out : boolImm(true);
}

} // namespace

// --- blockize -----------------------------------------------------------------------------

BlockRV blockize(Schedule& sch, const LoopRV& loopRV) {
  const ForNode* loop = sch.get(loopRV);
  const std::string loopName = quoted(loop->loopVar->name);
  // Step 1. One block under the loop, spatial/reduce iter vars bound affinely.
  std::vector<const BlockNode*> under = childBlocks(loop);
  if (under.size() != 1)
    throw NotSingleChildError("blockize: loop " + loopName +
                                  " must have exactly one block under it, found " +
                                  std::to_string(under.size()),
                              sch.func(), {loop});
  const BlockNode* block = under[0];
  const BlockRealizeNode* realize = sch.realizeOf(block);
  for (auto& iv : block->iterVars)
    if (iv.iterType != IterType::DataPar && iv.iterType != IterType::CommReduce)
      throw WrongBlockIterTypeError("blockize: block " + quoted(block->name) + " has the " +
                                        iterTypeName(iv.iterType) + " iter var " +
                                        quoted(iv.var->name),
                                    sch.func(), {block});
  if (!isAffineBinding(sch, realize))
    throw NotAffineBindingError("blockize: block " + quoted(block->name) +
                                    " does not bind its iter vars affinely to the loops above it",
                                sch.func(), {block});
  std::vector<const ForNode*> loops = loopsAbove(sch, block);
  auto pos = std::find(loops.begin(), loops.end(), loop);
  std::vector<Var> innerVars;
  arith::Analyzer an;
  for (auto it = loops.begin(); it != loops.end(); ++it) {
    an.bind((*it)->loopVar, Range((*it)->min, (*it)->extent));
    if (it >= pos) innerVars.push_back((*it)->loopVar);
  }
  // Step 2. Divide each binding into an outer iter var and the inner loops' part.
  auto* outer = new BlockNode();
  Block outerOwner(outer);  // owns the node from here, so a refusal below does not leak it
  std::vector<Expr> outerValues, innerValues;
  for (size_t i = 0; i < block->iterVars.size(); ++i) {
    const IterVar& iv = block->iterVars[i];
    const Expr& b = realize->iterValues[i];
    DataType t = b.dtype();
    Linear lin;
    bool linear = linearize(b, 1, lin);
    bool inner = usesAny(b, innerVars);
    bool outside = false;
    postOrderVisit(b, [&](const IRNode* n) {
      if (n->nodeKind == NodeKind::Var &&
          std::none_of(innerVars.begin(), innerVars.end(),
                       [&](const Var& v) { return v.get() == n; }))
        outside = true;
    });
    if (inner && !outside) { // entirely inside: the binding stays as it is
      innerValues.push_back(b);
      continue;
    }
    Var vo = makeVar(iv.var->name + "_o", iv.var->dtype);
    if (!inner) { // entirely outside: the outer iter var takes the binding
      outer->iterVars.emplace_back(vo, iv.dom, iv.iterType);
      outerValues.push_back(b);
      innerValues.push_back(vo);
      continue;
    }
    auto fail = [&](const std::string& why) {
      return BlockizeError("blockize: the binding `" + printExpr(b) + "` of iter var " +
                               quoted(iv.var->name) + " of block " + quoted(block->name) +
                               " cannot be divided at loop " + loopName + ": " + why,
                           sch.func(), {loop, block});
    };
    if (!linear) throw fail("it mixes loops inside and outside the loop non-linearly");
    std::vector<std::pair<Var, int64_t>> innerTerms, outerTerms;
    for (auto& term : lin.terms)
      (usesAny(term.first, innerVars) ? innerTerms : outerTerms).push_back(term);
    Expr innerPart = fromTerms(innerTerms, 0, t);
    arith::ConstIntBound bound = an.constIntBound(innerPart);
    if (bound.minValue != 0 || bound.maxValue == arith::ConstIntBound::kPosInf)
      throw fail("its inner part does not range over [0, c)");
    int64_t c = bound.maxValue + 1;
    for (auto& [v, k] : outerTerms)
      if (k % c != 0)
        throw fail("the coefficient " + std::to_string(k) + " of " + quoted(v->name) +
                   " is not a multiple of the inner extent " + std::to_string(c));
    auto dmin = constIntValue(iv.dom.min), dext = constIntValue(iv.dom.extent);
    if (lin.constant % c != 0 || !dmin || !dext || *dmin % c != 0)
      throw fail("its offset or domain is not a multiple of the inner extent " +
                 std::to_string(c));
    for (auto& term : outerTerms)
      term.second /= c;
    outer->iterVars.emplace_back(vo, Range(intImm(t, *dmin / c), intImm(t, (*dext + c - 1) / c)),
                                 iv.iterType);
    outerValues.push_back(fromTerms(outerTerms, lin.constant / c, t));
    innerValues.push_back(Expr(vo) * intImm(t, c) + innerPart);
  }
  // Step 3. The predicate goes with the loops it uses.
  std::vector<Expr> parts, innerPred, outerPred;
  conjuncts(realize->predicate, parts);
  for (auto& p : parts) {
    bool in = usesAny(p, innerVars);
    bool out = false;
    postOrderVisit(p, [&](const IRNode* n) {
      if (n->nodeKind == NodeKind::Var &&
          std::none_of(innerVars.begin(), innerVars.end(),
                       [&](const Var& v) { return v.get() == n; }))
        out = true;
    });
    if (in && out)
      throw BlockizeError("blockize: the predicate `" + printExpr(p) + "` of block " +
                              quoted(block->name) + " uses loops inside and outside loop " +
                              loopName,
                          sch.func(), {loop, block});
    (in ? innerPred : outerPred).push_back(p);
  }
  // Step 4. The inner block (without its init when the outer block reduces).
  bool outerReduces = block->init.defined() &&
                      std::any_of(outer->iterVars.begin(), outer->iterVars.end(), [](auto& iv) {
                        return iv.iterType == IterType::CommReduce;
                      });
  auto* innerBlock = new BlockNode(*block);
  if (outerReduces) innerBlock->init = Stmt();
  Stmt innerRealize = blockRealize(innerValues, conjunction(innerPred), Block(innerBlock));
  Stmt subtree = innerRealize;
  for (const IRNode* cur = realize; cur != loop;) {
    const StmtNode* p = sch.parentOf(cur);
    subtree = withChildReplaced(p, cur, subtree);
    cur = p;
  }
  // Step 5. The outer block: regions relaxed over the inner loops, the init as a nest.
  outer->name = dataflow::freshBlockName(sch.func(), block->name + "_o");
  arith::IntSetMap relaxed;
  for (auto it = pos; it != loops.end(); ++it)
    relaxed[(*it)->loopVar] = arith::IntSet::fromRange(Range((*it)->min, (*it)->extent));
  auto* ir = static_cast<const BlockRealizeNode*>(innerRealize.get());
  auto relax = [&](const std::vector<BufferRegion>& rs) {
    std::vector<BufferRegion> out;
    for (auto& r : rs) {
      auto sets = dataflow::relaxedRegion(ir, r, relaxed, an);
      std::vector<Range> ranges;
      for (size_t d = 0; d < sets.size(); ++d)
        ranges.push_back(dataflow::toRange(
            sets[d], Range(intImm(r.buffer->shape[d].dtype(), 0), r.buffer->shape[d]), an));
      out.emplace_back(r.buffer, ranges);
    }
    return out;
  };
  outer->reads = relax(block->reads);
  outer->writes = relax(block->writes);
  if (outerReduces) {
    auto* init = new BlockNode();
    init->name = dataflow::freshBlockName(sch.func(), block->name + "_init");
    VarMap initVars, loopVars;
    std::vector<Expr> values;
    for (size_t i = 0; i < block->iterVars.size(); ++i) {
      const IterVar& iv = block->iterVars[i];
      if (iv.iterType != IterType::DataPar || !usesVar(block->init, iv.var)) continue;
      Var nv = makeVar(iv.var->name + "_init", iv.var->dtype);
      initVars[iv.var] = nv;
      init->iterVars.emplace_back(nv, iv.dom, IterType::DataPar);
      values.push_back(innerValues[i]);
    }
    init->body = substitute(block->init, initVars);
    std::vector<BufferRegion> w;
    for (auto& r : block->writes) {
      std::vector<Range> rs;
      for (auto& x : r.region)
        rs.emplace_back(substitute(x.min, initVars), substitute(x.extent, initVars));
      w.emplace_back(r.buffer, rs);
    }
    init->writes = w;
    std::vector<const ForNode*> kept;
    std::vector<Var> keptVars;
    for (auto it = pos; it != loops.end(); ++it) {
      if (!std::any_of(values.begin(), values.end(),
                       [&](const Expr& v) { return usesVar(v, (*it)->loopVar); }))
        continue;
      Var nv = makeVar((*it)->loopVar->name + "_init", (*it)->loopVar->dtype);
      loopVars[(*it)->loopVar] = nv;
      kept.push_back(*it);
      keptVars.push_back(nv);
    }
    for (auto& v : values)
      v = substitute(v, loopVars);
    std::vector<Expr> initPred;
    for (auto& p : innerPred) {
      bool droppedLoop = false;
      for (auto it = pos; it != loops.end(); ++it)
        droppedLoop |= usesVar(p, (*it)->loopVar) && !loopVars.count((*it)->loopVar);
      if (!droppedLoop) initPred.push_back(substitute(p, loopVars));
    }
    Stmt nest = blockRealize(values, conjunction(initPred), Block(init));
    for (size_t k = kept.size(); k-- > 0;)
      nest = forLoop(keptVars[k], substitute(kept[k]->min, loopVars),
                     substitute(kept[k]->extent, loopVars), ForKind::Serial, nest);
    outer->init = nest;
  }
  outer->body = subtree;
  const BlockNode* outerPtr = outer;
  // Step 6. Replace the loop by the outer block.
  sch.replace(loop, blockRealize(outerValues, conjunction(outerPred), outerOwner));
  BlockRV out = sch.addRV(outerPtr);
  sch.record("blockize", {Value(loopRV)}, {Value(out)});
  return out;
}

// --- tensorize ----------------------------------------------------------------------------

namespace {

/// A perfect loop nest over one block realize, unit loops dropped (their vars -> their min).
struct Nest {
  std::vector<const ForNode*> loops;
  VarMap unitVars;
  const BlockRealizeNode* realize = nullptr;
};

bool perfectNest(Stmt s, Nest& out) {
  while (auto* l = s.as<ForNode>()) {
    if (isOne(l->extent))
      out.unitVars[l->loopVar] = l->min;
    else
      out.loops.push_back(l);
    s = l->body;
  }
  out.realize = s.defined() ? s.as<BlockRealizeNode>() : nullptr;
  return out.realize != nullptr;
}

/// True when loop `l` feeds a reduce iter var of the nest's block.
bool isReduceLoop(const Nest& n, const ForNode* l) {
  const BlockNode* b = n.realize->block.get();
  for (size_t i = 0; i < b->iterVars.size(); ++i)
    if (b->iterVars[i].iterType == IterType::CommReduce && usesVar(n.realize->iterValues[i], l->loopVar))
      return true;
  return false;
}

/// Where a desc buffer lands in the code: buffer `buf`, leading indices, then base + desc index.
struct Placement {
  Buffer buf;
  std::vector<Expr> lead, base;
};

/// Compares the code (workload) with the description, both with iter vars replaced by their
/// bindings and desc loop vars by the corresponding workload loop vars.
class Matcher {
public:
  Matcher(std::vector<Var> innerVars, arith::Analyzer& an)
      : m_inner(std::move(innerVars)), m_an(an) {}
  std::string why; ///< the first mismatch

  bool stmt(const Stmt& w, const Stmt& d) {
    auto* ws = w.as<BufferStoreNode>();
    auto* ds = d.as<BufferStoreNode>();
    if (!ws || !ds) return fail("the block body is not a single buffer store");
    return access(ws->buffer, ws->indices, ds->buffer, ds->indices) && expr(ws->value, ds->value);
  }
  bool expr(const Expr& w, const Expr& d) {
    if (w->nodeKind != d->nodeKind || w.dtype() != d.dtype())
      return fail("`" + printExpr(w) + "` does not match `" + printExpr(d) + "`");
    switch (d->nodeKind) {
    case NodeKind::BufferLoad: {
      auto* wl = w.as<BufferLoadNode>();
      auto* dl = d.as<BufferLoadNode>();
      return access(wl->buffer, wl->indices, dl->buffer, dl->indices);
    }
    case NodeKind::Binary: {
      auto* wb = w.as<BinaryNode>();
      auto* db = d.as<BinaryNode>();
      if (wb->op != db->op)
        return fail("`" + printExpr(w) + "` does not match `" + printExpr(d) + "`");
      return expr(wb->a, db->a) && expr(wb->b, db->b);
    }
    case NodeKind::Cast:
      return expr(w.as<CastNode>()->value, d.as<CastNode>()->value);
    case NodeKind::Call: {
      auto* wc = w.as<CallNode>();
      auto* dc = d.as<CallNode>();
      if (wc->op != dc->op || wc->args.size() != dc->args.size())
        return fail("`" + printExpr(w) + "` does not match `" + printExpr(d) + "`");
      for (size_t k = 0; k < wc->args.size(); ++k)
        if (!expr(wc->args[k], dc->args[k])) return false;
      return true;
    }
    default:
      if (!structuralEqual(w, d))
        return fail("`" + printExpr(w) + "` does not match `" + printExpr(d) + "`");
      return true;
    }
  }
  const std::map<const BufferNode*, Placement>& placements() const { return m_place; }

private:
  bool fail(const std::string& s) {
    if (why.empty()) why = s;
    return false;
  }
  bool access(const Buffer& wb, const std::vector<Expr>& wi, const Buffer& db,
              const std::vector<Expr>& di) {
    if (wb->dtype != db->dtype)
      return fail("buffer " + quoted(wb->name) + " is " + wb->dtype.str() + " but the intrinsic's " +
                  quoted(db->name) + " is " + db->dtype.str());
    if (wi.size() < di.size())
      return fail("buffer " + quoted(wb->name) + " has rank " + std::to_string(wi.size()) +
                  ", below the intrinsic's " + quoted(db->name) + " (" +
                  std::to_string(di.size()) + ")");
    Placement p;
    p.buf = wb;
    size_t lead = wi.size() - di.size();
    for (size_t k = 0; k < lead; ++k) {
      if (usesAny(wi[k], m_inner))
        return fail("index `" + printExpr(wi[k]) + "` of buffer " + quoted(wb->name) +
                    " varies inside the tile but has no counterpart in the intrinsic");
      p.lead.push_back(wi[k]);
    }
    for (size_t k = 0; k < di.size(); ++k) {
      Expr base = m_an.simplify(wi[lead + k] - di[k]);
      if (usesAny(base, m_inner))
        return fail("index `" + printExpr(wi[lead + k]) + "` of buffer " + quoted(wb->name) +
                    " does not follow the intrinsic's `" + printExpr(di[k]) + "`");
      p.base.push_back(base);
    }
    auto it = m_place.find(db.get());
    if (it == m_place.end()) {
      m_place[db.get()] = p;
      return true;
    }
    const Placement& q = it->second;
    bool same = q.buf.same_as(p.buf);
    for (size_t k = 0; same && k < p.lead.size(); ++k)
      same = m_an.canProveEqual(q.lead[k], p.lead[k]);
    for (size_t k = 0; same && k < p.base.size(); ++k)
      same = m_an.canProveEqual(q.base[k], p.base[k]);
    if (!same)
      return fail("the intrinsic's buffer " + quoted(db->name) +
                  " would stand for two different places of the code");
    return true;
  }

  std::vector<Var> m_inner;
  arith::Analyzer& m_an;
  std::map<const BufferNode*, Placement> m_place;
};

/// The implementation with its buffers placed in the code's buffers and fresh loop vars.
class ImplPlacer : public IRMutator {
public:
  explicit ImplPlacer(std::map<const BufferNode*, Placement> place) : m_place(std::move(place)) {}

protected:
  using IRMutator::visit;
  Stmt visit(const ForNode* n, const Stmt& self) override {
    Var nv = makeVar(n->loopVar->name, n->loopVar->dtype);
    auto* c = new ForNode(*n);
    c->loopVar = nv;
    c->body = substitute(n->body, VarMap{{n->loopVar, nv}});
    Stmt s(c);
    return IRMutator::visit(static_cast<const ForNode*>(s.get()), s);
  }
  Expr visit(const BufferLoadNode* n, const Expr& self) override {
    Expr e = IRMutator::visit(n, self);
    auto* l = e.as<BufferLoadNode>();
    auto it = m_place.find(l->buffer.get());
    if (it == m_place.end()) return e;
    return bufferLoad(it->second.buf, place(it->second, l->indices));
  }
  Stmt visit(const BufferStoreNode* n, const Stmt& self) override {
    Stmt s = IRMutator::visit(n, self);
    auto* st = s.as<BufferStoreNode>();
    auto it = m_place.find(st->buffer.get());
    if (it == m_place.end()) return s;
    return bufferStore(it->second.buf, st->value, place(it->second, st->indices));
  }

private:
  static std::vector<Expr> place(const Placement& p, const std::vector<Expr>& idx) {
    std::vector<Expr> out = p.lead;
    for (size_t k = 0; k < idx.size(); ++k) {
      const Expr& base = p.base[k];
      if (auto* r = idx[k].as<RampNode>())
        out.push_back(ramp(foldConstants(base + r->base), r->stride, r->lanes));
      else
        out.push_back(isZero(base) ? idx[k] : foldConstants(base + idx[k]));
    }
    return out;
  }
  std::map<const BufferNode*, Placement> m_place;
};

const TensorIntrin& lookupIntrin(const Schedule& sch, const std::string& name) {
  const TensorIntrin* in = findTensorIntrin(name);
  if (!in) {
    std::string known;
    for (auto& n : tensorIntrinNames())
      known += (known.empty() ? "" : ", ") + n;
    throw TensorIntrinNotFoundError("tensorize: no tensor intrinsic named " + quoted(name) +
                                        " (known: " + known + ")",
                                    sch.func());
  }
  return *in;
}

/// Matches the body of `outerBlock` against `in` and replaces it by the implementation.
void applyIntrin(Schedule& sch, const BlockNode* outer, const TensorIntrin& in) {
  const std::string intrin = quoted(in.name);
  auto mismatch = [&](const std::string& why, std::vector<const IRNode*> marks) {
    return TensorizeMismatchError("tensorize: block " + quoted(outer->name) +
                                      " does not match tensor intrinsic " + intrin + ": " + why,
                                  sch.func(), std::move(marks));
  };
  // Step 1. Both sides are loop nests over one block.
  Nest w, d;
  if (!perfectNest(outer->body, w))
    throw mismatch("its body is not a loop nest over one block", {outer});
  Stmt descBody = in.desc->body;
  if (auto* r = descBody.as<BlockRealizeNode>(); r && r->block->name == "root")
    descBody = r->block->body;
  LOOM_ICHECK(perfectNest(descBody, d)) << "tensor intrinsic desc is not a loop nest";
  auto extents = [](const Nest& n) {
    std::string s;
    for (auto* l : n.loops)
      s += (s.empty() ? "" : ", ") + printExpr(l->extent);
    return "(" + s + ")";
  };
  bool sameLoops = w.loops.size() == d.loops.size();
  for (size_t k = 0; sameLoops && k < w.loops.size(); ++k)
    sameLoops = constIntValue(w.loops[k]->extent) &&
                constIntValue(w.loops[k]->extent) == constIntValue(d.loops[k]->extent);
  if (!sameLoops)
    throw mismatch("its loops have extents " + extents(w) + " but the intrinsic's have " +
                       extents(d),
                   {outer});
  for (size_t k = 0; k < w.loops.size(); ++k)
    if (isReduceLoop(w, w.loops[k]) != isReduceLoop(d, d.loops[k]))
      throw mismatch("loop " + quoted(w.loops[k]->loopVar->name) + " is a " +
                         (isReduceLoop(w, w.loops[k]) ? "reduce" : "spatial") +
                         " loop but the intrinsic's loop " + quoted(d.loops[k]->loopVar->name) +
                         " is a " + (isReduceLoop(d, d.loops[k]) ? "reduce" : "spatial") + " loop",
                     {w.loops[k]});
  const BlockNode* wb = w.realize->block.get();
  if (wb->init.defined())
    throw mismatch("block " + quoted(wb->name) +
                       " still has its init (the reduction is entirely inside the tile); "
                       "decompose_reduction first",
                   {wb});
  // Step 2. Substitute bindings and map desc loops onto the code's loops.
  VarMap wMap = w.unitVars, dLoops = d.unitVars;
  std::vector<Var> innerVars;
  arith::Analyzer an;
  for (size_t k = 0; k < w.loops.size(); ++k) {
    innerVars.push_back(w.loops[k]->loopVar);
    dLoops[d.loops[k]->loopVar] = w.loops[k]->loopVar;
    an.bind(w.loops[k]->loopVar, Range(w.loops[k]->min, w.loops[k]->extent));
  }
  for (auto& iv : outer->iterVars)
    an.bind(iv.var, iv.dom);
  for (size_t i = 0; i < wb->iterVars.size(); ++i)
    wMap[wb->iterVars[i].var] = substitute(w.realize->iterValues[i], w.unitVars);
  VarMap dMap;
  const BlockNode* db = d.realize->block.get();
  for (size_t i = 0; i < db->iterVars.size(); ++i)
    dMap[db->iterVars[i].var] = substitute(d.realize->iterValues[i], dLoops);
  if (!isOne(w.realize->predicate))
    throw mismatch("block " + quoted(wb->name) + " has a predicate", {wb});
  // Step 3. Compare the bodies.
  Matcher m(innerVars, an);
  if (!m.stmt(substitute(wb->body, wMap), substitute(db->body, dMap))) throw mismatch(m.why, {wb});
  std::map<const BufferNode*, Placement> place;
  for (size_t p = 0; p < in.desc->bufferMap.size(); ++p) {
    auto it = m.placements().find(in.desc->bufferMap[p].second.get());
    if (it == m.placements().end())
      throw mismatch("the intrinsic's buffer " + quoted(in.desc->bufferMap[p].second->name) +
                         " has no counterpart",
                     {wb});
    place[in.impl->bufferMap[p].second.get()] = it->second;
  }
  // Step 4. The implementation in place of the body.
  auto* nb = new BlockNode(*outer);
  nb->body = ImplPlacer(place).mutate(in.impl->body);
  nb->annotations["tensorized"] = stringImm(in.name);
  sch.replace(outer, Stmt(nb), {{outer, nb}});
}

} // namespace

void tensorize(Schedule& sch, const LoopRV& loop, const std::string& intrinName) {
  const TensorIntrin& in = lookupIntrin(sch, intrinName);
  sch.get(loop);
  // Work on a copy so that a mismatch leaves the schedule as it was.
  Schedule trial = sch;
  {
    Schedule::Silent quiet(trial);
    BlockRV outer = blockize(trial, loop);
    applyIntrin(trial, trial.get(outer), in);
  }
  sch = trial;
  sch.record("tensorize", {Value(loop), Value(intrinName)}, {});
}

void tensorize(Schedule& sch, const BlockRV& block, const std::string& intrinName) {
  const TensorIntrin& in = lookupIntrin(sch, intrinName);
  applyIntrin(sch, sch.get(block), in);
  sch.record("tensorize", {Value(block), Value(intrinName)}, {});
}

// --- Trace instructions -------------------------------------------------------------------

void registerBlockizeTensorizeInstructions() {
  registerInstructionKind({"blockize",
                           {{"loop", vt::Loop}},
                           false,
                           false,
                           false,
                           "Turn the subtree under a loop into a block",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             return std::vector<Value>{Value(blockize(s, in[0].asLoop()))};
                           }});
  registerInstructionKind({"tensorize",
                           {{"block_or_loop", vt::Block | vt::Loop}, {"tensor_intrin", vt::String}},
                           false,
                           false,
                           false,
                           "Replace a tile by a tensor intrinsic's implementation",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             if (in[0].kind() == Value::Kind::Block)
                               tensorize(s, in[0].asBlock(), in[1].asString());
                             else
                               tensorize(s, in[0].asLoop(), in[1].asString());
                             return std::vector<Value>{};
                           }});
}

} // namespace loom::tir
