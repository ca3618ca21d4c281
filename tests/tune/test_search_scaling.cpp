// Distributed tuning's search (ctest label mpi, no MPI needed): the search's proposals do not
// depend on how many threads lower the candidates, and a fixed trial budget reaches the same best
// with 1 or 8 workers. The workers are a stand-in pipelined runner (candidates out at once,
// results back in a shuffled order, as workers free up) whose "measurement" is a deterministic
// function of the candidate's lowered program, so the two runs differ only in how the search is fed.
#include <QtTest>
#include <algorithm>
#include <cmath>
#include <deque>
#include <filesystem>
#include <random>
#include <set>
#include <unordered_set>
#include <unistd.h>

#include "core/schedule/Trace.h"
#include "core/tune/SearchStrategy.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"

using namespace loom;
using namespace loom::tune;

namespace {

const char* const kWorkload = "matmul:M=16,N=32,K=16";

/// A made-up time the cost model can learn (it sees these features): more loop trips cost, vector
/// lanes and parallel extent save. Deterministic: the same schedule always "measures" the same.
double simulatedMs(const MeasureCandidate& c) {
  tir::Schedule sch(c.task.func);
  tir::Trace::fromJson(c.trace).apply(sch);
  std::optional<std::vector<float>> f = featuresOf(sch.func(), c.task.target);
  if (!f) return -1;
  const std::vector<float>& x = *f;
  return 0.01 * std::exp2(0.3 * x[31] - 0.3 * x[21] - 0.3 * x[22] + 0.05 * x[27]);
}

/// `workers` candidates measured at once; next() finishes one of them at random (seeded). With
/// `fillIns`, it keeps a fill-in reserve of that many and, as MpiRunner, hands a fill-in to a
/// worker only when no submitted candidate waits for it (`slowSearch`: the search is taken to
/// fall behind every other result, so a fill-in runs then whenever one is in reserve).
class SimulatedWorkers : public PipelinedRunner {
public:
  explicit SimulatedWorkers(size_t workers, uint64_t seed, size_t fillIns = 0, bool slowSearch = false)
      : m_workers(workers), m_fillTarget(fillIns), m_slowSearch(slowSearch), m_rng(seed) {}
  size_t capacity() const override { return m_workers; }
  void submit(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions&) override {
    m_known.insert(keyHash(c.trace.dump())); // as MpiRunner: a point handed out is known to the workers
    m_queue.push_back({ticket, c, false});
  }
  size_t fillInTarget() const override { return m_fillTarget; }
  bool lowersForFeatures() const override { return true; }
  size_t fillInsWaiting() const override { return m_fill.size(); }
  std::vector<uint64_t> takeBackFillIns() override {
    std::vector<uint64_t> t;
    for (const Job& j : m_fill) t.push_back(j.ticket);
    m_fill.clear();
    return t;
  }
  void submitFillIn(uint64_t ticket, const MeasureCandidate& c, const MeasureOptions&) override {
    m_known.insert(keyHash(c.trace.dump()));
    m_fill.push_back({ticket, c, true});
  }
  void knowPoints(const std::string&, const std::vector<uint64_t>& hashes) override {
    m_known.insert(hashes.begin(), hashes.end()); // as MpiRunner: sent with the next mutation requests
  }
  std::optional<std::pair<uint64_t, MeasureResult>> next() override {
    // Workers idle (fewer candidates than workers, or a slow search's turn): a fill-in runs.
    if (!m_fill.empty() && (m_queue.size() < m_workers || (m_slowSearch && ++m_turn % 2 == 0))) {
      m_queue.push_front(m_fill.front());
      m_fill.pop_front();
      ++m_fillInsRun;
    }
    if (m_queue.empty()) return std::nullopt;
    size_t running = std::min(m_workers, m_queue.size());
    size_t i = size_t(m_rng() % running);
    Job job = m_queue[i];
    m_queue.erase(m_queue.begin() + long(i));
    m_maxOut = std::max(m_maxOut, running);
    MeasureResult r;
    double ms = simulatedMs(job.c);
    if (ms > 0)
      r.timesMs = {ms};
    else
      r.errorKind = "build_error";
    r.host = "sim";
    if (job.c.wantFeatures) { // the worker computes the features of fill-ins and unlowered samples
      tir::Schedule sch(job.c.task.func);
      tir::Trace::fromJson(job.c.trace).apply(sch);
      if (auto f = featuresOf(sch.func(), job.c.task.target)) r.features = *f;
    }
    // And the points the search left to it: mutation requests (the evolutionary search's mutants,
    // made and lowered here, as a worker rank does).
    SpaceGenerator space = SpaceGenerator::forTarget(job.c.task.target);
    for (const nlohmann::json& t : job.c.alsoLower) {
      LoweredForSearch l = lowerForSearch(job.c.task, space, t, &m_known);
      r.alsoFeatures.push_back(l.features.value_or(std::vector<float>{}));
      if (l.made.is_object() && l.made.contains("final")) m_made.push_back(l.made["final"].dump());
      r.alsoMade.push_back(l.made);
      ++m_lowered;
    }
    return std::make_pair(job.ticket, r);
  }
  size_t outstanding() const override { return m_queue.size() + m_fill.size(); }
  size_t maxOut() const { return m_maxOut; }
  size_t fillInsRun() const { return m_fillInsRun; }
  size_t lowered() const { return m_lowered; }
  const std::vector<std::string>& made() const { return m_made; } ///< keys of the mutants the workers made

private:
  struct Job {
    uint64_t ticket;
    MeasureCandidate c;
    bool fillIn;
  };
  size_t m_workers, m_fillTarget;
  bool m_slowSearch;
  std::mt19937_64 m_rng;
  std::deque<Job> m_queue, m_fill;
  std::unordered_set<uint64_t> m_known; ///< the workers' known set (one for all: MpiRunner keeps each up to date)
  size_t m_maxOut = 0, m_fillInsRun = 0, m_turn = 0, m_lowered = 0;
  std::vector<std::string> m_made;
};

/// A plain runner (not pipelined): tuneTask then runs as a local `loom tune` does, batch by batch,
/// everything lowered by the search.
class SerialRunner : public Runner {
public:
  std::vector<MeasureResult> run(const std::vector<MeasureCandidate>& candidates, const MeasureOptions&,
                                 const std::function<void(size_t, const MeasureResult&)>& onResult) override {
    std::vector<MeasureResult> out;
    for (size_t i = 0; i < candidates.size(); ++i) {
      MeasureResult r;
      double ms = simulatedMs(candidates[i]);
      if (ms > 0)
        r.timesMs = {ms};
      else
        r.errorKind = "build_error";
      r.host = "sim";
      if (onResult) onResult(i, r);
      out.push_back(r);
    }
    return out;
  }
};

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("loom_test_search_scaling_" + std::to_string(::getpid()) + "_" + name + ".json"))
      .string();
}

struct Run {
  double bestMs = INFINITY;
  int records = 0;
  size_t maxOut = 0;
  size_t fillIns = 0;
  size_t lowered = 0; ///< mutants the workers made and lowered for the search
};

/// workers == 0: the plain SerialRunner.
Run tuneWith(size_t workers, uint64_t seed, int trials, size_t fillIns = 0, bool slowSearch = false) {
  std::string path = tempPath(std::to_string(workers) + "_" + std::to_string(seed));
  std::filesystem::remove(path);
  TuneTask task = TuneTask::fromWorkload(kWorkload);
  SimulatedWorkers workersRunner(workers, seed * 31 + workers, fillIns, slowSearch);
  SerialRunner serial;
  Runner& runner = workers == 0 ? static_cast<Runner&>(serial) : workersRunner;
  TuneOptions o;
  o.trials = trials;
  o.batchSize = 4;
  o.seed = seed;
  o.measureBaseline = false;
  Run run;
  {
    JsonDatabase db(path);
    TuneResult r = tuneTask(task, db, runner, o);
    run.bestMs = r.best ? r.best->meanMs() : INFINITY;
    std::set<std::string> traces;
    for (const TuningRecord& rec : db.records(task.key, task.target)) {
      ++run.records;
      traces.insert(rec.traceKey());
    }
    if (int(traces.size()) != run.records) run.records = -1; // a schedule measured twice
  }
  run.maxOut = workersRunner.maxOut();
  run.fillIns = workersRunner.fillInsRun();
  run.lowered = workersRunner.lowered();
  std::filesystem::remove(path);
  return run;
}

} // namespace

class TestSearchScaling : public QObject {
  Q_OBJECT
private slots:
  void proposalsDoNotDependOnThreads() {
    TuneTask task = TuneTask::fromWorkload(kWorkload);
    SpaceGenerator space = SpaceGenerator::defaultCpu();
    // A model trained on a few random points, so the evolutionary search evolves (untrained, it
    // samples at random).
    std::unique_ptr<CostModel> model = makeXGBoostModel();
    std::vector<std::vector<float>> x;
    std::vector<double> t;
    for (uint64_t s = 1; x.size() < 24 && s < 200; ++s)
      if (auto p = space.sample(task.func, s))
        if (auto c = makeCandidate(std::move(*p), task.target)) {
          x.push_back(c->features);
          t.push_back(simulatedMs({task, c->point.finalJson(), ""}));
        }
    model->update(x, t);
    for (const char* strategy : {"random", "evolutionary"}) {
      std::vector<std::vector<std::string>> keys;
      for (int threads : {1, 3}) {
        std::unique_ptr<SearchStrategy> s = std::string(strategy) == "random" ? makeRandomSearch() : makeEvolutionarySearch();
        std::set<std::string> measured;
        std::map<std::string, std::optional<std::vector<float>>> cache;
        SearchContext ctx;
        ctx.task = &task;
        ctx.space = &space;
        ctx.model = model.get();
        ctx.measured = &measured;
        ctx.featureCache = &cache;
        ctx.threads = threads;
        ctx.rng.seed(7);
        std::vector<std::string> k;
        for (int batch = 0; batch < 2; ++batch)
          for (Candidate& c : s->nextBatch(ctx, 8)) {
            k.push_back(c.point.key());
            measured.insert(c.point.key());
          }
        keys.push_back(k);
      }
      QVERIFY2(keys[0].size() == 16, strategy);
      QVERIFY2(keys[0] == keys[1], strategy);
    }
  }

  // A mutant made by a worker from a mutation request (sent as text, as over MPI) is the mutant the
  // search would make itself: the same final trace (key), features and design, the same script;
  // and mutating the design that came back gives the same next mutant as the search's own.
  void workerMadeMutantsAreTheSearchsOwn() {
    TuneTask task = TuneTask::fromWorkload(kWorkload);
    SpaceGenerator space = SpaceGenerator::forTarget(task.target);
    std::mt19937_64 rng(5);
    int compared = 0, failedBoth = 0;
    for (uint64_t s = 1; compared < 12 && s < 100; ++s) {
      std::optional<SpacePoint> parent = space.sample(task.func, s);
      if (!parent) continue;
      auto sampling = parent->design.samplingInstructions();
      QVERIFY(!sampling.empty());
      size_t idx = sampling[rng() % sampling.size()];
      uint64_t seed = rng();
      std::optional<SpacePoint> local = space.replay(task.func, parent->design, {{idx, tir::Value()}}, seed);
      nlohmann::json request = nlohmann::json::parse(mutationRequest(parent->designJson(), idx, seed).dump());
      LoweredForSearch remote = lowerForSearch(task, space, request);
      if (!local) {
        QVERIFY(remote.made.is_null());
        ++failedBoth;
        continue;
      }
      QVERIFY(remote.made.is_object());
      nlohmann::json made = nlohmann::json::parse(remote.made.dump());
      QCOMPARE(made["final"].dump(), local->key());
      QCOMPARE(made["design"], local->design.toJson());
      QVERIFY(remote.features.has_value());
      QCOMPARE(*remote.features, featuresOf(local->final.func(), task.target).value());
      // As the search keeps it: the traces that came back, the schedule not built.
      SpacePoint back{tir::Trace::fromJson(made["design"]), tir::Schedule(task.func), made["final"].dump(), made["final"],
                      made["design"]};
      QCOMPARE(back.key(), local->key());
      QCOMPARE(back.finalScript(), local->final.trace().simplified().str());
      auto next = back.design.samplingInstructions();
      QCOMPARE(next, local->design.samplingInstructions());
      size_t idx2 = next[rng() % next.size()];
      uint64_t seed2 = rng();
      auto a = space.replay(task.func, back.design, {{idx2, tir::Value()}}, seed2);
      auto b = space.replay(task.func, local->design, {{idx2, tir::Value()}}, seed2);
      QCOMPARE(a.has_value(), b.has_value());
      if (a) QCOMPARE(a->key(), b->key());
      ++compared;
    }
    QCOMPARE(compared, 12);
    // A malformed request is a point that did not replay, not a crash.
    LoweredForSearch bad = lowerForSearch(task, space, {{"mutate", {{"design", 3}}}});
    QVERIFY(!bad.features && bad.made.is_null());
    qInfo("12 mutants made from requests equal the search's own (%d requests that did not replay either way)", failedBoth);
  }

  // A worker with a known set (the keys rank 0 sent it, and the mutants it made) does not make and
  // lower a known point: it draws again (another decision of the same design, a derived seed),
  // up to kMutantDraws points, and then answers "known" without lowering anything. The first draw
  // is the search's own mutant; the request's parent counts as known.
  void workersDrawAgainForKnownMutants() {
    TuneTask task = TuneTask::fromWorkload(kWorkload);
    SpaceGenerator space = SpaceGenerator::forTarget(task.target);
    int requests = 0, exhausted = 0;
    for (uint64_t s = 1; requests < 6 && s < 100; ++s) {
      std::optional<SpacePoint> parent = space.sample(task.func, s);
      if (!parent) continue;
      auto sampling = parent->design.samplingInstructions();
      QVERIFY(!sampling.empty());
      size_t idx = sampling[s % sampling.size()];
      std::optional<SpacePoint> own = space.replay(task.func, parent->design, {{idx, tir::Value()}}, 1000 + s);
      if (!own || own->key() == parent->key()) continue; // wanted: a first draw that is a new point
      ++requests;
      const nlohmann::json request = nlohmann::json::parse(mutationRequest(parent->designJson(), idx, 1000 + s).dump());
      std::unordered_set<uint64_t> known;
      // Nothing known yet: the search's own mutant, its hash added to the known set.
      LoweredForSearch first = lowerForSearch(task, space, request, &known);
      QVERIFY(first.made.is_object() && first.features);
      QCOMPARE(first.made["final"].dump(), own->key());
      QCOMPARE(first.made["hash"].get<uint64_t>(), keyHash(own->key()));
      QVERIFY(!first.made.contains("redrawn"));
      QVERIFY(known.count(keyHash(own->key())));
      // The same request again: each answer is a point not known before, until every draw is known.
      std::set<std::string> made = {own->key()};
      bool allKnown = false;
      for (int again = 0; again < kMutantDraws && !allKnown; ++again) {
        size_t before = known.size();
        LoweredForSearch l = lowerForSearch(task, space, request, &known);
        QVERIFY(l.made.is_object());
        QVERIFY(l.made.value("redrawn", 0) >= 1);
        if (l.made.value("known", false)) {
          QVERIFY(!l.features); // nothing lowered
          QCOMPARE(known.size(), before);
          allKnown = true;
          break;
        }
        const std::string key = l.made["final"].dump();
        QVERIFY2(made.insert(key).second, "a worker made a known mutant");
        QVERIFY(known.count(keyHash(key)) && l.features);
      }
      QVERIFY2(allKnown, "more points made than draws");
      ++exhausted;
      // The parent is known to the worker through the request ("parent"): a draw equal to it is redrawn.
      std::unordered_set<uint64_t> none;
      nlohmann::json withParent = nlohmann::json::parse(
          mutationRequest(parent->designJson(), idx, 1000 + s, keyHash(own->key())).dump());
      LoweredForSearch p = lowerForSearch(task, space, withParent, &none);
      QVERIFY(p.made.is_object());
      QVERIFY(p.made.value("known", false) || p.made["final"].dump() != own->key());
    }
    QCOMPARE(requests, 6);
    QCOMPARE(exhausted, 6);
  }

  // A resumed run (an earlier run's records in the database; a fresh runner, as a new mpirun
  // has) tells its workers the resumed points and the points its search keeps as parents
  // (PipelinedRunner::knowPoints): no worker makes a resumed point again, and none of the mutants
  // they make repeats a point the search knows (the stand-in's workers share one known set, so
  // nothing else can make a repeat: MpiRunner's workers can still make the same mutant at once).
  // Before, the resumed records were known to rank 0 only, and its workers made and lowered them.
  void resumedRunMakesNoKnownPoint() {
    TuneTask task = TuneTask::fromWorkload(kWorkload);
    size_t made = 0;
    for (uint64_t seed : {1, 2, 3}) {
      const std::string path = tempPath("resume_" + std::to_string(seed));
      std::filesystem::remove(path);
      TuneOptions o;
      o.trials = 32;
      o.batchSize = 4;
      o.seed = seed;
      o.measureBaseline = false;
      {
        SimulatedWorkers first(4, seed);
        JsonDatabase db(path);
        tuneTask(task, db, first, o);
      }
      std::set<std::string> resumed;
      {
        JsonDatabase db(path);
        for (const TuningRecord& rec : db.records(task.key, task.target)) resumed.insert(rec.traceKey());
      }
      QCOMPARE(int(resumed.size()), 32);
      const RemoteMutantStats before = remoteMutantStats();
      SimulatedWorkers again(4, seed + 100);
      o.trials = 80;
      std::set<std::string> traces;
      int records = 0;
      {
        JsonDatabase db(path);
        TuneResult r = tuneTask(task, db, again, o);
        QCOMPARE(r.trialsThisRun, 48);
        for (const TuningRecord& rec : db.records(task.key, task.target)) {
          ++records;
          traces.insert(rec.traceKey());
        }
      }
      std::filesystem::remove(path);
      QCOMPARE(records, 80);
      QCOMPARE(int(traces.size()), 80); // no schedule measured twice
      const RemoteMutantStats after = remoteMutantStats();
      QVERIFY2(after.made > before.made, "the workers made no mutants");
      made += after.made - before.made;
      for (const std::string& key : again.made()) QVERIFY2(!resumed.count(key), "a worker made a resumed point again");
      QCOMPARE(after.repeated - before.repeated, size_t(0));
    }
    qInfo("%zu mutants made by the workers in 3 resumed runs, none a resumed or known point", made);
  }

  void sameBestWithOneOrEightWorkers() {
    const int trials = 24;
    double log1 = 0, log8 = 0;
    std::vector<double> best1, best8;
    for (uint64_t seed : {1, 2, 3}) {
      Run one = tuneWith(1, seed, trials), eight = tuneWith(8, seed, trials);
      // The budget is spent exactly, no schedule twice, and 8 workers really had 8 candidates out.
      QCOMPARE(one.records, trials);
      QCOMPARE(eight.records, trials);
      QCOMPARE(one.maxOut, size_t(1));
      QCOMPARE(eight.maxOut, size_t(8));
      best1.push_back(one.bestMs);
      best8.push_back(eight.bestMs);
      log1 += std::log(one.bestMs) / 3;
      log8 += std::log(eight.bestMs) / 3;
    }
    // What the search is up against: the median of random schedules.
    TuneTask task = TuneTask::fromWorkload(kWorkload);
    SpaceGenerator space = SpaceGenerator::defaultCpu();
    std::vector<double> random;
    for (uint64_t s = 1; random.size() < 40 && s < 400; ++s)
      if (auto p = space.sample(task.func, s))
        if (double ms = simulatedMs({task, p->finalJson(), ""}); ms > 0) random.push_back(ms);
    std::sort(random.begin(), random.end());
    double median = random[random.size() / 2];
    qInfo("median of %zu random schedules %.4f ms, fastest %.4f ms", random.size(), median, random[0]);
    QVERIFY2(std::exp(log1) < 0.7 * median && std::exp(log8) < 0.7 * median, "the search does not beat random schedules");
    qInfo("best of %d trials, seeds 1-3: 1 worker %.4f %.4f %.4f ms, 8 workers %.4f %.4f %.4f ms", trials, best1[0], best1[1],
          best1[2], best8[0], best8[1], best8[2]);
    // Within 20% (geometric mean over the seeds): the cost model retrains in the background, so
    // which model ranks a batch depends on timing, and batch sizes differ (4 vs 8).
    QVERIFY2(std::abs(log8 - log1) < std::log(1.2), qPrintable(QString("geomean best: 1 worker %1 ms, 8 workers %2 ms")
                                                               .arg(std::exp(log1)).arg(std::exp(log8))));
  }

  // Fill-ins: a search that falls behind every other result still spends the budget exactly,
  // with no schedule twice, and the fill-ins' features (computed by the worker) train the model:
  // the best stays within 20% of the 1-worker run's (geometric mean over seeds).
  void fillInsKeepBudgetAndQuality() {
    const int trials = 48; // the reserve is taken back for the last candidate per worker
    double log1 = 0, logFill = 0;
    size_t fillIns = 0;
    for (uint64_t seed : {1, 2, 3}) {
      Run one = tuneWith(1, seed, trials), fill = tuneWith(8, seed, trials, 8, /*slowSearch=*/true);
      QCOMPARE(fill.records, trials);
      QCOMPARE(fill.maxOut, size_t(8));
      fillIns += fill.fillIns;
      log1 += std::log(one.bestMs) / 3;
      logFill += std::log(fill.bestMs) / 3;
    }
    qInfo("geomean best of %d trials: 1 worker %.4f ms, 8 workers with %zu fill-ins in 3 runs %.4f ms", trials,
          std::exp(log1), fillIns, std::exp(logFill));
    QVERIFY2(fillIns >= 6, "no fill-ins ran");
    QVERIFY2(std::abs(logFill - log1) < std::log(1.2), "fill-ins changed the best reached");
  }

  // Sixteen workers fed as MpiRunner feeds them (a reserve of two fill-ins per worker, taken back
  // for the last stretch; random samples lowered and each batch's mutants made and lowered by the workers) reach the best of a plain local tuning (everything lowered by the
  // search, batch by batch) on the same budget, within 20% (geometric mean over seeds).
  void sixteenWorkersReachThePlainBest() {
    // Three batches of 16 go out before the first result (all random, unlowered: no model yet);
    // from the fourth on each batch's mutants are lowered by the workers.
    const int trials = 96;
    double logPlain = 0, log16 = 0;
    size_t fillIns = 0, lowered = 0;
    std::vector<double> plain, sixteen;
    for (uint64_t seed : {1, 2, 3}) {
      Run one = tuneWith(0, seed, trials), many = tuneWith(16, seed, trials, 32);
      QCOMPARE(one.records, trials);
      QCOMPARE(many.records, trials);
      QCOMPARE(many.maxOut, size_t(16));
      fillIns += many.fillIns;
      lowered += many.lowered;
      plain.push_back(one.bestMs);
      sixteen.push_back(many.bestMs);
      logPlain += std::log(one.bestMs) / 3;
      log16 += std::log(many.bestMs) / 3;
    }
    qInfo("best of %d trials, seeds 1-3: plain %.4f %.4f %.4f ms, 16 workers %.4f %.4f %.4f ms (%zu of %d trials "
          "fill-ins, %zu mutants lowered by the workers)",
          trials, plain[0], plain[1], plain[2], sixteen[0], sixteen[1], sixteen[2], fillIns, 3 * trials, lowered);
    QVERIFY2(lowered > 0, "the workers lowered none of the search's mutants");
    // The mutants were made by the workers (mutation requests), and most were new points.
    RemoteMutantStats m = remoteMutantStats();
    qInfo("mutants made by the workers: %zu requested, %zu made, %zu repeated a known point; %zu draws known and drawn "
          "again, %zu requests with only known draws",
          m.requested, m.made, m.repeated, m.redrawn, m.allKnown);
    QVERIFY2(m.made > 0 && m.made <= m.requested, "no mutant was made by the workers");
    QVERIFY2(m.repeated < m.made / 2, "most mutants the workers made repeated a known point");
    QVERIFY2(std::abs(log16 - logPlain) < std::log(1.2), qPrintable(QString("geomean best: plain %1 ms, 16 workers %2 ms")
                                                                  .arg(std::exp(logPlain)).arg(std::exp(log16))));
  }
};

QTEST_GUILESS_MAIN(TestSearchScaling)
#include "test_search_scaling.moc"
