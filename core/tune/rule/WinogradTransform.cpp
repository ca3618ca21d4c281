// Rule winograd-transform: the tile transforms of a Winograd convolution (blocks annotated
// schedule_rule = "winograd_transform", see core/graph/Winograd.h; random-compute-location leaves
// them at the root, whole tiles) get their two tile-position loops unrolled, so each position's
// select folds to its short sum and the tile's loads are shared; parallel-vectorize-unroll then
// fuses the tile and channel loops above them (it stops at the unrolled loops) and vectorizes the
// lanes (MetaSchedule's custom winograd rules).
#include "core/schedule/Primitives.h"
#include "core/topi/nn/Winograd.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class WinogradTransform : public ScheduleRule {
public:
  std::string name() const override { return "winograd-transform"; }

  void apply(Schedule& sch, RuleContext&) const override {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1 || !topi::nn::isWinogradTransform(found[0])) continue;
      Schedule trial = sch;
      try {
        // The block's own loops end (x, y, lane), also under a compute location drawn before.
        auto loops = getLoops(trial, getBlock(trial, name));
        if (loops.size() < 3) continue;
        unroll(trial, loops[loops.size() - 3]);
        unroll(trial, loops[loops.size() - 2]);
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }
};

}  // namespace

std::shared_ptr<ScheduleRule> makeWinogradTransform() { return std::make_shared<WinogradTransform>(); }

}  // namespace loom::tune
