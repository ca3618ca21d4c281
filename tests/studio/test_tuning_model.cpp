// GUI tests of the Studio's tuning monitor on models (offscreen): per-task rows, fused groups, open in editor.
#include <QApplication>
#include <QFile>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "core/tune/ModelTasks.h"
#include "core/tune/Record.h"
#include "Waits.h"
#include "views/ExportDialog.h"
#include "views/MainWindow.h"
#include "views/OperatorJobs.h"
#include "views/Resources.h"
#include "views/Session.h"
#include "views/TuningMonitor.h"

using namespace loom;
using namespace loom::views;

namespace {

const QStringList kWorker{LOOM_BINARY_DIR "/bin/loom", "tune-worker"};

/// Every line of the records file parsed as a TuningRecord (throws on a malformed line).
QVector<tune::TuningRecord> readRecords(const QString& path) {
  QVector<tune::TuningRecord> out;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return out;
  for (const QByteArray& line : f.readAll().split('\n'))
    if (!line.trimmed().isEmpty()) out.push_back(tune::TuningRecord::fromJson(nlohmann::json::parse(line.toStdString())));
  return out;
}

}  // namespace

class TestTuningModel : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioTuningModelTest");
    initResources();
    QVERIFY2(QFileInfo(kWorker[0]).isExecutable(), "the loom binary must be built");
  }

  void tuningAModelShowsOneRowPerTask() {
    QTemporaryDir dir;
    MainWindow w;
    TuningMonitor& m = *w.tuningMonitor();
    m.setWorkerCommand(kWorker);
    QSignalSpy groups(w.session(), &Session::groupsReady);
    w.openModel(LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx");
    QTRY_VERIFY_WITH_TIMEOUT(groups.count() == 1, studiotest::kWorkerWaitMs);
    m.setScope(TuneJob::Scope::Model);
    TuneJob job = m.jobFromForm();
    QVERIFY(job.module);
    job.trials = 6;
    job.trialsPerTask = 1;
    job.batchSize = 1;
    job.recordsPath = dir.filePath("small_cnn.json");
    QSignalSpy finished(&m, &TuningMonitor::runFinished);
    QVERIFY(m.start(job));
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), studiotest::kWorkerWaitMs);
    QVERIFY2(finished.count() == 1 && finished[0][0].toBool(), qPrintable(m.statusText()));
    int tasks = m.tasksModel()->rowCount();
    QVERIFY(tasks >= 3);
    int trials = 0, tuned = 0;
    for (int r = 0; r < tasks; ++r) {
      QString cell = m.tasksModel()->item(r, 2)->text();  // "done/total"
      trials += cell.section('/', 0, 0).toInt();
      tuned += m.tasksModel()->item(r, 3)->text() != "-";
      QVERIFY(m.tasksModel()->item(r, 0)->text().startsWith("fused_"));
      QVERIFY(m.tasksModel()->item(r, 1)->text().toInt() >= 1);
    }
    QCOMPARE(trials, m.trialsDone());
    QVERIFY(trials <= 6 && trials >= std::min(6, tasks));
    QVERIFY(tuned >= 1);
    // The model's estimated latency is charted once every task has a working candidate.
    if (tuned == tasks) QVERIFY(m.chartPoints() > 0);
    QVector<tune::TuningRecord> recs = readRecords(job.recordsPath);
    int trialRecords = 0, retimed = 0;
    for (const tune::TuningRecord& r : recs) {
      bool taskRecord = QString::fromStdString(r.workload).startsWith("tir:") && !QString::fromStdString(r.workload).contains('#');
      trialRecords += taskRecord && !r.retime;
      retimed += taskRecord && r.retime;
      QVERIFY(r.cacheFlush); // a CPU model's kernels are timed with the caches flushed
    }
    QCOMPARE(trialRecords, trials);
    QVERIFY(retimed >= tuned); // each task's winners are re-timed beside its default
    // Open in Editor opens the candidate's kernel (the model view's group with its key) with the
    // candidate's schedule, which runs and matches the unscheduled kernel.
    QVERIFY(!m.best().isEmpty());
    m.openCandidate(0);
    OperatorRequest req = w.session()->request();
    QVERIFY(req.isGroup());
    QCOMPARE(QString::fromStdString(tune::groupKey(req.func)), m.best().first().task);
    QVERIFY(req.schedule.contains("sch."));
    RunRecord rec = runOperator(req);
    QVERIFY2(rec.ok, qPrintable(rec.error));
    QVERIFY(rec.correct);

    // File > Export offers these records; the export gives every tuned kernel its record.
    w.showExportDialog();
    auto* d = w.findChild<ExportDialog*>();
    QVERIFY(d);
    d->setOutputPath(dir.filePath("tuned.tar"));
    QSignalSpy exported(d, &ExportDialog::exportFinished);
    QVERIFY(d->startExport());
    QTRY_VERIFY_WITH_TIMEOUT(exported.count() == 1, studiotest::kWorkerWaitMs);
    QVERIFY2(exported[0][0].toBool(), qPrintable(d->outcome().error));
    // A kernel takes its record when the record beats its baseline (the default schedule).
    int beating = 0;
    for (int r = 0; r < tasks; ++r) {
      double best = m.tasksModel()->item(r, 3)->text().toDouble(), base = m.tasksModel()->item(r, 5)->text().toDouble();
      if (best > 0 && (base <= 0 || best <= base)) beating += int(m.tasksModel()->item(r, 0)->text().split(", ").size());
    }
    QCOMPARE(d->outcome().kernelsTuned, beating);
    d->close();
  }

  void tuningAnOpenedFusedGroupUsesTheModelsKey() {
    QTemporaryDir dir;
    MainWindow w;
    TuningMonitor* m = w.tuningMonitor();
    m->setWorkerCommand(kWorker);
    QSignalSpy groups(w.session(), &Session::groupsReady);
    w.openModel(LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx");
    QTRY_VERIFY_WITH_TIMEOUT(groups.count() == 1, studiotest::kWorkerWaitMs);
    QVERIFY(w.openGroup(0));
    const OperatorRequest req = w.session()->request();
    QVERIFY(req.isGroup());
    m->setScope(TuneJob::Scope::Operator);
    TuneJob job = m->jobFromForm();
    QVERIFY(job.func.defined() && job.preset.isEmpty());
    job.trials = 3;
    job.batchSize = 3;
    job.recordsPath = dir.filePath("group.json");
    job.resume = false;
    QVERIFY(m->start(job));
    QTRY_VERIFY_WITH_TIMEOUT(!m->isRunning(), studiotest::kWorkerWaitMs);
    QCOMPARE(m->tasksModel()->rowCount(), 1);
    QCOMPARE(m->tasksModel()->item(0, 0)->text(), req.group);
    // Recorded under the kernel's model key, so `loom compile --tuning-records` and the export use them.
    QVector<tune::TuningRecord> recs = readRecords(job.recordsPath);
    QCOMPARE(recs.size(), 3);
    for (const tune::TuningRecord& r : recs) QCOMPARE(r.workload, tune::groupKey(req.func));
    QVERIFY(!m->best().isEmpty());
    // Open in Editor keeps the group and puts the schedule in; it runs and matches the unscheduled kernel.
    m->openCandidate(0);
    QVERIFY(w.session()->request().isGroup());
    OperatorRequest run = w.session()->request();
    QVERIFY(run.schedule.contains("sch."));
    RunRecord rec = runOperator(run);
    QVERIFY2(rec.ok, qPrintable(rec.error));
    QVERIFY(rec.correct);

    // Saved in the session: reopened, the dock shows this kernel's results again once its model
    // is loaded, and Open in Editor still opens the kernel with the candidate.
    QString session = dir.filePath("group.loomsession");
    QVERIFY(w.saveSession(session, true));
    MainWindow w2;
    TuningMonitor* m2 = w2.tuningMonitor();
    QSignalSpy groups2(w2.session(), &Session::groupsReady);
    QVERIFY(w2.loadSession(session, true));
    QTRY_VERIFY_WITH_TIMEOUT(groups2.count() == 1, studiotest::kWorkerWaitMs);
    QVERIFY(m2->resultsRestored());
    QCOMPARE(m2->tasksModel()->rowCount(), 1);
    QCOMPARE(m2->tasksModel()->item(0, 0)->text(), req.group);
    QCOMPARE(m2->candidatesModel()->rowCount(), m->candidatesModel()->rowCount());
    QCOMPARE(m2->best().first().ms, m->best().first().ms);
    QCOMPARE(m2->best().first().task, m->best().first().task);
    QCOMPARE(m2->lastJob().funcName, req.group);
    QVERIFY(m2->lastJob().func.defined() && m2->lastJob().module);
    m2->openCandidate(0);
    QVERIFY(w2.session()->request().isGroup());
    QCOMPARE(w2.session()->request().group, req.group);
    QCOMPARE(w2.session()->request().schedule, run.schedule);
  }
};

QTEST_MAIN(TestTuningModel)
#include "test_tuning_model.moc"
