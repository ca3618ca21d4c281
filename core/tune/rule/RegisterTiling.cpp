// The register-tiled CPU structure (see RegisterTiling.h): the GotoBLAS recipe as a sampled space.
#include "core/tune/rule/RegisterTiling.h"

#include <set>

#include "core/schedule/Primitives.h"
#include "core/tir/Visitor.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune::rule {

using namespace tir;

namespace {

class VarCollector : public IRVisitor {
public:
  std::set<const VarNode*> used;
  using IRVisitor::visit;
  void visit(const VarNode* n) override { used.insert(n); }
};

std::set<const VarNode*> varsOf(const BufferRegion& r) {
  VarCollector c;
  for (auto& rg : r.region) {
    c.visitExpr(rg.min);
    c.visitExpr(rg.extent);
  }
  return c.used;
}

bool isParam(const Schedule& sch, const Buffer& b) {
  for (auto& [var, buf] : sch.func()->bufferMap)
    if (buf.get() == b.get()) return true;
  return false;
}

/// The spatial axes (iter var indices) a read of the block depends on.
std::vector<int> spatialAxesOf(const BlockNode* b, const BufferRegion& r) {
  std::set<const VarNode*> used = varsOf(r);
  std::vector<int> out;
  for (size_t i = 0; i < b->iterVars.size(); ++i)
    if (b->iterVars[i].iterType == IterType::DataPar && used.count(b->iterVars[i].var.get())) out.push_back(int(i));
  return out;
}

} // namespace

int64_t vectorLanes(int64_t extent, int bits) {
  const int64_t full = 64 / (bits / 8), least = 16 / (bits / 8);
  // A whole 64-byte vector, else a 32- or 16-byte one (AVX2 / SSE registers) that divides it.
  for (int64_t lanes = full; lanes >= least; lanes /= 2)
    if (extent % lanes == 0) return lanes;
  // A channel block narrower than a vector that none of those divides (NCHW10c, NCHW12c's
  // 12 = 3 x 4 is taken above) or an output row as narrow (7, 14): one vector of its own width,
  // which the code generator splits into legal registers.
  if (extent >= least && extent < full) return extent;
  return 0;
}

std::optional<RegisterTileInfo> registerTileInfo(const Schedule& sch, const BlockNode* b) {
  if (!isReduction(b) || !hasDataReuse(b) || !isPlainNest(sch, b)) return std::nullopt;
  if (b->writes.size() != 1 || b->writes[0].region.empty()) return std::nullopt;
  RegisterTileInfo info;
  for (size_t i = 0; i < b->iterVars.size(); ++i)
    if (b->iterVars[i].iterType == IterType::DataPar) info.vectorAxis = int(i);
  if (info.vectorAxis < 0) return std::nullopt;
  const IterVar& v = b->iterVars[size_t(info.vectorAxis)];
  // The output's last index is the vector axis itself: lanes store contiguously.
  const Range& last = b->writes[0].region.back();
  auto* lastVar = last.min.as<VarNode>();
  if (!lastVar || lastVar != v.var.get() || constIntValue(last.extent).value_or(0) != 1) return std::nullopt;
  DataType t = b->writes[0].buffer->dtype;
  if (t.lanes() != 1 || t.bits() < 8) return std::nullopt;
  info.float32 = t.isFloat() && t.bits() == 32;
  auto loops = loopsAbove(sch, b);
  auto ext = constIntValue(loops[size_t(info.vectorAxis)]->extent);
  if (!ext) return std::nullopt;
  info.lanes = vectorLanes(*ext, t.bits());
  if (info.lanes == 0) return std::nullopt;
  size_t numSpatial = 0;
  for (auto& iv : b->iterVars) numSpatial += iv.iterType == IterType::DataPar;
  for (size_t r = 0; r < b->reads.size(); ++r) {
    const BufferRegion& rd = b->reads[r];
    if (rd.buffer.get() == b->writes[0].buffer.get() || !isParam(sch, rd.buffer) || rd.region.empty()) continue;
    auto* rv = rd.region.back().min.as<VarNode>();
    if (!rv || rv != v.var.get()) continue;
    if (spatialAxesOf(b, rd).size() < numSpatial) info.packableReads.push_back(int(r));
  }
  return info;
}

void applyRegisterTiling(Schedule& sch, const std::string& name, const RegisterTileInfo& info,
                         const RegisterTileOptions& opt) {
  BlockRV block = getBlock(sch, name);
  const BlockNode* b = sch.get(block);
  const size_t nAxes = b->iterVars.size();
  std::vector<bool> spatial(nAxes);
  for (size_t i = 0; i < nAxes; ++i) spatial[i] = b->iterVars[i].iterType == IterType::DataPar;
  std::set<int> packDeps;
  if (opt.packRead >= 0) {
    LOOM_ICHECK(size_t(opt.packRead) < b->reads.size());
    for (int a : spatialAxesOf(b, b->reads[size_t(opt.packRead)])) packDeps.insert(a);
  }
  // The axis whose tile is the register tile's rows: the innermost spatial axis before the vector one.
  int rowAxis = -1;
  for (int i = 0; i < info.vectorAxis; ++i)
    if (spatial[size_t(i)]) rowAxis = i;
  int lastReduce = -1;
  for (size_t i = 0; i < nAxes; ++i)
    if (!spatial[i]) lastReduce = int(i);

  std::vector<LoopRV> loops = getLoops(sch, block);
  std::vector<LoopRV> s0, s1Deps, s1Rest, reduce, s3;
  LoopRV lanes, kInner;
  bool tensorize = !opt.intrinPrefix.empty();
  for (size_t i = 0; i < nAxes; ++i) {
    if (!spatial[i]) {
      if (tensorize && int(i) == lastReduce) {
        std::vector<double> probs(opt.intrinK.size(), 1.0 / double(opt.intrinK.size()));
        ExprRV k = sampleCategorical(sch, opt.intrinK, probs);
        auto parts = split(sch, loops[i], {Value(), Value(k)});
        reduce.push_back(parts[0]);
        kInner = parts[1];
      } else {
        reduce.push_back(loops[i]);
      }
      continue;
    }
    LoopRV loop = loops[i];
    int64_t maxInner = opt.maxOtherTile;
    if (int(i) == info.vectorAxis) {
      auto parts = split(sch, loop, {Value(), Value(info.lanes)});
      loop = parts[0];
      lanes = parts[1];
      maxInner = opt.maxVectorTiles;
    } else if (int(i) == rowAxis) {
      maxInner = opt.maxRowTile;
    }
    // With a packed panel, axes the panel does not depend on have no outer tile: the panel is
    // packed once per outer tile, and reused by every row tile inside it.
    bool outerTile = opt.packRead < 0 || packDeps.count(int(i));
    std::vector<ExprRV> f = samplePerfectTile(sch, loop, outerTile ? 3 : 2, maxInner);
    auto parts = split(sch, loop, std::vector<Value>(f.begin(), f.end()));
    if (outerTile) s0.push_back(parts[0]);
    (packDeps.count(int(i)) ? s1Deps : s1Rest).push_back(parts[parts.size() - 2]);
    s3.push_back(parts.back());
  }
  std::vector<LoopRV> order = s0;
  order.insert(order.end(), s1Deps.begin(), s1Deps.end());
  order.insert(order.end(), s1Rest.begin(), s1Rest.end());
  order.insert(order.end(), reduce.begin(), reduce.end());
  order.insert(order.end(), s3.begin(), s3.end());
  if (tensorize) order.push_back(kInner);
  order.push_back(lanes);
  reorder(sch, order);
  // One outer loop (the parallel one): fused here, before any cache or pack is placed, so every
  // block's indices use the fused variable the same way and compact-buffers can shrink the
  // accumulator and the panel to the tile.
  // (Not with the intrinsic: blockize cannot divide a binding that uses the fused variable's
  // div/mod; those nests keep their S0 loops and run the first one in parallel.)
  LoopRV lastS0 = s0.size() > 1 && !tensorize ? fuse(sch, s0) : s0.back();
  annotate(sch, block, "meta_schedule.tiling_structure", Value(tensorize ? "SSRS-intrin" : "SSRS"));
  LoopRV lastS1 = s1Rest.empty() ? s1Deps.back() : s1Rest.back();

  // The packed panel: the reused operand copied, per panel, into a contiguous buffer that every
  // row tile streams through (compact-buffers shrinks the copy to the panel). Before
  // the init is decomposed: compute_at wants the reduction complete under the panel loop.
  if (opt.packRead >= 0) {
    BlockRV pack = cacheRead(sch, block, opt.packRead, "global");
    computeAt(sch, pack, s1Deps.empty() ? lastS0 : s1Deps.back(), /*preserveUnitLoops=*/true);
    // Its last index is the vector axis, whose panel width is a multiple of the lanes.
    auto parts = split(sch, getLoops(sch, pack).back(), {Value(), Value(info.lanes)});
    vectorize(sch, parts[1]);
  }

  // The accumulator: a fused elementwise epilogue computed under the tile (its input then only
  // lives for one tile: compact-buffers makes it tile-sized), else a "local" write cache.
  bool epilogueDone = false;
  {
    const BlockNode* cur = sch.get(block);
    auto consumers = consumersOf(sch, cur);
    if (!writesOutput(sch, cur) && consumers.size() == 1 && !isReduction(consumers[0]) &&
        !consumers[0]->init.defined() && !hasConditional(consumers[0])) {
      Schedule trial = sch;
      try {
        BlockRV epi = getBlock(trial, consumers[0]->name);
        reverseComputeAt(trial, epi, lastS1, /*preserveUnitLoops=*/true);
        vectorize(trial, getLoops(trial, epi).back());
        sch = std::move(trial);
        epilogueDone = true;
      } catch (const ScheduleError&) {
      }
    }
  }
  if (!epilogueDone) {
    BlockRV wb = cacheWrite(sch, block, 0, "local");
    reverseComputeAt(sch, wb, lastS1, /*preserveUnitLoops=*/true);
    vectorize(sch, getLoops(sch, wb).back());
  }

  // The tile starts from zero in registers, outside the reduction (the postprocessor
  // rewriteReductionInit decomposes the init: how many loops it gets depends on the sampled tiles).
  annotate(sch, block, kDecomposeReductionKey, Value(int64_t(1)));

  // The register tile: unrolled rows and vectors, the lanes vectorized (or left for the intrinsic).
  for (auto& l : s3) unroll(sch, l);
  if (tensorize) annotate(sch, block, kAutoTensorizeKey, Value(opt.intrinPrefix));
  else vectorize(sch, lanes);

}

} // namespace loom::tune::rule
