// decompose_reduction and rfactor: their errors, legality checks, implementation and trace
// instructions.
#include "core/schedule/primitive/reduction.h"

#include <algorithm>
#include <cmath>
#include <limits>
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

// --- Reducers -----------------------------------------------------------------------------

Expr Reducer::combine(const Expr& a, const Expr& b) const {
  return binary(op, a, b);
}

namespace {

/// True when `e` is the identity of `op` in type `t` (0, 1, the lowest or highest value).
bool isIdentity(BinOp op, const Expr& e) {
  double v = 0;
  if (auto* f = e.as<FloatImmNode>())
    v = f->value;
  else if (auto* i = e.as<IntImmNode>())
    v = double(i->value);
  else
    return false;
  DataType t = e.dtype();
  double lowest = t.isFloat() ? -double(std::numeric_limits<float>::max())
                  : t.isUInt() ? 0.0
                               : -std::ldexp(1.0, t.bits() - 1);
  double highest = t.isFloat() ? double(std::numeric_limits<float>::max())
                   : t.isUInt() ? std::ldexp(1.0, t.bits()) - 1
                                : std::ldexp(1.0, t.bits() - 1) - 1;
  switch (op) {
  case BinOp::Add:
    return v == 0;
  case BinOp::Mul:
    return v == 1;
  case BinOp::Max:
    return v <= lowest;
  case BinOp::Min:
    return v >= highest;
  default:
    return false;
  }
}

bool sameLoad(const Expr& e, const BufferStoreNode* store) {
  auto* l = e.as<BufferLoadNode>();
  if (!l || !l->buffer.same_as(store->buffer) || l->indices.size() != store->indices.size())
    return false;
  for (size_t k = 0; k < l->indices.size(); ++k)
    if (!structuralEqual(l->indices[k], store->indices[k])) return false;
  return true;
}

} // namespace

std::optional<Reducer> matchReducer(const BlockNode* block, Expr* rhs) {
  auto* store = dataflow::singleStore(block);
  auto* init = block->init.defined() ? block->init.as<BufferStoreNode>() : nullptr;
  if (!store || !init || !init->buffer.same_as(store->buffer) ||
      init->indices.size() != store->indices.size())
    return std::nullopt;
  for (size_t k = 0; k < init->indices.size(); ++k)
    if (!structuralEqual(init->indices[k], store->indices[k])) return std::nullopt;
  auto* b = store->value.as<BinaryNode>();
  if (!b) return std::nullopt;
  if (b->op != BinOp::Add && b->op != BinOp::Mul && b->op != BinOp::Max && b->op != BinOp::Min)
    return std::nullopt;
  Expr other;
  if (sameLoad(b->a, store) && !sameLoad(b->b, store))
    other = b->b;
  else if (sameLoad(b->b, store) && !sameLoad(b->a, store))
    other = b->a;
  else
    return std::nullopt;
  // The other operand must not read the accumulator itself.
  bool readsSelf = false;
  postOrderVisit(other, [&](const IRNode* n) {
    if (n->nodeKind == NodeKind::BufferLoad &&
        static_cast<const BufferLoadNode*>(n)->buffer.same_as(store->buffer))
      readsSelf = true;
  });
  if (readsSelf || !isIdentity(b->op, init->value)) return std::nullopt;
  if (rhs) *rhs = other;
  return Reducer{b->op, init->value};
}

// --- Shared checks ------------------------------------------------------------------------

namespace {

std::string quoted(const std::string& s) {
  return "'" + s + "'";
}

void checkReductionBlock(const Schedule& sch, const BlockNode* block, const char* primitive) {
  std::string why = dataflow::whyNotReduction(block, dataflow::scopeBlocks(sch, block));
  if (!why.empty())
    throw NotReductionBlockError(std::string(primitive) + ": block " + quoted(block->name) +
                                     " is not a reduction block: " + why,
                                 sch.func(), {block});
}

/// The conjuncts of `pred` that use none of `dropped`, with `vmap` applied; `true` if none.
Expr keptPredicate(const Expr& pred, const std::vector<Var>& dropped, const VarMap& vmap) {
  std::vector<Expr> parts;
  conjuncts(pred, parts);
  Expr out;
  for (auto& p : parts) {
    if (std::any_of(dropped.begin(), dropped.end(), [&](const Var& v) { return usesVar(p, v); }))
      continue;
    Expr q = substitute(p, vmap);
    out = out.defined() ? (out && q) : q;
  }
  return out.defined() ? out : boolImm(true);
}

/// `pred` with the loops of `dropped` that have extent 1 replaced by their min (exact: the loop
/// takes that one value), and those loops removed from `dropped`. A non-dividing split whose outer
/// loop has extent 1 binds the block by the inner loop alone, while its predicate still names
/// both; dropping the conjunct with the outer loop would lose the bound.
Expr unitLoopsAtMin(const Expr& pred, std::vector<Var>& dropped, const std::vector<const ForNode*>& loops) {
  VarMap atMin;
  std::vector<Var> rest;
  for (auto& v : dropped) {
    const ForNode* l = nullptr;
    for (auto* f : loops)
      if (f->loopVar.same_as(v)) l = f;
    const int64_t* e = l ? asConstInt(l->extent) : nullptr;
    if (e && *e == 1)
      atMin[v] = l->min;
    else
      rest.push_back(v);
  }
  dropped = rest;
  return atMin.empty() ? pred : substitute(pred, atMin);
}

bool isDropped(const std::vector<Var>& dropped, const Var& v) {
  return std::any_of(dropped.begin(), dropped.end(), [&](const Var& d) { return d.same_as(v); });
}

/// The loops of `loops` that are in `dropped`, each mapped to its minimum.
VarMap droppedAtMin(const std::vector<Var>& dropped, const std::vector<const ForNode*>& loops) {
  VarMap atMin;
  for (auto* l : loops)
    if (isDropped(dropped, l->loopVar)) atMin[l->loopVar] = l->min;
  return atMin;
}

/// Whether `p` provably holds with the loops of `dropped` at their minimum, for every value of
/// the other loops of `loops` (each in its range).
bool holdsWithDroppedAtMin(const Expr& p, const std::vector<Var>& dropped, const std::vector<const ForNode*>& loops) {
  arith::Analyzer az;
  for (auto* l : loops)
    if (!isDropped(dropped, l->loopVar)) az.bind(l->loopVar, Range(l->min, l->extent));
  return az.canProve(substitute(p, droppedAtMin(dropped, loops)));
}

/// Whether `p` holding for some values of the loops of `dropped` implies that it holds with them
/// at their minimum, for every value of the other loops of `loops`: `p` is a comparison whose
/// smaller side provably only grows and whose larger side only shrinks as the dropped loops leave
/// their minimum (a split's guard `k_0 * 16 + k_1 < seq` over a symbolic extent, dropping k_0).
/// Then the iterations with the dropped loops at their minimum are the first of each element the
/// block writes, and `p` at that minimum is exactly the set of elements it writes.
bool impliedAtDroppedMin(const Expr& p, const std::vector<Var>& dropped, const std::vector<const ForNode*>& loops) {
  auto* cmp = p.as<BinaryNode>();
  if (!cmp || !(cmp->op == BinOp::LT || cmp->op == BinOp::LE || cmp->op == BinOp::GT || cmp->op == BinOp::GE))
    return false;
  const bool less = cmp->op == BinOp::LT || cmp->op == BinOp::LE;
  const Expr small = less ? cmp->a : cmp->b, large = less ? cmp->b : cmp->a;
  if (!small.dtype().isIntegral() || !large.dtype().isIntegral()) return false;
  arith::Analyzer az;
  for (auto* l : loops) az.bind(l->loopVar, Range(l->min, l->extent));
  const VarMap atMin = droppedAtMin(dropped, loops);
  return az.canProveGreaterEqual(az.simplify(small - substitute(small, atMin)), 0) &&
         az.canProveGreaterEqual(az.simplify(substitute(large, atMin) - large), 0);
}

std::vector<Range> substituteRegion(const std::vector<Range>& region, const VarMap& vmap) {
  std::vector<Range> out;
  for (auto& r : region)
    out.emplace_back(substitute(r.min, vmap), substitute(r.extent, vmap));
  return out;
}

std::vector<BufferRegion> substituteRegions(const std::vector<BufferRegion>& rs,
                                            const VarMap& vmap) {
  std::vector<BufferRegion> out;
  for (auto& r : rs)
    out.emplace_back(r.buffer, substituteRegion(r.region, vmap));
  return out;
}

/// A point region at `indices`.
BufferRegion pointRegion(const Buffer& b, const std::vector<Expr>& indices) {
  std::vector<Range> rs;
  for (auto& i : indices)
    rs.emplace_back(i, intImm(i.dtype(), 1));
  return BufferRegion(b, rs);
}

Stmt withLoopNest(const std::vector<const ForNode*>& loops, const std::vector<Var>& vars,
                  const VarMap& vmap, Stmt body, const ForNode* serialLoop = nullptr) {
  for (size_t k = loops.size(); k-- > 0;) {
    const ForNode* l = loops[k];
    ForKind kind = l == serialLoop ? ForKind::Serial : l->kind;
    body = forLoop(vars[k], substitute(l->min, vmap), substitute(l->extent, vmap), kind, body,
                   kind == ForKind::ThreadBinding ? l->threadTag : std::string());
  }
  return body;
}

} // namespace

// --- decompose_reduction ------------------------------------------------------------------

BlockRV decomposeReduction(Schedule& sch, const BlockRV& blockRV, const LoopRV& loopRV) {
  const BlockNode* block = sch.get(blockRV);
  const ForNode* loop = sch.get(loopRV);
  const BlockRealizeNode* realize = sch.realizeOf(block);
  // Step 1. The block must be a reduction block and `loop` one of its loops.
  checkReductionBlock(sch, block, "decompose_reduction");
  std::vector<const ForNode*> loops = loopsAbove(sch, block);
  auto pos = std::find(loops.begin(), loops.end(), loop);
  if (pos == loops.end())
    throw LoopPositionError("decompose_reduction: loop " + quoted(loop->loopVar->name) +
                                " is not an ancestor of block " + quoted(block->name),
                            sch.func(), {loop, block});
  // Step 2. Every loop of a reduce iter var must be `loop` or under it.
  for (size_t i = 0; i < block->iterVars.size(); ++i) {
    if (block->iterVars[i].iterType != IterType::CommReduce) continue;
    for (auto it = loops.begin(); it != pos; ++it)
      if (usesVar(realize->iterValues[i], (*it)->loopVar))
        throw LoopPositionError(
            "decompose_reduction: loop " + quoted((*it)->loopVar->name) + " of reduce iter var " +
                quoted(block->iterVars[i].var->name) + " of block " + quoted(block->name) +
                " is outside loop " + quoted(loop->loopVar->name) +
                ", so the init would rerun at each of its iterations",
            sch.func(), {*it, loop});
  }
  // Step 2b. A loop from `loop` down bound to no iter var of the block, whose extent is not 1,
  // reruns the whole reduction of each element; with the init inside the block each rerun starts
  // afresh, with the init hoisted out they would add up (fuzz_difftest TIR seed 110903: a sum
  // moved by reverse_compute_at under its producer's reduce loop, then decomposed at the top).
  for (auto it = pos; it != loops.end(); ++it) {
    const ForNode* l = *it;
    const int64_t* e = asConstInt(l->extent);
    if (e && *e == 1) continue;
    bool bound = false;
    for (auto& v : realize->iterValues)
      bound |= usesVar(v, l->loopVar);
    if (!bound)
      throw LoopPositionError("decompose_reduction: loop " + quoted(l->loopVar->name) +
                                  " is bound to no iter var of block " + quoted(block->name) +
                                  " and reruns its reduction, which an init hoisted above it "
                                  "would not restart",
                              sch.func(), {l, block});
  }
  // Step 3. The init block: the spatial iter vars the init uses, bound as in the block.
  auto* init = new BlockNode();
  init->name = dataflow::freshBlockName(sch.func(), block->name + "_init");
  std::vector<Expr> initValues;
  VarMap blockVars;
  for (size_t i = 0; i < block->iterVars.size(); ++i) {
    const IterVar& iv = block->iterVars[i];
    if (iv.iterType != IterType::DataPar || !usesVar(block->init, iv.var)) continue;
    Var nv = makeVar(iv.var->name, iv.var->dtype);
    blockVars[iv.var] = nv;
    init->iterVars.emplace_back(nv, iv.dom, IterType::DataPar);
    initValues.push_back(realize->iterValues[i]);
  }
  init->body = substitute(block->init, blockVars);
  init->writes = substituteRegions(block->writes, blockVars);
  // Step 4. Copies of the loops from `loop` down that the init's bindings use.
  std::vector<const ForNode*> kept;
  std::vector<Var> keptVars, dropped;
  VarMap loopVars;
  for (auto it = pos; it != loops.end(); ++it) {
    const ForNode* l = *it;
    bool used = std::any_of(initValues.begin(), initValues.end(),
                            [&](const Expr& v) { return usesVar(v, l->loopVar); });
    if (!used) {
      dropped.push_back(l->loopVar);
      continue;
    }
    Var nv = makeVar(l->loopVar->name + "_init", l->loopVar->dtype);
    loopVars[l->loopVar] = nv;
    kept.push_back(l);
    keptVars.push_back(nv);
  }
  for (auto& v : initValues)
    v = substitute(v, loopVars);
  Expr pred0 = unitLoopsAtMin(realize->predicate, dropped, loops);
  Expr initGuard;
  {
    // A conjunct tying a loop the init keeps to one it drops (a reduction loop) cannot be
    // tested by the init: dropping it could initialize elements outside the block's domain. It
    // is dropped only when it provably holds with the dropped loops at their minimum for every
    // value of the kept ones (each element the init writes is then one the block writes: a
    // partial-vector split `k_0 * 16 + k_1 < 197` under rfactor, decomposed at k_0); else refused.
    std::vector<Expr> parts;
    conjuncts(pred0, parts);
    for (auto& p : parts) {
      bool usesDropped = std::any_of(dropped.begin(), dropped.end(), [&](const Var& v) { return usesVar(p, v); });
      // Kept: a loop the init copies, or one outside `loop` (the init runs under it too: a fused
      // loop split by 10 of 36 iterations, `i_0 * 4 + i_1 < 36` with the init at i_1 under i_0,
      // stored t0[9] of 9 when the conjunct was dropped; fuzz_difftest TIR seed 313678).
      bool usesKept = std::any_of(loops.begin(), loops.end(),
                                  [&](const ForNode* l) { return usesVar(p, l->loopVar) && !isDropped(dropped, l->loopVar); });
      if (!usesDropped || !usesKept) continue;
      if (holdsWithDroppedAtMin(p, dropped, loops)) continue;
      // Over a symbolic extent (`k_0 * 16 + k_1 < seq`) the conjunct cannot be dropped, but when
      // it holds at the dropped loops' minimum for exactly the elements the block writes, the
      // init keeps it there (`k_1 < seq`).
      if (impliedAtDroppedMin(p, dropped, loops)) {
        Expr q = substitute(substitute(p, droppedAtMin(dropped, loops)), loopVars);
        initGuard = initGuard.defined() ? (initGuard && q) : q;
        continue;
      }
      throw ScheduleValueError("decompose_reduction: block " + quoted(block->name) + " has the predicate `" +
                                     printExpr(p) + "`, which ties a loop the init keeps to one it does not; the "
                                     "init could not keep to the block's domain",
                                 sch.func(), {loop, block});
    }
  }
  Expr pred = keptPredicate(pred0, dropped, loopVars);
  if (initGuard.defined()) pred = isOne(pred) ? initGuard : (pred && initGuard);
  auto* initBlockPtr = init;
  Stmt initNest = blockRealize(initValues, pred, Block(init));
  initNest = withLoopNest(kept, keptVars, loopVars, initNest);
  // Step 5. Drop the init from the block, then put the init nest right before `loop`.
  auto* noInit = new BlockNode(*block);
  noInit->init = Stmt();
  sch.replace(block, Stmt(noInit), {{block, noInit}});
  const ForNode* loopNow = sch.get(loopRV);
  sch.replace(loopNow, seq({initNest, Stmt(loopNow)}));
  BlockRV out = sch.addRV(initBlockPtr);
  sch.record("decompose_reduction", {Value(blockRV), Value(loopRV)}, {Value(out)});
  return out;
}

// --- rfactor ------------------------------------------------------------------------------

BlockRV rfactor(Schedule& sch, const LoopRV& loopRV, int64_t factorAxis) {
  const ForNode* loop = sch.get(loopRV);
  const std::string loopName = quoted(loop->loopVar->name);
  // Step 1. Exactly one block under the loop, a reduction block with a known reducer.
  std::vector<const BlockRealizeNode*> under = realizesUnder(loop);
  if (under.size() != 1) {
    std::string names;
    for (auto* r : under)
      names += (names.empty() ? "" : ", ") + quoted(r->block->name);
    throw NotSingleChildError("rfactor: loop " + loopName + " must have exactly one block under it, " +
                                  (under.empty() ? std::string("found none")
                                                 : "found " + std::to_string(under.size()) +
                                                       " (" + names + ")"),
                              sch.func(), {loop});
  }
  const BlockRealizeNode* realize = under[0];
  const BlockNode* block = realize->block.get();
  checkReductionBlock(sch, block, "rfactor");
  if (!isAffineBinding(sch, realize))
    throw NotAffineBindingError("rfactor: block " + quoted(block->name) +
                                    " does not bind its iter vars affinely to the loops above it",
                                sch.func(), {block});
  Expr rhs;
  std::optional<Reducer> reducer = matchReducer(block, &rhs);
  if (!reducer)
    throw UnrecognizedReducerError(
        "rfactor: block " + quoted(block->name) +
            " is not `B[idx] = B[idx] op value` (op one of +, *, max, min) with an init storing "
            "the identity of op",
        sch.func(), {block});
  auto* store = dataflow::singleStore(block);
  // Step 2. The loop must be bound to reduce iter vars only.
  bool touched = false;
  for (size_t i = 0; i < block->iterVars.size(); ++i) {
    if (!usesVar(realize->iterValues[i], loop->loopVar)) continue;
    touched = true;
    if (block->iterVars[i].iterType != IterType::CommReduce)
      throw RFactorLoopError("rfactor: loop " + loopName + " is bound to spatial iter var " +
                                 quoted(block->iterVars[i].var->name) + " of block " +
                                 quoted(block->name) + "; rfactor needs a loop of reduce iter vars",
                             sch.func(), {loop, block});
  }
  if (!touched)
    throw RFactorLoopError("rfactor: loop " + loopName + " is not bound to any iter var of block " +
                               quoted(block->name),
                           sch.func(), {loop, block});
  // Step 3. The loop nest of the block must hold nothing else; ranges must be loop-invariant.
  std::vector<const ForNode*> loops = loopsAbove(sch, block);
  const ForNode* top = loops.front();
  if (realizesUnder(top).size() != 1)
    throw NotSingleChildError("rfactor: loop " + quoted(top->loopVar->name) + " above block " +
                                  quoted(block->name) +
                                  " holds other blocks too; rfactor needs the block's own loop nest",
                              sch.func(), {top});
  for (auto* a : loops)
    for (auto* b : loops)
      if (usesVar(a->min, b->loopVar) || usesVar(a->extent, b->loopVar))
        throw ScheduleValueError("rfactor: the range of loop " + quoted(a->loopVar->name) +
                                     " depends on loop " + quoted(b->loopVar->name),
                                 sch.func(), {a, b});
  // Step 3b. No loop may feed both a spatial and a reduce iter var (a fused spatial x reduce
  // loop): the rfactor block would make it one reduce iter var, whose init then runs only where
  // the whole loop is at its minimum, not once per spatial value (fuzz_difftest TIR seed 101521:
  // partial results left uninitialized).
  for (auto* l : loops) {
    int spatial = -1, reduce = -1;
    for (size_t i = 0; i < block->iterVars.size(); ++i) {
      if (!usesVar(realize->iterValues[i], l->loopVar)) continue;
      (block->iterVars[i].iterType == IterType::CommReduce ? reduce : spatial) = int(i);
    }
    if (spatial >= 0 && reduce >= 0)
      throw RFactorLoopError("rfactor: loop " + quoted(l->loopVar->name) + " binds both spatial iter var " +
                                 quoted(block->iterVars[size_t(spatial)].var->name) + " and reduce iter var " +
                                 quoted(block->iterVars[size_t(reduce)].var->name) + " of block " +
                                 quoted(block->name) + " (a fused spatial and reduce loop); rfactor cannot keep it",
                             sch.func(), {l, block});
  }
  // Step 3c. A loop bound to no iter var (left by splitting a unit loop whose binding was
  // simplified away: `split(l, [2, None])` of an extent-1 loop, fuzz_difftest TIR seed 102913)
  // whose extent is not 1 must not sit under a loop of a reduce iter var (TVM refuses it too): it
  // repeats the reduction's updates between two inits.
  {
    bool underReduce = false;
    for (auto* l : loops) {
      bool bound = false, reduce = false;
      for (size_t i = 0; i < block->iterVars.size(); ++i)
        if (usesVar(realize->iterValues[i], l->loopVar)) {
          bound = true;
          reduce |= block->iterVars[i].iterType == IterType::CommReduce;
        }
      if (reduce) underReduce = true;
      const int64_t* e = asConstInt(l->extent);
      if (!bound && underReduce && !(e && *e == 1))
        throw RFactorLoopError("rfactor: loop " + quoted(l->loopVar->name) +
                                   " is bound to no iter var of block " + quoted(block->name) +
                                   ", its extent is not 1 and it lies under a loop of a reduce "
                                   "iter var; rfactor cannot keep it",
                               sch.func(), {l, block});
    }
  }
  // Step 4. The factor axis.
  const Buffer& out = store->buffer;
  int64_t ndim = int64_t(out->ndim());
  if (factorAxis < -(ndim + 1) || factorAxis > ndim)
    throw FactorAxisOutOfRangeError("rfactor: factor_axis " + std::to_string(factorAxis) +
                                        " is out of range [" + std::to_string(-(ndim + 1)) + ", " +
                                        std::to_string(ndim) + "] for buffer " +
                                        quoted(out->name) + " of rank " + std::to_string(ndim),
                                    sch.func(), {block});
  if (factorAxis < 0) factorAxis += ndim + 1;
  // Step 5. The rfactor buffer: the output's shape with the loop's extent inserted.
  std::vector<Expr> rfShape = out->shape;
  rfShape.insert(rfShape.begin() + factorAxis, loop->extent);
  Buffer rfBuf = makeBuffer(out->name + "_rf", out->dtype, rfShape, out->scope);
  // Step 6. The rfactor block: the loop as a new spatial iter var, every loop of a reduce
  // binding as a reduce iter var, spatial iter vars unchanged.
  auto* rf = new BlockNode();
  rf->name = dataflow::freshBlockName(sch.func(), block->name + "_rf");
  std::vector<Expr> rfValues;
  std::unordered_map<const VarNode*, Var> loopToIter;
  Var vrf = makeVar("v" + loop->loopVar->name, loop->loopVar->dtype);
  rf->iterVars.emplace_back(vrf, Range(loop->min, loop->extent), IterType::DataPar);
  rfValues.push_back(loop->loopVar);
  loopToIter[loop->loopVar.get()] = vrf;
  VarMap rfMap; // old block iter var -> expression of the rf block's iter vars
  for (size_t i = 0; i < block->iterVars.size(); ++i) {
    const IterVar& iv = block->iterVars[i];
    if (iv.iterType == IterType::DataPar) {
      rf->iterVars.push_back(iv);
      rfValues.push_back(realize->iterValues[i]);
      continue;
    }
    for (auto* l : loops) {
      if (!usesVar(realize->iterValues[i], l->loopVar) || loopToIter.count(l->loopVar.get()))
        continue;
      Var nv = makeVar("v" + l->loopVar->name, l->loopVar->dtype);
      rf->iterVars.emplace_back(nv, Range(l->min, l->extent), IterType::CommReduce);
      rfValues.push_back(l->loopVar);
      loopToIter[l->loopVar.get()] = nv;
    }
    rfMap[iv.var] = substitute(realize->iterValues[i], [&](const Var& v) -> Expr {
      auto it = loopToIter.find(v.get());
      return it == loopToIter.end() ? Expr() : Expr(it->second);
    });
  }
  std::vector<Expr> rfIdx = store->indices;
  rfIdx.insert(rfIdx.begin() + factorAxis, isZero(loop->min) ? Expr(vrf) : vrf - loop->min);
  rf->init = bufferStore(rfBuf, reducer->identity, rfIdx);
  rf->body =
      bufferStore(rfBuf, reducer->combine(bufferLoad(rfBuf, rfIdx), substitute(rhs, rfMap)), rfIdx);
  for (auto& r : substituteRegions(block->reads, rfMap))
    if (!r.buffer.same_as(out)) rf->reads.push_back(r);
  rf->writes.push_back(pointRegion(rfBuf, rfIdx));
  rf->annotations = block->annotations;
  const BlockNode* rfPtr = rf;
  Stmt rfRealize = blockRealize(rfValues, realize->predicate, Block(rf));
  // Step 7. The write-back block (keeps the block's name): spatial iter vars plus the loop as a
  // reduce iter var, over fresh copies of the loops of its bindings and of the loops bound to no
  // iter var whose extent is not 1 (as TVM: the predicate may tie them to a spatial loop, and
  // dropping them would drop that bound: fuzz_difftest TIR seed 102913 stored out[3, 9] of 4x9).
  std::vector<const ForNode*> wbLoops;
  std::vector<Var> wbLoopVars, dropped;
  VarMap wbLoopMap;
  for (auto* l : loops) {
    bool used = l == loop, bound = false;
    for (size_t i = 0; i < block->iterVars.size(); ++i) {
      bool uses = usesVar(realize->iterValues[i], l->loopVar);
      bound |= uses;
      used |= block->iterVars[i].iterType == IterType::DataPar && uses;
    }
    const int64_t* extent = asConstInt(l->extent);
    used |= !bound && !(extent && *extent == 1);
    if (!used) {
      dropped.push_back(l->loopVar);
      continue;
    }
    Var nv = makeVar(l->loopVar->name, l->loopVar->dtype);
    wbLoops.push_back(l);
    wbLoopVars.push_back(nv);
    wbLoopMap[l->loopVar] = nv;
  }
  Expr rfPred = unitLoopsAtMin(realize->predicate, dropped, loops);
  Expr wbGuard;
  // A predicate that ties `loop` to a loop the write-back drops (a split whose factor does not
  // divide the extent: `k_0 * 16 + k_1 < 8`, rfactor of k_1) may leave partial sums that no
  // iteration initializes, which the write-back, unable to test it, would read. Each partial sum
  // is initialized when the iteration with the dropped loops at their minimum runs; refuse unless
  // that provably holds for every value of the loops kept.
  {
    std::vector<Expr> parts;
    conjuncts(rfPred, parts);
    for (auto& p : parts) {
      if (!usesVar(p, loop->loopVar) ||
          std::none_of(dropped.begin(), dropped.end(), [&](const Var& v) { return usesVar(p, v); }))
        continue;
      if (holdsWithDroppedAtMin(p, dropped, loops)) continue;
      // Over a symbolic extent: a partial sum whose first iteration (the dropped loops at their
      // minimum) does not run is never written at all when the predicate only tightens as the
      // dropped loops grow; the write-back then reads only the partial sums where it holds there.
      if (impliedAtDroppedMin(p, dropped, loops)) {
        Expr q = substitute(p, droppedAtMin(dropped, loops));
        wbGuard = wbGuard.defined() ? (wbGuard && q) : q;
        continue;
      }
      throw ScheduleValueError("rfactor: block " + quoted(block->name) + " has the predicate `" +
                                     printExpr(p) + "`, under which some partial sums of loop " +
                                     loopName + " would never be initialized (split with a factor "
                                     "that divides the extent, or rfactor the outer loop)",
                                 sch.func(), {loop, block});
    }
  }
  auto* wb = new BlockNode();
  wb->name = block->name;
  wb->annotations = block->annotations;
  std::vector<Expr> wbValues;
  VarMap wbMap;
  for (size_t i = 0; i < block->iterVars.size(); ++i) {
    const IterVar& iv = block->iterVars[i];
    if (iv.iterType != IterType::DataPar) continue;
    Var nv = makeVar(iv.var->name, iv.var->dtype);
    wbMap[iv.var] = nv;
    wb->iterVars.emplace_back(nv, iv.dom, IterType::DataPar);
    wbValues.push_back(substitute(realize->iterValues[i], wbLoopMap));
  }
  Var vwb = makeVar("v" + loop->loopVar->name, loop->loopVar->dtype);
  wb->iterVars.emplace_back(vwb, Range(loop->min, loop->extent), IterType::CommReduce);
  wbValues.push_back(wbLoopMap.at(loop->loopVar));
  std::vector<Expr> wbIdx, wbRfIdx;
  for (auto& i : store->indices)
    wbIdx.push_back(substitute(i, wbMap));
  wbRfIdx = wbIdx;
  wbRfIdx.insert(wbRfIdx.begin() + factorAxis, isZero(loop->min) ? Expr(vwb) : vwb - loop->min);
  wb->init = bufferStore(out, reducer->identity, wbIdx);
  wb->body = bufferStore(out, reducer->combine(bufferLoad(out, wbIdx), bufferLoad(rfBuf, wbRfIdx)),
                         wbIdx);
  wb->reads.push_back(pointRegion(rfBuf, wbRfIdx));
  wb->writes = substituteRegions(block->writes, wbMap);
  Expr wbPred = keptPredicate(rfPred, dropped, wbLoopMap);
  if (wbGuard.defined()) {
    Expr q = substitute(wbGuard, wbLoopMap);
    wbPred = isOne(wbPred) ? q : (wbPred && q);
  }
  Stmt wbNest = blockRealize(wbValues, wbPred, Block(wb));
  wbNest = withLoopNest(wbLoops, wbLoopVars, wbLoopMap, wbNest, loop);
  // Step 8. Replace the block by the rfactor block, put the write-back nest after the loop nest,
  // allocate the rfactor buffer in the enclosing block.
  sch.replace(realize, rfRealize);
  const ForNode* topNow = loopsAbove(sch, rfPtr).front();
  sch.replace(topNow, seq({Stmt(topNow), wbNest}));
  const BlockNode* scope = enclosingBlock(sch, rfPtr);
  sch.replaceFunc(dataflow::withAlloc(sch.func(), scope, rfBuf));
  auto found = findBlocks(sch.func(), rf->name);
  LOOM_ICHECK(found.size() == 1) << "rfactor: the new block is not in the function";
  BlockRV result = sch.addRV(found[0]);
  sch.record("rfactor", {Value(loopRV), Value(factorAxis)}, {Value(result)});
  return result;
}

// --- Trace instructions -------------------------------------------------------------------

void registerReductionInstructions() {
  registerInstructionKind({"decompose_reduction",
                           {{"block", vt::Block}, {"loop", vt::Loop}},
                           false,
                           false,
                           false,
                           "Move a reduction's init into its own block before a loop",
                           [](Schedule& s, const std::vector<Value>& in, const Value&) {
                             return std::vector<Value>{
                                 Value(decomposeReduction(s, in[0].asBlock(), in[1].asLoop()))};
                           }});
  registerInstructionKind(
      {"rfactor",
       {{"loop", vt::Loop}, {"factor_axis", vt::Int, 0, Value(int64_t(0)), true}},
       false,
       false,
       false,
       "Factorize a reduction over a loop into partial results and a write-back",
       [](Schedule& s, const std::vector<Value>& in, const Value&) {
         return std::vector<Value>{Value(rfactor(s, in[0].asLoop(), in[1].asInt()))};
       }});
}

} // namespace loom::tir
