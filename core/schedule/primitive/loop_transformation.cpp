// split, fuse, reorder, add_unit_loop: their errors, legality checks, implementation and trace
// instructions.
#include "core/schedule/primitive/loop_transformation.h"

#include <algorithm>
#include <set>

#include "core/arith/Analyzer.h"
#include "core/schedule/Analysis.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::tir {

namespace {

std::string loopName(const ForNode* l) {
  return "'" + l->loopVar->name + "'";
}

/// Simplifies the bindings of the block realizes directly under `body` (not inside nested
/// blocks) knowing the ranges of the new loops and of the loops it passes, and conjoins
/// `predicate` (when defined and not provably true there) to their predicates. A body with no
/// block is guarded by an if statement instead.
class BindingRewriter : public IRMutator {
public:
  BindingRewriter(Expr predicate, const std::vector<std::pair<Var, Range>>& newLoops)
      : m_pred(std::move(predicate)) {
    for (auto& [v, r] : newLoops)
      m_analyzer.bind(v, r);
  }
  Stmt run(const Stmt& body) {
    Stmt out = mutate(body);
    if (m_pred.defined() && !m_sawRealize && !m_analyzer.canProve(m_pred))
      out = ifThen(m_pred, out);
    return out;
  }

protected:
  using IRMutator::visit;
  Stmt visit(const ForNode* n, const Stmt& self) override {
    m_analyzer.bind(n->loopVar, Range(n->min, n->extent));
    return IRMutator::visit(n, self);
  }
  Stmt visit(const BlockRealizeNode* n, const Stmt& self) override {
    m_sawRealize = true;
    std::vector<Expr> vals;
    bool changed = false;
    for (auto& v : n->iterValues) {
      vals.push_back(m_analyzer.simplify(v));
      changed |= !vals.back().same_as(v);
    }
    Expr pred = n->predicate;
    if (m_pred.defined() && !m_analyzer.canProve(m_pred)) {
      pred = isOne(pred) ? m_pred : (pred && m_pred);
      changed = true;
    }
    if (!changed) return self;
    return blockRealize(vals, pred, n->block);
  }

private:
  arith::Analyzer m_analyzer;
  Expr m_pred;
  bool m_sawRealize = false;
};

/// Checks the blocks under `top`: iter types only spatial/reduce, bindings affine in the loops.
void checkBlocksUnder(const Schedule& sch, const ForNode* top, const char* primitive) {
  for (auto* r : realizesUnder(top)) {
    if (enclosingBlock(sch, r->block.get()) != enclosingBlock(sch, top)) continue; // nested block
    const BlockNode* b = r->block.get();
    for (auto& iv : b->iterVars)
      if (iv.iterType != IterType::DataPar && iv.iterType != IterType::CommReduce)
        throw WrongBlockIterTypeError(
            std::string(primitive) + ": block '" + b->name + "' has the " +
                iterTypeName(iv.iterType) + " iter var '" + iv.var->name +
                "'; only spatial and reduce iter vars can be " + primitive + "ed",
            sch.func(), {b});
    if (!isAffineBinding(sch, r))
      throw NotAffineBindingError(
          std::string(primitive) + ": block '" + b->name +
              "' does not bind its iter vars affinely to the loops above it",
          sch.func(), {b});
  }
}

/// A reduction's init runs where its reduce iter vars are at their minimum, so every output
/// element must first be visited there. A loop that feeds both a spatial and a reduce binding of
/// a block with an init (a fused spatial x reduce loop, or a piece of one split) visits its
/// values in order: as long as such loops keep their nesting order the first visit of each
/// output has the reduce part at its minimum. Swapping two of them can make an update run before
/// the init, which then overwrites it (fuzz_difftest TIR seed 4098). Throws
/// WrongBlockIterTypeError when `newPath` changes the relative order of two such loops of `path`.
void checkMixedLoopOrder(const Schedule& sch, const ForNode* top,
                         const std::vector<const ForNode*>& path,
                         const std::vector<const ForNode*>& newPath) {
  for (auto* r : realizesUnder(top)) {
    const BlockNode* b = r->block.get();
    if (!b->init.defined() || r->iterValues.size() != b->iterVars.size()) continue;
    std::vector<const ForNode*> mixed;
    for (auto* l : path) {
      bool spatial = false, reduce = false;
      for (size_t k = 0; k < b->iterVars.size(); ++k) {
        if (!usesVar(r->iterValues[k], l->loopVar)) continue;
        (b->iterVars[k].iterType == IterType::CommReduce ? reduce : spatial) = true;
      }
      if (spatial && reduce) mixed.push_back(l);
    }
    if (mixed.size() < 2) continue;
    std::vector<const ForNode*> after;
    for (auto* l : newPath)
      if (std::find(mixed.begin(), mixed.end(), l) != mixed.end()) after.push_back(l);
    for (size_t k = 0; k < mixed.size(); ++k)
      if (after[k] != mixed[k])
        throw WrongBlockIterTypeError(
            "reorder: loops " + loopName(mixed[k]) + " and " + loopName(after[k]) +
                " both bind spatial and reduce iter vars of block '" + b->name +
                "' (a fused spatial and reduce loop); swapping them would run updates of an "
                "output before its init",
            sch.func(), {b, mixed[k], after[k]});
  }
}

Stmt makeLoop(Var v, Expr min, Expr extent, Stmt body) {
  return forLoop(std::move(v), std::move(min), std::move(extent), ForKind::Serial, std::move(body));
}

} // namespace

// --- split --------------------------------------------------------------------------------

std::vector<LoopRV> split(Schedule& sch, const LoopRV& loopRV, const std::vector<Value>& factors,
                          bool preserveUnitIters) {
  const ForNode* loop = sch.get(loopRV);
  // Step 1. Check the factors: at least two, at most one None, all positive.
  if (factors.size() < 2)
    throw InvalidFactorsError("split of loop " + loopName(loop) +
                                  " needs at least 2 factors, got " +
                                  std::to_string(factors.size()),
                              sch.func(), {loop});
  int noneAt = -1;
  std::vector<int64_t> f(factors.size(), 1);
  int64_t known = 1;
  for (size_t k = 0; k < factors.size(); ++k) {
    if (factors[k].isNone()) {
      if (noneAt >= 0)
        throw InvalidFactorsError("split of loop " + loopName(loop) +
                                      ": at most one factor can be None (inferred)",
                                  sch.func(), {loop});
      noneAt = int(k);
      continue;
    }
    f[k] = sch.getInt(factors[k]);
    if (f[k] <= 0)
      throw InvalidFactorsError("split of loop " + loopName(loop) + ": factor " +
                                    std::to_string(k) + " is " + std::to_string(f[k]) +
                                    ", factors must be positive",
                                sch.func(), {loop});
    known *= f[k];
  }
  // Step 2. The extents of the new loops and whether a predicate is needed.
  std::optional<int64_t> ext = constIntValue(loop->extent);
  DataType t = loop->loopVar->dtype;
  std::vector<Expr> extents;
  bool needPredicate = false;
  for (size_t k = 0; k < factors.size(); ++k)
    extents.push_back(intImm(t, f[k]));
  if (noneAt >= 0) {
    if (ext) {
      int64_t inferred = (*ext + known - 1) / known;
      extents[size_t(noneAt)] = intImm(t, inferred);
      needPredicate = inferred * known != *ext;
    } else {
      extents[size_t(noneAt)] =
          known == 1 ? loop->extent
                     : floordiv(loop->extent + intImm(t, known - 1), intImm(t, known));
      needPredicate = known != 1;
    }
  } else if (ext) {
    if (known < *ext)
      throw InvalidFactorsError("split of loop " + loopName(loop) + ": the factors' product " +
                                    std::to_string(known) + " is smaller than the loop's extent " +
                                    std::to_string(*ext),
                                sch.func(), {loop});
    needPredicate = known != *ext;
  } else {
    needPredicate = true;
  }
  // Step 3. The new loop vars and the value of the old one.
  std::vector<Var> vars;
  for (size_t k = 0; k < factors.size(); ++k)
    vars.push_back(makeVar(loop->loopVar->name + "_" + std::to_string(k), t));
  Expr fused;
  for (size_t k = 0; k < factors.size(); ++k) {
    bool unit = !preserveUnitIters && isOne(extents[k]);
    Expr term = unit ? intImm(t, 0) : Expr(vars[k]);
    fused = k == 0 ? term : fused * extents[k] + term;
  }
  fused = foldConstants(fused);
  Expr value = isZero(loop->min) ? fused : loop->min + fused;
  // Step 4. Substitute it in the body, guard the overhang, nest the new loops.
  Stmt body = substitute(
      loop->body, [&](const Var& v) -> Expr { return v.same_as(loop->loopVar) ? value : Expr(); });
  std::vector<std::pair<Var, Range>> ranges;
  for (size_t k = 0; k < factors.size(); ++k)
    ranges.push_back({vars[k], Range(intImm(t, 0), extents[k])});
  body = BindingRewriter(needPredicate ? (fused < loop->extent) : Expr(), ranges).run(body);
  for (size_t k = factors.size(); k-- > 0;)
    body = makeLoop(vars[k], intImm(t, 0), extents[k], body);
  // Step 5. Replace, hand out RVs for the new loops, record.
  sch.replace(loop, body);
  std::vector<LoopRV> out;
  for (const StmtNode* s = body.get(); out.size() < factors.size();
       s = static_cast<const ForNode*>(s)->body.get())
    out.push_back(sch.addRV(static_cast<const ForNode*>(s)));
  sch.record("split", {Value(loopRV), Value(factors), Value(preserveUnitIters)},
             Value::list(out).asList());
  return out;
}

// --- fuse ---------------------------------------------------------------------------------

namespace {
/// Checks that `loops` are distinct; throws DuplicateLoopError.
void checkDistinct(const Schedule& sch, const std::vector<const ForNode*>& loops,
                   const char* primitive) {
  std::set<const ForNode*> seen;
  for (auto* l : loops)
    if (!seen.insert(l).second)
      throw DuplicateLoopError(std::string(primitive) + ": loop " + loopName(l) +
                                   " is given more than once",
                               sch.func(), {l});
}

/// Throws DependentLoopError when a loop's min or extent uses the var of another loop in `loops`.
void checkIndependent(const Schedule& sch, const std::vector<const ForNode*>& loops,
                      const char* primitive) {
  for (auto* a : loops)
    for (auto* b : loops)
      if (a != b && (usesVar(a->min, b->loopVar) || usesVar(a->extent, b->loopVar)))
        throw DependentLoopError(std::string(primitive) + ": the range of loop " + loopName(a) +
                                     " depends on loop " + loopName(b),
                                 sch.func(), {a, b});
}
} // namespace

LoopRV fuse(Schedule& sch, const std::vector<LoopRV>& loopRVs, bool preserveUnitIters) {
  // Step 1. Resolve the loops and check they form a perfect chain.
  if (loopRVs.empty()) throw ScheduleValueError("fuse needs at least one loop", sch.func());
  std::vector<const ForNode*> loops;
  for (auto& rv : loopRVs)
    loops.push_back(sch.get(rv));
  checkDistinct(sch, loops, "fuse");
  for (size_t k = 1; k < loops.size(); ++k) {
    const ForNode* child = onlyChildLoop(loops[k - 1]);
    if (child == loops[k]) continue;
    if (isAncestor(sch, loops[k - 1], loops[k]) && child)
      throw LoopsNotAChainError("fuse: loop " + loopName(loops[k]) +
                                    " is not directly inside loop " + loopName(loops[k - 1]) +
                                    " (loop " + loopName(child) +
                                    " is between them); fuse takes consecutive loops",
                                sch.func(), {loops[k - 1], child});
    if (isAncestor(sch, loops[k - 1], loops[k]))
      throw NotSingleChildError(
          "fuse: loop " + loopName(loops[k]) + " is not the only statement in the body of loop " +
              loopName(loops[k - 1]) + "; only perfectly nested loops can be fused",
          sch.func(), {loops[k - 1]});
    throw LoopsNotAChainError("fuse: loop " + loopName(loops[k]) + " is not directly inside loop " +
                                  loopName(loops[k - 1]) +
                                  " (give the loops outermost first, each nested in the previous)",
                              sch.func(), {loops[k - 1], loops[k]});
  }
  checkIndependent(sch, loops, "fuse");
  // Step 2. The fused var and the value of each old loop var.
  DataType t = loops[0]->loopVar->dtype;
  std::string name;
  for (auto* l : loops)
    name += l->loopVar->name + "_";
  Var fv = makeVar(name + "fused", t);
  std::vector<size_t> kept;
  for (size_t k = 0; k < loops.size(); ++k)
    if (preserveUnitIters || !isOne(loops[k]->extent)) kept.push_back(k);
  std::unordered_map<Var, Expr, RefHash, RefEqual> vmap;
  Expr extent = intImm(t, 1);
  for (size_t k : kept)
    extent = foldConstants(extent * cast(t, loops[k]->extent));
  for (size_t k = 0; k < loops.size(); ++k) {
    const ForNode* l = loops[k];
    auto pos = std::find(kept.begin(), kept.end(), k);
    if (pos == kept.end()) {
      vmap[l->loopVar] = l->min;
      continue;
    }
    Expr inner = intImm(t, 1);
    for (auto it = pos + 1; it != kept.end(); ++it)
      inner = foldConstants(inner * cast(t, loops[*it]->extent));
    Expr v = isOne(inner) ? Expr(fv) : floordiv(fv, inner);
    if (pos != kept.begin()) v = floormod(v, cast(t, l->extent));
    v = foldConstants(v);
    vmap[l->loopVar] = isZero(l->min) ? v : l->min + v;
  }
  // Step 3. Build the fused loop and replace the chain.
  Stmt body = BindingRewriter(Expr(), {{fv, Range(intImm(t, 0), extent)}})
                  .run(substitute(loops.back()->body, vmap));
  Stmt fused = makeLoop(fv, intImm(t, 0), extent, body);
  sch.replace(loops[0], fused);
  LoopRV out = sch.addRV(static_cast<const ForNode*>(fused.get()));
  sch.record("fuse", {Value::list(loopRVs), Value(preserveUnitIters)}, {Value(out)});
  return out;
}

// --- reorder ------------------------------------------------------------------------------

void reorder(Schedule& sch, const std::vector<LoopRV>& order) {
  // Step 1. Resolve, check distinct.
  std::vector<const ForNode*> loops;
  for (auto& rv : order)
    loops.push_back(sch.get(rv));
  checkDistinct(sch, loops, "reorder");
  if (loops.size() <= 1) {
    sch.record("reorder", {Value::list(order)}, {});
    return;
  }
  // Step 2. The loops must lie on one path: sorted by depth, each encloses the next.
  auto depth = [&](const ForNode* l) {
    int d = 0;
    for (const StmtNode* p = sch.parentOf(l); p; p = sch.parentOf(p))
      ++d;
    return d;
  };
  std::vector<const ForNode*> byDepth = loops;
  std::stable_sort(byDepth.begin(), byDepth.end(),
                   [&](auto* a, auto* b) { return depth(a) < depth(b); });
  for (size_t k = 1; k < byDepth.size(); ++k)
    if (!isAncestor(sch, byDepth[k - 1], byDepth[k]))
      throw LoopsNotAChainError("reorder: loops " + loopName(byDepth[k - 1]) + " and " +
                                    loopName(byDepth[k]) + " are not nested in one another",
                                sch.func(), {byDepth[k - 1], byDepth[k]});
  // Step 3. The path from the outermost to the innermost must be a single-child chain of loops.
  const ForNode* top = byDepth.front();
  const ForNode* bottom = byDepth.back();
  std::vector<const ForNode*> path{bottom};
  for (const StmtNode* p = sch.parentOf(bottom); p != top; p = sch.parentOf(p)) {
    if (p->nodeKind != NodeKind::For) {
      const ForNode* above = nullptr;
      for (const StmtNode* q = sch.parentOf(p); q; q = sch.parentOf(q))
        if (q->nodeKind == NodeKind::For) {
          above = static_cast<const ForNode*>(q);
          break;
        }
      throw NotSingleChildError("reorder: the loops between " + loopName(top) + " and " +
                                    loopName(bottom) + " are not perfectly nested (loop " +
                                    loopName(above) + " has more than a single loop in its body)",
                                sch.func(), {above});
    }
    path.push_back(static_cast<const ForNode*>(p));
  }
  path.push_back(top);
  std::reverse(path.begin(), path.end());
  checkIndependent(sch, path, "reorder");
  // Step 4. The blocks under the loops must have spatial/reduce iters bound affinely.
  checkBlocksUnder(sch, top, "reorder");
  // Step 5. Put the given loops, in the given order, at the positions the given loops held.
  std::vector<const ForNode*> newPath = path;
  size_t next = 0;
  for (auto& slot : newPath)
    if (std::find(loops.begin(), loops.end(), slot) != loops.end()) slot = loops[next++];
  checkMixedLoopOrder(sch, top, path, newPath);
  Stmt body = bottom->body;
  ReplaceMap follow;
  for (size_t k = newPath.size(); k-- > 0;) {
    const ForNode* l = newPath[k];
    auto* n = new ForNode(*l);
    n->body = body;
    body = Stmt(n);
    follow[l] = n;
  }
  sch.replace(top, body, follow);
  sch.record("reorder", {Value::list(order)}, {});
}

// --- add_unit_loop ------------------------------------------------------------------------

namespace {
LoopRV addUnitLoopAbove(Schedule& sch, const StmtNode* target, const Value& input) {
  Stmt loop = forLoop(makeVar("u"), 0, 1, ForKind::Serial, Stmt(target));
  sch.replace(target, loop);
  LoopRV rv = sch.addRV(static_cast<const ForNode*>(loop.get()));
  sch.record("add_unit_loop", {input}, {Value(rv)});
  return rv;
}
} // namespace

LoopRV addUnitLoop(Schedule& sch, const BlockRV& block) {
  const BlockNode* b = sch.get(block);
  const BlockRealizeNode* r = sch.realizeOf(b);
  if (!r)
    throw ScheduleValueError("add_unit_loop: block '" + b->name + "' is the function's root",
                             sch.func(), {b});
  return addUnitLoopAbove(sch, r, Value(block));
}

LoopRV addUnitLoop(Schedule& sch, const LoopRV& loop) {
  return addUnitLoopAbove(sch, sch.get(loop), Value(loop));
}

// --- Trace instructions -------------------------------------------------------------------

void registerLoopTransformationInstructions() {
  registerInstructionKind(
      {"split",
       {{"loop", vt::Loop},
        {"factors", vt::List, vt::None | vt::IntOrRV, std::nullopt, true},
        {"preserve_unit_iters", vt::Bool, 0, Value(true), true}},
       true,
       false,
       false,
       "Split a loop into nested loops of the given extents",
       [](Schedule& s, const std::vector<Value>& in, const Value&) {
         return Value::list(split(s, in[0].asLoop(), in[1].asList(), in[2].asBool())).asList();
       }});
  // fuse and reorder take their loops as separate arguments in scripts: sch.fuse(i, j).
  registerInstructionKind({"fuse",
                           {{"loops", vt::List, vt::Loop, std::nullopt, false, true},
                            {"preserve_unit_iters", vt::Bool, 0, Value(true), true}},
                           false,
                           false,
                           false,
                           "Fuse perfectly nested loops into one",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             std::vector<LoopRV> loops;
                             for (auto& v : in[0].asList())
                               loops.push_back(v.asLoop());
                             return std::vector<Value>{Value(fuse(s, loops, in[1].asBool()))};
                           }});
  registerInstructionKind({"reorder",
                           {{"loops", vt::List, vt::Loop, std::nullopt, false, true}},
                           false,
                           false,
                           false,
                           "Reorder the loops of one chain",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             std::vector<LoopRV> loops;
                             for (auto& v : in[0].asList())
                               loops.push_back(v.asLoop());
                             reorder(s, loops);
                             return std::vector<Value>{};
                           }});
  registerInstructionKind({"add_unit_loop",
                           {{"block_or_loop", vt::Block | vt::Loop}},
                           false,
                           false,
                           false,
                           "Add a loop of extent 1 above a block or loop",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             LoopRV l = in[0].kind() == Value::Kind::Block
                                            ? addUnitLoop(s, in[0].asBlock())
                                            : addUnitLoop(s, in[0].asLoop());
                             return std::vector<Value>{Value(l)};
                           }});
}

} // namespace loom::tir
