// The default CPU schedule of a fused group (see DefaultSchedule.h).
#include "core/driver/DefaultSchedule.h"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <set>

#include "core/arith/ExprOrder.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/primitive/cache_read_write.h"
#include "core/schedule/primitive/compute_inline.h"
#include "core/schedule/primitive/compute_location.h"
#include "core/schedule/primitive/for_kind.h"
#include "core/schedule/primitive/get_block_loop.h"
#include "core/schedule/primitive/loop_transformation.h"
#include "core/schedule/primitive/reduction.h"
#include "core/schedule/primitive/sampling.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/topi/nn/Winograd.h"

namespace loom::driver {

namespace {

/// Vector lanes of one fp32 register on the AVX-512 targets the defaults are made for.
constexpr int64_t kLanes = 16;
/// The host's vector registers: 32 of 16 fp32 lanes with AVX-512, else 16 of 8 (AVX2). The
/// register tile is sized by them: on an AVX2 machine a 16-lane block takes two registers, and a
/// tile sized for AVX-512 (28 rows of 16 lanes) spills.
struct VectorRegisters {
  int64_t count = 32, lanes = 16;
};
const VectorRegisters& hostRegisters() {
  static const VectorRegisters r = [] {
    VectorRegisters v;
#if defined(__x86_64__) || defined(__i386__)
    if (!__builtin_cpu_supports("avx512f")) v = VectorRegisters{16, 8};
#endif
    return v;
  }();
  return r;
}
/// Registers a register tile's accumulators may use, leaving 4 for operands (28 of 32, 12 of 16).
int64_t accumulatorRegisters() { return hostRegisters().count - 4; }
/// Registers one row of `lanes` fp32 lanes takes.
int64_t registersPerRow(int64_t lanes) {
  return (lanes + hostRegisters().lanes - 1) / hostRegisters().lanes;
}

/// A symbolic extent (a dynamic model's batch, height or width: `batch`, `(W + 1) // 2`) counts
/// as this many iterations where a rule needs a number: enough work to share among threads and
/// rows enough for a full register tile. Loops over symbolic extents get split with guarded
/// tails (loop partitioning peels the guard off the full tiles), never perfect tiles.
constexpr int64_t kSymbolicExtent = 64;

/// The extent of a loop, kSymbolicExtent when it is symbolic.
int64_t extentOf(tir::Schedule& sch, const tir::LoopRV& l) {
  const int64_t* e = tir::asConstInt(sch.get(l)->extent);
  return e ? *e : kSymbolicExtent;
}
bool isSymbolic(tir::Schedule& sch, const tir::LoopRV& l) { return !tir::asConstInt(sch.get(l)->extent); }

/// The constant factor of a loop's extent, the least it can be when its symbols are 1:
/// `batch * 4` (a dynamic encoder's heads) gives 4, `batch` or `seq + 1` 1.
int64_t constantFactor(const tir::Expr& e) {
  if (const int64_t* c = tir::asConstInt(e)) return *c;
  if (auto* m = e.as<tir::BinaryNode>(); m && m->op == tir::BinOp::Mul) return constantFactor(m->a) * constantFactor(m->b);
  return 1;
}

/// The buffer loads in a statement.
std::vector<const tir::BufferLoadNode*> loadsIn(const tir::Stmt& s) {
  struct Collector : tir::IRVisitor {
    std::vector<const tir::BufferLoadNode*> loads;
    void visit(const tir::BufferLoadNode* op) override {
      loads.push_back(op);
      tir::IRVisitor::visit(op);
    }
  } c;
  c.visitStmt(s);
  return c.loads;
}

/// The stored value when `s` is a single BufferStore.
const tir::BufferStoreNode* singleStore(const tir::Stmt& s) { return s.as<tir::BufferStoreNode>(); }

/// The store of a block body that is one BufferStore, possibly under an `if` without else (a
/// reduction over a window that skips points outside the data, e.g. max pooling); `cond`
/// receives the condition (undefined when there is none).
const tir::BufferStoreNode* guardedStore(const tir::Stmt& s, tir::Expr* cond) {
  *cond = tir::Expr();
  if (auto* ite = s.as<tir::IfThenElseNode>()) {
    if (ite->elseCase.defined()) return nullptr;
    *cond = ite->condition;
    return ite->thenCase.as<tir::BufferStoreNode>();
  }
  return s.as<tir::BufferStoreNode>();
}

bool isReduction(const tir::BlockNode* blk) {
  if (blk->init.defined()) return true;
  for (const auto& iv : blk->iterVars)
    if (iv.iterType != tir::IterType::DataPar) return true;
  return false;
}

/// A spatial block whose value is conditional (`if_then_else` / select, e.g. zero padding) and
/// that a reduction block reads. Inlined, its test would sit in the innermost loop of the
/// reduction and keep that loop from vectorizing, so it stays a buffer of its own.
bool isConditionalProducerOfReduction(tir::Schedule& sch, const tir::BlockRV& b) {
  const tir::BlockNode* blk = sch.get(b);
  const tir::BufferStoreNode* st = singleStore(blk->body);
  if (!st || isReduction(blk)) return false;
  bool conditional = st->value.as<tir::SelectNode>() != nullptr;
  if (auto* call = st->value.as<tir::CallNode>()) conditional |= call->op == "if_then_else";
  if (!conditional) return false;
  for (const tir::BlockRV& c : tir::getConsumers(sch, b))
    if (isReduction(sch.get(c))) return true;
  return false;
}

/// The loops of `b` when each binds exactly its iter var (as createPrimFunc makes them, spatial
/// loops outside reduce loops); empty otherwise.
std::vector<tir::LoopRV> identityLoops(tir::Schedule& sch, const tir::BlockRV& b) {
  std::vector<tir::LoopRV> loops = tir::getLoops(sch, b);
  const tir::BlockNode* blk = sch.get(b);
  const tir::BlockRealizeNode* realize = sch.realizeOf(blk);
  if (!realize || loops.size() != blk->iterVars.size()) return {};
  for (size_t k = 0; k < loops.size(); ++k) {
    const tir::ForNode* loop = sch.get(loops[k]);
    // A loop of one iteration may bind its iter var to the constant 0.
    const int64_t* ext = tir::asConstInt(loop->extent);
    const int64_t* c = tir::asConstInt(realize->iterValues[k]);
    if (ext && *ext == 1 && c && *c == 0) continue;
    auto* v = realize->iterValues[k].as<tir::VarNode>();
    if (!v || v != loop->loopVar.get()) return {};
  }
  return loops;
}

/// The number of leading spatial iter vars when every spatial iter var precedes every reduce one.
size_t leadingSpatial(const tir::BlockNode* blk) {
  size_t n = 0;
  while (n < blk->iterVars.size() && blk->iterVars[n].iterType == tir::IterType::DataPar) ++n;
  for (size_t k = n; k < blk->iterVars.size(); ++k)
    if (blk->iterVars[k].iterType == tir::IterType::DataPar) return 0;
  return n;
}

/// A dense-like reduction `out[.., j] = sum_k a[.., k] * w[j, k]`: one reduce iter var, the last,
/// and it is the innermost index of every operand that uses it while the innermost output index
/// is not, so the output columns do not vectorize but k does.
bool reducesAlongContiguousAxis(const tir::BlockNode* blk) {
  const tir::BufferStoreNode* st = singleStore(blk->body);
  if (!st || !blk->init.defined() || blk->iterVars.size() < 2) return false;
  if (leadingSpatial(blk) != blk->iterVars.size() - 1) return false;
  const tir::Var& k = blk->iterVars.back().var;
  const tir::Var& j = blk->iterVars[blk->iterVars.size() - 2].var;
  bool any = false;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() == st->buffer.get() || ld->indices.empty()) continue;
    for (size_t d = 0; d + 1 < ld->indices.size(); ++d)
      if (tir::usesVar(ld->indices[d], k)) return false;
    auto* last = ld->indices.back().as<tir::VarNode>();
    if (last && last == k.get()) any = true;
    else if (tir::usesVar(ld->indices.back(), k)) return false;
    if (last && last == j.get()) return false;
  }
  return any;
}

/// Whether `e` calls a transcendental function (exp, log, erf, tanh, sigmoid): tens of
/// instructions per element, where inlining into two consumers doubles the work.
bool callsTranscendental(const tir::Expr& e) {
  struct Finder : tir::IRVisitor {
    bool found = false;
    void visit(const tir::CallNode* op) override {
      static const std::set<std::string> costly{"exp", "log", "erf", "tanh", "sigmoid"};
      if (costly.count(op->op)) found = true;
      tir::IRVisitor::visit(op);
    }
  } f;
  f.visitExpr(e);
  return f.found;
}

/// A spatial block that computes a transcendental function (softmax's exp) and that a row
/// reduction (reducesAlongContiguousAxis: the sum of exps) and another block both read. Inlined,
/// each consumer would compute it again (softmax: the exps once for the sum, once for the
/// normalized row); kept, rowFusedSchedule computes it once per row into a row buffer that both
/// read. Inlined after all when no row-fused schedule takes it.
bool isSharedRowProducer(tir::Schedule& sch, const tir::BlockRV& b) {
  const tir::BlockNode* blk = sch.get(b);
  const tir::BufferStoreNode* st = singleStore(blk->body);
  if (!st || isReduction(blk) || !callsTranscendental(st->value)) return false;
  std::vector<tir::BlockRV> consumers = tir::getConsumers(sch, b);
  if (consumers.size() < 2) return false;
  for (const tir::BlockRV& c : consumers)
    if (reducesAlongContiguousAxis(sch.get(c))) return true;
  return false;
}

/// For a reduction block whose innermost spatial loop is not among the parallel ones (a conv's
/// output column): moves that loop below the reduce loops, hoists the init out of them, and
/// vectorizes it, so each reduction step updates a contiguous row of outputs. Leaves the schedule
/// as it was when a step does not apply.
void vectorizeReduction(tir::Schedule& sch, const tir::BlockRV& b, const std::vector<tir::LoopRV>& loops,
                        size_t numSpatial, size_t numReduce) {
  const tir::LoopRV inner = loops[numSpatial - 1];
  const int64_t ext = extentOf(sch, inner);
  const bool symbolic = isSymbolic(sch, inner);
  if (ext < 4) return;
  tir::Schedule saved = sch;
  // A symbolic row (the keys of a dynamic attention's scores, q x k^T over a symbolic sequence):
  // 16-lane chunks of the row, each summed in a local vector over the whole reduction and
  // written once, its last chunk guarded. Summed in place, every step of the reduction loaded
  // and stored the output vector, and a partial chunk's masked store does not forward to the
  // next masked load (at 7 tokens every chunk is partial: 19x the static kernel's time).
  if (symbolic && tir::getConsumers(sch, b).empty()) {
    try {
      auto parts = tir::split(sch, inner, {tir::Value(nullptr), tir::Value(kLanes)});
      std::vector<tir::LoopRV> order{parts[0]};
      order.insert(order.end(), loops.begin() + long(numSpatial), loops.begin() + long(numSpatial + numReduce));
      order.push_back(parts[1]);
      tir::reorder(sch, order);
      tir::BlockRV acc = tir::cacheWrite(sch, b, 0, "local");
      tir::reverseComputeAt(sch, acc, parts[0]);
      tir::BlockRV init = tir::decomposeReduction(sch, b, order[1]);
      tir::vectorize(sch, parts[1]);
      tir::vectorize(sch, tir::getLoops(sch, init).back());
      tir::vectorize(sch, tir::getLoops(sch, acc).back());
      return;
    } catch (const Error&) {
      sch = saved;
    }
  }
  try {
    std::vector<tir::LoopRV> order(loops.begin() + long(numSpatial), loops.begin() + long(numSpatial + numReduce));
    order.push_back(inner);
    tir::reorder(sch, order);
    tir::decomposeReduction(sch, b, order.front());
    if (ext <= 16 && !symbolic) {
      tir::vectorize(sch, inner);
    } else {
      int64_t lanes = symbolic ? 0 : ext % 16 == 0 ? 16 : ext % 8 == 0 ? 8 : ext % 4 == 0 ? 4 : 0;
      if (lanes == 0) lanes = 8;  // a tail iteration (a symbolic extent's too) is guarded by the split
      auto parts = tir::split(sch, inner, {tir::Value(nullptr), tir::Value(lanes)});
      tir::vectorize(sch, parts.back());
    }
  } catch (const Error&) {
    sch = saved;
  }
}

/// The vector lanes of a loop of `k` elements (a reduction summed in partial sums, a row of
/// outputs): 8 when they divide k and 16 do not, else 16 (with a partial last vector when none
/// divide).
int64_t reductionLanes(int64_t k) { return k % kLanes == 0 || k % 8 != 0 ? kLanes : 8; }

/// Dense-like reductions (reducesAlongContiguousAxis) read both operands along k, so k splits
/// into (ko, 16) and the 16 lanes become a spatial axis of a partial-sum block (rfactor) that
/// runs in vector lanes, reduced to the output afterwards. Returns the names of the two blocks
/// when the block was rewritten (left as it was otherwise).
std::vector<std::string> vectorizeDenseReduction(tir::Schedule& sch, const tir::BlockRV& b) {
  const tir::BlockNode* blk = sch.get(b);
  if (!reducesAlongContiguousAxis(blk)) return {};
  std::vector<tir::LoopRV> loops = identityLoops(sch, b);
  if (loops.empty()) return {};
  const int64_t* k = tir::asConstInt(sch.get(loops.back())->extent);
  // Lanes that divide the reduction when some do; else 16 with a partial last vector (a
  // softmax over 197 tokens), guarded, its guard peeled off by loop partitioning.
  if (!k || *k < 2 * kLanes) return {};
  const int64_t lanes = reductionLanes(*k);
  tir::Schedule saved = sch;
  try {
    auto parts = tir::split(sch, loops.back(), {tir::Value(nullptr), tir::Value(lanes)});
    tir::BlockRV rf = tir::rfactor(sch, parts[1], int64_t(blk->iterVars.size() - 1));
    std::vector<tir::LoopRV> rfLoops = tir::getLoops(sch, rf);
    tir::decomposeReduction(sch, rf, rfLoops[rfLoops.size() - 2]);
    tir::vectorize(sch, rfLoops.back());
    return {sch.get(rf)->name, sch.get(b)->name};
  } catch (const Error&) {
    sch = saved;
    return {};
  }
}

/// A reduction of a whole tensor to a scalar (every iter var a reduce one: DynamicQuantizeLinear's
/// max and min, ReduceMax / ReduceSum over all axes, keepdims 0; or, with keepdims 1, leading
/// spatial iter vars of one iteration each, the output's kept axes) whose operands run along its
/// innermost reduce var: its reduce loops fuse into one over the elements in memory order, which
/// splits into (ko, 16) with the 16 lanes a partial-result block (rfactor) in vector lanes,
/// reduced to the scalar afterwards. Without it such a block ran as one scalar loop, each step
/// waiting for the last (int8 BERT's 32 of them: 1.7 G elements/s, a third of the model's time at
/// 2 threads). Returns the three blocks' names (lanes' init, lanes, scalar) when rewritten (else
/// none, the block left as it was).
std::vector<std::string> vectorizeFullReduction(tir::Schedule& sch, const tir::BlockRV& b) {
  const tir::BlockNode* blk = sch.get(b);
  const tir::BufferStoreNode* st = singleStore(blk->body);
  if (!st || !blk->init.defined() || blk->iterVars.empty()) return {};
  // The spatial iter vars (keepdims' axes) lead and run once each.
  const size_t numSpatial = leadingSpatial(blk);
  if (numSpatial == blk->iterVars.size()) return {};
  for (size_t d = 0; d < blk->iterVars.size(); ++d) {
    const tir::IterVar& iv = blk->iterVars[d];
    if (d < numSpatial) {
      const int64_t* e = tir::asConstInt(iv.dom.extent);
      if (iv.iterType != tir::IterType::DataPar || !e || *e != 1) return {};
    } else if (iv.iterType != tir::IterType::CommReduce) {
      return {};
    }
  }
  const tir::Var& k = blk->iterVars.back().var;
  bool any = false;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() == st->buffer.get() || ld->indices.empty()) continue;
    for (size_t d = 0; d + 1 < ld->indices.size(); ++d)
      if (tir::usesVar(ld->indices[d], k)) return {};
    auto* last = ld->indices.back().as<tir::VarNode>();
    if (!last || last != k.get()) return {};
    any = true;
  }
  if (!any) return {};
  std::vector<tir::LoopRV> loops = identityLoops(sch, b);
  if (loops.size() != blk->iterVars.size()) return {};
  loops.erase(loops.begin(), loops.begin() + long(numSpatial));
  int64_t total = 1;
  for (const tir::LoopRV& l : loops) {
    const int64_t* e = tir::asConstInt(sch.get(l)->extent);
    if (!e) return {};
    total *= *e;
  }
  if (total < 4 * kLanes) return {};
  const int64_t lanes = reductionLanes(total);
  tir::Schedule saved = sch;
  try {
    tir::LoopRV all = loops.size() == 1 ? loops[0] : tir::fuse(sch, loops);
    auto parts = tir::split(sch, all, {tir::Value(nullptr), tir::Value(lanes)});
    tir::BlockRV rf = tir::rfactor(sch, parts[1], 0);
    std::vector<tir::LoopRV> rfLoops = tir::getLoops(sch, rf);
    tir::BlockRV init = tir::decomposeReduction(sch, rf, rfLoops[rfLoops.size() - 2]);
    tir::vectorize(sch, rfLoops.back());
    // The lanes' init is one vector store (the generic rule would make its 16 iterations a
    // parallel loop: a thread-pool launch per kernel for nothing).
    tir::vectorize(sch, tir::getLoops(sch, init).back());
    return {sch.get(init)->name, sch.get(rf)->name, sch.get(b)->name};
  } catch (const Error&) {
    sch = saved;
    return {};
  }
}

/// A group of row reductions and the elementwise output that reads them, all along the same
/// last axis (a softmax: the row's max, the sum of exps, the normalized row): the rows run in one
/// parallel loop and every block is computed under it, one row at a time, so a row is read from
/// L1 by each stage instead of each stage sweeping the whole tensor in a parallel loop of its
/// own. Each reduction sums in 16 vector lanes (rfactor, as vectorizeDenseReduction); the
/// output row runs in vector lanes. Returns the names of the blocks it scheduled (none when the
/// group is not so; the schedule is then unchanged).
std::vector<std::string> rowFusedSchedule(tir::Schedule& sch, bool vectorize) {
  if (!vectorize) return {};
  std::vector<tir::BlockRV> blocks = tir::getChildBlocks(sch, tir::getBlock(sch, "root"));
  if (blocks.size() < 2) return {};
  const tir::BlockRV out = blocks.back();
  if (isReduction(sch.get(out))) return {};
  std::vector<tir::LoopRV> loops = identityLoops(sch, out);
  if (loops.size() < 2) return {};
  // A symbolic row (a softmax over a symbolic sequence) splits into 16-lane vectors with a
  // guarded last one; symbolic rows (batch, heads x sequence) fuse into the parallel loop.
  const bool symbolicRow = isSymbolic(sch, loops.back());
  const tir::Expr rowLen = sch.get(loops.back())->extent;
  const int64_t rowLenConst = extentOf(sch, loops.back());
  if (!symbolicRow && rowLenConst < 2 * kLanes) return {};
  bool symbolicRows = false;
  int64_t rows = 1;
  for (size_t k = 0; k + 1 < loops.size(); ++k) {
    symbolicRows = symbolicRows || isSymbolic(sch, loops[k]);
    rows *= extentOf(sch, loops[k]);
  }
  if (!symbolicRows && rows < 2) return {};
  // The row extents, leaving out axes of extent 1 (a reduction's keepdims axis).
  auto rowExtents = [&](const std::vector<tir::LoopRV>& ls) {
    std::vector<tir::Expr> r;
    for (size_t d = 0; d + 1 < ls.size(); ++d) {
      const int64_t* e = tir::asConstInt(sch.get(ls[d])->extent);
      if (!e || *e != 1) r.push_back(sch.get(ls[d])->extent);
    }
    return r;
  };
  auto sameExtents = [](const std::vector<tir::Expr>& a, const std::vector<tir::Expr>& b) {
    if (a.size() != b.size()) return false;
    for (size_t d = 0; d < a.size(); ++d)
      if (!arith::exprEqual(a[d], b[d])) return false;
    return true;
  };
  const std::vector<tir::Expr> outRows = rowExtents(loops);
  std::vector<std::string> names;
  // Per block before the output: whether it is a row reduction (else a row of elementwise
  // values that later blocks read, isSharedRowProducer: softmax's exps).
  std::vector<bool> rowReduction;
  for (size_t k = 0; k + 1 < blocks.size(); ++k) {
    const tir::BlockNode* blk = sch.get(blocks[k]);
    // One reduce iter var, the last, over the row: its spatial iter vars are the rows.
    const bool red = reducesAlongContiguousAxis(blk);
    if (!red && isReduction(blk)) return {};
    std::vector<tir::LoopRV> bl = identityLoops(sch, blocks[k]);
    if (bl.size() < 2 || !arith::exprEqual(sch.get(bl.back())->extent, rowLen) || !sameExtents(rowExtents(bl), outRows))
      return {};
    names.push_back(blk->name);
    rowReduction.push_back(red);
  }
  names.push_back(sch.get(out)->name);
  tir::Schedule saved = sch;
  try {
    const int64_t lanes = symbolicRow ? kLanes : reductionLanes(rowLenConst);
    // Each reduction sums in vector lanes: rfactor needs the block's own loop nest, so first.
    std::vector<std::string> rfNames(blocks.size() - 1);
    for (size_t k = 0; k + 1 < blocks.size(); ++k) {
      if (!rowReduction[k]) continue;
      const tir::BlockRV b = tir::getBlock(sch, names[k]);
      const size_t numIters = sch.get(b)->iterVars.size();
      std::vector<tir::LoopRV> bl = tir::getLoops(sch, b);
      auto kp = tir::split(sch, bl.back(), {tir::Value(nullptr), tir::Value(lanes)});
      tir::BlockRV rf = tir::rfactor(sch, kp[1], int64_t(numIters - 1));
      rfNames[k] = sch.get(rf)->name;
    }
    std::vector<tir::LoopRV> rowLoops(loops.begin(), loops.end() - 1);
    // Fused row loops past the first bind the blocks through `fused // seq`, which is not affine
    // over a symbolic extent: then the first row loop alone runs in parallel (a softmax's batch x
    // heads) and the blocks go under the innermost.
    bool symbolicInner = false;
    for (size_t k = 1; k < rowLoops.size(); ++k) symbolicInner = symbolicInner || isSymbolic(sch, rowLoops[k]);
    tir::LoopRV fused = rowLoops.back();
    if (symbolicInner) {
      tir::parallel(sch, rowLoops[0]);
    } else {
      fused = rowLoops.size() > 1 ? tir::fuse(sch, rowLoops) : rowLoops[0];
      tir::parallel(sch, fused);
    }
    auto parts = tir::split(sch, loops.back(), {tir::Value(nullptr), tir::Value(lanes)});
    tir::vectorize(sch, parts[1]);
    // Consumers first: each producer then covers the one row its consumers read.
    for (size_t k = blocks.size() - 1; k-- > 0;) {
      tir::computeAt(sch, tir::getBlock(sch, names[k]), fused);
      if (rowReduction[k]) tir::computeAt(sch, tir::getBlock(sch, rfNames[k]), fused);
    }
    // A row of elementwise values (one row buffer per thread after compact-buffers) in vector
    // lanes.
    for (size_t k = 0; k + 1 < blocks.size(); ++k) {
      if (rowReduction[k]) continue;
      std::vector<tir::LoopRV> el = tir::getLoops(sch, tir::getBlock(sch, names[k]));
      // The consumers read the row in whole vectors (197 -> 13 x 16): the block covers that,
      // guarded to the row by compute-at's predicate, which loop partitioning peels off.
      const int64_t ext = extentOf(sch, el.back());
      if (!symbolicRow && ext != rowLenConst && ext != (rowLenConst + lanes - 1) / lanes * lanes)
        throw Error("row-fused schedule: unexpected loops of " + names[k]);
      auto ep = tir::split(sch, el.back(), {tir::Value(nullptr), tir::Value(lanes)});
      tir::vectorize(sch, ep[1]);
    }
    for (const std::string& rfName : rfNames) {
      if (rfName.empty()) continue;
      const tir::BlockRV rf = tir::getBlock(sch, rfName);
      const tir::BlockNode* blk = sch.get(rf);
      const tir::BlockRealizeNode* realize = sch.realizeOf(blk);
      std::vector<tir::LoopRV> rl = tir::getLoops(sch, rf);
      // The loops under the row: the reduce one (binds the reduce iter var) and the lane one.
      std::optional<tir::LoopRV> red, lane;
      for (size_t d = 1; d < rl.size(); ++d) {
        const tir::ForNode* l = sch.get(rl[d]);
        if (extentOf(sch, rl[d]) == 1) continue;
        bool reduces = false;
        for (size_t v = 0; v < blk->iterVars.size(); ++v)
          if (blk->iterVars[v].iterType != tir::IterType::DataPar && tir::usesVar(realize->iterValues[v], l->loopVar))
            reduces = true;
        (reduces ? red : lane) = rl[d];
      }
      if (!red || !lane) throw Error("row-fused schedule: unexpected loops of " + rfName);
      tir::reorder(sch, {*red, *lane});
      tir::BlockRV init = tir::decomposeReduction(sch, rf, *red);
      tir::vectorize(sch, tir::getLoops(sch, init).back());
      tir::vectorize(sch, *lane);
      names.push_back(rfName);
      names.push_back(sch.get(init)->name);
    }
    return names;
  } catch (const Error&) {
    sch = saved;
    return {};
  }
}

/// The largest divisor of `n` not above `limit`.
int64_t largestDivisor(int64_t n, int64_t limit) {
  for (int64_t d = std::min(n, limit); d > 1; --d)
    if (n % d == 0) return d;
  return 1;
}

/// A reduction whose innermost spatial iter var (the "lane" axis: a conv's output-channel block
/// in NCHW{k}c, a matmul's output column) is the innermost index of the output and of every
/// operand that uses it, and appears nowhere else (nor in a guard of the update): vectorized,
/// each reduction step loads one operand vector and broadcasts the others' scalars.
bool hasLaneAxis(const tir::BlockNode* blk, size_t numSpatial) {
  tir::Expr cond;
  const tir::BufferStoreNode* st = guardedStore(blk->body, &cond);
  if (!st || !blk->init.defined() || numSpatial < 2 || numSpatial == blk->iterVars.size()) return false;
  const tir::Var& lane = blk->iterVars[numSpatial - 1].var;
  if (cond.defined() && tir::usesVar(cond, lane)) return false;
  auto innermostOnly = [&](const std::vector<tir::Expr>& idx) {
    for (size_t d = 0; d + 1 < idx.size(); ++d)
      if (tir::usesVar(idx[d], lane)) return false;
    if (idx.empty() || !tir::usesVar(idx.back(), lane)) return true;
    auto* v = idx.back().as<tir::VarNode>();
    return v && v == lane.get();
  };
  if (st->indices.empty() || st->indices.back().as<tir::VarNode>() != lane.get()) return false;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body))
    if (!innermostOnly(ld->indices)) return false;
  return true;
}

/// How the operands of a lane-axis reduction (every load but of the output) use spatial iter var
/// `k`: in one that also has the lane axis (a conv's weight), in one without it (the input).
struct OperandUse {
  bool withLane = false;
  bool withoutLane = false;
};
OperandUse operandUse(const tir::BlockNode* blk, size_t k, size_t numSpatial) {
  tir::Expr cond;
  const tir::BufferStoreNode* st = guardedStore(blk->body, &cond);
  const tir::Var& lane = blk->iterVars[numSpatial - 1].var;
  const tir::Var& v = blk->iterVars[k].var;
  OperandUse u;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() == st->buffer.get()) continue;
    bool usesV = false, usesLane = false;
    for (const tir::Expr& i : ld->indices) {
      usesV |= tir::usesVar(i, v);
      usesLane |= tir::usesVar(i, lane);
    }
    if (usesV) (usesLane ? u.withLane : u.withoutLane) = true;
  }
  return u;
}

/// An outer spatial iter var of a lane-axis reduction that only the lane-indexed operands use (a
/// conv's output-channel chunk: only the weight has it): a few of its values in the register
/// tile reuse each broadcast scalar of the other operands. Returns its index, or -1.
int chunkAxis(const tir::BlockNode* blk, size_t numSpatial) {
  for (size_t k = 0; k + 1 < numSpatial; ++k) {
    const OperandUse u = operandUse(blk, k, numSpatial);
    if (u.withLane && !u.withoutLane) return int(k);
  }
  return -1;
}

/// Whether an operand without the lane axis (a conv's input) uses spatial iter var `k`.
bool usedWithoutLane(const tir::BlockNode* blk, size_t k, size_t numSpatial) {
  return operandUse(blk, k, numSpatial).withoutLane;
}

/// The rows of a depthwise conv's register tile (its rows index the lane-axis input, at an offset
/// by the window's reduce var along them: `x * stride + rx`): the accumulators and the input
/// vectors LLVM keeps for the unrolled window columns, R + (R + KW - 1), plus the weight vector,
/// fit the registers. 28 rows of a 3x3 depthwise conv spilled the shared loads to the stack:
/// MnasNet's 32-channel 3x3 at 112x112 took 0.171 ms on one core, at 14 rows 0.098 (ORT 0.073).
/// LOOM_DW_ROWS=N sets the cap (for A/B measurements).
int64_t depthwiseRows(const tir::BlockNode* blk, size_t rowK, size_t numSpatial) {
  static const int64_t forced = [] {
    const char* v = std::getenv("LOOM_DW_ROWS");
    return v && *v ? std::max<int64_t>(1, std::atoll(v)) : int64_t(0);
  }();
  if (forced) return forced;
  tir::Expr cond;
  const tir::BufferStoreNode* st = guardedStore(blk->body, &cond);
  const tir::Var& row = blk->iterVars[rowK].var;
  int64_t window = 1;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() == st->buffer.get()) continue;
    for (const tir::Expr& i : ld->indices) {
      if (!tir::usesVar(i, row)) continue;
      for (const tir::IterVar& iv : blk->iterVars)
        if (iv.iterType != tir::IterType::DataPar && tir::usesVar(i, iv.var))
          if (const int64_t* e = tir::asConstInt(iv.dom.extent)) window = std::max(window, *e);
    }
  }
  return std::max<int64_t>(1, (hostRegisters().count - 1 - (window - 1)) / 2);
}

/// The spatial iter var whose values form the rows of the register tile: the innermost one
/// (other than the lane axis) with more than one value that an operand without the lane axis
/// uses (a conv's output column, a matmul's row), so that each of its values broadcasts one
/// scalar of that operand. The iter var just outside the lane axis when none qualifies.
size_t rowAxis(tir::Schedule& sch, const tir::BlockNode* blk, const std::vector<tir::LoopRV>& loops, size_t numSpatial) {
  for (size_t k = numSpatial - 1; k-- > 0;)
    if (extentOf(sch, loops[k]) >= 2 && usedWithoutLane(blk, k, numSpatial)) return k;
  return numSpatial - 2;
}

/// Which of two symbolic row candidates a lane reduction's register tile takes. A matmul over
/// [seq, batch, K] (a sequence-first encoder) has rows along both; the innermost (batch) is the
/// default, but at batch 1 its tile of 6 rows holds one. When a reduction has such a pair, the
/// default schedule is made twice, once with each, and the kernel picks at run time by the
/// symbols' values (defaultSchedule).
struct RowVariant {
  bool outer = false;              ///< in: take the outer candidate
  tir::Expr innerExt, outerExt;    ///< out: the two candidates' extents, when there are two
};

/// Whether the output of a reduction steps by a symbolic stride along its row axis `rowK`: a
/// dim after the one the row indexes has a symbolic extent (the operand without the lane axis,
/// indexed the same way, then steps by one too).
bool rowStrideSymbolic(const tir::BlockNode* blk, size_t rowK) {
  const tir::BufferStoreNode* st = singleStore(blk->body);
  if (!st) return false;
  const tir::Var& row = blk->iterVars[rowK].var;
  for (size_t p = 0; p < st->indices.size(); ++p) {
    if (!tir::usesVar(st->indices[p], row)) continue;
    for (size_t q = p + 1; q < st->buffer->shape.size(); ++q)
      if (!tir::asConstInt(st->buffer->shape[q])) return true;
    return false;
  }
  return false;
}

/// The rows of a register tile over a symbolic row extent (with two output-channel or lane
/// chunks, as the static build tiles 7 rows): the partial last tile, whose FMAs each sit under a
/// test with the accumulators in memory, then covers at most 6 rows, and none for a feature map
/// of 7, 14, 28 or 56 columns (ResNets at 224) or a sequence of 7. With the budget's 14, a 7-wide
/// map or a 7-token sequence was all partial tile: a dynamic ResNet-18's 7x7 convs took 3x the
/// static build's time, BERT at 1x7 2.3x.
constexpr int64_t kSymbolicRows = 7;

/// The outer row candidate of a reduction whose default row axis `rowK` is symbolic: the next
/// loop outward that the operand without the lane axis uses, when it is symbolic too or static
/// with a full tile's rows (a sequence-first encoder's [seq, batch, K] with a dynamic batch alone:
/// ViT-S's 197 tokens at batch 1 ran in tiles of one row, 2.29 ms a projection against 0.43
/// pinned); else -1.
int outerSymbolicRow(tir::Schedule& sch, const tir::BlockNode* blk, const std::vector<tir::LoopRV>& loops,
                     size_t numSpatial, size_t rowK) {
  if (!isSymbolic(sch, loops[rowK])) return -1;
  for (size_t k = rowK; k-- > 0;) {
    if (!usedWithoutLane(blk, k, numSpatial)) continue;
    return isSymbolic(sch, loops[k]) || extentOf(sch, loops[k]) >= kSymbolicRows ? int(k) : -1;
  }
  return -1;
}

/// The register tile's rows at most for a window reduction with a padding test (a pool) over a
/// symbolic row extent (tileLaneReduction).
constexpr int64_t kPoolSymbolicRows = 8;

/// Output rows per band at least: a band pads its rows plus the kernel's halo, so short bands
/// copy more of the input twice.
constexpr int64_t kMinBandRows = 7;

/// Each band reads all the weights: banding pays while they stay in a core's L2 (1 MiB on the
/// target). ResNet-18 on 2 threads: banding stages 1-2 (weights up to 576 KiB) ran 2-4% faster
/// than banding none and than banding stage 3 too (2.3 MiB).
constexpr int64_t kBandMaxWeightBytes = int64_t(1) << 20;

/// The bytes of the largest operand with the lane axis (a conv's weights), other than `skip` (a
/// depthwise conv's padded input).
int64_t laneOperandBytes(const tir::BlockNode* blk, size_t numSpatial, const tir::BufferNode* skip = nullptr) {
  tir::Expr cond;
  const tir::BufferStoreNode* st = guardedStore(blk->body, &cond);
  const tir::Var& lane = blk->iterVars[numSpatial - 1].var;
  int64_t bytes = 0;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() == st->buffer.get() || ld->buffer.get() == skip) continue;
    bool usesLane = false;
    for (const tir::Expr& i : ld->indices) usesLane |= tir::usesVar(i, lane);
    if (!usesLane) continue;
    int64_t n = ld->buffer->dtype.bytes();
    for (const tir::Expr& d : ld->buffer->shape) {
      const int64_t* e = tir::asConstInt(d);
      n *= e ? *e : 1;
    }
    bytes = std::max(bytes, n);
  }
  return bytes;
}

/// The weights one block of a blocked reduction reads at most: half of a 32 KiB L1 data cache,
/// the other half for the input rows and the accumulators.
constexpr int64_t kL1WeightBytes = int64_t(16) << 10;

/// Whether environment variable `name` (an A/B switch such as LOOM_NO_KBLOCK) is set to something
/// other than empty or "0".
bool switchedOff(const char* name) {
  const char* v = std::getenv(name);
  return v && *v && std::string(v) != "0";
}

/// Reduction blocking pays only once one parallel unit's weights no longer fit L2 (half of a 1
/// MiB L2, the rest for the input rows): streaming them from L2 takes a weight vector per 14
/// FMAs of the register tile, far below L2's bandwidth, while each block of a blocked reduction
/// loads and stores every accumulator once more and moves the epilogue into a pass of its own.
/// With the rule at L1 (16 KiB), ResNeXt-50's 1x1 convs ran 8-12% slower on one AVX-512 core
/// (0.96 against 0.88 ms over 14x14x1024); whole models on one thread, blocking above 16 KiB /
/// above 1 MiB: ResNet-50 35.0-35.6 / 34.0-34.7 ms, DenseNet-121 23.9-24.0 / 22.2-23.4,
/// DeepLab 12.5-12.6 / 11.8-12.1, MobileNet-v2 4.3-4.4 / 4.0-4.1, BERT and the transformer
/// unchanged.
constexpr int64_t kBlockMinUnitBytes = int64_t(512) << 10;

/// LOOM_NO_ODD_CHUNK_TILES=1 keeps a conv with an odd number of output-channel chunks at one
/// chunk per tile (for A/B measurements).
bool oddChunkTilesEnabled() {
  static const bool on = !switchedOff("LOOM_NO_ODD_CHUNK_TILES");
  return on;
}

/// LOOM_NO_LANE_CHUNKS=1 keeps a GEMM's tile at one lane chunk (for A/B measurements).
bool laneChunksEnabled() {
  static const bool on = !switchedOff("LOOM_NO_LANE_CHUNKS");
  return on;
}

/// LOOM_NO_KBLOCK=1 turns reduction blocking off (for A/B measurements of the rule).
bool kBlockingEnabled() {
  static const bool on = !switchedOff("LOOM_NO_KBLOCK");
  return on;
}

/// Weights above this run their column strips outside the row tiles' loops (see tileLaneReduction).
constexpr int64_t kStripOuterWeightBytes = int64_t(2) << 20;

/// LOOM_NO_STRIP_OUTER=1 keeps the row loops outside the weight strips (for A/B measurements).
bool stripOuterEnabled() {
  static const bool on = !switchedOff("LOOM_NO_STRIP_OUTER");
  return on;
}

/// LOOM_NO_SYMBOLIC_ROW_TILE=1 gives symbolic row extents the budget's row tiles and reduction
/// blocking again (for A/B measurements).
bool symbolicRowTilesEnabled() {
  static const bool on = !switchedOff("LOOM_NO_SYMBOLIC_ROW_TILE");
  return on;
}

/// A depthwise conv (its padded input has the lane axis) reads the input through the padding's
/// condition instead of a padded copy: loop partitioning peels the first and last rows and column
/// tiles, so the interior reads the input directly. Each input vector is used by only KH x KW
/// FMAs of one channel block, so the copy cost as much as the conv: MnasNet's 3x3 stride-2
/// conv over 48 channels at 112x112 spent 60% of its 0.077 ms on it (perf); in place 0.041 (ORT
/// 0.042), its other depthwise convs 0.51-0.84x on one core. A conv with many output channels
/// per input vector keeps the copy (it is a small share there). LOOM_NO_DW_PAD_IN_PLACE=1 keeps
/// the copy for depthwise convs too (for A/B measurements).
bool depthwisePadInPlaceEnabled() {
  static const bool on = !switchedOff("LOOM_NO_DW_PAD_IN_PLACE");
  return on;
}

/// The zero-padding producer of a reduction (isConditionalProducerOfReduction), if it has one.
std::optional<tir::BlockRV> paddingProducer(tir::Schedule& sch, const tir::BlockRV& b) {
  for (const tir::BlockRV& p : tir::getProducers(sch, b))
    if (isConditionalProducerOfReduction(sch, p)) return p;
  return std::nullopt;
}

/// Whether the reduction's loads of the padded buffer `padded` use spatial iter var `k`.
bool usedByPadded(const tir::BlockNode* blk, size_t k, const tir::BufferNode* padded) {
  const tir::Var& v = blk->iterVars[k].var;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body))
    if (ld->buffer.get() == padded)
      for (const tir::Expr& i : ld->indices)
        if (tir::usesVar(i, v)) return true;
  return false;
}

/// The buffer a padding producer writes.
const tir::BufferNode* paddedBuffer(tir::Schedule& sch, const tir::BlockRV& pad) {
  const tir::BufferStoreNode* st = singleStore(sch.get(pad)->body);
  return st ? st->buffer.get() : nullptr;
}

/// The outer spatial iter var a padded reduction's rows are banded along: of those the padded
/// operand uses (a conv's batch and output row; a depthwise conv's, whose padded input also has
/// the lane axis, its channel block too), the one with the most values, when they split into at
/// least two bands of kMinBandRows or more. Returns its index and the band count, or -1.
std::pair<int, int64_t> bandAxis(tir::Schedule& sch, const tir::BlockNode* blk, const std::vector<tir::LoopRV>& loops,
                                 size_t numSpatial, size_t rowK, int chunkK, const tir::BufferNode* padded) {
  // A depthwise conv's padded input has the lane axis: its channel block (which the weights use
  // too) is no band axis but runs outside the bands (tileLaneReduction), one block at a time.
  const tir::Var& lane = blk->iterVars[numSpatial - 1].var;
  bool paddedHasLane = false;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body))
    if (ld->buffer.get() == padded)
      for (const tir::Expr& i : ld->indices) paddedHasLane |= tir::usesVar(i, lane);
  auto usedByWeights = [&](size_t k) {
    const tir::Var& v = blk->iterVars[k].var;
    tir::Expr cond;
    const tir::BufferStoreNode* st = guardedStore(blk->body, &cond);
    for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
      if (ld->buffer.get() == padded || ld->buffer.get() == st->buffer.get()) continue;
      for (const tir::Expr& i : ld->indices)
        if (tir::usesVar(i, v)) return true;
    }
    return false;
  };
  int64_t blocks = 1;
  int best = -1;
  int64_t bestExt = 0;
  for (size_t k = 0; k + 1 < numSpatial; ++k) {
    if (k == rowK || int(k) == chunkK || !usedByPadded(blk, k, padded)) continue;
    if (paddedHasLane && usedByWeights(k)) {
      if (const int64_t* e = tir::asConstInt(sch.get(loops[k])->extent)) blocks *= *e;
      continue;
    }
    // Bands of a symbolic extent would need a band count known at compile time. A symbolic loop
    // outside every candidate (a dynamic model's batch) joins the parallel loop in front of the
    // bands (its fused parts bind affinely: the bands inside it are static); one inside a
    // candidate leaves the conv unbanded. (Unbanded, a ResNet-18 exported with a dynamic batch
    // padded each strided conv's whole input in a pass of its own: layer 2's 3x3 stride-2 conv
    // 0.43 ms against 0.27 banded.)
    if (isSymbolic(sch, loops[k])) {
      if (best >= 0) return {-1, 1};
      continue;
    }
    const int64_t ext = *tir::asConstInt(sch.get(loops[k])->extent);
    if (ext > bestExt) best = int(k), bestExt = ext;
  }
  if (best < 0) return {-1, 1};
  if (laneOperandBytes(blk, numSpatial, padded) > kBandMaxWeightBytes) return {-1, 1};
  int64_t rows = kMinBandRows;
  while (rows <= bestExt && bestExt % rows != 0) ++rows;
  // Too few rows for bands: a depthwise conv with several channel blocks pads one block's whole
  // image at a time (one band).
  if (rows > bestExt / 2) return paddedHasLane && blocks >= 2 ? std::pair<int, int64_t>{best, 1} : std::pair<int, int64_t>{-1, 1};
  return {best, bestExt / rows};
}

/// Rows of a register tile of byte dot products on AVX2 (see tileLaneReduction): 4;
/// LOOM_DOT4_ROWS=N sets it, 0 turns the rule off (for A/B measurements).
int64_t dot4Rows() {
  static const int64_t rows = [] {
    const char* v = std::getenv("LOOM_DOT4_ROWS");
    return v ? std::max<int64_t>(0, std::atoll(v)) : int64_t(4);
  }();
  return rows;
}

/// Whether the block's update calls a byte dot product intrinsic (dot4_u8s8, dot4_u8s8_pairs16).
bool callsDot4(const tir::BlockNode* blk) {
  bool found = false;
  tir::postOrderVisit(blk->body, [&](const tir::IRNode* n) {
    if (n->nodeKind == tir::NodeKind::Call && static_cast<const tir::CallNode*>(n)->op.rfind("dot4_u8s8", 0) == 0)
      found = true;
  });
  return found;
}

/// The buffer a reduction reads with the lane axis in its last index (a matmul's (K, N) weight, a
/// conv's blocked weights), if it is the only such buffer besides the output.
const tir::BufferNode* laneOperand(const tir::BlockNode* blk, size_t numSpatial) {
  tir::Expr cond;
  const tir::BufferStoreNode* st = guardedStore(blk->body, &cond);
  if (!st) return nullptr;
  const tir::Var& lane = blk->iterVars[numSpatial - 1].var;
  const tir::BufferNode* operand = nullptr;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() == st->buffer.get() || ld->indices.empty()) continue;
    if (!tir::usesVar(ld->indices.back(), lane)) continue;
    if (operand && operand != ld->buffer.get()) return nullptr;
    operand = ld->buffer.get();
  }
  return operand;
}

/// The length of the lane operand's rows (its last dimension; 0 when unknown): longer than the
/// vector in a GEMM's (K, N) weight, one vector in a conv's blocked weights.
int64_t laneOperandRow(const tir::BufferNode* operand) {
  if (!operand || operand->shape.empty()) return 0;
  const int64_t* last = tir::asConstInt(operand->shape.back());
  return last ? *last : 0;
}

/// Iterations the parallel loop outside a register tile needs; with fewer, the row tiles join it.
constexpr int64_t kMinParallelWork = 8;

/// Row tiles that must share a panel before packing it pays: the copy reads the panel once more.
constexpr int64_t kMinPackedRowTiles = 4;

/// A GEMM's packed B panel (MLAS, TVM's dense_pack): when the lane-indexed operand's rows are
/// longer than the vector (a matmul's (K, N) weight, N > 16; a conv's blocked weights end in one
/// vector and are packed already), each reduction step of a tile would load its vectors from a new
/// cache line, K lines apart. The panel the tiles of one parallel iteration read (K x lanes) is
/// copied into a contiguous buffer right inside the lane-chunk loop (compact-buffers shrinks it to
/// the panel, one per thread), and every row tile streams it. BERT's 128 x 256 x 1024 dense on
/// one AVX2 core: 55 -> 77 GFLOP/s with the 6-row tile.
void packLanePanel(tir::Schedule& sch, const tir::BlockRV& b, size_t numSpatial, int64_t lanes,
                   const tir::LoopRV& at, int64_t rowTiles) {
  if (rowTiles < kMinPackedRowTiles) return;
  const tir::BlockNode* cur = sch.get(b);
  const tir::BufferNode* operand = laneOperand(cur, numSpatial);
  const int64_t row = laneOperandRow(operand);
  if (!operand || row <= lanes || row % lanes != 0) return;
  int64_t readIndex = -1;
  for (size_t r = 0; r < cur->reads.size(); ++r)
    if (cur->reads[r].buffer.get() == operand) readIndex = int64_t(r);
  if (readIndex < 0) return;
  tir::Schedule saved = sch;
  try {
    tir::BlockRV pack = tir::cacheRead(sch, b, readIndex, "global");
    tir::computeAt(sch, pack, at, /*preserveUnitLoops=*/true);
    std::vector<tir::LoopRV> pl = tir::getLoops(sch, pack);
    const int64_t* ext = tir::asConstInt(sch.get(pl.back())->extent);
    if (!ext || *ext % lanes != 0) throw Error("panel width is not whole vectors");
    auto parts = tir::split(sch, pl.back(), {tir::Value(nullptr), tir::Value(lanes)});
    tir::vectorize(sch, parts[1]);
  } catch (const Error&) {
    sch = saved;
  }
}

/// An L1 data cache's set period: lines 4 KiB apart share a set (64 sets of 64-byte lines, in the
/// 32 KiB 8-way and the 48 KiB 12-way L1s of AMD Zen 3-5 and Intel cores alike).
constexpr int64_t kL1SetPeriodBytes = 4096;

/// The rows of a register tile that may share one L1 set: each reduction step reads one line of
/// every row of the operand without the lane axis, and the lane operand's panel and the
/// accumulator tile need ways too.
constexpr int64_t kRowsPerL1Set = 8;

/// The most rows of a GEMM's register tile whose rows of the operand without the lane axis (a
/// matmul's (M, K) input, rows K floats apart) do not crowd one L1 set: rows whose stride is a
/// multiple of 4 KiB (K = 1024) all map to the same set, and 16 of them (an AVX-512 tile) exceed
/// its ways, so every broadcast load missed L1 (BERT's 128 x 1024 x 256 dense: 113 GFLOP/s with
/// 16 rows, 178 with 10). No limit (0) when the rows spread over enough sets.
int64_t rowsWithoutSetConflicts(const tir::BlockNode* blk, size_t rowK, size_t numSpatial) {
  tir::Expr cond;
  const tir::BufferStoreNode* st = guardedStore(blk->body, &cond);
  const tir::Var& lane = blk->iterVars[numSpatial - 1].var;
  const tir::Var& row = blk->iterVars[rowK].var;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() == st->buffer.get() || ld->indices.size() < 2) continue;
    bool usesRow = false, usesLane = false;
    for (const tir::Expr& i : ld->indices) {
      usesRow |= tir::usesVar(i, row);
      usesLane |= tir::usesVar(i, lane);
    }
    // The row indexes the second-to-last axis: rows are one last-axis extent apart.
    if (!usesRow || usesLane || !tir::usesVar(ld->indices[ld->indices.size() - 2], row)) continue;
    const int64_t* last = tir::asConstInt(ld->buffer->shape.back());
    if (!last) return 0;
    const int64_t stride = *last * ld->buffer->dtype.bytes();
    const int64_t g = std::gcd(stride, kL1SetPeriodBytes);
    // Row starts fall on kL1SetPeriodBytes / g distinct offsets in the period; distinct sets
    // while they are a line or more apart.
    if (g < 64) return 0;
    return kRowsPerL1Set * (kL1SetPeriodBytes / g);
  }
  return 0;
}

/// TVM's x86 conv2d_NCHWc schedule, for any reduction with a lane axis (hasLaneAxis): the lane
/// axis in vector lanes (split by 16 when longer), the row axis (rowAxis: a conv's output column,
/// a matmul's row) in a register block of up to 28 rows (a conv: up to 14 rows of two or more
/// output-channel chunks, chunkAxis), the reduction between the tile's loops and the register block,
/// the init hoisted out of the reduction, the outer spatial loops fused and parallel.
/// A reduction over a zero-padded input (a conv with padding) is split into bands of output
/// rows (bandAxis) instead: the bands run in parallel, and each pads just the input rows it reads
/// (compute_at), so no pass over the whole padded input precedes the reduction and each thread
/// reads the rows it padded itself.
/// The group's epilogue (the one spatial consumer left after inlining: bias, residual add,
/// relu) runs under the tile, right after the tile is complete; a reduction writing the group's
/// output gets a local accumulator tile (cache_write) instead. Returns the names of the blocks it
/// scheduled (empty, the schedule unchanged, when it does not apply).
std::vector<std::string> tileLaneReduction(tir::Schedule& sch, const tir::BlockRV& b, bool vectorize, RowVariant* rv) {
  const tir::BlockNode* blk = sch.get(b);
  size_t numSpatial = leadingSpatial(blk);
  if (!vectorize || !hasLaneAxis(blk, numSpatial)) return {};
  std::vector<tir::LoopRV> loops = identityLoops(sch, b);
  if (loops.empty()) return {};
  if (isSymbolic(sch, loops[numSpatial - 1])) return {};
  const int64_t laneExt = *tir::asConstInt(sch.get(loops[numSpatial - 1])->extent);
  // A lane extent that is no multiple of 8 (197 keys of a ViT's attention) takes full 16-lane
  // chunks and a guarded last one: loop partitioning peels it off, and its loads and stores
  // become masked ones.
  int64_t lanes = laneExt <= kLanes ? laneExt : laneExt % kLanes == 0 ? kLanes : laneExt % 8 == 0 ? 8 : kLanes;
  if (lanes < 4) return {};
  size_t rowK = rowAxis(sch, blk, loops, numSpatial);
  // A static matmul over [seq, batch, K] (a sequence-first encoder at batch 2) has rows along
  // both seq and batch; the innermost (batch) gave tiles of 2 rows, one weight load per 2 FMAs:
  // 2x the time of tiles along seq (BERT's 768 -> 256 projection at 2x200: 1.47 ms against 0.73
  // for the dynamic build, which picks the longer at run time). A matmul (one reduce loop) whose
  // innermost row extent is below a full tile takes a longer static row axis further out.
  if (loops.size() == numSpatial + 1 && !isSymbolic(sch, loops[rowK]) && extentOf(sch, loops[rowK]) < kSymbolicRows) {
    for (size_t k = rowK; k-- > 0;)
      if (!isSymbolic(sch, loops[k]) && extentOf(sch, loops[k]) >= kSymbolicRows && usedWithoutLane(blk, k, numSpatial)) {
        rowK = k;
        break;
      }
  }
  // Not for a conv (several reduce loops: channels and the window): its candidates are the
  // output's height and width, and both tilings doubled the code of every conv over a symbolic
  // image (half of a dynamic ResNet-18's LLVM time) for images taller than wide only.
  if (rv && loops.size() == numSpatial + 1) {
    const int outerK = outerSymbolicRow(sch, blk, loops, numSpatial, rowK);
    if (outerK >= 0) {
      rv->innerExt = sch.get(loops[rowK])->extent;
      rv->outerExt = sch.get(loops[size_t(outerK)])->extent;
      if (rv->outer) rowK = size_t(outerK);
    }
  }
  const int64_t rowExt = extentOf(sch, loops[rowK]);
  const bool rowSymbolic = isSymbolic(sch, loops[rowK]);
  // How the operands read the row axis (each a walk over the block's body, taken once here).
  const bool rowWithLane = operandUse(blk, rowK, numSpatial).withLane;
  const bool rowWithoutLane = usedWithoutLane(blk, rowK, numSpatial);
  // The register tile: a block of rows times a few output-channel chunks (chunkAxis) when the
  // rows broadcast an operand (a conv's input) to the chunks' weight vectors. Two chunks of 14
  // rows take 16 loads per 28 FMAs where one chunk of 28 rows takes 29 (stage-1 ResNet conv:
  // 6% faster); the accumulators and the chunks' weight vectors fill at most 30 registers.
  int64_t maxRows = std::max<int64_t>(1, accumulatorRegisters() * hostRegisters().lanes / lanes);
  const int64_t maxRowsOfRegisters = maxRows;
  // Rows a symbolic stride apart (a sequence-first [197, batch, 384] tiled along the tokens):
  // each row's address is a register of its own; with 14 rows the tile spilled accumulators and
  // addresses (ViT-S's QKV projection over a dynamic batch 1.20 ms a call against 0.41 pinned,
  // 0.41 at 7 rows; a local accumulator tile did not help).
  if (!rowSymbolic && rowStrideSymbolic(blk, rowK)) maxRows = std::min(maxRows, kSymbolicRows);
  // A GEMM's rows must not crowd one L1 set (rowsWithoutSetConflicts).
  if (laneOperandRow(laneOperand(blk, numSpatial)) > lanes)
    if (const int64_t cap = rowsWithoutSetConflicts(blk, rowK, numSpatial); cap > 0) maxRows = std::min(maxRows, cap);
  // A depthwise conv's rows (output columns) index the input that also has the lane axis: LLVM
  // unrolls the window's columns and keeps each loaded input vector for the kernel columns that
  // reuse it, so a tile of R rows holds R accumulators and R + KW - 1 inputs.
  if (registersPerRow(lanes) == 1 && rowWithLane && !rowWithoutLane)
    maxRows = std::min(maxRows, depthwiseRows(blk, rowK, numSpatial));
  // A conv over a few input channels (an RGB stem: the innermost reduction over 3 lanes of
  // NCHW3c, unrolled): LLVM unrolls the window's columns around it too and keeps the broadcast
  // inputs that neighbouring kernel columns share (x * stride + kx), so the tile takes half the
  // accumulator registers. Inception-v3's 3 -> 32 3x3 stride-2 stem over a 149-wide map spilled
  // at 14 rows x 2 chunks: 0.58 ms on one core, 0.17 at 7 x 2 (ORT 0.30); ViT-S's 16x16
  // patches 0.52 -> 0.49. Not for a padded stem, which reads its band's padded copy: those of
  // DeepLab, EfficientNet-v2-S and the UNet ran 5-8% slower at half the tile. LOOM_NO_STEM_HALF_TILE=1
  // keeps the full budget (for A/B measurements).
  if (registersPerRow(lanes) == 1 && !switchedOff("LOOM_NO_STEM_HALF_TILE") && loops.size() > numSpatial && !isSymbolic(sch, loops.back()) &&
      extentOf(sch, loops.back()) < 4 && rowWithoutLane && !paddingProducer(sch, b))
    maxRows = std::min(maxRows, accumulatorRegisters() / 2);
  int chunkK = lanes == kLanes && rowWithoutLane ? chunkAxis(blk, numSpatial) : -1;
  if (chunkK >= 0 && isSymbolic(sch, loops[size_t(chunkK)])) chunkK = -1;
  const int64_t chunkExt = chunkK >= 0 ? *tir::asConstInt(sch.get(loops[size_t(chunkK)])->extent) : 1;
  int64_t rowBlock = largestDivisor(rowExt, chunkExt % 2 == 0 ? maxRows / 2 : maxRows);
  // The most output-channel chunks (up to 4, dividing chunkExt) whose accumulators for `rows`
  // rows and weight vectors fit the registers.
  auto chunksFor = [&](int64_t rows) {
    int64_t best = 1;
    for (int64_t c = 2; c <= 4; ++c)
      if (chunkExt % c == 0 && c * (rows + 1) * registersPerRow(lanes) <= hostRegisters().count - 2) best = c;
    return best;
  };
  int64_t chunk = chunksFor(rowBlock);
  // Fewer registers (AVX2): no room for two chunks, so one chunk of more rows; a row extent just
  // above the budget is taken whole when its accumulators, the weight vectors and a broadcast fit
  // the registers. Seven columns of 16 lanes do not (14 + 2 + 1 of 16 ymm: LLVM spilled the
  // tile); they get a balanced partial tile (4 + 3) below. ResNet-18 on one AVX2 core: 43 -> 31
  // ms, EfficientNet-B0 22 -> 18 ms.
  if (registersPerRow(lanes) > 1 && (chunk == 1 || rowBlock == 1)) {
    if (chunkExt % 2 == 0) rowBlock = largestDivisor(rowExt, maxRows);
    if (rowBlock * 2 < maxRows && rowExt <= maxRows + 1 &&
        (rowExt + 1) * registersPerRow(lanes) + 1 <= hostRegisters().count)
      rowBlock = rowExt;
    chunk = 1;
  }
  // A row extent without a divisor near the budget (197 tokens of a ViT: a prime) is tiled by
  // the budget all the same; the last tile is partial, guarded by the split, and loop
  // partitioning peels it off so the full tiles run without the guard. One row per tile would
  // stream the whole weight matrix once per row.
  // Byte dot products (tir intrinsic dot4_u8s8*, codegen/Dot4.h) on AVX2 take a temporary and
  // two instructions per accumulator: one chunk of at most 4 rows keeps the tile in registers
  // (two chunks of 2 rows spilled accumulators in int8 ResNet-18).
  const int64_t kDot4Rows = dot4Rows();
  const bool dot4 = kDot4Rows > 0 && registersPerRow(lanes) > 1 && callsDot4(blk);
  if (dot4) {
    chunk = 1;
    rowBlock = largestDivisor(rowExt, kDot4Rows);
  }
  // One output row (a classifier head at batch 1: a GEMV over a (K, N) weight): the tile is a
  // few lane chunks side by side instead of rows, so each step of the reduction reads a strip of
  // several contiguous vectors of a weight row (one broadcast of the input shared by them)
  // rather than one vector from rows N floats apart.
  int64_t gemvChunks = 1;
  if (rowExt == 1 && chunkK < 0 && !dot4 && !rowSymbolic && laneExt > lanes && laneExt % lanes == 0 &&
      !rowWithLane) {
    const int64_t regs = registersPerRow(lanes);
    gemvChunks = largestDivisor(laneExt / lanes, std::max<int64_t>(1, (hostRegisters().count / 2) / regs));
  }
  // A GEMM's tile with one register per vector (AVX-512): two lane chunks side by side, each
  // broadcast of a row shared by two FMAs. Up to 14 rows x 2 chunks take 16 loads per 28 FMAs
  // where 16 rows of one chunk (the L1-set cap of a row stride that is a multiple of 2 KiB) take
  // 17 per 16. The weight panel is then two chunks wide (packLanePanel).
  int64_t laneChunks = 1;
  const int64_t laneChunkRows = std::min(maxRowsOfRegisters / 2, maxRows);
  if (gemvChunks == 1 && rowExt > 1 && chunkK < 0 && !dot4 && registersPerRow(lanes) == 1 && lanes == kLanes &&
      laneExt % (2 * lanes) == 0 && !rowWithLane && laneChunksEnabled()) {
    laneChunks = 2;
    rowBlock = largestDivisor(rowExt, laneChunkRows);
  }
  // An odd number of output-channel chunks (a 1000-class conv head: 63 blocks of 16; 15, 9, 7, 5
  // or 3 blocks of 240, 144, 112, 80 or 48 channels) leaves two chunks no divisor, and the tile
  // was one chunk of up to 28 rows, one load per FMA. With one register per vector (AVX-512) the
  // tile is the chunk count that divides the chunks and the rows (balanced tiles, a partial last
  // one) with the fewest loads per FMA: SqueezeNet's 512 -> 1000 over 13x13 as 3 chunks x 7 + 6
  // rows, 10 loads per 21 FMAs, 0.87 -> 0.75 ms on one core (ORT 0.75).
  bool chosenTile = false;
  if (chunkK >= 0 && chunk == 1 && chunkExt > 1 && !dot4 && registersPerRow(lanes) == 1 && !rowSymbolic &&
      gemvChunks == 1 && oddChunkTilesEnabled()) {
    double best = double(rowBlock + 1) / double(rowBlock);
    for (int64_t c = 2; c <= 4; ++c) {
      if (chunkExt % c != 0) continue;
      const int64_t rmax = std::min(maxRows, (hostRegisters().count - 2) / c - 1);
      if (rmax < 1) continue;
      const int64_t tiles = (rowExt + rmax - 1) / rmax, r = (rowExt + tiles - 1) / tiles;
      const double cost = double(r + c) / double(r * c);
      if (cost < best - 1e-9) best = cost, chunk = c, rowBlock = r, chosenTile = true;
    }
  }
  int64_t budgetRows = dot4                ? kDot4Rows
                       : laneChunks > 1    ? laneChunkRows
                       : chunk > 1         ? maxRows / 2
                                           : maxRows;
  // A window that skips points outside a symbolic image (a max pool's padding) stays a test per
  // row of the tile, and loop partitioning peels the window's first and last rows and columns
  // for each tile (first, full and partial last): 28 rows made a dynamic ResNet-18's pool 80
  // thousand lines of LLVM IR, 3 s to compile. Its rows are cheap (no weights to share).
  tir::Expr window;
  if (rowSymbolic && guardedStore(blk->body, &window) && window.defined()) budgetRows = std::min<int64_t>(budgetRows, kPoolSymbolicRows);
  // A symbolic row extent always gets full tiles (of the budget, at most kSymbolicRows) and a
  // guarded partial last one.
  // AVX2 (two registers per 16-lane row): a divisor well under the budget (4 rows of 128
  // tokens, 2 of a 14-wide feature map where 6 fit) leaves accumulator registers idle, and each
  // row's weight loads are shared by fewer FMAs; the budget with a peeled partial last tile runs
  // more FMAs per load.
  // Only a GEMM's: a conv's rows are output columns, whose partial tiles measured slower
  // (DenseNet, RegNet on one thread).
  const bool fewRows = registersPerRow(lanes) > 1 && chunk == 1 && !dot4 && rowBlock * 4 < budgetRows * 3 &&
                       laneOperandRow(laneOperand(blk, numSpatial)) > lanes;
  // A symbolic row extent (a conv's output width over a symbolic image, a matmul's sequence or
  // batch): tiles of kSymbolicRows rows, without reduction blocking (below).
  // With output-channel chunks, a divisor of exactly half the budget (7 of 14: a 147- or 35-wide
  // map, Winograd's 49 tiles) keeps its full tiles: the balanced partial tiles of 14 rows ran
  // slower, one core: Inception-v3's 32 -> 32 3x3 at 147x147 2.7-4.8 ms (spilling) against 1.6
  // with 7 rows, ResNet-18/34/50's and GoogLeNet's Winograd products 0.82-0.91x, Inception's
  // 35x35 convs 0.86-0.90x. (Pools and one-chunk tiles keep the rule: their avg pools ran 10%
  // slower with it.)
  const bool symbolicTile = rowSymbolic && symbolicRowTilesEnabled();
  const bool partialTile = chosenTile ? rowExt % rowBlock != 0 :
      budgetRows > 1 && (rowSymbolic || (rowExt > budgetRows && ((chunk > 1 ? rowBlock * 2 < budgetRows : rowBlock * 2 <= budgetRows) || fewRows)));
  if (partialTile && !chosenTile) {
    // Balanced: as few tiles as the budget allows, of equal rows (7 -> 4 + 3, 14 -> 5 + 5 + 4)
    // rather than full ones and a short last one (6 + 1, 6 + 6 + 2).
    rowBlock = budgetRows;
    if (!rowSymbolic) {
      const int64_t tilesNeeded = (rowExt + budgetRows - 1) / budgetRows;
      rowBlock = (rowExt + tilesNeeded - 1) / tilesNeeded;
    } else if (symbolicTile) {
      rowBlock = std::min(budgetRows, kSymbolicRows);
    }
    if (chunk > 1) chunk = chunksFor(rowBlock);
  }

  tir::Schedule saved = sch;
  try {
    std::vector<std::string> names{blk->name};
    // The consumer that becomes the tile's epilogue, or a local accumulator tile.
    std::optional<tir::BlockRV> epilogue;
    std::vector<tir::BlockRV> consumers = tir::getConsumers(sch, b);
    if (consumers.empty()) {
      epilogue = tir::cacheWrite(sch, b, 0, "local");
    } else if (consumers.size() == 1 && !isReduction(sch.get(consumers[0])) &&
               !topi::nn::isWinogradTransform(sch.get(consumers[0]))) {
      epilogue = consumers[0];
    }
    loops = tir::getLoops(sch, b);
    std::optional<tir::BlockRV> pad = paddingProducer(sch, b);
    const tir::BufferNode* padded = pad ? paddedBuffer(sch, *pad) : nullptr;
    const auto [bandK, bands] =
        pad ? bandAxis(sch, blk, loops, numSpatial, rowK, chunkK, padded) : std::pair<int, int64_t>{-1, 1};
    // Banded: the padded input's loops before the band axis (a batch; a depthwise conv's channel
    // block, so each band pads the rows of one block) and the band loop, outermost and parallel.
    std::vector<tir::LoopRV> bandPar;
    std::vector<tir::LoopRV> outer;
    std::optional<tir::LoopRV> chunkInner;
    // The row block, the chunk count and the band rows are sampled tiles whose decisions are the
    // defaults: the trace is then a design the tuner can mutate (other tiles and bands).
    auto sampledSplit = [&](const tir::LoopRV& loop, int64_t inner, int64_t maxInner) {
      const int64_t ext = *tir::asConstInt(sch.get(loop)->extent);
      std::vector<tir::ExprRV> f =
          tir::samplePerfectTile(sch, loop, 2, std::max(inner, maxInner), std::vector<int64_t>{ext / inner, inner});
      return tir::split(sch, loop, std::vector<tir::Value>(f.begin(), f.end()));
    };
    // Outer loops that only the lane-indexed operand (a conv's weights) uses, by position in
    // `outer`: the reduction is blocked inside them (kBlock below).
    std::vector<bool> weightOnly;
    // Whether the loop's tiles read other weights (Winograd's batched products index the weights
    // by the tile position too): then no block of weights is shared by the tiles.
    bool tilesShareWeights = !rowWithLane;
    auto pushOuter = [&](const tir::LoopRV& l, bool w) {
      outer.push_back(l);
      weightOnly.push_back(w);
    };
    for (size_t k = 0; k + 1 < numSpatial; ++k) {
      if (k == rowK) continue;
      if (bandK >= 0 && int(k) < bandK && usedByPadded(blk, k, padded)) {
        bandPar.push_back(loops[k]);
      } else if (int(k) == bandK) {
        const int64_t ext = *tir::asConstInt(sch.get(loops[k])->extent);
        auto parts = sampledSplit(loops[k], ext / bands, ext);
        bandPar.push_back(parts[0]);
        pushOuter(parts[1], false);
      } else if (int(k) == chunkK && chunk > 1) {
        auto parts = sampledSplit(loops[k], chunk, 4);
        pushOuter(parts[0], true);
        chunkInner = parts[1];
      } else {
        const OperandUse u = operandUse(blk, k, numSpatial);
        pushOuter(loops[k], u.withLane && !u.withoutLane);
        if (u.withLane && u.withoutLane) tilesShareWeights = false;
      }
    }
    std::vector<tir::LoopRV> reduce(loops.begin() + long(numSpatial), loops.end());
    tir::LoopRV laneInner = loops[numSpatial - 1];
    // The position in `outer` of the lane chunk loop whose last chunk is partial (below).
    std::optional<size_t> partialChunk;
    if (lanes != laneExt) {
      auto parts = tir::split(sch, laneInner, {tir::Value(nullptr), tir::Value(lanes)});
      if (laneExt % lanes != 0) partialChunk = outer.size();
      if (const int64_t tileChunks = std::max(gemvChunks, laneChunks); tileChunks > 1) {
        auto c = tir::split(sch, parts[0], {tir::Value(nullptr), tir::Value(tileChunks)});
        pushOuter(c[0], true);
        chunkInner = c[1];
      } else {
        pushOuter(parts[0], true);
      }
      laneInner = parts[1];
    }
    tir::LoopRV rowLoop = loops[rowK];
    std::optional<tir::LoopRV> rowInner;
    if (partialTile && !rowSymbolic) {
      // A sampled row count (the default's decision among 2 .. the budget): the trace stays a
      // design the tuner can mutate, as with the perfect tiles.
      std::vector<int64_t> rowCounts;
      for (int64_t r = 2; r <= std::max(budgetRows, rowBlock); ++r) rowCounts.push_back(r);
      const auto at = std::find(rowCounts.begin(), rowCounts.end(), rowBlock);
      tir::ExprRV rows = tir::sampleCategorical(sch, rowCounts, std::vector<double>(rowCounts.size(), 1.0 / double(rowCounts.size())),
                                                int64_t(at - rowCounts.begin()));
      auto parts = tir::split(sch, rowLoop, {tir::Value(nullptr), tir::Value(rows)});
      rowLoop = parts[0];
      rowInner = parts[1];
    } else if (partialTile) {
      auto parts = tir::split(sch, rowLoop, {tir::Value(nullptr), tir::Value(rowBlock)});
      rowLoop = parts[0];
      rowInner = parts[1];
    } else if (rowBlock > 1) {
      auto parts = sampledSplit(rowLoop, rowBlock, std::min<int64_t>(rowExt, std::max<int64_t>(maxRows, rowBlock)));
      rowLoop = parts[0];
      rowInner = parts[1];
    }
    pushOuter(rowLoop, false);
    // Symbolic extents (a dynamic model's batch and image size): a fused loop binds its parts
    // affinely only when every part inside the first is static (`fused // 4`, not `fused // H`).
    // The last symbolic loop outside the tile (the output rows) leads the parallel loop, fused
    // with the static ones (output-channel chunks); other symbolic loops (the batch) run serially
    // outside it.
    size_t serialOuter = 0;
    {
      std::vector<size_t> sym, stat;
      for (size_t k = 0; k + 1 < outer.size(); ++k) (isSymbolic(sch, outer[k]) ? sym : stat).push_back(k);
      if (!sym.empty()) {
        std::vector<size_t> perm(sym.begin(), sym.end());
        perm.insert(perm.end(), stat.begin(), stat.end());
        std::vector<tir::LoopRV> o2;
        std::vector<bool> w2;
        for (size_t k : perm) o2.push_back(outer[k]), w2.push_back(weightOnly[k]);
        o2.push_back(outer.back());
        w2.push_back(weightOnly.back());
        outer = o2;
        weightOnly = w2;
        serialOuter = sym.size() - 1;
        // The partial lane chunk keeps its own loop (static, so among the ones after the
        // symbolic): fused into the parallel loop its guard stayed on every chunk, as masked
        // loads and stores (a ViT's 197x197 attention scores over a dynamic batch: 1.67 ms
        // against 0.63 pinned).
        if (partialChunk) {
          const size_t old = *partialChunk;
          partialChunk = size_t(std::find(perm.begin(), perm.end(), old) - perm.begin());
        }
      }
    }
    // A partial last lane chunk stays a loop of its own, outside the parallel loop: loop
    // partitioning then peels that chunk off (masked loads and stores) and the others run
    // unguarded; fused into the parallel loop its guard (`fused % 13 * 16 + lane < 197`) is no
    // longer affine in one loop. When the other loops have too little parallel work, the chunk
    // loop moves inside the row tiles' loop, which joins the parallel loop instead.
    if (partialChunk) {
      int64_t work = 1;
      for (size_t k = serialOuter; k + 1 < outer.size(); ++k)
        if (k != *partialChunk) work *= extentOf(sch, outer[k]);
      if (work < kMinParallelWork && !isSymbolic(sch, outer.back())) {
        const tir::LoopRV chunkLoop = outer[*partialChunk];
        const bool w = weightOnly[*partialChunk];
        outer.erase(outer.begin() + long(*partialChunk));
        weightOnly.erase(weightOnly.begin() + long(*partialChunk));
        outer.push_back(chunkLoop);
        weightOnly.push_back(w);
        partialChunk = outer.size() - 1;
      }
    }
    // Reduction blocking (a GEMM's K-blocking): when the weights one parallel unit reads (its
    // output-channel chunks) exceed half of L2 (kBlockMinUnitBytes) and several tiles read
    // them, each tile would stream them from memory again (DeepLab's ASPP, 960 -> 256 channels
    // over 16x16: 8.8 MiB of weights read once per tile, 7 GFLOP/s). The outermost reduce loop
    // is split so one block of weights fits L1, and that block's loop runs outside the tiles:
    // every tile accumulates one block of the reduction into the accumulator buffer, then the
    // next block.
    std::vector<tir::LoopRV> unit, rest;
    int64_t unitExt = 1, tiles = 1;
    for (size_t k = 0; k < outer.size(); ++k) {
      const int64_t ext = extentOf(sch, outer[k]);
      if (weightOnly[k]) unit.push_back(outer[k]), unitExt *= ext;
      else rest.push_back(outer[k]), tiles *= ext;
    }
    std::optional<tir::LoopRV> kBlock;
    // Not over symbolic rows: the accumulator buffer would then span the unit's rows with
    // symbolic strides between the tile's output-channel chunks, and LLVM, unable to tell them
    // apart, kept every accumulator in memory (a load and a store per FMA: the 7x7 convs of a
    // dynamic ResNet-18 at 224 ran at 80-100 GFLOP/s against 195 static); unblocked, the
    // accumulator is the tile's own, at constant offsets.
    if (bandK < 0 && kBlockingEnabled() && tilesShareWeights && unitExt >= 2 && tiles >= 4 && !unit.empty() &&
        !symbolicTile) {
      const int64_t k0 = extentOf(sch, reduce.front());
      const int64_t unitBytes = laneOperandBytes(blk, numSpatial) / unitExt;
      if (unitBytes > kBlockMinUnitBytes && k0 > 1 && !isSymbolic(sch, reduce.front())) {
        const int64_t inner = largestDivisor(k0, std::max<int64_t>(1, kL1WeightBytes / (unitBytes / k0)));
        if (inner < k0) {
          auto parts = tir::split(sch, reduce.front(), {tir::Value(nullptr), tir::Value(inner)});
          kBlock = parts[0];
          reduce.front() = parts[1];
        }
      }
    }
    // Weights beyond L2 that several row loops' tiles share, unblocked (each unit's strip fits
    // half of L2): the weight-only loops (the column strips) go outside the row loops, so the
    // parallel loop's consecutive units reuse one strip from L2. With the rows outside, each
    // strip was read once per row loop, far apart: ConvNeXt-T's stage-4 MLP (7x7 rows, a 9.4 MB
    // weight) streamed its weight 7 times a call.
    if (!kBlock && stripOuterEnabled() && bandK < 0 && serialOuter == 0 && !partialChunk && tilesShareWeights &&
        !symbolicTile && outer.size() >= 3 && laneOperandBytes(blk, numSpatial) > kStripOuterWeightBytes &&
        // Only where row loops outside the tile (the last loop of `outer`, a row loop here)
        // repeat the strips: ViT-S's 197 tokens are one row loop, the tile's; reordering its
        // batch loop of 1 made it 3% slower.
        tiles / extentOf(sch, outer.back()) >= 2) {
      // A symbolic loop (a dynamic model's batch, which the reordering above put first) stays
      // first: the parallel loop fuses these loops, and its parts bind affinely only when every
      // part inside the first is static. With the strips first, a ResNet-18 exported with a
      // dynamic batch lost its conv tiles to the generic schedule (layer 4's 3x3 stride-2 conv
      // 1.88 ms against 0.36 with the batch pinned).
      std::vector<tir::LoopRV> o2;
      std::vector<bool> w2;
      for (int pass = 0; pass < 3; ++pass)
        for (size_t k = 0; k + 1 < outer.size(); ++k) {
          const bool symbolic = isSymbolic(sch, outer[k]);
          if (pass == 0 ? symbolic : !symbolic && weightOnly[k] == (pass == 1))
            o2.push_back(outer[k]), w2.push_back(weightOnly[k]);
        }
      o2.push_back(outer.back());
      w2.push_back(weightOnly.back());
      outer = o2;
      weightOnly = w2;
    }
    std::vector<tir::LoopRV> order = bandPar;
    if (kBlock) {
      order.insert(order.end(), unit.begin(), unit.end());
      order.push_back(*kBlock);
      order.insert(order.end(), rest.begin(), rest.end());
    } else {
      order.insert(order.end(), outer.begin(), outer.end());
    }
    order.insert(order.end(), reduce.begin(), reduce.end());
    if (rowInner) order.push_back(*rowInner);
    if (chunkInner) order.push_back(*chunkInner);
    order.push_back(laneInner);
    tir::reorder(sch, order);
    const tir::LoopRV tile = outer.back();
    // The iterations of the loops outside the tile that become the parallel loop (below).
    std::vector<tir::LoopRV> par(outer.begin() + long(serialOuter), outer.end() - 1);
    if (partialChunk && *partialChunk + 2 == outer.size()) par.pop_back();
    int64_t parallelWork = 1;
    for (const tir::LoopRV& l : par) parallelWork *= extentOf(sch, l);
    // The panel is packed inside the reduction block's loop (kBlock) or the lane chunk's (the
    // last weight-only loop right outside the row tiles); every row tile inside reads it. (Not
    // when the row axis also indexes the lane operand: then the row tiles read different panels.)
    if (bandK < 0 && !partialChunk && !operandUse(sch.get(b), rowK, numSpatial).withLane) {
      if (kBlock) {
        if (!isSymbolic(sch, tile)) packLanePanel(sch, b, numSpatial, lanes, *kBlock, tiles);
      } else if (outer.size() >= 2 && weightOnly[outer.size() - 2] && !isSymbolic(sch, tile)) {
        // Not when the row tiles join the parallel loop (too few chunks to share, below): the
        // panel would then sit between the loops that fuse.
        if (parallelWork >= kMinParallelWork)
          packLanePanel(sch, b, numSpatial, lanes, outer[outer.size() - 2], extentOf(sch, tile));
      }
    }
    // Each band pads the input rows it reads (while the reduction is still one block).
    // A depthwise conv reads its zero padding in place (below).
    const bool inlinePad = pad && depthwisePadInPlaceEnabled() && operandUse(sch.get(b), rowK, numSpatial).withLane;
    if (inlinePad) tir::computeInline(sch, *pad);
    else if (bandK >= 0) tir::computeAt(sch, *pad, bandPar.back());
    if (epilogue) {
      // The epilogue under the tile (before the init is split off, while the tile's dataflow is
      // one reduction block): its loops cover the tile's rows and lanes. With reduction
      // blocking, under the parallel unit once all its tiles are complete.
      tir::Schedule beforeEpilogue = sch;
      try {
        tir::reverseComputeAt(sch, *epilogue, kBlock ? unit.back() : tile);
        std::vector<tir::LoopRV> el = tir::getLoops(sch, *epilogue);
        const int64_t* ext = tir::asConstInt(sch.get(el.back())->extent);
        if (ext && *ext >= 4 && *ext <= kLanes) {
          tir::vectorize(sch, el.back());
        } else if (ext && *ext > kLanes && *ext % lanes == 0) {
          // Several lane chunks (a GEMV's tile): vectors of the tile's lanes.
          auto parts = tir::split(sch, el.back(), {tir::Value(nullptr), tir::Value(lanes)});
          tir::vectorize(sch, parts[1]);
        }
        names.push_back(sch.get(*epilogue)->name);
      } catch (const Error&) {
        // An epilogue reading the tile through a layout change stays a pass of its own.
        sch = beforeEpilogue;
        if (consumers.empty()) throw;
      }
    }
    tir::BlockRV init = tir::decomposeReduction(sch, b, kBlock ? *kBlock : reduce.front());
    names.push_back(sch.get(init)->name);
    std::vector<tir::LoopRV> initLoops = tir::getLoops(sch, init);
    tir::vectorize(sch, initLoops.back());
    const size_t tileLoops = (rowInner ? 1 : 0) + (chunkInner ? 1 : 0);
    for (size_t k = 0; k < tileLoops && k + 2 <= initLoops.size(); ++k) tir::unroll(sch, initLoops[initLoops.size() - 2 - k]);
    tir::vectorize(sch, laneInner);
    if (rowInner) tir::unroll(sch, *rowInner);
    if (chunkInner) tir::unroll(sch, *chunkInner);
    if (inlinePad && bandK >= 0) {
      tir::parallel(sch, bandPar.size() > 1 ? tir::fuse(sch, bandPar) : bandPar[0]);
      return names;
    }
    if (bandK >= 0) {
      std::vector<tir::LoopRV> pl = tir::getLoops(sch, *pad);
      const int64_t* ext = tir::asConstInt(sch.get(pl.back())->extent);
      // The copy runs in vector lanes.
      if (ext && *ext >= 4 && *ext <= kLanes) tir::vectorize(sch, pl.back());
      names.push_back(sch.get(*pad)->name);
      tir::parallel(sch, bandPar.size() > 1 ? tir::fuse(sch, bandPar) : bandPar[0]);
      return names;
    }
    if (kBlock) {
      tir::parallel(sch, unit.size() > 1 ? tir::fuse(sch, unit) : unit[0]);
      return names;
    }
    // The loops outside the tile: fused and parallel (all of them when the tile loop is the
    // only one with enough iterations to share).
    if (parallelWork < kMinParallelWork && (par.empty() || !isSymbolic(sch, tile))) par.push_back(tile);
    if (par.size() > 1) tir::parallel(sch, tir::fuse(sch, par));
    else if (par.size() == 1) tir::parallel(sch, par[0]);
    return names;
  } catch (const Error&) {
    sch = saved;
    return {};
  }
}

/// A GEMV over symbolic rows (a classifier head of a model exported with a dynamic batch): the
/// default schedule is made twice, once with the rows in the lane tile and once as a split-K
/// GEMV (below) that runs the rows one after another, and the kernel takes the GEMV when the rows
/// come to 1 at run time (defaultSchedule). ResNet-18's head at batch 1: 0.20 ms in the tile,
/// 0.04 as a GEMV.
struct GemvVariant {
  bool take = false;  ///< in: schedule the GEMV over the symbolic rows
  tir::Expr rows;     ///< out: the rows' extent, when a block is such a GEMV
};

/// LOOM_NO_SPLIT_K_GEMV=1 keeps a large GEMV in the lane tile (for A/B measurements).
bool splitKGemvEnabled() {
  static const bool on = !switchedOff("LOOM_NO_SPLIT_K_GEMV");
  return on;
}

/// A GEMV's weight from this size on is read from memory rather than a cache: a classifier head
/// at batch 1 runs once per inference, after the whole network has passed through the caches.
constexpr int64_t kSplitKGemvMinWeightBytes = int64_t(1) << 20;

/// A one-row matmul over a large (K, N) weight (a classifier head at batch 1), split along K:
/// each parallel task sums a block of whole weight rows, one contiguous stretch of memory, into
/// its own row of partial results (rfactor), the rows' N outputs in vector lanes; a write-back
/// adds the tasks' rows and runs the epilogue in vector lanes. The lane tile instead reads a strip
/// of a few vectors from each of the K rows, N floats apart, and each strip's lines are shared
/// with the neighbouring tasks' strips: once the weight has left the caches it streamed at a
/// third of the memory bandwidth (ShuffleNet's 1024 -> 1000 head 0.25 ms on one core in the
/// model, ONNX Runtime's 0.09 with its packed weight). Returns the scheduled blocks' names (none,
/// the schedule unchanged, when the block is not such a GEMV).
std::vector<std::string> splitKGemv(tir::Schedule& sch, const tir::BlockRV& b, bool vectorize, GemvVariant* gv) {
  if (!vectorize || !splitKGemvEnabled()) return {};
  const tir::BlockNode* blk = sch.get(b);
  if (!isReduction(blk)) return {};
  const size_t numSpatial = leadingSpatial(blk);
  if (numSpatial == 0 || blk->iterVars.size() != numSpatial + 1 || !hasLaneAxis(blk, numSpatial)) return {};
  const tir::BufferStoreNode* st = singleStore(blk->body);
  if (!st || !st->buffer->dtype.isFloat()) return {};
  std::vector<tir::LoopRV> loops = identityLoops(sch, b);
  if (loops.size() != numSpatial + 1) return {};
  if (isSymbolic(sch, loops[numSpatial - 1]) || isSymbolic(sch, loops.back())) return {};
  // The rows: static ones must be 1; symbolic ones (a dynamic batch) make the GEMV a variant.
  tir::Expr rows;
  for (size_t k = 0; k + 1 < numSpatial; ++k) {
    if (isSymbolic(sch, loops[k])) {
      const tir::Expr& e = sch.get(loops[k])->extent;
      rows = rows.defined() ? rows * e : e;
    } else if (extentOf(sch, loops[k]) != 1) {
      return {};
    }
  }
  const int64_t n = extentOf(sch, loops[numSpatial - 1]);
  const int64_t k = extentOf(sch, loops.back());
  if (n < 4 * kLanes || laneOperandBytes(blk, numSpatial) < kSplitKGemvMinWeightBytes) return {};
  if (rows.defined()) {
    if (!gv) return {};
    if (!gv->take) {
      gv->rows = rows;
      return {};
    }
  }
  // The weight is indexed (..., k, lane): its rows are whole stretches of memory.
  const tir::BufferNode* w = laneOperand(blk, numSpatial);
  const tir::Var& lane = blk->iterVars[numSpatial - 1].var;
  const tir::Var& red = blk->iterVars.back().var;
  bool rowMajor = false;
  for (const tir::BufferLoadNode* ld : loadsIn(blk->body)) {
    if (ld->buffer.get() != w || ld->indices.size() < 2) continue;
    auto* last = ld->indices.back().as<tir::VarNode>();
    auto* row = ld->indices[ld->indices.size() - 2].as<tir::VarNode>();
    rowMajor = last == lane.get() && row == red.get();
  }
  if (!rowMajor) return {};
  const int64_t tasks = largestDivisor(k, 16);
  if (tasks < 4) return {};
  const int64_t lanes = reductionLanes(n);
  tir::Schedule saved = sch;
  try {
    std::vector<std::string> names;
    std::optional<tir::BlockRV> epilogue;
    std::vector<tir::BlockRV> consumers = tir::getConsumers(sch, b);
    if (consumers.size() == 1 && !isReduction(sch.get(consumers[0]))) epilogue = consumers[0];
    auto kParts = tir::split(sch, loops.back(), {tir::Value(tasks), tir::Value(nullptr)});
    tir::BlockRV rf = tir::rfactor(sch, kParts[0], 0);
    // The partial sums: (ko | ki | lane chunks | lanes), ko parallel.
    std::vector<tir::LoopRV> rl = tir::getLoops(sch, rf);
    const tir::LoopRV ko = rl[rl.size() - 2], ki = rl.back(), nLoop = rl[rl.size() - 3];
    auto nParts = tir::split(sch, nLoop, {tir::Value(nullptr), tir::Value(lanes)});
    // (Steps of 2-8 rows unrolled over each vector of partial sums, their weights read as as
    // many streams, measured slower in the models: 0.29 -> 0.39-0.53 ms for ResNet-50's head.)
    std::vector<tir::LoopRV> order{ko};
    order.insert(order.end(), rl.begin(), rl.end() - 3);
    order.push_back(ki);
    order.push_back(nParts[0]);
    order.push_back(nParts[1]);
    tir::reorder(sch, order);
    tir::BlockRV rfInit = tir::decomposeReduction(sch, rf, ki);
    tir::vectorize(sch, tir::getLoops(sch, rfInit).back());
    tir::vectorize(sch, nParts[1]);
    tir::parallel(sch, ko);
    // The write-back: (lane chunks | ko | lanes), the epilogue under each chunk.
    std::vector<tir::LoopRV> wl = tir::getLoops(sch, b);
    auto wParts = tir::split(sch, wl[wl.size() - 2], {tir::Value(nullptr), tir::Value(lanes)});
    tir::reorder(sch, {wParts[0], wl.back(), wParts[1]});
    // The epilogue first, while the write-back is still one reduction block.
    if (epilogue) {
      tir::reverseComputeAt(sch, *epilogue, wParts[0]);
      tir::vectorize(sch, tir::getLoops(sch, *epilogue).back());
      names.push_back(sch.get(*epilogue)->name);
    }
    tir::BlockRV wInit = tir::decomposeReduction(sch, b, wl.back());
    tir::vectorize(sch, tir::getLoops(sch, wInit).back());
    tir::vectorize(sch, wParts[1]);
    for (const tir::BlockRV& x : {rf, rfInit, b, wInit}) names.push_back(sch.get(x)->name);
    return names;
  } catch (const Error&) {
    sch = saved;
    return {};
  }
}

/// A Winograd tile transform (topi::nn::isWinogradTransform) with loops (tile, channel block, x,
/// y, lane): the tiles and channel blocks in parallel, x and y unrolled (the select folds to one
/// sum per position and the loads of a tile are shared), the lane in vector lanes. Returns the
/// block's name, or nothing (the schedule unchanged) when the loops are not so.
std::vector<std::string> scheduleTileTransform(tir::Schedule& sch, const tir::BlockRV& b, bool vectorize) {
  const tir::BlockNode* blk = sch.get(b);
  if (!topi::nn::isWinogradTransform(blk)) return {};
  std::vector<tir::LoopRV> loops = identityLoops(sch, b);
  if (loops.size() != 5) return {};
  tir::Schedule saved = sch;
  const bool symbolicTiles = isSymbolic(sch, loops[0]);
  try {
    tir::parallel(sch, tir::fuse(sch, {loops[0], loops[1]}));
    tir::unroll(sch, loops[2]);
    tir::unroll(sch, loops[3]);
    const int64_t* lanes = tir::asConstInt(sch.get(loops[4])->extent);
    if (vectorize && lanes && *lanes >= 4 && *lanes <= kLanes) tir::vectorize(sch, loops[4]);
    // Fewer lanes (a first conv's 3 input channels): unrolled too, so the loads of the tile's
    // positions, shared by several sums, are in one block and loaded once.
    else if (lanes && *lanes < 4 && !(vectorize && symbolicTiles && *lanes > 1)) tir::unroll(sch, loops[4]);
    // Over a symbolic image the padding's selects do not fold: in vector lanes they stay blends
    // (scalar ones become a branch per load in LLVM).
    else if (lanes && *lanes > 1) tir::vectorize(sch, loops[4]);
    return {blk->name};
  } catch (const Error&) {
    sch = saved;
    return {};
  }
}

/// The generic rule for a block no special rule took: parallelize the outermost spatial loops and
/// vectorize a spatial innermost loop (or, for a reduction, the innermost spatial loop moved
/// below the reduce loops).
void genericSchedule(tir::Schedule& sch, const tir::BlockRV& b, bool vectorize) {
  std::vector<tir::LoopRV> loops;
  try {
    loops = tir::getLoops(sch, b);
  } catch (const Error&) {
    return;
  }
  if (loops.empty()) return;
  const tir::BlockNode* blk = sch.get(b);
  bool spatialOnly = !isReduction(blk);
  // The leading spatial loops (createPrimFunc nests spatial loops outside reduce loops); keep
  // the innermost one of a spatial block for vectorization.
  size_t numReduce = 0;
  for (const auto& iv : blk->iterVars) numReduce += iv.iterType != tir::IterType::DataPar;
  size_t numSpatial = loops.size() >= numReduce ? loops.size() - numReduce : 0;
  if (spatialOnly && numSpatial > 1) --numSpatial;
  // Fuse leading spatial loops until there are enough iterations to share among threads
  // (a batch of 1 alone gives nothing to run in parallel). A symbolic extent counts as its
  // constant factor (`batch * 4` as 4): a dynamic batch is often 1, and a parallel loop over it
  // alone left a dynamic OCR model's resize, layout transforms and mean on one thread. Only the
  // first of fused loops may be symbolic: `fused // S` is not an affine binding, which parallel
  // requires (see tileLaneReduction), so (batch, seq) still runs in parallel over the first.
  std::vector<tir::LoopRV> lead;
  int64_t work = 1;
  bool symbolicLead = false;
  for (size_t k = 0; k < numSpatial && work < 64; ++k) {
    const bool symbolic = isSymbolic(sch, loops[k]);
    if (k > 0 && symbolic) break;
    lead.push_back(loops[k]);
    symbolicLead |= symbolic;
    work *= symbolic ? constantFactor(sch.get(loops[k])->extent) : extentOf(sch, loops[k]);
  }
  tir::Schedule saved = sch;
  if ((work >= 2 || symbolicLead) && !lead.empty()) {
    try {
      tir::LoopRV outer = lead.size() > 1 ? tir::fuse(sch, lead) : lead[0];
      tir::parallel(sch, outer);
    } catch (const Error&) {
      sch = saved;
    }
  }
  if (vectorize && !spatialOnly && numReduce > 0 && numSpatial > lead.size() && loops.size() == blk->iterVars.size())
    vectorizeReduction(sch, b, loops, numSpatial, numReduce);
  if (!vectorize || !spatialOnly || loops.size() < 2) return;
  const int64_t innerExt = extentOf(sch, loops.back());
  const bool innerSymbolic = isSymbolic(sch, loops.back());
  if (innerExt < 4) return;
  saved = sch;
  try {
    if (innerExt <= 16 && !innerSymbolic)
      tir::vectorize(sch, loops.back());
    else {
      // 16 lanes, or 8 that divide the loop, else 16 with a partial last vector whose guard
      // loop partitioning peels off (a row of 197 tokens).
      const int64_t lanes = innerSymbolic ? kLanes : reductionLanes(innerExt);
      auto parts = tir::split(sch, loops.back(), {tir::Value(nullptr), tir::Value(lanes)});
      tir::vectorize(sch, parts.back());
    }
  } catch (const Error&) {
    sch = saved;
  }
}

}  // namespace

/// The default CPU schedule: inline injective producers; register-tile reductions with a lane
/// axis (NCHWc convs, pools, matmuls, Winograd batched products) with their epilogue under the
/// tile; unroll the tile positions of Winograd transforms; rfactor dense layers
/// into vector lanes; then per remaining block parallelize the outermost spatial loops and
/// vectorize a spatial innermost loop.
namespace {
tir::Schedule scheduleByDefault(const tir::PrimFunc& f, bool vectorize, RowVariant* rv = nullptr,
                                GemvVariant* gv = nullptr) {
  tir::Schedule sch(f);
  auto children = [&]() { return tir::getChildBlocks(sch, tir::getBlock(sch, "root")); };
  // Inline every block that can be (the primitive refuses reductions and outputs).
  std::set<std::string> keptRowProducers;
  for (bool changed = true; changed;) {
    changed = false;
    for (const tir::BlockRV& b : children()) {
      if (isConditionalProducerOfReduction(sch, b) || topi::nn::isWinogradTransform(sch.get(b))) continue;
      if (vectorize && isSharedRowProducer(sch, b)) {
        keptRowProducers.insert(sch.get(b)->name);
        continue;
      }
      try {
        tir::computeInline(sch, b);
        changed = true;
        break;
      } catch (const Error&) {
      }
    }
  }
  // Blocks a special rule scheduled (by name: RVs do not survive the rules' rewrites).
  std::set<std::string> done;
  for (const std::string& n : rowFusedSchedule(sch, vectorize)) done.insert(n);
  // A kept row producer that no row-fused schedule took is inlined after all.
  for (const std::string& n : keptRowProducers) {
    if (done.count(n)) continue;
    try {
      tir::computeInline(sch, tir::getBlock(sch, n));
    } catch (const Error&) {
    }
  }
  for (const tir::BlockRV& b : children()) {
    if (done.count(sch.get(b)->name)) continue;
    for (const std::string& n : splitKGemv(sch, b, vectorize, gv)) done.insert(n);
  }
  for (const tir::BlockRV& b : children()) {
    if (done.count(sch.get(b)->name)) continue;
    for (const std::string& n : tileLaneReduction(sch, b, vectorize, rv)) done.insert(n);
  }
  for (const tir::BlockRV& b : children()) {
    if (done.count(sch.get(b)->name)) continue;
    for (const std::string& n : scheduleTileTransform(sch, b, vectorize)) done.insert(n);
  }
  std::set<std::string> dense;
  for (const tir::BlockRV& b : children()) {
    if (done.count(sch.get(b)->name)) continue;
    for (const std::string& n : vectorizeDenseReduction(sch, b)) dense.insert(n);
    if (dense.count(sch.get(b)->name)) continue;
    // Scheduled completely: no loop of it is worth a parallel launch (one pass over the data).
    for (const std::string& n : vectorizeFullReduction(sch, b)) done.insert(n);
  }
  for (const tir::BlockRV& b : children()) {
    const std::string name = sch.get(b)->name;
    if (done.count(name)) continue;
    // The partial-sum block and the write-back of a rewritten dense keep their loop order; they
    // only get their outer loops parallel.
    genericSchedule(sch, b, vectorize && !dense.count(name));
  }
  return sch;
}
}  // namespace

tir::PrimFunc defaultSchedule(const tir::PrimFunc& f, bool vectorize) {
  RowVariant rv;
  GemvVariant gv;
  tir::PrimFunc inner = scheduleByDefault(f, vectorize, &rv, &gv).func();
  tir::PrimFunc chosen = inner;
  if (rv.innerExt.defined()) {
    // Two symbolic row candidates: both tilings, the one along the longer extent taken at run time.
    RowVariant other{true, {}, {}};
    tir::PrimFunc outer = scheduleByDefault(f, vectorize, &other).func();
    if (other.innerExt.defined())
      chosen = tir::withBody(inner, tir::ifThen(rv.innerExt >= rv.outerExt, inner->body, outer->body));
  }
  if (!gv.rows.defined()) return chosen;
  GemvVariant take{true, {}};
  tir::PrimFunc gemv = scheduleByDefault(f, vectorize, nullptr, &take).func();
  return tir::withBody(chosen, tir::ifThen(tir::eq(gv.rows, tir::Expr(1)), gemv->body, chosen->body));
}

std::string defaultScheduleScript(const tir::PrimFunc& f, bool vectorize) {
  return scheduleByDefault(f, vectorize).trace().str();
}

tir::Trace defaultScheduleTrace(const tir::PrimFunc& f, bool vectorize) { return scheduleByDefault(f, vectorize).trace(); }

}  // namespace loom::driver
