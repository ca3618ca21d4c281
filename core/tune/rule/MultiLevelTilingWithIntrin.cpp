// Rule multi-level-tiling-with-intrin (MetaSchedule's MultiLevelTilingWithIntrin for the CPU): an
// fp32 block that fits the register-tiled structure keeps its innermost "k-tile x 16 lanes" for
// the AVX-512 FMA micro-kernel x86_avx512_fma_f32x16_k<K>, K in {1, 2, 4, 8, 16} sampled among the
// divisors of the last reduction loop; the postprocessor rewriteTensorize tensorizes it (or
// vectorizes the lanes when the tile does not match the intrinsic).
#include "core/schedule/Primitives.h"
#include "core/schedule/TensorIntrin.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RegisterTiling.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

constexpr const char* kIntrinPrefix = "x86_avx512_fma_f32x16";

class MultiLevelTilingWithIntrin : public ScheduleRule {
public:
  explicit MultiLevelTilingWithIntrin(double claim) : m_claim(claim) {}
  std::string name() const override { return "multi-level-tiling-with-intrin"; }

  void apply(Schedule& sch, RuleContext& ctx) const override {
    if (!findTensorIntrin(std::string(kIntrinPrefix) + "_k1")) return;
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1 || found[0]->annotations.count("meta_schedule.tiling_structure")) continue;
      auto info = rule::registerTileInfo(sch, found[0]);
      if (!info || !info->float32 || info->lanes != 16) continue;
      // The k-tiles an intrinsic exists for that divide the last reduction loop.
      auto loops = loopsAbove(sch, found[0]);
      int64_t kExtent = 0;
      for (size_t i = 0; i < found[0]->iterVars.size(); ++i)
        if (found[0]->iterVars[i].iterType != IterType::DataPar) kExtent = constIntValue(loops[i]->extent).value_or(0);
      rule::RegisterTileOptions opt;
      opt.intrinPrefix = kIntrinPrefix;
      for (int64_t k : {1, 2, 4, 8, 16})
        if (kExtent > 0 && kExtent % k == 0) opt.intrinK.push_back(k);
      if (opt.intrinK.empty()) continue;
      std::uniform_real_distribution<double> u(0, 1);
      if (u(ctx.rng) >= m_claim) continue;
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

std::shared_ptr<ScheduleRule> makeMultiLevelTilingWithIntrin(double claimProbability) {
  return std::make_shared<MultiLevelTilingWithIntrin>(claimProbability);
}

void rewriteTensorize(Schedule& sch) {
  for (const std::string& name : rule::blockNames(sch)) {
    auto found = findBlocks(sch.func(), name);
    if (found.size() != 1) continue;
    auto it = found[0]->annotations.find(rule::kAutoTensorizeKey);
    if (it == found[0]->annotations.end()) continue;
    auto* str = it->second.as<StringImmNode>();
    std::string prefix = str ? str->value : std::string();
    // The parallel/unroll choices move to the outer block tensorize leaves (blockize names it
    // NAME_o), so rewriteParallelUnroll still finds them.
    std::vector<std::pair<std::string, Value>> moved;
    for (const char* key : {rule::kParallelKey, rule::kUnrollKey}) {
      auto a = found[0]->annotations.find(key);
      if (a == found[0]->annotations.end()) continue;
      auto v = constIntValue(a->second);
      if (!v) continue;
      moved.emplace_back(key, Value(*v));
    }
    BlockRV block = getBlock(sch, name);
    unannotate(sch, block, rule::kAutoTensorizeKey);
    std::vector<LoopRV> loops = getLoops(sch, block);
    if (loops.size() < 2) continue;
    // The innermost two loops: the k-tile, then the lanes.
    auto k = constIntValue(sch.get(loops[loops.size() - 2])->extent);
    Schedule trial = sch;
    try {
      std::string intrin = prefix + "_k" + std::to_string(k.value_or(0));
      if (!k || prefix.empty() || !findTensorIntrin(intrin)) throw ScheduleValueError("no intrinsic for this tile");
      for (auto& [key, v] : moved) unannotate(trial, block, key);
      tensorize(trial, loops[loops.size() - 2], intrin);
      BlockRV outer = getBlock(trial, name + "_o");
      for (auto& [key, v] : moved) annotate(trial, outer, key, v);
      sch = std::move(trial);
    } catch (const ScheduleError&) {
      // Not the intrinsic's computation (or no k-tile of that size): plain vector code.
      vectorize(sch, loops.back());
    }
  }
}

} // namespace loom::tune
