// SpaceGenerator: apply the rules to a fresh schedule, replay design traces, postprocess.
#include "core/tune/SpaceGenerator.h"

#include <thread>

#include "core/schedule/Trace.h"
#include "core/tune/rule/GPURules.h"

namespace loom::tune {

nlohmann::json SpacePoint::finalJson() const { return finalTrace ? *finalTrace : final.trace().simplified().toJson(); }

std::string SpacePoint::finalScript() const {
  return finalTrace ? tir::Trace::fromJson(*finalTrace).str() : final.trace().simplified().str();
}

const nlohmann::json& SpacePoint::designJson() const {
  if (!designCache) designCache = design.toJson();
  return *designCache;
}

SpaceGenerator::SpaceGenerator(std::vector<std::shared_ptr<ScheduleRule>> rules) : m_rules(std::move(rules)) {}

void postprocess(tir::Schedule& sch) {
  rewriteReductionInit(sch);
  // Tensorize before fusing: blockize wants the tile's bindings free of fused parallel loops.
  rewriteTensorize(sch);
  rewriteParallelUnroll(sch);
}

SpaceGenerator SpaceGenerator::forTarget(const std::string& target) {
  std::string kind = target.substr(0, target.find(' '));
  if (kind == "cuda" || kind == "opencl")
    return SpaceGenerator({makeAutoInline(), makeGPUMultiLevelTiling(), makeGPUCrossThreadReduction(), makeGPUAutoBind()});
  return defaultCpu();
}

SpaceGenerator SpaceGenerator::defaultCpu() {
  return SpaceGenerator({makeAutoInline(), makeMultiLevelTilingDot4(), makeMultiLevelTilingWithIntrin(),
                         makeMultiLevelTilingRegister(),
                         makeMultiLevelTiling(), makeRandomComputeLocation(), makeWinogradTransform(),
                         makeParallelVectorizeUnroll()});
}

std::optional<SpacePoint> SpaceGenerator::sample(const tir::PrimFunc& f, uint64_t seed) const {
  tir::Schedule sch(f, seed);
  RuleContext ctx{std::mt19937_64(seed * 0x9E3779B97F4A7C15ull + 1),
                  int(std::max(1u, std::thread::hardware_concurrency()))};
  for (auto& r : m_rules) r->apply(sch, ctx);
  tir::Trace design = sch.trace();
  try {
    postprocess(sch);
  } catch (const tir::ScheduleError&) {
    return std::nullopt;
  }
  return SpacePoint{design, sch, {}};
}

std::optional<SpacePoint> SpaceGenerator::replay(const tir::PrimFunc& f, const tir::Trace& design,
                                                 const std::map<size_t, tir::Value>& decisions,
                                                 uint64_t seed) const {
  tir::Schedule sch(f, seed);
  try {
    design.apply(sch, decisions);
    tir::Trace applied = sch.trace();
    postprocess(sch);
    return SpacePoint{applied, sch, {}};
  } catch (const tir::ScheduleError&) {
    return std::nullopt;
  }
}

} // namespace loom::tune
