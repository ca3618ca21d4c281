// Rule multi-level tiling (Ansor/MetaSchedule, CPU "SSRSRS"): blocks with data reuse get their
// spatial loops tiled in 4 and reduction loops in 2 levels by sample_perfect_tile, reordered
// S0 S1 R0 S2 R1 S3; most candidates accumulate into a cache_write buffer written back under a
// spatial tile loop (reverse_compute_at).
#include "core/schedule/Primitives.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class MultiLevelTiling : public ScheduleRule {
public:
  explicit MultiLevelTiling(int maxInnermost) : m_maxInnermost(maxInnermost) {}
  std::string name() const override { return "multi-level-tiling"; }

  void apply(Schedule& sch, RuleContext& ctx) const override {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1) continue;
      const BlockNode* b = found[0];
      if (!rule::isReduction(b) || !rule::hasDataReuse(b) || !rule::isPlainNest(sch, b)) continue;
      if (b->annotations.count("meta_schedule.tiling_structure")) continue;
      // Structural choices (the design space this candidate belongs to), drawn before touching
      // the schedule so a refusal below can fall back to the untouched copy.
      bool cacheWrite = std::uniform_real_distribution<double>(0, 1)(ctx.rng) < 0.75;
      int writeLevel = int(ctx.rng() % 2);
      Schedule trial = sch;
      try {
        tile(trial, name, cacheWrite, writeLevel);
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }

private:
  void tile(Schedule& sch, const std::string& name, bool cacheWrite, int writeLevel) const {
    BlockRV block = getBlock(sch, name);
    std::vector<IterType> types;
    for (auto& iv : sch.get(block)->iterVars) types.push_back(iv.iterType);
    std::vector<LoopRV> loops = getLoops(sch, block);
    std::vector<std::vector<LoopRV>> levels(6); // S0 S1 R0 S2 R1 S3
    for (size_t i = 0; i < loops.size(); ++i) {
      bool spatial = types[i] == IterType::DataPar;
      int n = spatial ? 4 : 2;
      std::vector<ExprRV> f = samplePerfectTile(sch, loops[i], n, m_maxInnermost);
      std::vector<Value> factors(f.begin(), f.end());
      std::vector<LoopRV> parts = split(sch, loops[i], factors);
      static const int sLevel[4] = {0, 1, 3, 5}, rLevel[2] = {2, 4};
      for (int k = 0; k < n; ++k) levels[spatial ? sLevel[k] : rLevel[k]].push_back(parts[k]);
    }
    std::vector<LoopRV> order;
    for (auto& l : levels) order.insert(order.end(), l.begin(), l.end());
    reorder(sch, order);
    annotate(sch, block, "meta_schedule.tiling_structure", Value("SSRSRS"));
    if (cacheWrite) {
      BlockRV copy = cacheWrite_(sch, block);
      const std::vector<LoopRV>& at = levels[writeLevel];
      reverseComputeAt(sch, copy, at.back(), /*preserveUnitLoops=*/true);
    }
  }
  static BlockRV cacheWrite_(Schedule& sch, const BlockRV& block) {
    return tir::cacheWrite(sch, block, 0, "global");
  }

  int m_maxInnermost;
};

} // namespace

std::shared_ptr<ScheduleRule> makeMultiLevelTiling(int maxInnermostFactor) {
  return std::make_shared<MultiLevelTiling>(maxInnermostFactor);
}

} // namespace loom::tune
