// `loom tune` end to end: progress lines, records, refusing to overwrite, --resume, and
// `loom bench-op --tuning-records` applying the best schedule.
#include <QtTest>

#include "../cli/CliRunner.h"

class TestTuneCli : public QObject {
  Q_OBJECT
private slots:
  void tuneResumeAndApply() {
    QTemporaryDir dir;
    QString records = dir.filePath("R.json");
    QStringList base = {"tune", "--workload", "matmul:M=32,N=32,K=32", "--batch", "2", "--repeat", "2",
                        "--min-repeat-ms", "1", "--output", records};
    CliResult r = runLoom(base + QStringList{"--trials", "4", "--strategy", "random"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("baseline (unscheduled): "), qPrintable(r.out));
    QVERIFY2(r.out.contains("[4/4] best "), qPrintable(r.out));
    QVERIFY2(r.out.contains("4 trials this run, 4 in total, 0 failed"), qPrintable(r.out));
    QVERIFY2(r.out.contains("x the unscheduled program"), qPrintable(r.out));
    QFile f(records);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(f.readAll()).count('\n'), 4);
    f.close();
    // An existing record file is not overwritten without --resume.
    r = runLoom(base + QStringList{"--trials", "6"});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("pass --resume"), qPrintable(r.err));
    // --resume continues to the total.
    r = runLoom(base + QStringList{"--trials", "6", "--resume", "--no-baseline"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("2 trials this run, 6 in total"), qPrintable(r.out));
    QVERIFY2(r.out.contains("[6/6] best "), qPrintable(r.out));
    // bench-op applies the best record and checks it.
    r = runLoom({"bench-op", "--workload", "matmul:M=32,N=32,K=32", "--repeat", "2", "--tuning-records", records});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("schedule: the best of"), qPrintable(r.out));
    QVERIFY2(r.out.contains("check: correct"), qPrintable(r.out));
    // A workload without records is an error naming it.
    r = runLoom({"bench-op", "--workload", "matmul:M=16,N=32,K=32", "--tuning-records", records});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("no successful tuning record of workload 'matmul:K=32,M=16,N=32'"), qPrintable(r.err));
  }

  void workerIsHidden() {
    CliResult r = runLoom({"--help"});
    QVERIFY(r.out.contains("tune "));
    QVERIFY(!r.out.contains("tune-worker"));
  }
};

QTEST_APPLESS_MAIN(TestTuneCli)
#include "test_cli.moc"
