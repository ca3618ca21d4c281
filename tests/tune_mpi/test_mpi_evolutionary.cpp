// `mpirun --oversubscribe -np 5 loom tune`: four workers with the default evolutionary search, so
// fill-ins, samples lowered by the workers and the throttled retraining all run for real; killed
// mid-run and resumed too. Label slow (about a minute on a loaded 2-core machine): the default run
// keeps test_mpi_tune's np-3 kill-and-resume.
#include "tests/tune_mpi/MpiTestSupport.h"

class TestMpiEvolutionary : public QObject {
  Q_OBJECT
private slots:
  // Four workers (-np 5), the default evolutionary search: the budget is spent exactly, every
  // record ok and of a local run's form, the summary names the fill-ins and rank 0's CPU by phase;
  // a worker rank killed mid-run leaves whole records and --resume finishes the budget.
  void fourWorkersEvolutionaryKilledAndResumed() {
    QTemporaryDir dir;
    const QStringList common = {"--workload", "matmul:M=16,N=32,K=16", "--repeat", "2", "--min-repeat-ms", "1", "--no-baseline"};
    ProcessResult r = mpirun(5, common + QStringList{"--trials", "20", "--output", dir.filePath("full.json")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("distributed: 4 worker ranks on 1 host"), qPrintable(r.out));
    QVERIFY2(r.out.contains("distributed: 20 candidates"), qPrintable(r.out));
    QVERIFY2(r.out.contains(" fill-ins ") && r.out.contains("by phase (ms): search "), qPrintable(r.out));
    bool ok = false;
    auto full = readRecords(dir.filePath("full.json"), &ok);
    QVERIFY(ok);
    QCOMPARE(int(full.size()), 20);
    ProcessResult local = loom::test::runProcess(kLoom, QStringList{"tune"} + common + QStringList{"--trials", "2", "--output", dir.filePath("local.json")}, 120000);
    QVERIFY2(local.exitCode == 0, qPrintable(local.out + local.err));
    auto one = readRecords(dir.filePath("local.json"), &ok);
    QVERIFY(ok && !one.empty());
    std::set<std::string> traces;
    for (auto& rec : full) {
      QCOMPARE(keysOf(rec), keysOf(one[0]));
      QVERIFY2(rec["error_kind"] == "", rec.dump().c_str());
      traces.insert(rec["trace"].dump());
    }
    QCOMPARE(int(traces.size()), 20); // no schedule measured twice

    const QString out = dir.filePath("k.json");
    const QStringList args = common + QStringList{"--trials", "20", "--output", out};
    QProcess p;
    p.setProcessEnvironment(mpiEnv());
    p.start(LOOM_MPIRUN, mpirunArgs(5, args));
    QVERIFY(p.waitForStarted());
    KillReport kill = killRankAfter(out, 4, 3);
    QVERIFY2(kill.killed, qPrintable("no records appeared, or rank 3 not found: " + kill.describe()));
    qInfo("%s", qPrintable(kill.describe()));
    QVERIFY(p.waitForFinished(60000 * loom::test::testSlowdown()));
    const QString said = QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError());
    QVERIFY2(p.exitCode() != 0 || p.exitStatus() != QProcess::NormalExit,
             qPrintable("mpirun reported success after a rank died: " + kill.describe() + "\n" + said));
    auto rs = readRecords(out, &ok);
    QVERIFY2(ok, "the record file is not whole JSON lines");
    QVERIFY2(rs.size() >= 4 && rs.size() < 20, qPrintable(QString("%1 records after the kill; ").arg(rs.size()) + kill.describe()));
    r = mpirun(5, args + QStringList{"--resume"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("20 in total"), qPrintable(r.out));
    rs = readRecords(out, &ok);
    QVERIFY(ok);
    QCOMPARE(int(rs.size()), 20);
    traces.clear();
    for (auto& rec : rs) traces.insert(rec["trace"].dump());
    QCOMPARE(int(traces.size()), 20);
  }

};

QTEST_GUILESS_MAIN(TestMpiEvolutionary)
#include "test_mpi_evolutionary.moc"
