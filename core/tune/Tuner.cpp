// TaskTuner: the measure / record / retrain loop of one task.
#include "core/tune/Tuner.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <thread>

#include "core/schedule/Trace.h"
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
      m_space(SpaceGenerator::forTarget(m_task.target)), m_model(makeXGBoostModel()), m_bestMs(INFINITY),
      m_baselineMs(INFINITY) {
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
  if (!x.empty()) m_model->update(x, t);
  m_ctx.task = &m_task;
  m_ctx.space = &m_space;
  m_ctx.model = m_model.get();
  m_ctx.measured = &m_measured;
  m_ctx.rng.seed(m_options.seed * 7919 + uint64_t(m_done));
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

bool TaskTuner::done() const { return m_exhausted || m_done >= m_options.trials; }

bool TaskTuner::step(int maxTrials) {
  if (done() || maxTrials <= 0) return false;
  size_t n = size_t(std::min({m_options.batchSize, m_options.trials - m_done, maxTrials}));
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
  if (batch.empty()) {
    m_exhausted = true;
    return false;
  }
  std::vector<MeasureCandidate> inputs;
  for (auto& c : batch) inputs.push_back({m_task, c.point.finalJson(), ""});
  std::vector<std::vector<float>> x;
  std::vector<double> t;
  m_runner.run(inputs, m_options.measure, [&](size_t i, const MeasureResult& r) {
    TuningRecord rec = recordOf(m_task.key, m_task.target, inputs[i].trace, r);
    m_db.commit(rec);
    m_measured.insert(rec.traceKey());
    ++m_done;
    ++m_thisRun;
    if (!r.ok()) ++m_errors;
    x.push_back(batch[i].features);
    t.push_back(r.meanMs());
    bool better = r.ok() && r.meanMs() < m_bestMs;
    if (r.ok()) m_elites.push_back({r.meanMs(), batch[i].point.design});
    if (better) m_bestMs = r.meanMs();
    std::string script = batch[i].point.final.trace().simplified().str();
    report(TuneEventKind::TrialDone, &r, script);
    if (better) report(TuneEventKind::NewBest, &r, script);
  });
  std::sort(m_elites.begin(), m_elites.end(), [](auto& a, auto& b) { return a.first < b.first; });
  if (m_elites.size() > 64) m_elites.resize(64);
  m_model->update(x, t);
  report(TuneEventKind::TaskProgress);
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

TuneResult tuneTask(const TuneTask& task, Database& db, Runner& runner, const TuneOptions& options,
                    const TuneCallback& callback) {
  TaskTuner t(task, db, runner, options, callback);
  if (options.measureBaseline) t.measureBaseline();
  while (continueTuning(options) && t.step()) {
  }
  if (options.retimeTopK > 0 && continueTuning(options)) t.retime(size_t(options.retimeTopK));
  return t.result();
}

} // namespace loom::tune
