// Evolutionary search guided by the cost model (MetaSchedule's EvolutionarySearch, simplified).
#include <algorithm>
#include <cmath>
#include <functional>
#include <numeric>

#include "core/schedule/Trace.h"
#include "core/tune/SearchStrategy.h"

namespace loom::tune {

namespace {

class EvolutionarySearch : public SearchStrategy {
public:
  explicit EvolutionarySearch(const EvolutionaryOptions& o) : m_opts(o) {}
  std::string name() const override { return "evolutionary"; }

  std::vector<Candidate> nextBatch(SearchContext& ctx, size_t n) override {
    if (!ctx.model || ctx.model->trainedOn() == 0) return makeRandomSearch()->nextBatch(ctx, n);
    // Points are made and lowered in rounds (makeCandidates, on ctx.threads threads); the seeds
    // and parents are drawn here, in order, so the population does not depend on the number of
    // threads.
    std::set<std::string> seen; // in the population or made in this batch
    auto fill = [&](std::vector<Candidate>& into, size_t want, size_t maxAttempts, const std::function<PointMaker()>& draw) {
      for (size_t attempts = 0; into.size() < want && attempts < maxAttempts;) {
        std::vector<PointMaker> makers;
        for (size_t k = std::min(want - into.size(), maxAttempts - attempts); makers.size() < k;) {
          PointMaker m = draw();
          if (!m) break;
          makers.push_back(std::move(m));
        }
        if (makers.empty()) break;
        attempts += makers.size();
        for (Candidate& c : makeCandidates(ctx, makers, seen)) into.push_back(std::move(c));
      }
    };
    int generations = m_opts.generations;
    size_t children = m_opts.population, attemptsPerGeneration = 3 * m_opts.population;
    std::vector<Candidate>& pop = m_pop;
    if (pop.empty()) {
      // Initial population: elites (measured designs, fastest first) and random samples.
      size_t elites = std::min(ctx.elites.size(), size_t(double(m_opts.population) * m_opts.eliteFraction));
      size_t nextElite = 0;
      fill(pop, elites, elites, [&]() -> PointMaker {
        const tir::Trace* design = &ctx.elites[nextElite++];
        return [&ctx, design, seed = ctx.rng()] { return ctx.space->replay(ctx.task->func, *design, {}, seed); };
      });
      fill(pop, m_opts.population, 3 * m_opts.population, [&]() -> PointMaker {
        return [&ctx, seed = ctx.rng()] { return ctx.space->sample(ctx.task->func, seed); };
      });
    } else {
      // The population of the last batch evolves on (its features are kept: no lowering), with
      // the fastest measured designs that left it back in.
      generations = m_opts.generationsPerBatch;
      // As many mutants as the batch has candidates (at least half a population): a batch per
      // worker costs about one new point per candidate, not a whole evolution. Mutants that
      // repeat a known point are not retried.
      children = std::clamp(n, m_opts.population / 2, m_opts.population);
      attemptsPerGeneration = children;
      for (const Candidate& c : pop) seen.insert(c.point.key());
      size_t nextElite = 0, elites = std::min(ctx.elites.size(), m_opts.elitesPerBatch);
      std::vector<Candidate> back;
      fill(back, elites, elites, [&]() -> PointMaker {
        const tir::Trace* design = &ctx.elites[nextElite++];
        return [&ctx, design, seed = ctx.rng()] { return ctx.space->replay(ctx.task->func, *design, {}, seed); };
      });
      for (Candidate& c : back) pop.push_back(std::move(c));
    }
    score(ctx, pop); // the model may have been retrained since the last batch
    std::stable_sort(pop.begin(), pop.end(), [](auto& a, auto& b) { return a.predicted > b.predicted; });

    for (int g = 0; g < generations && !pop.empty(); ++g) {
      std::vector<Candidate> kids;
      std::vector<double> w = weights(pop);
      std::discrete_distribution<size_t> pick(w.begin(), w.end());
      bool stuck = false; // a parent without sampling decisions: nothing to mutate
      fill(kids, children, attemptsPerGeneration, [&]() -> PointMaker {
        if (stuck) return {};
        const Candidate& parent = pop[pick(ctx.rng)];
        auto sampling = parent.point.design.samplingInstructions();
        if (sampling.empty()) {
          stuck = true;
          return {};
        }
        size_t idx = sampling[ctx.rng() % sampling.size()];
        const tir::Trace* design = &parent.point.design;
        return [&ctx, design, idx, seed = ctx.rng()] {
          return ctx.space->replay(ctx.task->func, *design, {{idx, tir::Value()}}, seed);
        };
      });
      score(ctx, kids);
      for (auto& c : kids) pop.push_back(std::move(c));
      std::stable_sort(pop.begin(), pop.end(), [](auto& a, auto& b) { return a.predicted > b.predicted; });
      if (pop.size() > m_opts.population) pop.erase(pop.begin() + long(m_opts.population), pop.end());
    }

    // The batch: best predicted unmeasured, then random exploration. What is handed out stays in
    // the population (a parent for the next batches) until fitter children push it out.
    std::vector<Candidate> out;
    std::set<std::string> inBatch;
    size_t exploit = n - size_t(std::floor(double(n) * m_opts.epsGreedy));
    for (const Candidate& c : pop) {
      if (out.size() >= exploit) break;
      const std::string& key = c.point.key();
      if (ctx.measured->count(key) || inBatch.count(key)) continue;
      inBatch.insert(key);
      out.push_back(c);
    }
    if (out.size() < n) {
      std::vector<Candidate> explore;
      for (auto& c : makeRandomSearch()->nextBatch(ctx, n - out.size() + 2)) {
        if (out.size() + explore.size() >= n) break;
        if (!inBatch.insert(c.point.key()).second) continue;
        explore.push_back(std::move(c));
      }
      score(ctx, explore);
      for (Candidate& c : explore) {
        if (!seen.count(c.point.key())) pop.push_back(c);
        out.push_back(std::move(c));
      }
    }
    return out;
  }

private:
  static void score(SearchContext& ctx, std::vector<Candidate>& cs) {
    std::vector<std::vector<float>> x;
    for (auto& c : cs) x.push_back(c.features);
    auto s = ctx.model->predict(x);
    for (size_t i = 0; i < cs.size(); ++i) cs[i].predicted = s[i];
  }
  /// Selection weights: rank-based, so the best parents are drawn most often.
  static std::vector<double> weights(const std::vector<Candidate>& pop) {
    std::vector<size_t> order(pop.size());
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) { return pop[a].predicted > pop[b].predicted; });
    std::vector<double> w(pop.size());
    for (size_t r = 0; r < order.size(); ++r) w[order[r]] = 1.0 / double(r + 2);
    return w;
  }

  EvolutionaryOptions m_opts;
  std::vector<Candidate> m_pop; ///< the population, kept from batch to batch
};

} // namespace

std::unique_ptr<SearchStrategy> makeEvolutionarySearch(const EvolutionaryOptions& options) {
  return std::make_unique<EvolutionarySearch>(options);
}

} // namespace loom::tune
