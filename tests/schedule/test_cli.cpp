// `loom verify` and `loom lower --schedule/--emit trace`, run as a user would.
#include "ScheduleTestUtil.h"

using namespace loom::tir::testing;

namespace {
const QString kExample = QStringLiteral(LOOM_SOURCE_DIR "/examples/schedules/matmul_tiled.py");
} // namespace

class TestCli : public QObject {
  Q_OBJECT
private slots:
  void verifyExample() {
    LoomRun r = runLoom({"verify", "--workload", "matmul:M=64,N=128,K=32", "--schedule", kExample});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.startsWith("equivalent (max rel err "), qPrintable(r.out));
  }
  void verifyReportsMismatch() {
    // Reordering a split reduction changes the float summation order: with zero tolerance the
    // rounding differences are a mismatch, with the default tolerance they are not.
    QTemporaryDir dir;
    QString s = writeTempFile(dir, "rk.py",
                              "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n"
                              "k0, k1 = sch.split(k, factors=[None, 4])\nsch.reorder(k1, k0)\n");
    LoomRun strict =
        runLoom({"verify", "-w", "matmul:M=8,N=8,K=64", "-s", s, "--rtol", "0", "--atol", "0"});
    QCOMPARE(strict.exitCode, 1);
    QVERIFY2(strict.out.startsWith("NOT equivalent: parameter 'C' differs after the schedule\n"),
             qPrintable(strict.out));
    QVERIFY2(strict.out.contains("first at ["), qPrintable(strict.out));
    LoomRun loose = runLoom({"verify", "-w", "matmul:M=8,N=8,K=64", "-s", s});
    QCOMPARE(loose.exitCode, 0);
  }
  void verifyScriptError() {
    QTemporaryDir dir;
    QString s = writeTempFile(
        dir, "bad.py", "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.parallel(k)\n");
    LoomRun r = runLoom({"verify", "-w", "matmul:M=16,N=16,K=8", "-s", s});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(
        r.err.startsWith(
            s + ":3:5: error: cannot parallelize loop 'k': it binds the reduce iter var 'v_k'"),
        qPrintable(r.err));
    QVERIFY2(r.err.contains("        with T.block(\"C\"):\n        ^^^^^^^^^^^^^^^^^^\n"),
             qPrintable(r.err));
    LoomRun missing = runLoom({"verify", "-w", "matmul", "-s", dir.filePath("nope.py")});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("nope.py: cannot open file"), qPrintable(missing.err));
  }
  void lowerWithScheduleAndTrace() {
    LoomRun trace = runLoom(
        {"lower", "-w", "matmul:M=64,N=128,K=32", "--schedule", kExample, "--emit", "trace"});
    QCOMPARE(trace.exitCode, 0);
    QVERIFY2(trace.out.startsWith("b0 = sch.get_block(\"C\")\nl1, l2, l3 = sch.get_loops(b0)\n"
                                  "l4, l5 = sch.split(l1, factors=[None, 32])\n"),
             qPrintable(trace.out));
    // The trace is itself a schedule script giving the same program.
    QTemporaryDir dir;
    QString t = writeTempFile(dir, "trace.py", trace.out);
    LoomRun a = runLoom({"lower", "-w", "matmul:M=64,N=128,K=32", "--schedule", kExample});
    LoomRun b = runLoom({"lower", "-w", "matmul:M=64,N=128,K=32", "--schedule", t});
    QCOMPARE(a.exitCode, 0);
    QCOMPARE(a.out, b.out);
    QVERIFY2(a.out.contains("for i_0_j_0_fused in T.parallel(4):"), qPrintable(a.out));
    QVERIFY2(a.out.contains("T.vectorized(16)"), qPrintable(a.out));
    LoomRun noSchedule = runLoom({"lower", "-w", "matmul", "--emit", "trace"});
    QCOMPARE(noSchedule.exitCode, 1);
    QVERIFY2(noSchedule.err.contains("--emit trace needs --schedule"), qPrintable(noSchedule.err));
  }
};

QTEST_APPLESS_MAIN(TestCli)
#include "test_cli.moc"
