// GUI tests of the Studio's tuning monitor on an operator (offscreen): chart and table, cancel, pause/resume, budget.
#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QDir>
#include <QDockWidget>
#include <QHeaderView>
#include <QPushButton>
#include <QTableView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QAbstractAxis>
#include <QTimer>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QChart>
#include <QXYSeries>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "core/tune/Record.h"
#include "tests/common/Slowdown.h"
#include "Waits.h"
#include "views/MainWindow.h"
#include "views/OperatorJobs.h"
#include "views/Resources.h"
#include "views/ScheduleEditor.h"
#include "views/Session.h"
#include "views/TuningMonitor.h"

using namespace loom;
using namespace loom::views;

namespace {

const QStringList kWorker{LOOM_BINARY_DIR "/bin/loom", "tune-worker"};

TuneJob matmulJob(const QString& records, int trials, int batch) {
  TuneJob job;
  job.preset = "matmul";
  job.params = {{"M", 32}, {"N", 32}, {"K", 32}};
  job.trials = trials;
  job.batchSize = batch;
  job.recordsPath = records;
  job.resume = false;
  return job;
}

/// Every line of the records file parsed as a TuningRecord (fails the test on a malformed line).
QVector<tune::TuningRecord> readRecords(const QString& path) {
  QVector<tune::TuningRecord> out;
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return out;
  const QByteArray text = f.readAll();
  if (!text.isEmpty() && !text.endsWith('\n')) qWarning("records file does not end with a newline");
  for (const QByteArray& line : text.split('\n')) {
    if (line.trimmed().isEmpty()) continue;
    out.push_back(tune::TuningRecord::fromJson(nlohmann::json::parse(line.toStdString())));
  }
  return out;
}

}  // namespace

class TestTuningMonitor : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioTuningTest");
    initResources();
    QVERIFY2(QFileInfo(kWorker[0]).isExecutable(), "the loom binary must be built");
  }

  void tuningAnOperatorShowsChartAndCandidates() {
    QTemporaryDir dir;
    MainWindow w;
    TuningMonitor* m = w.tuningMonitor();
    QVERIFY(m);
    m->setWorkerCommand(kWorker);
    QString records = dir.filePath("matmul.json");
    QSignalSpy finished(m, &TuningMonitor::runFinished);
    QVERIFY(m->start(matmulJob(records, 6, 3)));
    QVERIFY(m->isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(m->chartPoints() > 0 && m->candidatesModel()->rowCount() > 0, loom::test::scaledMs(20000));
    QTRY_VERIFY_WITH_TIMEOUT(!m->isRunning(), loom::test::scaledMs(20000));
    QCOMPARE(finished.count(), 1);
    QVERIFY2(finished[0][0].toBool(), qPrintable(finished[0][1].toString()));
    QCOMPARE(m->trialsDone(), 6);
    // The table is sorted fastest first and its numbers agree with the file.
    QVector<tune::TuningRecord> recs = readRecords(records);
    QCOMPARE(recs.size(), 6);
    double bestMs = INFINITY;
    for (const tune::TuningRecord& r : recs) {
      QCOMPARE(QString::fromStdString(r.workload), QString("matmul:K=32,M=32,N=32"));
      if (r.ok()) bestMs = std::min(bestMs, r.meanMs());
    }
    QVERIFY(std::isfinite(bestMs));
    QCOMPARE(m->best().first().ms, bestMs);
    double g0 = m->candidatesModel()->item(0, 0)->text().toDouble();
    QVERIFY(g0 > 0);
    if (m->candidatesModel()->rowCount() > 1) QVERIFY(g0 >= m->candidatesModel()->item(1, 0)->text().toDouble());
    QCOMPARE(m->candidatesModel()->item(0, 2)->text().toInt(), m->best().first().trial);
    // One task row (the preset) with all trials.
    QCOMPARE(m->tasksModel()->rowCount(), 1);
    QCOMPARE(m->tasksModel()->item(0, 2)->text(), QString("6/6"));
    // The chart's last best-GFLOP/s point is the best candidate's.
    auto* series = qobject_cast<QXYSeries*>(m->chart()->series().at(1));
    QVERIFY(series);
    QCOMPARE(series->points().last().y(), m->best().first().gflops);

    // Open in Editor: the preset and the candidate's script land in the workbench, and the schedule
    // is the tuned one: it runs and computes the right result.
    w.setPreset("softmax");
    m->openCandidate(0);
    QCOMPARE(w.session()->request().preset, QString("matmul"));
    QCOMPARE(w.session()->request().params.value("M"), 32);
    QString script = w.editor()->text();
    QVERIFY(script.contains("sch.") && script.contains(m->best().first().script.section('\n', 0, 0)));
    OperatorRequest req = w.session()->request();
    req.schedule = script;
    RunRecord run = runOperator(req);
    QVERIFY2(run.ok, qPrintable(run.error));
    QVERIFY(run.correct);
  }

  void cancelStopsAndLeavesValidRecords() {
    QTemporaryDir dir;
    Session s;
    TuningMonitor m(&s);
    m.setWorkerCommand(kWorker);
    QString records = dir.filePath("cancel.json");
    QVERIFY(m.start(matmulJob(records, 200, 8)));
    QTRY_VERIFY_WITH_TIMEOUT(m.trialsDone() >= 2, loom::test::scaledMs(20000));
    QElapsedTimer t;
    t.start();
    m.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), loom::test::scaledMs(15000));
    qInfo("cancel took %lld ms after %d trials", t.elapsed(), m.trialsDone());
    QVERIFY(m.trialsDone() < 200);
    QVERIFY(m.statusText().contains("cancelled"));
    // The file holds exactly the measured trials, each a whole valid record (none for skipped
    // candidates).
    QVector<tune::TuningRecord> recs = readRecords(records);
    QCOMPARE(recs.size(), m.trialsDone());
    for (const tune::TuningRecord& r : recs) QVERIFY(r.errorKind != "stopped");
    // Resuming the file counts what is there: another run of 2 trials appends 2.
    TuneJob more = matmulJob(records, 2, 2);
    more.resume = true;
    int before = recs.size();
    QVERIFY(m.start(more));
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), loom::test::scaledMs(20000));
    QCOMPARE(readRecords(records).size(), before + 2);
  }

  void pauseHoldsNewCandidatesUntilResume() {
    QTemporaryDir dir;
    Session s;
    TuningMonitor m(&s);
    m.setWorkerCommand(kWorker);
    QString records = dir.filePath("pause.json");
    QVERIFY(m.start(matmulJob(records, 6, 3)));
    QTRY_VERIFY_WITH_TIMEOUT(m.trialsDone() >= 1, loom::test::scaledMs(20000));
    m.pause();
    QVERIFY(m.isPaused());
    // The candidate being measured finishes; then nothing moves.
    QTRY_VERIFY_WITH_TIMEOUT(m.isHolding(), loom::test::scaledMs(15000));
    QTest::qWait(100);  // its events, queued before it held
    QVERIFY(m.statusText().startsWith("paused after"));
    int held = m.trialsDone();
    QTest::qWait(1200);
    QCOMPARE(m.trialsDone(), held);
    QCOMPARE(readRecords(records).size(), held);
    QVERIFY(m.isRunning());
    m.resume();
    QVERIFY(!m.isPaused());
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), loom::test::scaledMs(20000));
    QCOMPARE(m.trialsDone(), 6);
    QCOMPARE(readRecords(records).size(), 6);
  }

  void timeBudgetStopsTheRun() {
    QTemporaryDir dir;
    Session s;
    TuningMonitor m(&s);
    m.setWorkerCommand(kWorker);
    TuneJob job = matmulJob(dir.filePath("budget.json"), 500, 2);
    job.budgetS = 1.5;
    // The UI thread stays responsive while the run goes (STUDIO.md: no stall over 50 ms): a 5 ms
    // timer notes the longest gap between its ticks.
    QElapsedTimer t, probe;
    double worstGap = 0;
    qint64 last = 0;
    QTimer tick;
    tick.setInterval(5);
    tick.setTimerType(Qt::PreciseTimer);
    connect(&tick, &QTimer::timeout, [&] {
      qint64 now = probe.nsecsElapsed();
      worstGap = std::max(worstGap, double(now - last) / 1e6 - 5);
      last = now;
    });
    t.start();
    probe.start();
    tick.start();
    QVERIFY(m.start(job));
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), loom::test::scaledMs(15000));
    tick.stop();
    qInfo("a 1.5 s budget ended the run after %lld ms and %d trials; worst UI-thread stall %.1f ms", t.elapsed(),
          m.trialsDone(), worstGap);
    QVERIFY2(worstGap < 300, qPrintable(QString("the UI thread stalled %1 ms while tuning").arg(worstGap)));
    QVERIFY(m.trialsDone() >= 1 && m.trialsDone() < 500);
    QVERIFY2(m.statusText().contains("time budget"), qPrintable(m.statusText()));
    QCOMPARE(readRecords(job.recordsPath).size(), m.trialsDone());
  }

  void failuresAreShownNotCrashed() {
    QTemporaryDir dir;
    Session s;
    TuningMonitor m(&s);
    m.setWorkerCommand(kWorker);
    QSignalSpy finished(&m, &TuningMonitor::runFinished);
    // No model open.
    m.setScope(TuneJob::Scope::Model);
    QVERIFY(!m.startFromForm());
    QVERIFY(m.statusText().contains("open a model"));
    // A target that cannot run here, or does not parse.
    TuneJob cross = matmulJob(dir.filePath("x.json"), 2, 2);
    cross.target = "llvm -mtriple=aarch64-linux-gnu";
    QVERIFY(!m.start(cross));
    QVERIFY2(m.statusText().contains("does not run on this machine"), qPrintable(m.statusText()));
    cross.target = "llvm -mcpu";
    QVERIFY(!m.start(cross));
    QVERIFY(m.statusText().contains("cannot start: target"));
    QVERIFY(!QFileInfo::exists(dir.filePath("x.json")));
    // A records file that cannot be created.
    QVERIFY(m.start(matmulJob(dir.filePath("no/such/dir/r.json"), 2, 2)));
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), loom::test::scaledMs(10000));
    QVERIFY(!finished.last()[0].toBool());
    QVERIFY2(m.statusText().contains("failed") && m.statusText().contains("r.json"), qPrintable(m.statusText()));
    // A worker that is not there: every trial fails, recorded as such; the run still ends.
    m.setWorkerCommand({dir.filePath("no-such-loom"), "tune-worker"});
    QString records = dir.filePath("broken.json");
    QVERIFY(m.start(matmulJob(records, 2, 2)));
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), loom::test::scaledMs(20000));
    QCOMPARE(m.candidatesModel()->rowCount(), 0);
    for (const tune::TuningRecord& r : readRecords(records)) QVERIFY(!r.ok());
  }

  void tuneMenuStartsAndCancels() {
    QTemporaryDir dir;
    MainWindow w;
    w.tuningMonitor()->setWorkerCommand(kWorker);
    w.tuningMonitor()->setRecordsPath(dir.filePath("menu.json"));
    w.tuningMonitor()->setTrials(50);
    QAction *tune = nullptr, *cancel = nullptr;
    for (QAction* a : w.findChildren<QAction*>()) {
      if (a->text() == "Tune This &Operator") tune = a;
      if (a->text() == "&Cancel Tuning") cancel = a;
    }
    QVERIFY(tune && cancel);
    tune->trigger();
    QVERIFY(w.tuningMonitor()->isRunning());
    QTRY_VERIFY_WITH_TIMEOUT(w.tuningMonitor()->trialsDone() >= 1, loom::test::scaledMs(20000));
    cancel->trigger();
    QTRY_VERIFY_WITH_TIMEOUT(!w.tuningMonitor()->isRunning(), loom::test::scaledMs(15000));
    QCOMPARE(readRecords(dir.filePath("menu.json")).size(), w.tuningMonitor()->trialsDone());
  }

  void resultsAreSavedInTheSession() {
    QTemporaryDir dir;
    QString session = dir.filePath("tuned.loomsession");
    QVector<TuneCandidate> best;
    int rows = 0, points = 0;
    QString taskRow;
    {
      MainWindow w;  // shown, so that the saved layout is a real window's
      w.resize(1600, 1000);
      w.show();
      w.findChild<QDockWidget*>("tuningDock")->raise();
      QVERIFY(QTest::qWaitForWindowExposed(&w));
      TuningMonitor* m = w.tuningMonitor();
      m->setWorkerCommand(kWorker);
      QVERIFY(m->start(matmulJob(dir.filePath("matmul.json"), 4, 2)));
      QTRY_VERIFY_WITH_TIMEOUT(!m->isRunning(), studiotest::kWorkerWaitMs);
      QVERIFY(!m->best().isEmpty());
      best = m->best();
      rows = m->candidatesModel()->rowCount();
      points = m->chartPoints();
      taskRow = m->tasksModel()->item(0, 2)->text();
      QVERIFY(w.saveSession(session, true));
    }
    MainWindow w;
    TuningMonitor* m = w.tuningMonitor();
    QCOMPARE(m->candidatesModel()->rowCount(), 0);
    QVERIFY(w.loadSession(session, true));
    // The table, the task row and the chart are back, as they were.
    QVERIFY(m->resultsRestored());
    QCOMPARE(m->candidatesModel()->rowCount(), rows);
    QCOMPARE(m->best().size(), std::min<int>(best.size(), 20));
    QCOMPARE(m->best().first().ms, best.first().ms);
    QCOMPARE(m->best().first().script, best.first().script);
    QCOMPARE(m->tasksModel()->rowCount(), 1);
    QCOMPARE(m->tasksModel()->item(0, 2)->text(), taskRow);
    QCOMPARE(m->chartPoints(), points);
    QVERIFY(m->chart()->axes().first()->labelsVisible());
    QVERIFY2(m->statusText().startsWith("from the session"), qPrintable(m->statusText()));
    QCOMPARE(m->lastJob().preset, QString("matmul"));
    // In the window as the screenshots show it, Open in Editor is clear of the table's rows.
    w.resize(1600, 1000);
    w.show();
    w.findChild<QDockWidget*>("tuningDock")->raise();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTest::qWait(200);  // the default layout, then the dock's growth, come after the first show
    // Brought forward again (its tab clicked), the dock grows to show the monitor unscrolled.
    auto* tuningDock = w.findChild<QDockWidget*>("tuningDock");
    QVERIFY(tuningDock->height() < m->minimumSizeHint().height());  // the default layout's short bottom row
    w.findChild<QDockWidget*>("logDock")->raise();
    QTest::qWait(50);
    tuningDock->raise();
    QTRY_VERIFY2(tuningDock->height() >= m->minimumSizeHint().height(),
                 qPrintable(QString("dock %1 px, monitor %2 px").arg(tuningDock->height()).arg(m->minimumSizeHint().height())));
    if (QString shots = qEnvironmentVariable("LOOM_TEST_SCREENSHOTS"); !shots.isEmpty())  // to look at
      w.grab().save(QDir(shots).filePath("tuning-restored.png"));
    auto* open = m->findChild<QPushButton*>("tuneOpen");
    auto* table = m->findChild<QTableView*>("tuneCandidates");
    QVERIFY(open && table && open->isVisible());
    QRect openRect(open->mapTo(&w, QPoint(0, 0)), open->size());
    QRect tableRect(table->viewport()->mapTo(&w, QPoint(0, 0)), table->viewport()->size());
    // A fresh window's bottom docks are short: the dock scrolls, the table keeps three rows and more.
    QVERIFY2(table->viewport()->height() >= 3 * table->verticalHeader()->defaultSectionSize(), qPrintable(QString::number(table->viewport()->height())));
    QVERIFY2(!openRect.intersects(tableRect), qPrintable(QString("button %1,%2 %3x%4, table %5,%6 %7x%8").arg(openRect.x()).arg(openRect.y())
                 .arg(openRect.width()).arg(openRect.height()).arg(tableRect.x()).arg(tableRect.y()).arg(tableRect.width()).arg(tableRect.height())));
    // Open in Editor works on restored candidates: matmul 32x32x32 and the tuned script, which runs right.
    w.setPreset("softmax");
    m->openCandidate(0);
    QCOMPARE(w.session()->request().preset, QString("matmul"));
    QCOMPARE(w.session()->request().params.value("K"), 32);
    OperatorRequest req = w.session()->request();
    req.schedule = w.editor()->text();
    QVERIFY(req.schedule.contains(best.first().script.section('\n', 0, 0)));
    RunRecord run = runOperator(req);
    QVERIFY2(run.ok && run.correct, qPrintable(run.error));

    // Results of a model's kernels wait for that model and are shown with it; another model's
    // session drops them; opening another model clears them.
    QFile f(session);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QJsonObject o = QJsonDocument::fromJson(f.readAll()).object();
    f.close();
    QJsonObject results = o["tuningResults"].toObject();
    results["scope"] = "model";
    results["preset"] = "";
    auto withModel = [&](const QString& model, const QString& resultsModel, const QString& name) {
      QJsonObject ws = o["workspace"].toObject();
      ws["model"] = model;
      QJsonObject copy = o, r = results;
      r["model"] = resultsModel;
      copy["workspace"] = ws;
      copy["tuningResults"] = r;
      QFile out(dir.filePath(name));
      if (!out.open(QIODevice::WriteOnly)) return QString();
      out.write(QJsonDocument(copy).toJson());
      return out.fileName();
    };
    const QString cnn = QString(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx";
    const QString fire = QString(LOOM_SOURCE_DIR) + "/examples/models/fire_net/model.onnx";
    {
      MainWindow w2;
      QSignalSpy loaded(w2.session(), &Session::modelLoaded);
      QVERIFY(w2.loadSession(withModel(cnn, cnn, "cnn.loomsession"), true));
      QCOMPARE(w2.tuningMonitor()->candidatesModel()->rowCount(), 0);  // held until the model is there
      QVERIFY(loaded.wait(studiotest::kWorkerWaitMs));
      QCOMPARE(w2.tuningMonitor()->candidatesModel()->rowCount(), rows);
      QVERIFY(w2.tuningMonitor()->lastJob().module);  // the restored job can tune and export again
      w2.openModel(fire);
      QVERIFY(loaded.wait(studiotest::kWorkerWaitMs));
      QCOMPARE(w2.tuningMonitor()->candidatesModel()->rowCount(), 0);
      QCOMPARE(w2.tuningMonitor()->chartPoints(), 0);
      QVERIFY2(w2.tuningMonitor()->statusText().contains("cleared"), qPrintable(w2.tuningMonitor()->statusText()));
      // Saved now: no results (they were of the other model).
      QVERIFY(w2.saveSession(dir.filePath("after.loomsession"), true));
      QFile after(dir.filePath("after.loomsession"));
      QVERIFY(after.open(QIODevice::ReadOnly));
      QVERIFY(!QJsonDocument::fromJson(after.readAll()).object().contains("tuningResults"));
    }
    {
      MainWindow w3;
      QSignalSpy loaded(w3.session(), &Session::modelLoaded);
      QVERIFY(w3.loadSession(withModel(fire, cnn, "mixed.loomsession"), true));
      QVERIFY(loaded.wait(studiotest::kWorkerWaitMs));
      QCOMPARE(w3.tuningMonitor()->candidatesModel()->rowCount(), 0);
      QVERIFY2(w3.tuningMonitor()->statusText().contains("not shown"), qPrintable(w3.tuningMonitor()->statusText()));
    }
  }

  void defaultRecordsPathIsBesideTheSession() {
    Session s;
    TuningMonitor m(&s);
    m.setSessionPath("/tmp/work/my.loomsession");
    QCOMPARE(m.recordsPath(), QString("/tmp/work/my.matmul.records.json"));
    m.setRecordsPath("/tmp/r.json");
    QCOMPARE(m.recordsPath(), QString("/tmp/r.json"));
    QCOMPARE(m.jobFromForm().recordsPath, QString("/tmp/r.json"));
  }
};

QTEST_MAIN(TestTuningMonitor)
#include "test_tuning_monitor.moc"
