// Rule random compute location: a stage left as its own loop nest (not inlined, not tiled, not an
// output) moves under a loop of its consumer drawn by sample_compute_location.
#include "core/schedule/Primitives.h"
#include "core/topi/nn/Winograd.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class RandomComputeLocation : public ScheduleRule {
public:
  std::string name() const override { return "random-compute-location"; }

  void apply(Schedule& sch, RuleContext&) const override {
    // Consumers first, so a producer can follow its consumer into the same loop.
    std::vector<std::string> names = rule::blockNames(sch);
    for (auto it = names.rbegin(); it != names.rend(); ++it) {
      auto found = findBlocks(sch.func(), *it);
      if (found.size() != 1) continue;
      const BlockNode* b = found[0];
      if (rule::writesOutput(sch, b) || b->annotations.count("meta_schedule.tiling_structure")) continue;
      // Under a consumer's loop a Winograd transform would compute part of a tile, its position
      // loops no longer whole: the select over positions would not fold (it stays at the root;
      // its producer, the padded input, may still move under its tile loop).
      if (topi::nn::isWinogradTransform(b)) continue;
      if (!enclosingBlock(sch, b) || enclosingBlock(sch, b)->name != "root") continue;
      if (loopsAbove(sch, b).size() != b->iterVars.size()) continue; // already moved
      Schedule trial = sch;
      try {
        BlockRV rv = getBlock(trial, *it);
        if (computeLocationCandidates(trial, rv).empty()) continue;
        LoopRV loc = sampleComputeLocation(trial, rv);
        computeAt(trial, rv, loc, /*preserveUnitLoops=*/true);
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }
};

} // namespace

std::shared_ptr<ScheduleRule> makeRandomComputeLocation() { return std::make_shared<RandomComputeLocation>(); }

} // namespace loom::tune
