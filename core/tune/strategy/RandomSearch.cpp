// Random search: draw points of the space until the batch is full of new candidates. Also the
// candidate making shared by the strategies (lowering for features, on several threads).
#include "core/tune/SearchStrategy.h"

#include "core/driver/BuildOperator.h"
#include "core/transform/Pipeline.h"
#include "core/tune/CpuProfile.h"
#include "core/tune/Features.h"
#include "core/tune/strategy/Parallel.h"

namespace loom::tune {

std::optional<std::vector<float>> featuresOf(const tir::PrimFunc& scheduled, const std::string& target) {
  cpu::Scope profile(cpu::Phase::Lowering);
  try {
    transform::PassContext ctx;
    if (target == "llvm" || target.rfind("llvm ", 0) == 0) {
      // What lowerOperator lowers for a CPU target, without the packed-call entry the features
      // do not look at (they are taken from the function before it).
      transform::LowerOptions lo;
      lo.gpu = false;
      lo.packedEntry = false;
      return extractFeatures(transform::lower(scheduled, ctx, lo));
    }
    driver::OperatorOptions o;
    o.target = target;
    driver::LoweredOperator op = driver::lowerOperator(scheduled, o, ctx);
    return extractFeatures(op.lowered);
  } catch (const Error&) {
    return std::nullopt;
  }
}

std::optional<Candidate> makeCandidate(SpacePoint point, const std::string& target) {
  auto f = featuresOf(point.final.func(), target);
  if (!f) return std::nullopt;
  return Candidate{std::move(point), std::move(*f), 0};
}

std::optional<Candidate> makeCandidate(SearchContext& ctx, SpacePoint point) {
  if (!ctx.featureCache) return makeCandidate(std::move(point), ctx.task->target);
  std::string key = point.key();
  auto it = ctx.featureCache->find(key);
  if (it == ctx.featureCache->end()) {
    if (ctx.featureCache->size() > 20000) ctx.featureCache->clear(); // bounded memory
    it = ctx.featureCache->emplace(key, featuresOf(point.final.func(), ctx.task->target)).first;
  }
  if (!it->second) return std::nullopt;
  return Candidate{std::move(point), *it->second, 0};
}

std::vector<Candidate> makeCandidates(SearchContext& ctx, const std::vector<PointMaker>& makers,
                                      std::set<std::string>& seen, const std::set<std::string>* exclude,
                                      bool lower) {
  // 1. The points, and their keys (the final trace as text: not cheap either), in parallel.
  std::vector<std::optional<SpacePoint>> points(makers.size());
  parallelFor(makers.size(), ctx.threads, [&](size_t i) {
    cpu::Scope profile(cpu::Phase::Points);
    points[i] = makers[i]();
    if (points[i]) points[i]->key();
  });
  // 2. Which are new; which of those were lowered before (the cache, on this thread only).
  std::vector<size_t> fresh, toLower;
  std::vector<std::optional<std::vector<float>>> features(makers.size());
  std::set<std::string> here;
  for (size_t i = 0; i < points.size(); ++i) {
    if (!points[i]) continue;
    const std::string& key = points[i]->key();
    if (seen.count(key) || (exclude && exclude->count(key)) || !here.insert(key).second) continue;
    fresh.push_back(i);
    if (!lower) {
      features[i] = std::vector<float>();
      continue;
    }
    bool cached = false;
    if (ctx.featureCache) {
      auto it = ctx.featureCache->find(key);
      if (it != ctx.featureCache->end()) {
        features[i] = it->second;
        cached = true;
      }
    }
    if (!cached) toLower.push_back(i);
  }
  // 3. Lower the others in parallel.
  parallelFor(toLower.size(), ctx.threads, [&](size_t k) {
    size_t i = toLower[k];
    features[i] = featuresOf(points[i]->final.func(), ctx.task->target);
  });
  if (ctx.featureCache) {
    if (ctx.featureCache->size() + toLower.size() > 20000) ctx.featureCache->clear(); // bounded memory
    for (size_t i : toLower) ctx.featureCache->emplace(points[i]->key(), features[i]);
  }
  std::vector<Candidate> out;
  for (size_t i : fresh) {
    if (!features[i]) continue;
    seen.insert(points[i]->key());
    out.push_back(Candidate{std::move(*points[i]), std::move(*features[i]), 0});
  }
  return out;
}

namespace {

class RandomSearch : public SearchStrategy {
public:
  std::string name() const override { return "random"; }
  std::vector<Candidate> nextBatch(SearchContext& ctx, size_t n) override {
    std::vector<Candidate> out;
    std::set<std::string> inBatch;
    const size_t maxAttempts = 20 * n + 20;
    // Rounds of as many draws as the batch still lacks, made and lowered on ctx.threads threads.
    for (size_t attempts = 0; attempts < maxAttempts && out.size() < n;) {
      size_t k = std::min(n - out.size(), maxAttempts - attempts);
      std::vector<PointMaker> makers;
      for (size_t j = 0; j < k; ++j)
        makers.push_back([&ctx, seed = ctx.rng()] { return ctx.space->sample(ctx.task->func, seed); });
      attempts += k;
      for (Candidate& c : makeCandidates(ctx, makers, inBatch, ctx.measured, !ctx.lowerLater)) out.push_back(std::move(c));
    }
    return out;
  }
};

} // namespace

std::unique_ptr<SearchStrategy> makeRandomSearch() { return std::make_unique<RandomSearch>(); }

} // namespace loom::tune
