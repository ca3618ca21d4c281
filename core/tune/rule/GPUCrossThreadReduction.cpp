// Rule gpu-cross-thread-reduction: a reduction without data reuse summed by the threads of one block per output.
#include "core/schedule/Primitives.h"
#include "core/tune/rule/GPURules.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class GPUCrossThreadReduction : public ScheduleRule {
public:
  std::string name() const override { return "gpu-cross-thread-reduction"; }

  void apply(Schedule& sch, RuleContext& ctx) const override {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1) continue;
      const BlockNode* b = found[0];
      if (!rule::isReduction(b) || rule::hasDataReuse(b) || !rule::isPlainNest(sch, b)) continue;
      if (std::uniform_real_distribution<double>(0, 1)(ctx.rng) < 0.5) continue;  // left to gpu-auto-bind
      Schedule trial = sch;
      try {
        reduceAcrossThreads(trial, name);
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }

private:
  static void reduceAcrossThreads(Schedule& sch, const std::string& name) {
    BlockRV block = getBlock(sch, name);
    std::vector<IterType> types;
    for (auto& iv : sch.get(block)->iterVars) types.push_back(iv.iterType);
    std::vector<LoopRV> loops = getLoops(sch, block);
    std::vector<LoopRV> spatial, reduce;
    for (size_t i = 0; i < loops.size(); ++i) (types[i] == IterType::DataPar ? spatial : reduce).push_back(loops[i]);
    if (spatial.empty() || reduce.empty() || spatial.size() + reduce.size() != loops.size())
      throw ScheduleValueError("block '" + name + "' is not spatial loops over reduction loops", sch.func());
    for (size_t i = 0; i < spatial.size(); ++i)
      if (sch.get(loops[i]) != sch.get(spatial[i]))
        throw ScheduleValueError("block '" + name + "' has a reduction loop outside a spatial one", sch.func());
    LoopRV s = spatial.size() == 1 ? spatial[0] : fuse(sch, spatial);
    LoopRV r = reduce.size() == 1 ? reduce[0] : fuse(sch, reduce);
    ExprRV threads = sampleCategorical(sch, {16, 32, 64, 128, 256}, {0.2, 0.2, 0.2, 0.2, 0.2});
    std::vector<LoopRV> parts = split(sch, r, {Value(), Value(threads)});
    reorder(sch, {s, parts[1], parts[0]});
    bind(sch, s, "blockIdx.x");
    bind(sch, parts[1], "threadIdx.x");
  }
};

}  // namespace

std::shared_ptr<ScheduleRule> makeGPUCrossThreadReduction() { return std::make_shared<GPUCrossThreadReduction>(); }

}  // namespace loom::tune
