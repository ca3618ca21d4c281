// Evolutionary search guided by the cost model (MetaSchedule's EvolutionarySearch, simplified).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <numeric>
#include <utility>

#include "core/schedule/Trace.h"
#include "core/tune/CpuProfile.h"
#include "core/tune/SearchStrategy.h"

namespace loom::tune {

namespace {

std::atomic<size_t> g_requested{0}, g_made{0}, g_repeated{0}, g_redrawn{0}, g_allKnown{0}; // remoteMutantStats()

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
    bool lowerHere = true;      // false: points are made, not lowered (features empty)
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
        for (Candidate& c : makeCandidates(ctx, makers, seen, nullptr, lowerHere)) into.push_back(std::move(c));
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
      keep(ctx, pop.begin(), pop.end());
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
      keep(ctx, back.begin(), back.end());
      for (Candidate& c : back) pop.push_back(std::move(c));
      // Mutants the workers made and lowered since the last batch join the population (with
      // lowerLater), unless they repeat a point the search knows: measured, in the population, or
      // made twice (each such one cost a worker a replay and a lowering).
      cpu::Scope profile(cpu::Phase::Points);
      for (auto& [made, f] : m_made) {
        if (!f) continue; // it did not lower: not a parent
        std::string key = made["final"].dump();
        if (ctx.measured->count(key) || seen.count(key)) {
          ++g_repeated;
          continue;
        }
        seen.insert(key);
        pop.push_back(Candidate{SpacePoint{tir::Trace::fromJson(made["design"]), tir::Schedule(ctx.task->func), std::move(key),
                                           std::move(made["final"]), std::move(made["design"])},
                                std::move(*f), 0});
      }
      m_made.clear();
    }
    score(ctx, pop); // the model may have been retrained since the last batch
    std::stable_sort(pop.begin(), pop.end(), [](auto& a, auto& b) { return a.predicted > b.predicted; });

    // With a runner that lowers (SearchContext::lowerLater): one generation of mutants per batch,
    // made and lowered by the workers: this process draws the parents and the decisions to change
    // (as it would here) and sends them as mutation requests with the candidates it hands out;
    // the mutants join the population when they come back (a batch or two later), so this process
    // only scores points. The first evolving batch is then picked from the initial population.
    const bool elsewhere = ctx.lowerLater;
    lowerHere = !elsewhere;
    if (elsewhere && pop.size() > m_opts.population) pop.erase(pop.begin() + long(m_opts.population), pop.end());
    for (int g = 0; g < generations && !pop.empty(); ++g) {
      std::vector<Candidate> kids;
      std::vector<double> w = weights(pop);
      std::discrete_distribution<size_t> pick(w.begin(), w.end());
      if (elsewhere) {
        cpu::Scope profile(cpu::Phase::Points);
        for (size_t k = 0; k < children; ++k) {
          const Candidate& parent = pop[pick(ctx.rng)];
          auto sampling = parent.point.design.samplingInstructions();
          if (sampling.empty()) break; // nothing to mutate
          size_t idx = sampling[ctx.rng() % sampling.size()];
          m_toLower.push_back(mutationRequest(parent.point.designJson(), idx, ctx.rng(), keyHash(parent.point.key())));
          ++g_requested;
        }
        break;
      }
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

    lowerHere = true;
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
        // Unlowered (SearchContext::lowerLater): no score, so not a parent.
        if (!seen.count(c.point.key()) && !c.features.empty()) pop.push_back(c);
        out.push_back(std::move(c));
      }
    }
    return out;
  }

  std::vector<nlohmann::json> takeToLower() override { return std::exchange(m_toLower, {}); }
  void lowered(const std::string&, std::optional<std::vector<float>> features, const nlohmann::json& made) override {
    if (made.is_object()) g_redrawn += made.value("redrawn", size_t(0));
    if (made.is_object() && made.value("known", false)) ++g_allKnown; // every draw known: nothing lowered
    if (!made.is_object() || !made.contains("final") || !made.contains("design")) return; // it did not replay
    ++g_made;
    m_made.emplace_back(made, std::move(features));
  }

private:
  /// Points made here that join the population: known to the runner's workers (ctx.keptHere).
  template <typename It>
  static void keep(SearchContext& ctx, It begin, It end) {
    if (ctx.keptHere)
      for (It it = begin; it != end; ++it) ctx.keptHere->push_back(keyHash(it->point.key()));
  }
  static void score(SearchContext& ctx, std::vector<Candidate>& cs) {
    cpu::Scope profile(cpu::Phase::Scoring);
    std::vector<std::vector<float>> x;
    for (auto& c : cs)
      if (!c.features.empty()) x.push_back(c.features); // unlowered ones (lowerLater) keep 0
    if (x.empty()) return;
    auto s = ctx.model->predict(x);
    for (size_t i = 0, k = 0; i < cs.size(); ++i)
      if (!cs[i].features.empty()) cs[i].predicted = s[k++];
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
  std::vector<nlohmann::json> m_toLower; ///< mutation requests to send (takeToLower)
  std::vector<std::pair<nlohmann::json, std::optional<std::vector<float>>>> m_made; ///< lowered(): made, features
};

} // namespace

nlohmann::json mutationRequest(const nlohmann::json& design, size_t decision, uint64_t seed, uint64_t parent) {
  nlohmann::json m = {{"design", design}, {"decision", decision}, {"seed", seed}};
  if (parent != 0) m["parent"] = parent;
  return {{"mutate", std::move(m)}};
}

uint64_t keyHash(std::string_view key) {
  uint64_t h = 1469598103934665603ull; // FNV-1a 64
  for (unsigned char c : key) {
    h ^= c;
    h *= 1099511628211ull;
  }
  return h;
}

LoweredForSearch lowerForSearch(const TuneTask& task, const SpaceGenerator& space, const nlohmann::json& item,
                                std::unordered_set<uint64_t>* known) {
  LoweredForSearch out;
  try {
    if (item.is_object() && item.contains("mutate")) {
      const nlohmann::json& m = item["mutate"];
      tir::Trace design = tir::Trace::fromJson(m.at("design"));
      size_t decision = m.at("decision").get<size_t>();
      uint64_t seed = m.at("seed").get<uint64_t>();
      const uint64_t parent = m.value("parent", uint64_t(0));
      std::vector<size_t> sampling;
      std::mt19937_64 redraw(seed ^ 0x9e3779b97f4a7c15ull); // the later draws' decisions and seeds
      size_t redrawn = 0;
      for (int draw = 0; draw < (known ? kMutantDraws : 1); ++draw) {
        if (draw > 0) { // the first draw was known: another decision of the same design, drawn anew
          if (sampling.empty()) sampling = design.samplingInstructions();
          if (sampling.empty()) break;
          decision = sampling[redraw() % sampling.size()];
          seed = redraw();
        }
        std::optional<SpacePoint> p = space.replay(task.func, design, {{decision, tir::Value()}}, seed);
        if (!p) {
          if (known) continue; // another draw may replay
          return out;
        }
        nlohmann::json final = p->finalJson();
        uint64_t h = 0;
        if (known) {
          h = keyHash(final.dump()); // = keyHash(p->key())
          if (h == parent || known->count(h)) {
            ++redrawn;
            continue;
          }
        }
        out.made = {{"final", std::move(final)}, {"design", p->design.toJson()}};
        if (known) {
          known->insert(h);
          out.made["hash"] = h;
          if (redrawn) out.made["redrawn"] = redrawn;
        }
        out.features = featuresOf(p->final.func(), task.target);
        return out;
      }
      if (redrawn) out.made = {{"known", true}, {"redrawn", redrawn}};
    } else {
      tir::Schedule sch(task.func);
      tir::Trace::fromJson(item).apply(sch);
      out.features = featuresOf(sch.func(), task.target);
    }
  } catch (const std::exception&) { // a malformed item, or it does not replay or lower here
    out.features = std::nullopt;
  }
  return out;
}

RemoteMutantStats remoteMutantStats() {
  return {g_requested.load(), g_made.load(), g_repeated.load(), g_redrawn.load(), g_allKnown.load()};
}

std::unique_ptr<SearchStrategy> makeEvolutionarySearch(const EvolutionaryOptions& options) {
  return std::make_unique<EvolutionarySearch>(options);
}

} // namespace loom::tune
