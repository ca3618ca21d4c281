// The tuning monitor's cluster panel: mpirun -np 3 from a host file in bench mode (simulated build
// and timing) fills one row per worker rank with its host, states, trials and throughput; a
// crashing candidate shows as "failed"; Cancel ends the whole job (no rank left).
#include <QtTest>

#include <QStandardItemModel>
#include <set>
#include <string>

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

  // The Studio starts mpirun; it never links MPI itself (only `loom`, the command line, does).
  void studioDoesNotLinkMpi() {
    for (const char* tool : {"readelf", "ldd"}) {
      QProcess p;
      p.start(tool, tool == std::string("ldd") ? QStringList{LOOM_BINARY_DIR "/bin/loom-studio"}
                                               : QStringList{"-d", LOOM_BINARY_DIR "/bin/loom-studio"});
      QVERIFY2(p.waitForFinished(30000) && p.exitCode() == 0, tool);
      const QString out = QString::fromLocal8Bit(p.readAllStandardOutput());
      QVERIFY2(out.contains("libQt6Widgets"), qPrintable(out)); // it did look at the Studio
      QVERIFY2(!out.contains("libmpi") && !out.contains("openmpi"), qPrintable(out));
    }
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

  // Started from a host file (this machine, as a cluster's file names its nodes): one row per
  // worker rank with its host, the states it went through (building, timing, idle), its trials and
  // its throughput (trials per minute), and "done" at the end.
  void runShowsWorkers() {
    QTemporaryDir dir;
    const QString hosts = dir.filePath("hosts");
    {
      QFile f(hosts);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write("localhost slots=8\n");
    }
    ClusterTuningPanel panel;
    panel.setLoomProgram(LOOM_BINARY_DIR "/bin/loom");
    panel.setHostFile(hosts);
    panel.setRanks(3);
    panel.setTuneArguments(simArgs(10, dir.filePath("r.json"), 20));
    const QStringList cmd = panel.commandLine();
    QVERIFY2(cmd.indexOf("--hostfile") >= 0 && cmd.value(cmd.indexOf("--hostfile") + 1) == hosts, qPrintable(cmd.join(' ')));
    QStandardItemModel* m = panel.workers();
    std::set<QString> states; // every state a row showed while the job ran
    connect(m, &QStandardItemModel::itemChanged, this, [&](QStandardItem* item) {
      if (item->column() == 2) states.insert(item->text());
    });
    QVERIFY(panel.start());
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 120000);
    if (panel.log().contains("apply to a distributed run")) QSKIP("loom was built without MPI");
    QVERIFY2(panel.exitCode() == 0, qPrintable(panel.log()));
    QCOMPARE(m->rowCount(), 2);
    int trials = 0;
    for (int r = 0; r < 2; ++r) {
      QCOMPARE(m->item(r, 1)->text(), QString("sim-%1").arg(m->item(r, 0)->text()));
      QCOMPARE(m->item(r, 2)->text(), QString("done"));
      trials += m->item(r, 3)->text().toInt();
      if (m->item(r, 3)->text().toInt() > 0) QVERIFY2(m->item(r, 5)->text().toDouble() > 0, qPrintable(m->item(r, 5)->text()));
    }
    QCOMPARE(trials, 10);
    for (const char* s : {"building", "timing", "idle", "done"}) QVERIFY2(states.count(s), s);
    QVERIFY(!states.count("failed"));
    QVERIFY2(panel.log().contains("10 trials this run"), qPrintable(panel.log()));
  }

  // A real (not simulated) run where one candidate crashes: its rank shows "failed" and one failed
  // trial, the job goes on and ends normally.
  void failedCandidateShowsFailed() {
    QTemporaryDir dir;
    ClusterTuningPanel panel;
    panel.setLoomProgram(LOOM_BINARY_DIR "/bin/loom");
    panel.setRanks(3);
    panel.setTuneArguments({"--workload", "matmul:M=16,N=16,K=16", "--strategy", "random", "--trials", "4", "--batch", "2",
                            "--no-baseline", "--repeat", "2", "--min-repeat-ms", "1", "--output", dir.filePath("f.json")});
    QStandardItemModel* m = panel.workers();
    std::set<QString> states;
    connect(m, &QStandardItemModel::itemChanged, this, [&](QStandardItem* item) {
      if (item->column() == 2) states.insert(item->text());
    });
    qputenv("LOOM_TUNE_TEST_FAULTS", "1"); // the panel starts mpirun with this process's environment
    qputenv("LOOM_TUNE_TEST_JOB_FAULTS", "crash");
    const bool started = panel.start();
    qunsetenv("LOOM_TUNE_TEST_FAULTS");
    qunsetenv("LOOM_TUNE_TEST_JOB_FAULTS");
    QVERIFY(started);
    QTRY_VERIFY_WITH_TIMEOUT(!panel.isRunning(), 120000);
    if (panel.log().contains("apply to a distributed run")) QSKIP("loom was built without MPI");
    QVERIFY2(panel.exitCode() == 0, qPrintable(panel.log()));
    QCOMPARE(m->rowCount(), 2);
    int trials = 0, failed = 0;
    for (int r = 0; r < 2; ++r) {
      trials += m->item(r, 3)->text().toInt();
      failed += m->item(r, 4)->text().toInt();
    }
    QCOMPARE(trials, 4);
    QCOMPARE(failed, 1);
    QVERIFY(states.count("failed"));
    QVERIFY2(panel.log().contains("4 trials this run, 4 in total, 1 failed"), qPrintable(panel.log()));
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
