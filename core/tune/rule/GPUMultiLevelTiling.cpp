// Rule gpu-multi-level-tiling (MetaSchedule's CUDA multi-level tiling): S0 S1 S2 R0 S3 R1 with
// S0 bound to blocks, S1 to virtual threads, S2 to threads, a local accumulator, shared-memory tiles.
#include "core/schedule/Primitives.h"
#include "core/tune/rule/GPURules.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class GPUMultiLevelTiling : public ScheduleRule {
public:
  explicit GPUMultiLevelTiling(int maxInnermost) : m_maxInnermost(maxInnermost) {}
  std::string name() const override { return "gpu-multi-level-tiling"; }

  void apply(Schedule& sch, RuleContext& ctx) const override {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1) continue;
      const BlockNode* b = found[0];
      if (!rule::isReduction(b) || !rule::hasDataReuse(b) || !rule::isPlainNest(sch, b)) continue;
      // The design space of this candidate: shared-memory tiles or not (drawn before touching the
      // schedule, so a refusal falls back to the untouched copy).
      bool shared = std::uniform_real_distribution<double>(0, 1)(ctx.rng) < 0.5;
      Schedule trial = sch;
      try {
        tile(trial, name, shared);
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }

private:
  void tile(Schedule& sch, const std::string& name, bool shared) const {
    BlockRV block = getBlock(sch, name);
    std::vector<IterType> types;
    for (auto& iv : sch.get(block)->iterVars) types.push_back(iv.iterType);
    std::vector<LoopRV> loops = getLoops(sch, block);
    std::vector<std::vector<LoopRV>> levels(6);  // S0 S1 S2 R0 S3 R1
    for (size_t i = 0; i < loops.size(); ++i) {
      bool spatial = types[i] == IterType::DataPar;
      int n = spatial ? 4 : 2;
      std::vector<ExprRV> f = samplePerfectTile(sch, loops[i], n, m_maxInnermost);
      std::vector<Value> factors(f.begin(), f.end());
      std::vector<LoopRV> parts = split(sch, loops[i], factors);
      static const int sLevel[4] = {0, 1, 2, 4}, rLevel[2] = {3, 5};
      for (int k = 0; k < n; ++k) levels[size_t(spatial ? sLevel[k] : rLevel[k])].push_back(parts[size_t(k)]);
    }
    if (levels[0].empty() || levels[3].empty())
      throw ScheduleValueError("block '" + name + "' has no spatial or no reduction loop to tile", sch.func());
    std::vector<LoopRV> order;
    for (auto& l : levels) order.insert(order.end(), l.begin(), l.end());
    reorder(sch, order);
    auto fused = [&](const std::vector<LoopRV>& l) { return l.size() == 1 ? l[0] : fuse(sch, l); };
    LoopRV bx = fused(levels[0]), vx = fused(levels[1]), tx = fused(levels[2]);
    bind(sch, bx, "blockIdx.x");
    bind(sch, vx, "vthread.x");
    bind(sch, tx, "threadIdx.x");
    annotate(sch, block, "meta_schedule.tiling_structure", Value("SSSRSR"));
    // The thread's outputs accumulate in registers, written back under the thread loop.
    BlockRV acc = cacheWrite(sch, block, 0, "local");
    reverseComputeAt(sch, acc, tx, /*preserveUnitLoops=*/true);
    if (!shared) return;
    // The inputs' tiles of each step of the outer reduction loop in shared memory.
    const BlockNode* b = sch.get(block);
    size_t reads = b->reads.size();
    LoopRV r0 = levels[3].back();
    for (size_t i = 0; i < reads; ++i) {
      BlockRV copy = cacheRead(sch, block, int64_t(i), "shared");
      computeAt(sch, copy, r0, /*preserveUnitLoops=*/true);
    }
  }

  int m_maxInnermost;
};

}  // namespace

std::shared_ptr<ScheduleRule> makeGPUMultiLevelTiling(int maxInnermostFactor) {
  return std::make_shared<GPUMultiLevelTiling>(maxInnermostFactor);
}

}  // namespace loom::tune
