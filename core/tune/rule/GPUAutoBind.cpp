// Rule gpu-auto-bind: every block not bound to threads yet runs one output element per thread.
#include "core/schedule/Primitives.h"
#include "core/tune/rule/GPURules.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class GPUAutoBind : public ScheduleRule {
public:
  std::string name() const override { return "gpu-auto-bind"; }

  void apply(Schedule& sch, RuleContext&) const override {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1) continue;
      Schedule trial = sch;
      try {
        if (!bindBlock(trial, name)) continue;
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }

private:
  /// False when the block is bound already (under a thread-bound loop).
  static bool bindBlock(Schedule& sch, const std::string& name) {
    BlockRV block = getBlock(sch, name);
    std::vector<LoopRV> loops = getLoops(sch, block);
    for (const LoopRV& l : loops)
      if (sch.get(l)->kind == ForKind::ThreadBinding) return false;
    const BlockNode* b = sch.get(block);
    // The leading loops of spatial iter vars (a plain TE nest: loop i binds iter var i).
    size_t spatial = 0;
    if (rule::isPlainNest(sch, b))
      while (spatial < loops.size() && b->iterVars[spatial].iterType == IterType::DataPar) ++spatial;
    if (spatial == 0) {
      LoopRV unit = loops.empty() ? addUnitLoop(sch, block) : addUnitLoop(sch, loops.front());
      bind(sch, unit, "blockIdx.x");
      return true;
    }
    std::vector<LoopRV> lead(loops.begin(), loops.begin() + long(spatial));
    LoopRV fused = lead.size() == 1 ? lead[0] : fuse(sch, lead);
    ExprRV threads = sampleCategorical(sch, {32, 64, 128, 256, 512}, {0.2, 0.2, 0.2, 0.2, 0.2});
    std::vector<LoopRV> parts = split(sch, fused, {Value(), Value(threads)});
    bind(sch, parts[0], "blockIdx.x");
    bind(sch, parts[1], "threadIdx.x");
    return true;
  }
};

}  // namespace

std::shared_ptr<ScheduleRule> makeGPUAutoBind() { return std::make_shared<GPUAutoBind>(); }

}  // namespace loom::tune
