// The tuning monitor's cluster panel: mpirun -np 3 in bench mode (simulated build and timing) fills
// one row per worker rank with its host, state and trials; Cancel ends the whole job (no rank left).
#include <QtTest>

#include <QStandardItemModel>

#include "views/ClusterTuning.h"
#include "views/TuningMonitor.h"

using loom::views::ClusterTuningPanel;

namespace {

/// Processes whose command line contains `needle` (the ranks of a job, by its record file).
int processesWith(const QString& needle) {
  int n = 0;
  for (const QString& pid : QDir("/proc").entryList(QDir::Dirs)) {
    QFile cmd("/proc/" + pid + "/cmdline");
    if (cmd.open(QIODevice::ReadOnly) && cmd.readAll().contains(QFile::encodeName(needle)) && pid.toInt() > 0) ++n;
  }
  return n;
}

QStringList simArgs(int trials, const QString& out, int measureMs) {
  return {"--workload", "matmul:M=32,N=32,K=32", "--strategy", "random", "--trials", QString::number(trials), "--batch", "2",
          "--no-baseline", "--simulate-build-ms", "10", "--simulate-measure-ms", QString::number(measureMs), "--output", out};
}

} // namespace

class TestClusterTuning : public QObject {
  Q_OBJECT
private slots:
  void init() {
    if (QStandardPaths::findExecutable("mpirun").isEmpty()) QSKIP("mpirun not installed");
  }

  void argumentsFromAJob() {
    loom::views::TuneJob job;
    job.preset = "matmul";
    job.params = {{"M", 64}, {"N", 32}};
    job.trials = 40;
    job.recordsPath = "/tmp/r.json";
    QStringList a = loom::views::tuneArguments(job);
    QVERIFY2(a.join(' ').startsWith("--workload matmul:M=64,N=32 --trials 40 --target llvm"), qPrintable(a.join(' ')));
    QVERIFY(a.contains("--resume") && a.contains("/tmp/r.json"));
    job.preset.clear(); // a function opened in the editor has no command-line form
    QVERIFY(loom::views::tuneArguments(job).isEmpty());
  }

  void runShowsWorkers() {
    QTemporaryDir dir;
    ClusterTuningPanel panel;
    panel.setLoomProgram(LOOM_BINARY_DIR "/bin/loom");
    panel.setRanks(3);
    panel.setTuneArguments(simArgs(10, dir.filePath("r.json"), 20));
    QVERIFY(panel.start());
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 120000);
    if (panel.log().contains("apply to a distributed run")) QSKIP("loom was built without MPI");
    QVERIFY2(panel.exitCode() == 0, qPrintable(panel.log()));
    QStandardItemModel* m = panel.workers();
    QCOMPARE(m->rowCount(), 2);
    int trials = 0;
    for (int r = 0; r < 2; ++r) {
      QCOMPARE(m->item(r, 1)->text(), QString("sim-%1").arg(m->item(r, 0)->text()));
      QCOMPARE(m->item(r, 2)->text(), QString("done"));
      trials += m->item(r, 3)->text().toInt();
    }
    QCOMPARE(trials, 10);
    QVERIFY2(panel.log().contains("10 trials this run"), qPrintable(panel.log()));
  }

  void cancelEndsTheJob() {
    QTemporaryDir dir;
    const QString out = dir.filePath("long.json");
    ClusterTuningPanel panel;
    panel.setLoomProgram(LOOM_BINARY_DIR "/bin/loom");
    panel.setRanks(3);
    panel.setTuneArguments(simArgs(2000, out, 300));
    QVERIFY(panel.start());
    QTRY_VERIFY_WITH_TIMEOUT((panel.workers()->rowCount() == 2 && panel.workers()->item(0, 2)->text() != "idle") ||
                                 !panel.isRunning(),
                             60000);
    if (panel.log().contains("apply to a distributed run")) QSKIP("loom was built without MPI");
    QVERIFY2(panel.isRunning(), qPrintable(panel.log()));
    panel.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 20000);
    QCOMPARE(panel.workers()->item(0, 2)->text(), QString("cancelled"));
    QTRY_COMPARE_WITH_TIMEOUT(processesWith(out), 0, 10000); // no rank outlives the job
  }
};

QTEST_MAIN(TestClusterTuning)
#include "test_cluster_tuning.moc"
