// Rule multi-level-tiling-dot4: int8 blocks whose update is a byte dot product (the tir intrinsic
// dot4_u8s8 / dot4_u8s8_pairs16 of the packed u8 x s8 conv and dense, core/topi/nn/QnnDot4.cpp)
// get the register-tiled structure (RegisterTiling.h) sized for those dot products: one chunk of
// 16 int32 output-channel lanes (the vectorizer widens the call to vpdpbusd with AVX-512 VNNI, or
// vpmaddubsw + vpmaddwd + vpaddd on AVX2, codegen/Dot4.h) times a register tile of rows sampled up
// to what the registers hold — on AVX2 4 rows (each row's accumulator is two ymm registers and
// each dot product takes a temporary: more rows spill, as the default schedule found), with
// AVX-512 up to 12 rows and 2 chunks. The weights are already packed at compile time (int32
// words of 4 input channels, contiguous along the lanes), so no panel is packed. Claims the block
// before multi-level-tiling-register, which would tile it like an fp32 block (up to 8 rows x 4
// vectors: spilled accumulators).
#include "core/schedule/Primitives.h"
#include "core/tir/Visitor.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RegisterTiling.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

bool callsDot4(const BlockNode* b) {
  bool found = false;
  postOrderVisit(b->body, [&](const IRNode* n) {
    if (n->nodeKind == NodeKind::Call && static_cast<const CallNode*>(n)->op.rfind("dot4_u8s8", 0) == 0) found = true;
  });
  return found;
}

bool hostHasAvx512() {
#if defined(__x86_64__) || defined(__i386__)
  return __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

class MultiLevelTilingDot4 : public ScheduleRule {
public:
  explicit MultiLevelTilingDot4(double claim) : m_claim(claim) {}
  std::string name() const override { return "multi-level-tiling-dot4"; }

  void apply(Schedule& sch, RuleContext& ctx) const override {
    for (const std::string& name : rule::blockNames(sch)) {
      auto found = findBlocks(sch.func(), name);
      if (found.size() != 1 || found[0]->annotations.count("meta_schedule.tiling_structure")) continue;
      if (!callsDot4(found[0])) continue;
      auto info = rule::registerTileInfo(sch, found[0]);
      if (!info || info->float32) continue;
      std::uniform_real_distribution<double> u(0, 1);
      if (u(ctx.rng) >= m_claim) continue;
      rule::RegisterTileOptions opt;
      const bool wide = hostHasAvx512();
      opt.maxVectorTiles = wide ? 2 : 1;
      opt.maxRowTile = wide ? 12 : 4;
      opt.maxOtherTile = wide ? 2 : 1;
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

std::shared_ptr<ScheduleRule> makeMultiLevelTilingDot4(double claimProbability) {
  return std::make_shared<MultiLevelTilingDot4>(claimProbability);
}

} // namespace loom::tune
