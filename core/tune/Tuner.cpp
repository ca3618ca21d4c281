// TaskTuner: the measure / record / retrain loop of one task.
#include "core/tune/Tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/schedule/Trace.h"
#include "core/tune/CpuProfile.h"
#include "core/tune/Features.h"
#include "core/tune/Record.h"

namespace loom::tune {

namespace {

/// The record of one measurement of `trace` under `key`.
TuningRecord recordOf(const std::string& key, const std::string& target, const nlohmann::json& trace,
                      const MeasureResult& r, bool retime = false) {
  TuningRecord rec;
  rec.workload = key;
  rec.target = target;
  rec.trace = trace;
  rec.timesMs = r.timesMs;
  rec.errorKind = r.errorKind;
  rec.errorMessage = r.errorMessage;
  rec.cacheFlush = r.cacheFlushed;
  rec.retime = retime;
  rec.host = r.host;
  rec.version = loomVersion();
  rec.timestamp = utcTimestamp();
  return rec;
}

} // namespace

MeasureCandidate TaskTuner::baselineCandidate(const tir::PrimFunc& scheduled) const {
  MeasureCandidate c{m_task, tir::Trace().toJson(), ""};
  if (scheduled.defined()) {
    // Its own key, so the worker's reference cache (per key) is not shared with the task's.
    c.task.func = scheduled;
    c.task.key = baselineKey(m_task.key);
    c.task.workloadSpec.clear();
  }
  return c;
}

TaskTuner::TaskTuner(TuneTask task, Database& db, Runner& runner, const TuneOptions& options,
                     TuneCallback callback)
    : m_task(std::move(task)), m_db(db), m_runner(runner), m_options(options), m_callback(std::move(callback)),
      m_space(SpaceGenerator::forTarget(m_task.target)), m_bestMs(INFINITY), m_baselineMs(INFINITY) {
  // A pipelined runner measures while the search runs: retraining there must not hold up the
  // handing out of candidates, so it runs in the background (the same model, trained on the same data).
  // It takes each result as it comes and retrains every K of them (K: a batch; with 4 or more
  // workers, two results per worker): the training's cost grows with the data, and on a busy
  // rank 0 it competes with the search.
  if (auto* p = dynamic_cast<PipelinedRunner*>(&m_runner)) {
    size_t every = p->capacity() >= 4 ? 2 * p->capacity() : size_t(std::max(1, m_options.batchSize));
    m_model = makeBackgroundModel([] { return makeXGBoostModel(); }, every);
  } else
    m_model = makeXGBoostModel();
  if (m_options.strategy == "random")
    m_strategy = makeRandomSearch();
  else if (m_options.strategy == "evolutionary")
    m_strategy = makeEvolutionarySearch();
  else
    LOOM_THROW(ValueError) << "tune: unknown search strategy '" << m_options.strategy
                           << "' (expected 'evolutionary' or 'random')";
  // Resume: what the database already holds for this task counts, trains the model and seeds
  // the search.
  std::vector<std::vector<float>> x;
  std::vector<double> t;
  for (const TuningRecord& r : m_db.records(m_task.key, m_task.target)) {
    if (r.retime) continue; // the schedule's trial is counted and used already
    ++m_done;
    m_measured.insert(r.traceKey());
    if (!r.ok()) continue;
    m_bestMs = std::min(m_bestMs, r.meanMs());
    try {
      tir::Trace trace = tir::Trace::fromJson(r.trace);
      m_elites.push_back({r.meanMs(), trace});
      tir::Schedule sch(m_task.func);
      trace.apply(sch);
      if (auto f = featuresOf(sch.func(), m_task.target)) {
        x.push_back(*f);
        t.push_back(r.meanMs());
      }
    } catch (const Error&) {
      // A record of an older Loom whose trace no longer applies: counted, not used.
    }
  }
  std::sort(m_elites.begin(), m_elites.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (auto b = m_db.best(m_task.key, m_task.target)) m_bestMs = b->meanMs(); // re-timings count
  if (!x.empty()) {
    cpu::Scope profile(cpu::Phase::Training);
    m_model->update(x, t);
  }
  m_ctx.task = &m_task;
  m_ctx.space = &m_space;
  m_ctx.model = m_model.get();
  m_ctx.measured = &m_measured;
  m_ctx.featureCache = &m_featureCache;
  if (auto* p = dynamic_cast<PipelinedRunner*>(&m_runner); p && p->lowersForFeatures()) {
    m_ctx.lowerLater = true;
    // Its workers make mutants: they should not make a resumed record's point again, nor one the
    // search keeps as a parent (rank 0 drops such a repeat, after a worker replayed and lowered it).
    m_ctx.keptHere = &m_keptHere;
    std::vector<uint64_t> resumed;
    for (const std::string& key : m_measured) resumed.push_back(keyHash(key));
    if (!resumed.empty()) p->knowPoints(m_task.key, resumed);
  }
  m_ctx.threads = m_options.searchThreads > 0 ? m_options.searchThreads
                                              : int(std::max(1u, std::thread::hardware_concurrency()));
  m_ctx.rng.seed(m_options.seed * 7919 + uint64_t(m_done));
  m_fillRng.seed(m_options.seed * 104729 + uint64_t(m_done));
}

void TaskTuner::report(TuneEventKind kind, const MeasureResult* r, const std::string& script) {
  if (!m_callback) return;
  TuneEvent e{kind,         m_task.key,  m_done,      m_options.trials, r ? *r : MeasureResult{}, m_bestMs,
              m_baselineMs, m_task.flops, script,      m_taskIndex,      m_taskCount};
  m_callback(e);
}

void TaskTuner::setTaskIndex(int index, int count) {
  m_taskIndex = index;
  m_taskCount = count;
}

void TaskTuner::announce() { report(TuneEventKind::TaskSelected); }

void TaskTuner::measureBaseline(const tir::PrimFunc& scheduled) {
  MeasureCandidate c = baselineCandidate(scheduled);
  auto rs = m_runner.run({c}, m_options.measure);
  m_baselineMs = rs[0].meanMs();
  if (scheduled.defined() && rs[0].ok()) m_db.commit(recordOf(c.task.key, m_task.target, c.trace, rs[0]));
  report(TuneEventKind::Baseline, &rs[0]);
}

void TaskTuner::retime(size_t k, const tir::PrimFunc& scheduled) {
  std::vector<TuningRecord> top = m_db.topK(m_task.key, m_task.target, k);
  if (top.empty() || k == 0) return;
  std::vector<MeasureCandidate> cs;
  if (scheduled.defined()) cs.push_back(baselineCandidate(scheduled));
  for (const TuningRecord& r : top) cs.push_back({m_task, r.trace, ""});
  std::vector<MeasureResult> rs = m_runner.run(cs, m_options.measure);
  for (size_t i = 0; i < cs.size(); ++i) {
    bool isBaseline = scheduled.defined() && i == 0;
    if (isBaseline && !rs[i].ok()) continue; // as measureBaseline: only a measured default is recorded
    m_db.commit(recordOf(cs[i].task.key, m_task.target, cs[i].trace, rs[i], /*retime=*/true));
  }
  if (scheduled.defined()) {
    if (rs[0].ok()) m_baselineMs = rs[0].meanMs();
    report(TuneEventKind::Baseline, &rs[0]);
  }
  auto best = m_db.best(m_task.key, m_task.target);
  m_bestMs = best ? best->meanMs() : INFINITY;
  report(TuneEventKind::TaskProgress);
}

bool TaskTuner::addSeed(const tir::Trace& design) {
  std::optional<SpacePoint> p = m_space.replay(m_task.func, design, {}, m_options.seed);
  if (!p) return false;
  if (m_measured.count(p->key())) return true; // measured in an earlier run: already an elite
  std::optional<Candidate> c = makeCandidate(std::move(*p), m_task.target);
  if (!c) return false;
  m_seeds.push_back(std::move(*c));
  return true;
}

bool TaskTuner::done() const { return m_exhausted || m_done + pending() >= m_options.trials; }

std::vector<std::pair<uint64_t, MeasureCandidate>> TaskTuner::propose(int maxTrials, int minBatch) {
  if (done() || maxTrials <= 0) return {};
  cpu::Scope profile(cpu::Phase::Search);
  // A pipelined batch is a multiple of the worker count (minBatch).
  int size = minBatch > 0 ? (std::max(m_options.batchSize, 1) + minBatch - 1) / minBatch * minBatch : m_options.batchSize;
  size_t n = size_t(std::min({size, m_options.trials - m_done - pending(), maxTrials}));
  m_ctx.elites.clear();
  for (auto& [ms, trace] : m_elites) m_ctx.elites.push_back(trace);
  std::vector<Candidate> batch;
  std::set<std::string> inBatch;
  while (!m_seeds.empty() && batch.size() < n) {
    if (inBatch.insert(m_seeds.front().point.key()).second) batch.push_back(std::move(m_seeds.front()));
    m_seeds.erase(m_seeds.begin());
  }
  if (batch.size() < n)
    for (Candidate& c : m_strategy->nextBatch(m_ctx, n - batch.size()))
      if (inBatch.insert(c.point.key()).second) batch.push_back(std::move(c));
  if (!m_keptHere.empty()) { // known to the workers before this batch's mutation requests go out
    if (auto* p = dynamic_cast<PipelinedRunner*>(&m_runner)) p->knowPoints(m_task.key, m_keptHere);
    m_keptHere.clear();
  }
  if (batch.empty()) {
    // Exhausted only when nothing is out: pending results may still make new elites.
    if (m_pending.empty()) m_exhausted = true;
    return {};
  }
  int id = m_nextBatch++;
  m_batches[id].left = batch.size();
  // Points the search left for the runner to lower, spread over the batch's candidates.
  std::vector<nlohmann::json> toLower = m_strategy->takeToLower();
  std::vector<std::pair<uint64_t, MeasureCandidate>> out;
  for (size_t i = 0; i < batch.size(); ++i) {
    Candidate& c = batch[i];
    nlohmann::json trace = c.point.finalJson();
    m_measured.insert(trace.dump()); // not proposed again (a record's traceKey)
    uint64_t cid = m_nextId++;
    MeasureCandidate mc{m_task, trace, "", c.features.empty()};
    Pending pending{std::move(c), std::move(trace), id};
    for (size_t k = i; k < toLower.size(); k += batch.size()) {
      // A final trace is known by its key; a mutation request needs none (the point comes back).
      const bool request = toLower[k].is_object() && toLower[k].contains("mutate");
      pending.alsoLower.push_back(request ? std::string() : toLower[k].dump());
      mc.alsoLower.push_back(std::move(toLower[k]));
    }
    out.push_back({cid, std::move(mc)});
    m_pending.emplace(cid, std::move(pending));
  }
  return out;
}

std::vector<std::pair<uint64_t, MeasureCandidate>> TaskTuner::proposeFillIns(size_t k, int maxTrials) {
  std::vector<std::pair<uint64_t, MeasureCandidate>> out;
  cpu::Scope profile(cpu::Phase::Points);
  k = std::min(k, size_t(std::max(0, std::min(maxTrials, m_options.trials - m_done - pending()))));
  for (size_t attempts = 0; out.size() < k && attempts < 4 * k + 4; ++attempts) {
    std::optional<SpacePoint> p = m_space.sample(m_task.func, m_fillRng());
    if (!p || m_measured.count(p->key())) continue;
    nlohmann::json trace = p->finalJson();
    m_measured.insert(p->key());
    uint64_t cid = m_nextId++;
    out.push_back({cid, MeasureCandidate{m_task, trace, "", true}});
    m_pending.emplace(cid, Pending{Candidate{std::move(*p), {}, 0}, std::move(trace), -1});
  }
  return out;
}

void TaskTuner::withdraw(uint64_t id) {
  auto it = m_pending.find(id);
  if (it == m_pending.end()) return;
  m_measured.erase(it->second.trace.dump());
  if (it->second.batch >= 0) { // not a fill-in: its batch waits for one result less
    auto b = m_batches.find(it->second.batch);
    if (b != m_batches.end() && b->second.left > 0) --b->second.left;
  }
  m_pending.erase(it);
}

bool TaskTuner::complete(uint64_t id, const MeasureResult& r) {
  auto it = m_pending.find(id);
  LOOM_ICHECK(it != m_pending.end()) << "tune: a result for candidate " << id << " that is not pending";
  cpu::Scope profile(cpu::Phase::Results);
  Pending p = std::move(it->second);
  m_pending.erase(it);
  TuningRecord rec = recordOf(m_task.key, m_task.target, p.trace, r);
  m_db.commit(rec);
  ++m_done;
  ++m_thisRun;
  if (!r.ok()) ++m_errors;
  const bool fillIn = p.batch < 0;
  BatchData& b = fillIn ? m_fillIns : m_batches[p.batch];
  // Fill-ins and unlowered random samples: the runner computed them (none when it did not lower).
  const std::vector<float>& features = p.candidate.features.empty() ? r.features : p.candidate.features;
  if (features.size() == featureCount()) {
    // Computed by the runner: kept, so the search does not lower the point again when it
    // replays it as an elite.
    if (p.candidate.features.empty() && m_featureCache.size() < 20000)
      m_featureCache.emplace(p.candidate.point.key(), features);
    if (dynamic_cast<PipelinedRunner*>(&m_runner)) {
      // Pipelined: each result goes to the (background) model as it comes, which retrains every
      // K results, whatever batch they belong to (one slow candidate does not hold it up).
      cpu::Scope training(cpu::Phase::Training);
      m_model->update({features}, {r.meanMs()});
    } else {
      b.x.push_back(features);
      b.t.push_back(r.meanMs());
    }
  }
  for (size_t k = 0; k < p.alsoLower.size(); ++k) { // what the runner lowered with it
    const bool has = k < r.alsoFeatures.size() && r.alsoFeatures[k].size() == featureCount();
    m_strategy->lowered(p.alsoLower[k], has ? std::optional(r.alsoFeatures[k]) : std::nullopt,
                        k < r.alsoMade.size() ? r.alsoMade[k] : nlohmann::json());
  }
  bool better = r.ok() && r.meanMs() < m_bestMs;
  if (r.ok()) m_elites.push_back({r.meanMs(), p.candidate.point.design});
  if (better) m_bestMs = r.meanMs();
  std::string script = p.candidate.point.finalScript();
  report(TuneEventKind::TrialDone, &r, script);
  if (better) report(TuneEventKind::NewBest, &r, script);
  if (fillIn || --b.left > 0) return false;
  b.x.insert(b.x.end(), m_fillIns.x.begin(), m_fillIns.x.end()); // fill-ins train with the batch
  b.t.insert(b.t.end(), m_fillIns.t.begin(), m_fillIns.t.end());
  m_fillIns = {};
  std::sort(m_elites.begin(), m_elites.end(), [](auto& a, auto& c) { return a.first < c.first; });
  if (m_elites.size() > 64) m_elites.resize(64);
  {
    cpu::Scope training(cpu::Phase::Training);
    m_model->update(b.x, b.t);
  }
  m_batches.erase(p.batch);
  report(TuneEventKind::TaskProgress);
  return true;
}

bool TaskTuner::step(int maxTrials) {
  std::vector<std::pair<uint64_t, MeasureCandidate>> batch = propose(maxTrials);
  if (batch.empty()) return false;
  std::vector<MeasureCandidate> inputs;
  for (auto& [id, c] : batch) inputs.push_back(c);
  m_runner.run(inputs, m_options.measure, [&](size_t i, const MeasureResult& r) { complete(batch[i].first, r); });
  return true;
}

TuneResult TaskTuner::result() const {
  TuneResult r;
  r.task = m_task.key;
  r.trialsDone = m_done;
  r.trialsThisRun = m_thisRun;
  r.errors = m_errors;
  r.best = m_db.best(m_task.key, m_task.target);
  r.baselineMs = m_baselineMs;
  return r;
}

std::string baselineKey(const std::string& taskKey) { return taskKey + "#baseline"; }

bool continueTuning(const TuneOptions& o) {
  for (;;) {
    if (o.shouldStop && o.shouldStop()) return false;
    if (!o.paused || !o.paused()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

int runPipelined(PipelinedRunner& runner, const std::vector<TaskTuner*>& tuners, const TuneOptions& options, int budget,
                 const std::function<int(const std::vector<bool>& blocked)>& pick,
                 const std::function<void(size_t, bool)>& onResult) {
  constexpr int kShift = 40; // ticket = tuner index << kShift | the tuner's candidate id
  const size_t slots = std::max<size_t>(1, runner.capacity());
  // A new batch is proposed while no more than a batch and a candidate per worker wait or run,
  // so the workers have work for as long as the search takes; fill-ins (random candidates the
  // runner hands out only when nothing else waits) cover a search that takes longer.
  const size_t ahead = std::max(slots, size_t(std::max(1, options.batchSize))) + slots;
  std::vector<bool> blocked(tuners.size(), false);
  int proposed = 0, measured = 0;
  size_t last = 0; // the tuner that proposed last: it fills the runner's fill-in reserve
  bool stopping = false;
  // The last stretch of the budget (a candidate per worker) goes to searched
  // candidates: the reserve is taken back once and not refilled, so fill-ins are measured only
  // where the search fell behind, not because they were in reserve at the end.
  bool endgame = false;
  for (;;) {
    if (!endgame && budget - proposed <= int(slots)) {
      endgame = true;
      for (uint64_t t : runner.takeBackFillIns()) {
        size_t i = size_t(t >> kShift);
        LOOM_ICHECK(i < tuners.size()) << "tune: a fill-in of tuner " << i << " of " << tuners.size();
        tuners[i]->withdraw(t & ((uint64_t(1) << kShift) - 1));
        --proposed;
      }
    }
    if (!endgame && !stopping && proposed < budget && runner.fillInTarget() > runner.fillInsWaiting() && !tuners[last]->done()) {
      auto fills = tuners[last]->proposeFillIns(runner.fillInTarget() - runner.fillInsWaiting(), budget - proposed);
      for (auto& [id, c] : fills) runner.submitFillIn(uint64_t(last) << kShift | id, c, options.measure);
      proposed += int(fills.size());
    }
    while (!stopping && proposed < budget && runner.outstanding() <= ahead + runner.fillInsWaiting()) {
      if (!continueTuning(options)) {
        stopping = true;
        break;
      }
      int i = pick(blocked);
      if (i < 0 || blocked[size_t(i)]) break;
      std::vector<std::pair<uint64_t, MeasureCandidate>> batch;
      {
        struct SearchGuard {
          PipelinedRunner& r;
          explicit SearchGuard(PipelinedRunner& runner) : r(runner) { r.searchBegins(); }
          ~SearchGuard() { r.searchEnds(); }
        } guard(runner);
        batch = tuners[size_t(i)]->propose(budget - proposed, int(slots));
      }
      if (batch.empty()) {
        if (tuners[size_t(i)]->pending() > 0) blocked[size_t(i)] = true; // wait for its results
        continue;                                                         // else it is done now
      }
      for (auto& [id, c] : batch) runner.submit(uint64_t(i) << kShift | id, c, options.measure);
      proposed += int(batch.size());
      last = size_t(i);
    }
    std::optional<std::pair<uint64_t, MeasureResult>> r = runner.next();
    if (!r) break;
    size_t i = size_t(r->first >> kShift);
    LOOM_ICHECK(i < tuners.size()) << "tune: a result for tuner " << i << " of " << tuners.size();
    bool batchDone = tuners[i]->complete(r->first & ((uint64_t(1) << kShift) - 1), r->second);
    blocked[i] = false;
    ++measured;
    if (onResult) onResult(i, batchDone);
  }
  return measured;
}

TuneResult tuneTask(const TuneTask& task, Database& db, Runner& runner, const TuneOptions& options,
                    const TuneCallback& callback) {
  TaskTuner t(task, db, runner, options, callback);
  if (options.measureBaseline) t.measureBaseline();
  if (auto* pipelined = dynamic_cast<PipelinedRunner*>(&runner)) {
    runPipelined(*pipelined, {&t}, options, options.trials, [&](const std::vector<bool>&) { return t.done() ? -1 : 0; });
  } else {
    while (continueTuning(options) && t.step()) {
    }
  }
  if (options.retimeTopK > 0 && continueTuning(options)) t.retime(size_t(options.retimeTopK));
  return t.result();
}

} // namespace loom::tune
