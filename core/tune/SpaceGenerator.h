// The search space: schedule rules applied to a workload produce a trace with sampling
// instructions (MetaSchedule's PostOrderApply with the CPU rule set).
#pragma once
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/schedule/Schedule.h"
#include "core/tir/Function.h"

namespace loom::tune {

/// Context a rule may use for structural choices that are not sampling instructions (which of
/// several design spaces a candidate belongs to); the per-candidate decisions go through the
/// schedule's sampling primitives so mutation can change them.
struct RuleContext {
  std::mt19937_64 rng;
  int numCores = 2;
};

/// One rule of the space: reads the schedule's current function and applies primitives to it.
/// A rule must leave the schedule valid: primitives that refuse (ScheduleError) are skipped.
class ScheduleRule {
public:
  virtual ~ScheduleRule() = default;
  virtual std::string name() const = 0;
  virtual void apply(tir::Schedule& sch, RuleContext& ctx) const = 0;
};

/// A point of the space: the design trace (rules' primitives and sampling decisions: what
/// mutation changes) and the final schedule (design plus postprocessing: what is built and
/// stored in tuning records, replayable on its own).
struct SpacePoint {
  tir::Trace design;
  /// The final schedule; for a point made elsewhere (`finalTrace` set) the unscheduled function.
  tir::Schedule final;
  /// The final trace (simplified) as JSON, and its canonical string (the dedup key, computed
  /// once: the search asks for it several times per point).
  nlohmann::json finalJson() const;
  const std::string& key() const {
    if (keyCache.empty()) keyCache = finalJson().dump();
    return keyCache;
  }
  /// The final trace as a script (finalJson()'s trace printed).
  std::string finalScript() const;
  /// The design trace as JSON (computed once).
  const nlohmann::json& designJson() const;
  mutable std::string keyCache; ///< key() once computed
  /// A point made elsewhere (a worker rank made the mutant and sent it back): its final trace as
  /// finalJson() gives it; `final` was not built here.
  std::optional<nlohmann::json> finalTrace = std::nullopt;
  mutable std::optional<nlohmann::json> designCache = std::nullopt; ///< designJson() once computed
};

/// Generates candidate schedules of a function by applying rules in order, then postprocessing.
class SpaceGenerator {
public:
  explicit SpaceGenerator(std::vector<std::shared_ptr<ScheduleRule>> rules);
  /// The CPU rule set: auto-inline, multi-level tiling with the AVX-512 intrinsic, register-tiled
  /// multi-level tiling (local accumulator, 16 lanes, packed panel), multi-level tiling (SSRSRS,
  /// cache_write at a sampled level) for the blocks the first two leave, random compute location,
  /// winograd-transform, parallel-vectorize-unroll.
  static SpaceGenerator defaultCpu();
  /// The rule set of `target`'s kind: for "cuda" and "opencl" auto-inline and the GPU rules
  /// (rule/GPURules.h: multi-level tiling bound to blockIdx/vthread/threadIdx with local and
  /// shared-memory tiles, cross-thread reduction, auto-bind); defaultCpu() otherwise.
  static SpaceGenerator forTarget(const std::string& target);

  /// One candidate: a fresh schedule of `f` with every rule applied, its sampling instructions
  /// drawn with `seed`, then postprocessed. std::nullopt when postprocessing refuses it.
  std::optional<SpacePoint> sample(const tir::PrimFunc& f, uint64_t seed) const;
  /// Replays a design trace on `f` with some decisions changed (a None decision is drawn anew
  /// from `seed`), then postprocesses. std::nullopt when the trace no longer applies.
  std::optional<SpacePoint> replay(const tir::PrimFunc& f, const tir::Trace& design,
                                   const std::map<size_t, tir::Value>& decisions, uint64_t seed) const;

  const std::vector<std::shared_ptr<ScheduleRule>>& rules() const { return m_rules; }

private:
  std::vector<std::shared_ptr<ScheduleRule>> m_rules;
};

/// The postprocessor of parallel-vectorize-unroll: the sampled parallel count and unroll step
/// recorded on blocks become fuse + parallel and a pragma_auto_unroll_max_step loop annotation.
void rewriteParallelUnroll(tir::Schedule& sch);
/// The postprocessor of multi-level-tiling-with-intrin: each block annotated for a tensor intrinsic
/// has its innermost "k-tile x lanes" tensorized with the intrinsic of that k-tile, or its lanes
/// vectorized when the tile does not match.
void rewriteTensorize(tir::Schedule& sch);
/// The postprocessor of the register-tiled rules: the marked reduction blocks get their init
/// decomposed out of the reduction loops (vectorized, unrolled).
void rewriteReductionInit(tir::Schedule& sch);
/// The postprocessors, in order (what sample and replay apply after the rules).
void postprocess(tir::Schedule& sch);

/// The rules of the CPU space (rule/*.cpp).
std::shared_ptr<ScheduleRule> makeAutoInline();
std::shared_ptr<ScheduleRule> makeMultiLevelTiling(int maxInnermostFactor = 64);
/// Register-tiled structure (rule/RegisterTiling.h) on blocks whose output's innermost axis fills
/// vector lanes, claimed with the given probability per block (the rest is left to later rules).
std::shared_ptr<ScheduleRule> makeMultiLevelTilingRegister(double claimProbability = 0.5);
/// The same structure with the AVX-512 FMA micro-kernel as the innermost tile (fp32).
std::shared_ptr<ScheduleRule> makeMultiLevelTilingWithIntrin(double claimProbability = 0.35);
/// The register-tiled structure for int8 blocks whose update is a byte dot product (dot4_u8s8*):
/// 16 int32 lanes, row tiles the registers hold (AVX2: at most 4), no panel packing.
std::shared_ptr<ScheduleRule> makeMultiLevelTilingDot4(double claimProbability = 1.0);
std::shared_ptr<ScheduleRule> makeRandomComputeLocation();
/// Unrolls the tile-position loops of Winograd tile transforms (core/graph/Winograd.h).
std::shared_ptr<ScheduleRule> makeWinogradTransform();
std::shared_ptr<ScheduleRule> makeParallelVectorizeUnroll(std::vector<int64_t> unrollSteps = {0, 16, 64, 512},
                                                         int maxVectorExtent = 64);

} // namespace loom::tune
