// The multi-task scheduler with a simulated runner (no processes): identical tasks merge, every
// task is warmed up, the budget holds, and trials go where the time still drops.
#include <QtTest>
#include <functional>
#include <random>
#include <set>

#include "core/driver/DefaultSchedule.h"
#include "core/schedule/Schedule.h"
#include "core/tir/StructuralEqual.h"
#include "core/tune/TaskScheduler.h"
#include "core/tune/database/JsonDatabase.h"

using namespace loom;
using namespace loom::tune;

namespace {

/// Times from a hash of the trace: task "a" (matmul) spreads widely, task "b" (batch_matmul) is flat.
class FakeRunner : public Runner {
public:
  std::vector<MeasureResult> run(const std::vector<MeasureCandidate>& cs, const MeasureOptions&,
                                 const std::function<void(size_t, const MeasureResult&)>& onResult) override {
    std::vector<MeasureResult> out;
    for (size_t i = 0; i < cs.size(); ++i) {
      MeasureResult r;
      size_t h = std::hash<std::string>()(cs[i].trace.dump());
      bool wide = cs[i].task.key.rfind("matmul", 0) == 0;
      r.timesMs = {wide ? 1.0 + double(h % 1000) : 5.0};
      out.push_back(r);
      if (onResult) onResult(i, r);
    }
    return out;
  }
};

/// Random search, `batch` per batch, at most `trials` per task, no baselines (FakeRunner times only).
TuneOptions randomSearch(int trials, int batch) {
  TuneOptions per;
  per.trials = trials;
  per.batchSize = batch;
  per.strategy = "random";
  per.measureBaseline = false;
  return per;
}

} // namespace

class TestTaskScheduler : public QObject {
  Q_OBJECT
private slots:
  void allocatesByGain() {
    std::vector<TuneTask> tasks = {TuneTask::fromWorkload("matmul:M=32,N=32,K=32"),
                                   TuneTask::fromWorkload("batch_matmul:B=2,M=16,N=16,K=16"),
                                   TuneTask::fromWorkload("matmul:K=32,M=32,N=32")};
    JsonDatabase db;
    FakeRunner runner;
    TuneOptions per = randomSearch(100, 4);
    TaskSchedulerOptions o;
    o.totalTrials = 30;
    TaskScheduler s(tasks, db, runner, per, o);
    QCOMPARE(s.tasks().size(), size_t(2));
    QCOMPARE(s.tasks()[0].weight, 2);
    auto rs = s.run();
    QCOMPARE(rs.size(), size_t(2));
    QCOMPARE(rs[0].trialsThisRun + rs[1].trialsThisRun, 30);
    QCOMPARE(db.all().size(), size_t(30));
    qInfo("trials: matmul %d, batch_matmul %d", rs[0].trialsThisRun, rs[1].trialsThisRun);
    QVERIFY(rs[1].trialsThisRun >= 4);                   // warmed up
    QVERIFY(rs[0].trialsThisRun > rs[1].trialsThisRun);  // the task whose time drops gets more
  }

  void theDefaultScheduleSeedsTheSearch() {
    // The default schedule's trace is measured first and is a design with sampled tiles whose
    // mutations replay to other schedules.
    TuneTask task = TuneTask::fromWorkload("matmul:M=64,N=64,K=64");
    tir::Trace seed = driver::defaultScheduleTrace(task.func);
    QVERIFY(!seed.samplingInstructions().empty());
    JsonDatabase db;
    FakeRunner runner;
    TuneOptions per = randomSearch(8, 4);
    TaskSchedulerOptions o;
    o.totalTrials = 8;
    o.seedTrace = [](const tir::PrimFunc& f) { return driver::defaultScheduleTrace(f); };
    TaskScheduler(std::vector<TuneTask>{task}, db, runner, per, o).run();
    std::vector<TuningRecord> rs = db.records(task.key, task.target);
    QCOMPARE(rs.size(), size_t(8));
    tir::Schedule replayed(task.func);
    tir::Trace::fromJson(rs[0].trace).apply(replayed);
    QVERIFY(tir::structuralEqual(replayed.func(), driver::defaultSchedule(task.func)));
    // Mutating a sampled tile of the seed gives other valid schedules.
    SpaceGenerator space = SpaceGenerator::defaultCpu();
    std::set<std::string> keys;
    std::mt19937_64 rng(3);
    for (int i = 0; i < 20; ++i) {
      auto sampling = seed.samplingInstructions();
      auto p = space.replay(task.func, seed, {{sampling[rng() % sampling.size()], tir::Value()}}, rng());
      if (p) keys.insert(p->key());
    }
    QVERIFY2(keys.size() >= 2, std::to_string(keys.size()).c_str());
    // A resumed run does not measure the seed again.
    per.trials = 12;
    o.totalTrials = 4;
    TaskScheduler(std::vector<TuneTask>{task}, db, runner, per, o).run();
    rs = db.records(task.key, task.target);
    QCOMPARE(rs.size(), size_t(12));
    size_t seedCount = 0;
    for (auto& r : rs) seedCount += r.traceKey() == db.records(task.key, task.target)[0].traceKey();
    QCOMPARE(seedCount, size_t(1));
  }

  void resumedTasksSkipWarmUp() {
    std::vector<TuneTask> tasks = {TuneTask::fromWorkload("matmul:M=32,N=32,K=32"),
                                   TuneTask::fromWorkload("batch_matmul:B=2,M=16,N=16,K=16")};
    JsonDatabase db;
    FakeRunner runner;
    TuneOptions per = randomSearch(100, 4);
    TaskSchedulerOptions o;
    o.totalTrials = 8;
    TuneResult first = tuneTask(tasks[0], db, runner, [&] {
      TuneOptions p = per;
      p.trials = 8;
      return p;
    }());
    QCOMPARE(first.trialsDone, 8);
    // matmul has its 8 trials: the first batch of this run warms batch_matmul up, not matmul again.
    o.totalTrials = 4;
    std::vector<std::string> order;
    TaskScheduler s(tasks, db, runner, per, o, [&](const TuneEvent& e) {
      if (e.kind == TuneEventKind::TaskSelected) order.push_back(e.task);
    });
    auto rs = s.run();
    QCOMPARE(rs[0].trialsThisRun, 0);
    QCOMPARE(rs[1].trialsThisRun, 4);
    QCOMPARE(order, std::vector<std::string>{tasks[1].key});
  }

  void eventsPauseAndStop() {
    std::vector<TuneTask> tasks = {TuneTask::fromWorkload("matmul:M=32,N=32,K=32"),
                                   TuneTask::fromWorkload("batch_matmul:B=2,M=16,N=16,K=16")};
    JsonDatabase db;
    FakeRunner runner;
    TuneOptions per = randomSearch(8, 2);
    per.measureBaseline = true;
    int polls = 0;
    per.paused = [&] { return ++polls <= 3; }; // paused for the first three polls
    TaskSchedulerOptions o;
    o.totalTrials = 12;
    int baselineScheduled = 0;
    o.baselineSchedule = [&](const tir::PrimFunc& f) {
      ++baselineScheduled;
      return f;
    };
    std::vector<TuneEvent> events;
    TaskScheduler s(tasks, db, runner, per, o, [&](const TuneEvent& e) { events.push_back(e); });
    s.run();
    QVERIFY(polls >= 4);
    QCOMPARE(baselineScheduled, 2);
    // Every batch is announced by TaskSelected of its task; every event carries the task's index.
    int selected = -1, batches = 0, baselines = 0;
    for (const TuneEvent& e : events) {
      QCOMPARE(e.taskCount, 2);
      QCOMPARE(e.task, s.tasks()[size_t(e.taskIndex)].key);
      if (e.kind == TuneEventKind::TaskSelected) selected = e.taskIndex;
      else QCOMPARE(e.taskIndex, selected);
      batches += e.kind == TuneEventKind::TaskProgress;
      baselines += e.kind == TuneEventKind::Baseline;
    }
    QCOMPARE(batches, 6);
    QCOMPARE(baselines, 2);
    // The baselines under a given schedule are recorded under their own key.
    for (auto& t : s.tasks()) QCOMPARE(db.records(baselineKey(t.key), t.target).size(), size_t(1));
    QCOMPARE(db.all().size(), size_t(12 + 2));
    // A stop asked while paused ends the run before any batch.
    JsonDatabase db2;
    bool stop = false;
    int waited = 0;
    per.shouldStop = [&] { return stop; };
    per.paused = [&] {
      if (++waited == 3) stop = true;
      return true;
    };
    TaskScheduler s2(tasks, db2, runner, per, o);
    auto rs = s2.run();
    QCOMPARE(rs[0].trialsThisRun + rs[1].trialsThisRun, 0);
    QCOMPARE(db2.all().size(), size_t(0));
    QCOMPARE(waited, 3);
  }
};

QTEST_APPLESS_MAIN(TestTaskScheduler)
#include "test_task_scheduler.moc"
