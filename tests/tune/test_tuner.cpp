// The tuning loop's mechanics: trials recorded with progress events, resume continues the count
// and never re-measures a schedule, both strategies run, bad options are refused.
#include <QtTest>
#include <cstdio>
#include <filesystem>
#include <set>

#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"

using namespace loom;
using namespace loom::tune;

namespace {

std::vector<std::string> workerCommand() { return {LOOM_BINARY_DIR "/bin/loom", "tune-worker"}; }

TuneOptions quick(int trials, const std::string& strategy) {
  TuneOptions o;
  o.trials = trials;
  o.batchSize = 3;
  o.strategy = strategy;
  o.measure.repeat = 2;
  o.measure.minRepeatMs = 1;
  o.measure.timeoutS = 10;
  return o;
}

} // namespace

class TestTuner : public QObject {
  Q_OBJECT
private slots:
  void tuneAndResume() {
    std::string path = (std::filesystem::temp_directory_path() /
                        ("loom_test_tuner_" + std::to_string(::getpid()) + ".json")).string();
    std::remove(path.c_str());
    TuneTask task = TuneTask::fromWorkload("matmul:M=32,N=32,K=32");
    ProcessRunner runner(workerCommand(), false);
    int baseline = 0, done = 0, best = 0, progress = 0;
    double lastBest = INFINITY;
    std::vector<int> counts;
    auto cb = [&](const TuneEvent& e) {
      QCOMPARE(e.task, task.key);
      switch (e.kind) {
      case TuneEventKind::Baseline: ++baseline; QVERIFY(e.result.ok()); break;
      case TuneEventKind::TrialDone: ++done; counts.push_back(e.trialsDone); QVERIFY(!e.traceScript.empty()); break;
      case TuneEventKind::NewBest: ++best; QVERIFY(e.bestMs < lastBest); lastBest = e.bestMs; break;
      case TuneEventKind::TaskProgress: ++progress; break;
      case TuneEventKind::TaskSelected: QFAIL("TaskSelected outside a TaskScheduler"); break;
      }
    };
    {
      JsonDatabase db(path);
      TuneResult r = tuneTask(task, db, runner, quick(6, "random"), cb);
      QCOMPARE(r.trialsDone, 6);
      QCOMPARE(r.trialsThisRun, 6);
      QVERIFY(r.best.has_value());
      QVERIFY(std::isfinite(r.baselineMs));
      QCOMPARE(r.best->meanMs(), lastBest);
    }
    QCOMPARE(baseline, 1);
    QCOMPARE(done, 6);
    QCOMPARE(progress, 2);
    QVERIFY(best >= 1);
    QCOMPARE(counts, (std::vector<int>{1, 2, 3, 4, 5, 6}));
    // Resume with the evolutionary strategy (its model is trained from the loaded records).
    done = 0;
    counts.clear();
    {
      JsonDatabase db(path);
      QCOMPARE(db.all().size(), size_t(6));
      TuneOptions o = quick(10, "evolutionary");
      o.measureBaseline = false;
      TuneResult r = tuneTask(task, db, runner, o, cb);
      QCOMPARE(r.trialsDone, 10);
      QCOMPARE(r.trialsThisRun, 4);
    }
    QCOMPARE(counts, (std::vector<int>{7, 8, 9, 10}));
    JsonDatabase db(path);
    QCOMPARE(db.all().size(), size_t(10));
    std::set<std::string> keys;
    for (auto& r : db.all()) keys.insert(r.traceKey());
    QCOMPARE(keys.size(), size_t(10)); // nothing measured twice
    // A budget already spent runs nothing.
    {
      TuneOptions o = quick(8, "random");
      o.measureBaseline = false;
      TuneResult r = tuneTask(task, db, runner, o);
      QCOMPARE(r.trialsThisRun, 0);
      QCOMPARE(db.all().size(), size_t(10));
    }
    std::remove(path.c_str());
  }

  void retimeMeasuresTheFastestAgain() {
    JsonDatabase db;
    ProcessRunner runner(workerCommand(), false);
    TuneTask task = TuneTask::fromWorkload("matmul:M=32,N=32,K=32");
    TuneOptions o = quick(6, "random");
    o.measureBaseline = false;
    o.retimeTopK = 2;
    std::vector<TuneEventKind> kinds;
    TuneResult r = tuneTask(task, db, runner, o, [&](const TuneEvent& e) { kinds.push_back(e.kind); });
    QCOMPARE(r.trialsDone, 6);
    QCOMPARE(db.trialCount(task.key, task.target), size_t(6));
    std::vector<TuningRecord> all = db.records(task.key, task.target);
    QCOMPARE(all.size(), size_t(8));
    // The last two records re-time two of the trials' schedules.
    std::set<std::string> trials;
    for (size_t i = 0; i < 6; ++i) {
      QVERIFY(!all[i].retime);
      trials.insert(all[i].traceKey());
    }
    QVERIFY(all[6].retime && all[7].retime);
    QVERIFY(trials.count(all[6].traceKey()) && trials.count(all[7].traceKey()));
    QVERIFY(all[6].traceKey() != all[7].traceKey());
    QVERIFY(r.best.has_value());
    QCOMPARE(kinds.back(), TuneEventKind::TaskProgress);
    // The reported best is the re-timed one's time (the latest record of its schedule).
    bool bestIsRetimed = false;
    for (size_t i = 6; i < 8; ++i)
      if (all[i].traceKey() == r.best->traceKey()) bestIsRetimed = all[i].meanMs() == r.best->meanMs();
    QVERIFY(bestIsRetimed);
    // Resuming does not count re-timings as trials.
    TuneOptions more = quick(7, "random");
    more.measureBaseline = false;
    TuneResult again = tuneTask(task, db, runner, more);
    QCOMPARE(again.trialsThisRun, 1);
    QCOMPARE(again.trialsDone, 7);
  }

  void stopsWhenAsked() {
    JsonDatabase db;
    ProcessRunner runner(workerCommand(), false);
    TuneOptions o = quick(30, "random");
    o.measureBaseline = false;
    int batches = 0;
    o.shouldStop = [&] { return batches >= 1; };
    TuneResult r = tuneTask(TuneTask::fromWorkload("matmul:M=8,N=8,K=8"), db, runner, o, [&](const TuneEvent& e) {
      if (e.kind == TuneEventKind::TaskProgress) ++batches;
    });
    QCOMPARE(r.trialsThisRun, 3); // one batch of 3
    QCOMPARE(db.all().size(), size_t(3));
  }

  void unknownStrategyIsRefused() {
    JsonDatabase db;
    ProcessRunner runner(workerCommand(), false);
    TuneOptions o = quick(2, "annealing");
    try {
      TaskTuner t(TuneTask::fromWorkload("matmul:M=8,N=8,K=8"), db, runner, o);
      QFAIL("expected a ValueError");
    } catch (const ValueError& e) {
      QVERIFY(std::string(e.what()).find("'annealing'") != std::string::npos);
    }
  }
};

QTEST_APPLESS_MAIN(TestTuner)
#include "test_tuner.moc"
