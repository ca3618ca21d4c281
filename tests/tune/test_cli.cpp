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

  void tasksSelectsPartOfAModel() {
    const QString model = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";
    const QStringList shapes = {"--input-shapes", "data:[1,3,16,16]"};
    CliResult all = runLoom(QStringList{"tune", model, "--list-tasks"} + shapes);
    QVERIFY2(all.exitCode == 0, qPrintable(all.out + all.err));
    QRegularExpressionMatch m = QRegularExpression(": (\\d+) tasks").match(all.out);
    QVERIFY2(m.hasMatch(), qPrintable(all.out));
    const int total = m.captured(1).toInt();
    QVERIFY(total >= 4);
    // The key of task 2 in the full table.
    QRegularExpressionMatch k = QRegularExpression("\\n 2  (tir:[0-9a-f]+)").match(all.out);
    QVERIFY2(k.hasMatch(), qPrintable(all.out));
    CliResult some = runLoom(QStringList{"tune", model, "--list-tasks", "--tasks", "1,3-4"} + shapes);
    QVERIFY2(some.exitCode == 0, qPrintable(some.out + some.err));
    QVERIFY2(some.out.contains(": 3 tasks"), qPrintable(some.out));
    QVERIFY2(!some.out.contains(k.captured(1)), qPrintable(some.out));
    QVERIFY2(some.out.contains("\n 3  tir:") && some.out.contains("\n 4  tir:"), qPrintable(some.out));
    CliResult byKey = runLoom(QStringList{"tune", model, "--list-tasks", "--tasks", k.captured(1)} + shapes);
    QVERIFY2(byKey.exitCode == 0, qPrintable(byKey.out + byKey.err));
    QVERIFY2(byKey.out.contains(": 1 task (") && byKey.out.contains(k.captured(1)), qPrintable(byKey.out));
    for (const QString& bad : {QString::number(total + 1), QString("0"), QString("x"), QString("4-2")}) {
      CliResult r = runLoom(QStringList{"tune", model, "--list-tasks", "--tasks", bad} + shapes);
      QVERIFY2(r.exitCode != 0, qPrintable(bad + ": " + r.out));
      QVERIFY2(r.err.contains("--tasks") && r.err.contains(bad), qPrintable(bad + ": " + r.err));
    }
    // --tasks belongs to a model.
    CliResult w = runLoom({"tune", "--workload", "matmul:M=8,N=8,K=8", "--tasks", "1", "--output", "x.json"});
    QVERIFY(w.exitCode != 0);
    QVERIFY2(w.err.contains("--tasks applies to a model"), qPrintable(w.err));
  }

  void workerIsHidden() {
    CliResult r = runLoom({"--help"});
    QVERIFY(r.out.contains("tune "));
    QVERIFY(!r.out.contains("tune-worker"));
  }
};

QTEST_APPLESS_MAIN(TestTuneCli)
#include "test_cli.moc"
