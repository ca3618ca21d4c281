// `loom run-tir`: interpreter runs checked against the presets' C++ references, and its failures.
#include <QtTest>

#include "CliRunner.h"

class TestRunTir : public QObject {
  Q_OBJECT

private slots:
  void checkPresets_data() {
    QTest::addColumn<QString>("spec");
    for (const char* s :
         {"matmul:M=8,N=6,K=5", "batch_matmul:B=2,M=3,N=4,K=5", "conv2d:N=1,C=2,H=5,W=5,K=3",
          "depthwise_conv2d:C=2,H=5,W=5", "softmax:M=3,N=9", "layernorm:M=3,N=9", "relu:M=3,N=4",
          "add:M=3,N=4", "reduce_sum:M=3,N=8", "transpose:M=3,N=4"})
      QTest::newRow(s) << s;
  }

  void checkPresets() {
    QFETCH(QString, spec);
    CliResult r = runLoom({"run-tir", "--workload", spec, "--check"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY(r.out.contains("check passed: max relative error"));
  }

  void fileAgainstWorkload() {
    QTemporaryDir dir;
    QString spec = "matmul:M=6,N=5,K=4";
    QString text = runLoom({"lower", "-w", spec}).out;
    QString good = dir.filePath("good.tir"), bad = dir.filePath("bad.tir");
    QVERIFY(writeText(good, text));
    CliResult ok = runLoom({"run-tir", good, "--workload", spec, "--check"});
    QVERIFY2(ok.exitCode == 0, qPrintable(ok.out + ok.err));

    // A wrong program (add instead of multiply) fails the check.
    QString wrong = text;
    wrong.replace("A[v_i, v_k] * B[v_k, v_j]", "A[v_i, v_k] + B[v_k, v_j]");
    QVERIFY(wrong != text);
    QVERIFY(writeText(bad, wrong));
    CliResult fail = runLoom({"run-tir", bad, "--workload", spec, "--check"});
    QCOMPARE(fail.exitCode, 1);
    QVERIFY(fail.out.contains("check FAILED"));
    QVERIFY(fail.err.contains("does not match"));

    // Parameters shaped differently from the workload's.
    CliResult shape = runLoom({"run-tir", good, "--workload", "matmul:M=7,N=5,K=4", "--check"});
    QCOMPARE(shape.exitCode, 1);
    QVERIFY2(shape.err.contains("error:"), qPrintable(shape.err));
  }

  void seededRuns() {
    QTemporaryDir dir;
    QString path = dir.filePath("r.tir");
    QVERIFY(writeText(path, runLoom({"lower", "-w", "relu:M=2,N=3"}).out));
    CliResult a = runLoom({"run-tir", path, "--seed", "7"});
    CliResult b = runLoom({"run-tir", path, "--seed", "7"});
    CliResult c = runLoom({"run-tir", path, "--seed", "8"});
    QCOMPARE(a.exitCode, 0);
    QVERIFY(a.out.contains("T_relu = float32[2, 3]"));
    QCOMPARE(a.out, b.out);
    QVERIFY(a.out.section('\n', 1) != c.out.section('\n', 1));
  }

  void errors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<QString>("message");
    QTest::newRow("check-without-reference")
        << QStringList{"run-tir", "FILE", "--check"} << "--check needs --workload";
    QTest::newRow("nothing") << QStringList{"run-tir"}
                             << "give either a .tir FILE or --workload SPEC";
    QTest::newRow("unknown-workload")
        << QStringList{"run-tir", "-w", "gemm", "--check"} << "unknown workload 'gemm'";
    QTest::newRow("missing-file") << QStringList{"run-tir", "/nonexistent.tir"} << "cannot open";
    // Inputs too big to allocate are a user error naming the parameter, not an internal one.
    QTest::newRow("too-big") << QStringList{"run-tir", "-w", "relu:M=1000000000,N=1000000000"}
                             << "cannot allocate parameter 'A' (float32[1000000000, 1000000000])";
  }

  void helpShowsExamples() {
    for (const char* cmd : {"run-tir", "verify", "lower"}) {
      CliResult r = runLoom({cmd, "--help"});
      QCOMPARE(r.exitCode, 0);
      QVERIFY2(r.out.contains("Examples:\n  loom " + QString(cmd) + " "), qPrintable(r.out));
    }
  }

  void scalarParameter() {
    // A program with a scalar parameter parses and prints, but cannot get random inputs: a clear
    // error, never an internal one.
    QTemporaryDir dir;
    QString path = dir.filePath("s.tir");
    QVERIFY(writeText(path, "@T.prim_func\n"
                            "def main(A: T.Buffer((4,), \"float32\"), n: T.int32):\n"
                            "    for i in range(4):\n"
                            "        A[i] = T.Cast(\"float32\", n)\n"));
    QCOMPARE(runLoom({"lower", path}).exitCode, 0);
    CliResult r = runLoom({"run-tir", path});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("parameter 'n' is a scalar (int32), not a buffer"), qPrintable(r.err));
  }

  void errors() {
    QFETCH(QStringList, args);
    QFETCH(QString, message);
    QTemporaryDir dir;
    QString path = dir.filePath("f.tir");
    QVERIFY(writeText(path, runLoom({"lower", "-w", "relu:M=2,N=2"}).out));
    args.replaceInStrings("FILE", path);
    CliResult r = runLoom(args);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
  }
};

QTEST_APPLESS_MAIN(TestRunTir)
#include "test_run_tir.moc"
