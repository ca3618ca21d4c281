// The default CPU schedule of a fused group (see DefaultSchedule.h).
#include "core/driver/DefaultSchedule.h"

#include "core/schedule/Schedule.h"
#include "core/schedule/primitive/compute_inline.h"
#include "core/schedule/primitive/for_kind.h"
#include "core/schedule/primitive/get_block_loop.h"
#include "core/schedule/primitive/loop_transformation.h"
#include "core/schedule/primitive/reduction.h"
#include "core/support/Error.h"
#include "core/tir/Op.h"

namespace loom::driver {

namespace {

/// For a reduction block whose innermost spatial loop is not among the parallel ones (a conv's
/// output column): moves that loop below the reduce loops, hoists the init out of them, and
/// vectorizes it, so each reduction step updates a contiguous row of outputs. Leaves the schedule
/// as it was when a step does not apply.
void vectorizeReduction(tir::Schedule& sch, const tir::BlockRV& b, const std::vector<tir::LoopRV>& loops,
                        size_t numSpatial, size_t numReduce) {
  const tir::LoopRV inner = loops[numSpatial - 1];
  const int64_t* ext = tir::asConstInt(sch.get(inner)->extent);
  if (!ext || *ext < 4) return;
  tir::Schedule saved = sch;
  try {
    std::vector<tir::LoopRV> order(loops.begin() + long(numSpatial), loops.begin() + long(numSpatial + numReduce));
    order.push_back(inner);
    tir::reorder(sch, order);
    tir::decomposeReduction(sch, b, order.front());
    if (*ext <= 16) {
      tir::vectorize(sch, inner);
    } else {
      int64_t lanes = *ext % 16 == 0 ? 16 : *ext % 8 == 0 ? 8 : *ext % 4 == 0 ? 4 : 0;
      if (lanes == 0) lanes = 8;  // a tail iteration is guarded by the split
      auto parts = tir::split(sch, inner, {tir::Value(nullptr), tir::Value(lanes)});
      tir::vectorize(sch, parts.back());
    }
  } catch (const Error&) {
    sch = saved;
  }
}

/// A dense layer `out[.., j] = sum_k a[.., k] * w[j, k]` reads both operands along k, so its
/// output columns do not vectorize; instead k splits into (ko, 16) and the 16 lanes become a
/// spatial axis of a partial-sum block (rfactor) that runs in vector lanes, reduced to the
/// output afterwards. Returns whether the block was rewritten (left as it was otherwise).
bool vectorizeDenseReduction(tir::Schedule& sch, const tir::BlockRV& b) {
  const tir::BlockNode* blk = sch.get(b);
  if (blk->name != "T_dense") return false;
  std::vector<tir::LoopRV> loops = tir::getLoops(sch, b);
  if (loops.empty() || blk->iterVars.empty() || blk->iterVars.back().iterType == tir::IterType::DataPar) return false;
  const int64_t* k = tir::asConstInt(sch.get(loops.back())->extent);
  constexpr int64_t lanes = 16;
  if (!k || *k % lanes != 0 || *k < 4 * lanes) return false;
  tir::Schedule saved = sch;
  try {
    auto parts = tir::split(sch, loops.back(), {tir::Value(nullptr), tir::Value(lanes)});
    tir::BlockRV rf = tir::rfactor(sch, parts[1], int64_t(blk->iterVars.size() - 1));
    std::vector<tir::LoopRV> rfLoops = tir::getLoops(sch, rf);
    tir::decomposeReduction(sch, rf, rfLoops[rfLoops.size() - 2]);
    tir::vectorize(sch, rfLoops.back());
    return true;
  } catch (const Error&) {
    sch = saved;
    return false;
  }
}

}  // namespace

/// The default CPU schedule: inline injective producers, then per remaining block parallelize
/// the outermost spatial loop and vectorize a spatial innermost loop.
tir::PrimFunc defaultSchedule(const tir::PrimFunc& f, bool vectorize) {
  tir::Schedule sch(f);
  auto children = [&]() { return tir::getChildBlocks(sch, tir::getBlock(sch, "root")); };
  // Inline every block that can be (the primitive refuses reductions and outputs).
  for (bool changed = true; changed;) {
    changed = false;
    for (const tir::BlockRV& b : children()) {
      // A conv's padded input stays a buffer of its own: inlined, its bounds test would sit in
      // the innermost loop of the reduction and keep that loop from vectorizing.
      if (sch.get(b)->name == "pad_temp") continue;
      try {
        tir::computeInline(sch, b);
        changed = true;
        break;
      } catch (const Error&) {
      }
    }
  }
  bool denseRewritten = false;
  for (const tir::BlockRV& b : children()) denseRewritten |= vectorizeDenseReduction(sch, b);
  for (const tir::BlockRV& b : children()) {
    std::vector<tir::LoopRV> loops;
    try {
      loops = tir::getLoops(sch, b);
    } catch (const Error&) {
      continue;
    }
    if (loops.empty()) continue;
    const tir::BlockNode* blk = sch.get(b);
    bool spatialOnly = !blk->init.defined();
    for (const auto& iv : blk->iterVars) spatialOnly &= iv.iterType == tir::IterType::DataPar;
    // The leading spatial loops (createPrimFunc nests spatial loops outside reduce loops); keep
    // the innermost one of a spatial block for vectorization.
    size_t numReduce = 0;
    for (const auto& iv : blk->iterVars) numReduce += iv.iterType != tir::IterType::DataPar;
    size_t numSpatial = loops.size() >= numReduce ? loops.size() - numReduce : 0;
    if (spatialOnly && numSpatial > 1) --numSpatial;
    // Fuse leading spatial loops until there are enough iterations to share among threads
    // (a batch of 1 alone gives nothing to run in parallel).
    std::vector<tir::LoopRV> lead;
    int64_t work = 1;
    for (size_t k = 0; k < numSpatial && work < 64; ++k) {
      const int64_t* ext = tir::asConstInt(sch.get(loops[k])->extent);
      if (!ext) break;
      lead.push_back(loops[k]);
      work *= *ext;
    }
    tir::Schedule saved = sch;
    if (work >= 2 && !lead.empty()) {
      try {
        tir::LoopRV outer = lead.size() > 1 ? tir::fuse(sch, lead) : lead[0];
        tir::parallel(sch, outer);
      } catch (const Error&) {
        sch = saved;
      }
    }
    // The partial-sum block and the write-back of a rewritten dense keep their loop order.
    bool denseRf = denseRewritten && blk->name.rfind("T_dense", 0) == 0;
    if (vectorize && !denseRf && !spatialOnly && numReduce > 0 && numSpatial > lead.size() && loops.size() == blk->iterVars.size())
      vectorizeReduction(sch, b, loops, numSpatial, numReduce);
    if (!vectorize || !spatialOnly || loops.size() < 2) continue;
    const tir::ForNode* inner = sch.get(loops.back());
    const int64_t* innerExt = tir::asConstInt(inner->extent);
    if (!innerExt || *innerExt < 4) continue;
    saved = sch;
    try {
      if (*innerExt <= 16)
        tir::vectorize(sch, loops.back());
      else if (*innerExt % 8 == 0) {
        auto parts = tir::split(sch, loops.back(), {tir::Value(nullptr), tir::Value(int64_t(8))});
        tir::vectorize(sch, parts.back());
      }
    } catch (const Error&) {
      sch = saved;
    }
  }
  return sch.func();
}

}  // namespace loom::driver
