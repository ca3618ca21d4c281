// Search strategies: propose the next batch of candidates to measure (random search, evolutionary
// search guided by the cost model).
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "core/tune/CostModel.h"
#include "core/tune/Measure.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/Task.h"

namespace loom::tune {

/// A candidate ready to measure: a point of the space and the features of its lowered program.
struct Candidate {
  SpacePoint point;
  std::vector<float> features;
  double predicted = 0; ///< the cost model's score when it ranked the candidate
};

/// Lowers a scheduled function for `target` and extracts its features; std::nullopt when it does
/// not lower (such candidates are dropped before measurement).
std::optional<std::vector<float>> featuresOf(const tir::PrimFunc& scheduled, const std::string& target);
/// `point` as a Candidate (features attached), or std::nullopt when it does not lower.
std::optional<Candidate> makeCandidate(SpacePoint point, const std::string& target);

/// What a strategy works with: the task, its space, the model (may be untrained), what was
/// measured already (final-trace keys), and measured designs to start from (fastest first).
struct SearchContext {
  const TuneTask* task = nullptr;
  const SpaceGenerator* space = nullptr;
  const CostModel* model = nullptr;
  std::set<std::string>* measured = nullptr;
  std::vector<tir::Trace> elites;
  std::mt19937_64 rng{1};
  /// Features of points lowered before, by point key (std::nullopt: it does not lower): the
  /// evolutionary search meets the same points again (elites, repeated mutations) batch after
  /// batch, and lowering is the search's main cost. Optional.
  std::map<std::string, std::optional<std::vector<float>>>* featureCache = nullptr;
  /// Threads that make and lower points (makeCandidates); what a strategy proposes does not
  /// depend on it.
  int threads = 1;
  /// The runner lowers candidates for their features where it builds them
  /// (PipelinedRunner::lowersForFeatures): random samples, which need no score, are then handed
  /// out unlowered (Candidate::features empty), taking their lowering off the searching process.
  bool lowerLater = false;
  /// When set: the strategy appends the keyHash() of each point it makes here and keeps as a
  /// parent without handing it out (the evolutionary search's population: random samples and
  /// replayed elites lowered on this process). The tuner passes them to a runner whose workers
  /// make mutants (PipelinedRunner::knowPoints), so that no worker makes such a point again.
  std::vector<uint64_t>* keptHere = nullptr;
};

/// makeCandidate through ctx.featureCache (when set): a point seen before is not lowered again.
std::optional<Candidate> makeCandidate(SearchContext& ctx, SpacePoint point);

/// Makes a point with each of `makers` (sample or replay with seeds already drawn; std::nullopt:
/// no point) and lowers the new ones, on ctx.threads threads. Returns, in the makers' order, the
/// candidates whose key is not in `seen` nor in `exclude` (when given), not repeated among them,
/// and that lower; their keys are added to `seen`. The result does not depend on ctx.threads.
using PointMaker = std::function<std::optional<SpacePoint>()>;
/// With `lower` false the points are not lowered (features empty; a point that does not lower is
/// then found out where it is built).
std::vector<Candidate> makeCandidates(SearchContext& ctx, const std::vector<PointMaker>& makers,
                                      std::set<std::string>& seen, const std::set<std::string>* exclude = nullptr,
                                      bool lower = true);

class SearchStrategy {
public:
  virtual ~SearchStrategy() = default;
  virtual std::string name() const = 0;
  /// Up to `n` new candidates (none measured before, no duplicates). Fewer (or none) when the
  /// space seems exhausted.
  virtual std::vector<Candidate> nextBatch(SearchContext& ctx, size_t n) = 0;
  /// With SearchContext::lowerLater: the final traces of points the strategy made but left for the
  /// runner to lower (the tuner sends them with the candidates it hands out); their features come
  /// back through lowered() (std::nullopt: it did not lower), in any order, or never.
  /// An item is a final trace to lower or a mutation request (mutationRequest) to make and lower.
  virtual std::vector<nlohmann::json> takeToLower() { return {}; }
  /// `key`: the item's dump(). `made`: for a mutation request, the point the runner made
  /// ({"final", "design"}; null when it did not replay); null for a final trace.
  virtual void lowered(const std::string& key, std::optional<std::vector<float>> features,
                       const nlohmann::json& made = nullptr) {}
};

/// A mutant as the evolutionary search makes it, described for a runner to make
/// (SearchContext::lowerLater): `design` replayed with its sampling decision `decision` drawn anew
/// from `seed`, then postprocessed. {"mutate": {"design", "decision", "seed"}}.
/// `parent` (when not 0): keyHash() of the parent's key, so a worker that knows which points are
/// known (lowerForSearch's `known`) does not hand back the parent itself ({"parent": hash}).
nlohmann::json mutationRequest(const nlohmann::json& design, size_t decision, uint64_t seed, uint64_t parent = 0);
/// A 64-bit hash of a point's key (SpacePoint::key(), a record's traceKey: FNV-1a over its text),
/// by which worker ranks tell a known point from a new one without rank 0's key strings.
uint64_t keyHash(std::string_view key);
/// How many points a worker may draw for one mutation request when the first ones are known.
inline constexpr int kMutantDraws = 4;
/// What a lowersForFeatures() runner does with one of MeasureCandidate::alsoLower: a final trace
/// is replayed and lowered; a mutation request is made (SpaceGenerator::replay, as the search
/// would) and lowered, and the point comes back in `made` ({"final", "design"}; null when it does
/// not replay). `features`: std::nullopt when it does not replay or lower.
/// With `known` (the keyHash()es of the points the search knows: measured, handed out, made
/// before; MpiRunner sends them to each worker), a mutant whose key is known (or is the
/// request's parent) is not lowered: the worker draws again, a decision of the same design and its
/// value from a seed derived from the request's, up to kMutantDraws points in all. The first draw
/// is the search's own mutant (the request's decision and seed). The point made comes back with
/// "hash" (its keyHash(), added to `known`) and "redrawn" (the known draws it replaced); when every
/// draw was known, `made` is {"known": true, "redrawn": N} and nothing was lowered.
struct LoweredForSearch {
  std::optional<std::vector<float>> features;
  nlohmann::json made;
};
LoweredForSearch lowerForSearch(const TuneTask& task, const SpaceGenerator& space, const nlohmann::json& item,
                                std::unordered_set<uint64_t>* known = nullptr);

/// Process-wide counts of mutants made by the runner (mutation requests): sent, came back made,
/// and of those how many repeated a point the search knew (measured, in the population, or made
/// before): each of these cost a worker one wasted replay and lowering.
/// With a known set on the workers (lowerForSearch's `known`): `redrawn` draws the workers found
/// known and replaced (a replay each, no lowering), `allKnown` requests whose every draw was known
/// (not lowered, not sent back).
struct RemoteMutantStats {
  size_t requested = 0, made = 0, repeated = 0, redrawn = 0, allKnown = 0;
};
RemoteMutantStats remoteMutantStats();

/// Uniform samples of the space.
std::unique_ptr<SearchStrategy> makeRandomSearch();

struct EvolutionaryOptions {
  size_t population = 48;  ///< candidates per generation
  int generations = 3;     ///< mutation rounds of the first evolving batch
  int generationsPerBatch = 1; ///< mutation rounds of each later batch (the population is kept)
  size_t elitesPerBatch = 2;   ///< fastest measured designs put back into the population per batch
  double eliteFraction = 0.25; ///< of the initial population taken from the fastest measured
  double epsGreedy = 0.2;  ///< fraction of each batch drawn at random (exploration)
};
/// MetaSchedule's evolutionary search: an initial population of measured elites and random
/// samples; each generation mutates one sampling decision (tile sizes, unroll step, compute
/// location, parallel extent) of parents drawn by predicted score and keeps the fittest; the batch
/// is the best predicted unmeasured candidates plus an eps-greedy share of random ones. Until the
/// model is trained it samples at random.
std::unique_ptr<SearchStrategy> makeEvolutionarySearch(const EvolutionaryOptions& options = {});

} // namespace loom::tune
