// Random search: draw points of the space until the batch is full of new candidates.
#include "core/tune/SearchStrategy.h"

#include "core/driver/BuildOperator.h"
#include "core/tune/Features.h"

namespace loom::tune {

std::optional<std::vector<float>> featuresOf(const tir::PrimFunc& scheduled, const std::string& target) {
  try {
    transform::PassContext ctx;
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

namespace {

class RandomSearch : public SearchStrategy {
public:
  std::string name() const override { return "random"; }
  std::vector<Candidate> nextBatch(SearchContext& ctx, size_t n) override {
    std::vector<Candidate> out;
    std::set<std::string> inBatch;
    for (size_t attempt = 0; attempt < 20 * n + 20 && out.size() < n; ++attempt) {
      auto p = ctx.space->sample(ctx.task->func, ctx.rng());
      if (!p) continue;
      std::string key = p->key();
      if (ctx.measured->count(key) || inBatch.count(key)) continue;
      auto c = makeCandidate(ctx, std::move(*p));
      if (!c) continue;
      inBatch.insert(key);
      out.push_back(std::move(*c));
    }
    return out;
  }
};

} // namespace

std::unique_ptr<SearchStrategy> makeRandomSearch() { return std::make_unique<RandomSearch>(); }

} // namespace loom::tune
