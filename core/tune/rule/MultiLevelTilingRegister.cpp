// Rule multi-level-tiling-register: reduction blocks whose output's innermost axis fills vector
// lanes get the register-tiled structure (RegisterTiling.h) — sampled tiles around the whole
// reduction, a register-sized "local" accumulator (or the fused epilogue) written back under the
// tile, the innermost 16 fp32 lanes vectorized, the tile unrolled — and, in most candidates, the
// operand reused across rows packed into a contiguous panel. Blocks it does not claim are left to
// multi-level-tiling.
#include "core/schedule/Primitives.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RegisterTiling.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class MultiLevelTilingRegister : public ScheduleRule {
public:
  explicit MultiLevelTilingRegister(double claim) : m_claim(claim) {}
  std::string name() const override { return "multi-level-tiling-register"; }

  void apply(Schedule& sch, RuleContext& ctx) const override {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1 || found[0]->annotations.count("meta_schedule.tiling_structure")) continue;
      auto info = rule::registerTileInfo(sch, found[0]);
      if (!info) continue;
      // Structural choices (which design space): claim the block, and pack which read (if any).
      std::uniform_real_distribution<double> u(0, 1);
      if (u(ctx.rng) >= m_claim) continue;
      rule::RegisterTileOptions opt;
      if (!info->packableReads.empty() && u(ctx.rng) < 0.7)
        opt.packRead = info->packableReads[ctx.rng() % info->packableReads.size()];
      Schedule trial = sch;
      try {
        rule::applyRegisterTiling(trial, name, *info, opt);
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }

private:
  double m_claim;
};

} // namespace

std::shared_ptr<ScheduleRule> makeMultiLevelTilingRegister(double claimProbability) {
  return std::make_shared<MultiLevelTilingRegister>(claimProbability);
}

} // namespace loom::tune
