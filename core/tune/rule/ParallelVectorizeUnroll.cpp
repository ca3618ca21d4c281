// Rule parallel-vectorize-unroll: per top-level loop nest, fuse a sampled number of outer
// spatial loops and run them in parallel, annotate the nest with a sampled
// pragma_auto_unroll_max_step, and vectorize the innermost spatial loop of each block.
#include <set>

#include "core/schedule/Primitives.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RegisterTiling.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

using namespace tir;

namespace {

using rule::kParallelKey;
using rule::kUnrollKey;

class ParallelVectorizeUnroll : public ScheduleRule {
public:
  ParallelVectorizeUnroll(std::vector<int64_t> unrollSteps, int maxVector)
      : m_unroll(std::move(unrollSteps)), m_maxVector(maxVector) {}
  std::string name() const override { return "parallel-vectorize-unroll"; }

  void apply(Schedule& sch, RuleContext& ctx) const override {
    vectorizeInnermost(sch);
    // One nest per first block of each top-level loop nest under the root.
    std::vector<std::string> firsts;
    std::vector<const ForNode*> tops;
    // Nests holding a register-tiled block have their parallel loop fused already: fusing more
    // would leave the accumulator and the panel indexed in ways compact-buffers cannot shrink.
    std::set<const ForNode*> fusedAlready;
    const ForNode* lastTop = nullptr;
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1) continue;
      auto loops = loopsAbove(sch, found[0]);
      if (loops.empty()) continue;
      auto ts = found[0]->annotations.find("meta_schedule.tiling_structure");
      if (ts != found[0]->annotations.end())
        if (auto* str = ts->second.as<StringImmNode>(); str && str->value.rfind("SSRS", 0) == 0 && str->value != "SSRSRS")
          fusedAlready.insert(loops.front());
      if (enclosingBlock(sch, found[0])->name != "root") continue;
      if (loops.front() == lastTop) continue;
      lastTop = loops.front();
      firsts.push_back(name);
      tops.push_back(loops.front());
    }
    for (size_t i = 0; i < firsts.size(); ++i) parallelizeAndUnroll(sch, ctx, firsts[i], fusedAlready.count(tops[i]) > 0);
  }

private:
  void vectorizeInnermost(Schedule& sch) const {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1) continue;
      if (found[0]->annotations.count(rule::kAutoTensorizeKey)) continue; // lanes left to the intrinsic
      auto loops = loopsAbove(sch, found[0]);
      if (loops.empty()) continue;
      const ForNode* inner = loops.back();
      auto ext = constIntValue(inner->extent);
      if (!ext || *ext < 2 || *ext > m_maxVector || inner->kind != ForKind::Serial) continue;
      if (realizesUnder(inner).size() != 1) continue;
      Schedule trial = sch;
      try {
        vectorize(trial, getLoops(trial, getBlock(trial, name)).back());
      } catch (const ScheduleError&) {
        continue;
      }
      sch = std::move(trial);
    }
  }

  /// Records the choices on the nest's first block; rewriteParallelUnroll (the postprocessor)
  /// turns them into fuse + parallel + the unroll annotation, so mutating the sampled count
  /// changes the schedule.
  void parallelizeAndUnroll(Schedule& sch, RuleContext& ctx, const std::string& name, bool oneLoop) const {
    // How many outer loops (a single-child chain) can be fused and run in parallel.
    int maxFuse = 0;
    if (oneLoop) {
      maxFuse = 1;
    } else {
      auto loops = loopsAbove(sch, findBlocks(sch.func(), name)[0]);
      int64_t extent = 1;
      for (size_t k = 0; k < loops.size() && k < 4; ++k) {
        if (k > 0 && onlyChildLoop(loops[k - 1]) != loops[k]) break;
        if (loops[k]->kind != ForKind::Serial) break;
        if (extent >= 64 * ctx.numCores) break;
        Schedule trial = sch;
        try {
          auto rvs = getLoops(trial, getBlock(trial, name));
          std::vector<LoopRV> chain(rvs.begin(), rvs.begin() + long(k) + 1);
          LoopRV fused = chain.size() > 1 ? fuse(trial, chain) : chain[0];
          parallel(trial, fused);
        } catch (const ScheduleError&) {
          break;
        }
        extent *= constIntValue(loops[k]->extent).value_or(1);
        maxFuse = int(k) + 1;
      }
    }
    Schedule trial = sch;
    try {
      BlockRV block = getBlock(trial, name);
      // The parallel extent: how many outer loops to fuse (0..maxFuse), sampled.
      std::vector<int64_t> counts;
      for (int k = maxFuse > 0 ? 1 : 0; k <= maxFuse; ++k) counts.push_back(k);
      std::vector<double> probs(counts.size(), 1.0 / double(counts.size()));
      ExprRV n = sampleCategorical(trial, counts, probs);
      annotate(trial, block, kParallelKey, Value(n));
      std::vector<double> uprobs(m_unroll.size(), 1.0 / double(m_unroll.size()));
      ExprRV step = sampleCategorical(trial, m_unroll, uprobs);
      annotate(trial, block, kUnrollKey, Value(step));
    } catch (const ScheduleError&) {
      return;
    }
    sch = std::move(trial);
  }

  std::vector<int64_t> m_unroll;
  int m_maxVector;
};

} // namespace

void rewriteParallelUnroll(Schedule& sch) {
  for (const std::string& name : rule::blockNames(sch)) {
    auto found = findBlocks(sch.func(), name);
    if (found.size() != 1) continue;
    const BlockNode* b = found[0];
    auto pit = b->annotations.find(kParallelKey);
    auto uit = b->annotations.find(kUnrollKey);
    if (pit == b->annotations.end() && uit == b->annotations.end()) continue;
    int64_t count = 0, step = -1;
    if (pit != b->annotations.end())
      if (auto v = constIntValue(pit->second)) count = *v;
    if (uit != b->annotations.end())
      if (auto v = constIntValue(uit->second)) step = *v;
    BlockRV block = getBlock(sch, name);
    if (pit != b->annotations.end()) unannotate(sch, block, kParallelKey);
    if (uit != b->annotations.end()) unannotate(sch, block, kUnrollKey);
    auto loops = getLoops(sch, block);
    if (loops.empty()) continue;
    // Fuse the longest legal prefix of the first `count` loops (tile sizes may have changed
    // since the count was drawn).
    LoopRV outer = loops.front();
    for (int64_t k = std::min<int64_t>(count, int64_t(loops.size())); k >= 1; --k) {
      Schedule trial = sch;
      try {
        std::vector<LoopRV> chain(loops.begin(), loops.begin() + k);
        LoopRV fused = chain.size() > 1 ? fuse(trial, chain) : chain[0];
        parallel(trial, fused);
        sch = std::move(trial);
        outer = fused;
        break;
      } catch (const ScheduleError&) {
      }
    }
    if (step >= 0) annotate(sch, outer, "pragma_auto_unroll_max_step", Value(step));
  }
}

std::shared_ptr<ScheduleRule> makeParallelVectorizeUnroll(std::vector<int64_t> unrollSteps, int maxVectorExtent) {
  return std::make_shared<ParallelVectorizeUnroll>(std::move(unrollSteps), maxVectorExtent);
}

} // namespace loom::tune
