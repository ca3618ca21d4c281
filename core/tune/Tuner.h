// The tuning loop: propose candidates (search strategy), measure them (runner), record them
// (database), retrain the cost model, and report progress through a callback.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>

#include "core/tune/CostModel.h"
#include "core/tune/Database.h"
#include "core/tune/Measure.h"
#include "core/tune/SearchStrategy.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/Task.h"

namespace loom::tune {

struct TuneOptions {
  int trials = 64;                      ///< total trials of the task (records already there count)
  int batchSize = 8;                    ///< candidates measured per round
  std::string strategy = "evolutionary"; ///< "evolutionary" or "random"
  MeasureOptions measure;
  uint64_t seed = 1;
  /// Threads that make and lower candidates for the cost model (the search's main cost): 0, the
  /// machine's cores. What the search proposes does not depend on it. The search never runs while
  /// a local runner times (a distributed run's rank 0 searches while worker ranks time: see
  /// core/tune/mpi/README.md).
  int searchThreads = 0;
  bool measureBaseline = true; ///< also time the unscheduled program (not recorded)
  /// After the search, re-measure the task's `retimeTopK` fastest schedules (and the baseline
  /// schedule of whole-model tuning) one after another, recorded with `retime` set: the schedule
  /// compile picks and the default it is compared with are then timed under the same conditions,
  /// not at moments of a long run on a shared machine that do not compare (the fastest of many
  /// noisy timings is often a lucky one). 0: off.
  int retimeTopK = 0;
  /// Polled between batches: returning true stops tuneTask early (e.g. the Studio's Stop
  /// button); what was measured so far stays recorded.
  std::function<bool()> shouldStop;
  /// Polled between batches: while it returns true the tuning waits (polling every 100 ms, and
  /// shouldStop too), e.g. the Studio's Pause button.
  std::function<bool()> paused;
};

/// The record key of a task's baseline ("<task key>#baseline"): the time of the schedule a model
/// kernel gets without records, measured alongside its tuning.
std::string baselineKey(const std::string& taskKey);

/// Waits while `o.paused()` is true; false when `o.shouldStop()` asks to stop (now or while paused).
bool continueTuning(const TuneOptions& o);

/// What the callback hears about.
enum class TuneEventKind {
  Baseline,     ///< the baseline (unscheduled, or the scheduler's baseline schedule) was measured
  TrialDone,    ///< one candidate measured and recorded (result, record)
  NewBest,      ///< a trial beat the best so far (after its TrialDone)
  TaskProgress, ///< a batch finished (trialsDone / trialsTotal, bestMs)
  TaskSelected, ///< whole-model tuning: this task (taskIndex of taskCount) measures the next batch
};

struct TuneEvent {
  TuneEventKind kind;
  std::string task;     ///< the task key
  int trialsDone = 0;   ///< trials of the task so far (including resumed ones)
  int trialsTotal = 0;
  MeasureResult result; ///< TrialDone / NewBest / Baseline
  double bestMs = 0;    ///< +inf while nothing succeeded
  double baselineMs = 0; ///< +inf when not measured or failed
  double flops = 0;     ///< of the task (GFLOP/s = flops / ms / 1e6)
  std::string traceScript; ///< TrialDone / NewBest: the candidate's schedule as a script
  int taskIndex = 0;    ///< the task's position among the tasks tuned together (TaskScheduler)
  int taskCount = 1;
};

/// Called synchronously on the tuning thread, in order; a GUI runs tuneTask on a worker thread and
/// forwards the events to its own thread.
using TuneCallback = std::function<void(const TuneEvent&)>;

struct TuneResult {
  std::string task;
  int trialsDone = 0;      ///< total, including resumed trials
  int trialsThisRun = 0;
  int errors = 0;          ///< failed trials of this run
  std::optional<TuningRecord> best;
  double baselineMs = 0;   ///< +inf when not measured or failed
};

/// Tunes one task, stepwise: each `step()` measures one batch. Whole-model tuning keeps one
/// TaskTuner per extracted task and decides which one steps next.
class TaskTuner {
public:
  TaskTuner(TuneTask task, Database& db, Runner& runner, const TuneOptions& options,
            TuneCallback callback = {});
  /// Measures the unscheduled program once (TuneOptions::measureBaseline), or `scheduled` when
  /// given (the task's function under another schedule, e.g. the driver's default one); the
  /// latter, when it succeeds, is recorded under baselineKey(task key) with an empty trace, so
  /// record users can tell whether the tuned schedule beats it.
  void measureBaseline(const tir::PrimFunc& scheduled = {});
  /// Whole-model tuning: the task's position, carried by every event from now on.
  void setTaskIndex(int index, int count);
  /// Re-measures the `k` fastest recorded schedules, preceded by `scheduled` as the baseline when
  /// given (see measureBaseline); records them with `retime` set (the latest time of a schedule
  /// is the one Database::best uses) and reports Baseline and TaskProgress with the new times.
  void retime(size_t k, const tir::PrimFunc& scheduled = {});
  /// A design to measure first (e.g. the driver's default schedule as a trace, whose sampled tile
  /// decisions the evolutionary search then mutates): it leads the next batch unless it was
  /// measured before. Returns false when the design does not replay on the task.
  bool addSeed(const tir::Trace& design);
  /// Reports TaskSelected (the scheduler chose this task for the next batch).
  void announce();
  /// Measures one batch (at most `maxTrials` candidates); false when the budget is spent or the
  /// space yields no new candidate.
  bool step(int maxTrials = 1 << 30);
  /// Pipelined tuning (a PipelinedRunner): step() in two halves. propose() picks the next batch
  /// (at most `maxTrials`, at least `minBatch` when the options' batch is smaller) and returns its
  /// candidates with the ids complete() takes; they count against the budget until their results
  /// come back. Empty when the budget is spent or the space yields nothing new.
  std::vector<std::pair<uint64_t, MeasureCandidate>> propose(int maxTrials = 1 << 30, int minBatch = 0);
  /// A proposed candidate's result: recorded and reported as in step(); the last one of its batch
  /// retrains the cost model and reports TaskProgress.
  /// True when it was the last of its batch.
  bool complete(uint64_t id, const MeasureResult& r);
  /// Pipelined tuning with fill-ins (PipelinedRunner::fillInTarget): up to `k` random unmeasured
  /// points (at most `maxTrials`), sampled but not lowered (the runner returns their features with
  /// the result); they count against the budget like proposed candidates, and their results train
  /// the cost model with the next batch.
  std::vector<std::pair<uint64_t, MeasureCandidate>> proposeFillIns(size_t k, int maxTrials = 1 << 30);
  /// A proposed candidate (a fill-in taken back: PipelinedRunner::takeBackFillIns) that will not
  /// be measured: it no longer counts against the budget and may be proposed again.
  void withdraw(uint64_t id);
  /// Proposed candidates without a result yet.
  int pending() const { return int(m_pending.size()); }
  /// Nothing more to propose: the budget is spent (pending candidates included) or the space is.
  bool done() const;
  TuneResult result() const;
  const TuneTask& task() const { return m_task; }

private:
  void report(TuneEventKind kind, const MeasureResult* r = nullptr, const std::string& script = {});
  /// The task under `scheduled` (recorded under baselineKey), or unscheduled when undefined.
  MeasureCandidate baselineCandidate(const tir::PrimFunc& scheduled) const;

  TuneTask m_task;
  Database& m_db;
  Runner& m_runner;
  TuneOptions m_options;
  TuneCallback m_callback;
  SpaceGenerator m_space;
  std::unique_ptr<SearchStrategy> m_strategy;
  std::unique_ptr<CostModel> m_model;
  std::set<std::string> m_measured;
  std::vector<std::pair<double, tir::Trace>> m_elites; ///< (mean ms, design), fastest first
  std::vector<Candidate> m_seeds;                      ///< addSeed's designs not measured yet
  struct Pending {
    Candidate candidate;
    nlohmann::json trace; ///< the final trace, as recorded
    int batch = 0;
    std::vector<std::string> alsoLower = {}; ///< keys of the points the runner lowers with it ("": a mutation request)
  };
  struct BatchData {
    size_t left = 0; ///< results still to come
    std::vector<std::vector<float>> x;
    std::vector<double> t;
  };
  std::map<uint64_t, Pending> m_pending; ///< proposed, not measured yet
  std::map<int, BatchData> m_batches;    ///< batches with results still to come
  BatchData m_fillIns;                   ///< fill-in results not yet trained on (batch -1)
  std::mt19937_64 m_fillRng;             ///< fill-ins' samples (the search's rng stays its own)
  uint64_t m_nextId = 0;
  int m_nextBatch = 0;
  SearchContext m_ctx;
  std::map<std::string, std::optional<std::vector<float>>> m_featureCache; ///< m_ctx.featureCache
  std::vector<uint64_t> m_keptHere; ///< m_ctx.keptHere: for the runner's workers (PipelinedRunner::knowPoints)
  int m_done = 0, m_thisRun = 0, m_errors = 0;
  int m_taskIndex = 0, m_taskCount = 1;
  double m_bestMs, m_baselineMs;
  bool m_exhausted = false;
};

/// Pipelined tuning: keeps `runner` fed, so its workers never wait for a whole batch to finish.
/// While no more than one batch is out (runner.outstanding() <= max(capacity(), batchSize)), `pick(blocked)`
/// names the tuner that proposes the next batch (at least capacity() candidates; -1: none now;
/// blocked[i]: tuner i proposed nothing new until more of its results are in), and keeps the
/// runner's fill-in reserve full from the tuner that proposed last; each result is
/// handed to its tuner and then to `onResult(i, batchDone)`. Stops proposing when `budget` trials
/// were proposed or continueTuning(options) says stop, and returns once every result is in
/// (the number of trials measured).
int runPipelined(PipelinedRunner& runner, const std::vector<TaskTuner*>& tuners, const TuneOptions& options, int budget,
                 const std::function<int(const std::vector<bool>& blocked)>& pick,
                 const std::function<void(size_t, bool)>& onResult = {});

/// Runs a TaskTuner until the budget is spent (pipelined with a PipelinedRunner).
TuneResult tuneTask(const TuneTask& task, Database& db, Runner& runner, const TuneOptions& options,
                    const TuneCallback& callback = {});

} // namespace loom::tune
