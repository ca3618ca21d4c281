// The multi-task scheduler with a simulated runner (no processes): identical tasks merge, every
// task is warmed up, the budget holds, and trials go where the time still drops.
#include <QtTest>
#include <functional>

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
    TuneOptions per;
    per.trials = 100;
    per.batchSize = 4;
    per.strategy = "random";
    per.measureBaseline = false;
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
};

QTEST_APPLESS_MAIN(TestTaskScheduler)
#include "test_task_scheduler.moc"
