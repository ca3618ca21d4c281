// `loom lower`: the workload listing, printing presets and files, and its error exits.
#include <QtTest>

#include "CliRunner.h"

class TestLower : public QObject {
  Q_OBJECT

private slots:
  void listWorkloads() {
    CliResult r = runLoom({"lower", "--list-workloads"});
    QCOMPARE(r.exitCode, 0);
    for (const char* name : {"matmul", "batch_matmul", "conv2d", "depthwise_conv2d", "softmax",
                             "layernorm", "relu", "add", "reduce_sum", "transpose"})
      QVERIFY2(r.out.contains(QRegularExpression(QString("^%1$").arg(name),
                                                 QRegularExpression::MultilineOption)),
               name);
    QVERIFY(r.out.contains("M=128"));
    QVERIFY(r.out.contains("groups=1"));
    QVERIFY(r.out.contains("dense matrix product"));
  }

  void workloadToTir() {
    CliResult r = runLoom({"lower", "--workload", "matmul:M=8,N=16,K=4", "--emit", "tir"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.err.isEmpty());
    QVERIFY(r.out.startsWith("# from tvm.script import tir as T"));
    QVERIFY(r.out.contains("for i, j, k in T.grid(8, 16, 4):"));
    QVERIFY(r.out.contains("with T.block(\"C\"):"));
    QVERIFY(r.out.contains("T.reads(A[v_i, v_k], B[v_k, v_j])"));
    // --emit defaults to tir.
    QCOMPARE(runLoom({"lower", "-w", "matmul:M=8,N=16,K=4"}).out, r.out);
  }

  void fileRoundTrip() {
    QTemporaryDir dir;
    for (const char* spec :
         {"matmul:M=8,N=8,K=8", "conv2d:N=1,C=2,H=5,W=5,K=2", "softmax:M=2,N=3"}) {
      CliResult printed = runLoom({"lower", "--workload", spec});
      QCOMPARE(printed.exitCode, 0);
      QString path = dir.filePath("f.tir");
      QVERIFY(writeText(path, printed.out));
      CliResult again = runLoom({"lower", path, "--emit", "tir"});
      QVERIFY2(again.exitCode == 0, qPrintable(again.err));
      QCOMPARE(again.out, printed.out);
    }
  }

  void outputFile() {
    QTemporaryDir dir;
    QString path = dir.filePath("out.tir");
    CliResult r = runLoom({"lower", "-w", "relu:M=2,N=2", "-o", path});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.isEmpty());
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadOnly));
    QVERIFY(f.readAll().contains("T_relu"));
  }

  void parseErrorPointsAtLine() {
    QTemporaryDir dir;
    CliResult printed = runLoom({"lower", "--workload", "relu:M=2,N=2"});
    QStringList lines = printed.out.split('\n');
    int bad = -1;
    for (int i = 0; i < lines.size(); ++i)
      if (lines[i].contains("T.writes(")) {
        lines[i].replace("T.writes(", "T.writes(((");
        bad = i + 1;
      }
    QVERIFY(bad > 0);
    QString path = dir.filePath("bad.tir");
    QVERIFY(writeText(path, lines.join('\n')));
    CliResult r = runLoom({"lower", path, "--emit", "tir"});
    QCOMPARE(r.exitCode, 1);
    QVERIFY(r.out.isEmpty());
    QRegularExpression re(QRegularExpression::escape(path) + ":(\\d+):(\\d+): error: ");
    auto m = re.match(r.err);
    QVERIFY2(m.hasMatch(), qPrintable(r.err));
    QCOMPARE(m.captured(1).toInt(), bad);
  }

  void errors_data() {
    QTest::addColumn<QStringList>("args");
    QTest::addColumn<int>("code");
    QTest::addColumn<QString>("message");
    QTest::newRow("missing-file") << QStringList{"lower", "/nonexistent/x.tir"} << 1
                                  << "cannot open";
    QTest::newRow("unknown-workload")
        << QStringList{"lower", "-w", "matmull"} << 1
        << "unknown workload 'matmull'; known workloads: add, batch_matmul";
    QTest::newRow("unknown-param") << QStringList{"lower", "-w", "matmul:X=1"} << 1
                                   << "has no parameter 'X'; valid parameters: M, N, K";
    QTest::newRow("bad-value") << QStringList{"lower", "-w", "matmul:M=big"} << 1
                               << "parameter 'M' has value 'big'";
    QTest::newRow("conflict") << QStringList{"lower", "-w", "conv2d:C=3,groups=2"} << 1
                              << "groups=2 must divide";
    QTest::newRow("nothing") << QStringList{"lower"} << 1
                             << "give either a .tir FILE or --workload SPEC";
    QTest::newRow("both") << QStringList{"lower", "x.tir", "-w", "relu"} << 1 << "not both";
    // A bad command line is a user error (exit 1); 2 is for Loom's own failures.
    QTest::newRow("bad-emit") << QStringList{"lower", "-w", "relu", "--emit", "banana"} << 1
                              << "banana";
  }

  void errors() {
    QFETCH(QStringList, args);
    QFETCH(int, code);
    QFETCH(QString, message);
    CliResult r = runLoom(args);
    QCOMPARE(r.exitCode, code);
    QVERIFY2(r.err.contains(message), qPrintable(r.err));
    QVERIFY(r.out.isEmpty());
  }
};

QTEST_APPLESS_MAIN(TestLower)
#include "test_lower.moc"
