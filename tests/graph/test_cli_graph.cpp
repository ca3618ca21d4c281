// `loom graph`: every --emit form on an example model, --print-after-all, and the error exits.
#include <QtTest>

#include "tests/common/ProcessRun.h"

namespace {

using Run = loom::test::ProcessResult;

Run runLoom(const QStringList& args) { return loom::test::runLoomBinary(args, 120000); }

QString model(const char* name) {
  return QString(LOOM_SOURCE_DIR "/examples/models/%1/model.onnx").arg(name);
}

} // namespace

class TestCliGraph : public QObject {
  Q_OBJECT

private slots:
  void emitForms() {
    QStringList base{"graph", model("small_cnn"), "--input-shapes", "data:[1,3,16,16]"};
    Run g = runLoom(base);
    QCOMPARE(g.exitCode, 0);
    QVERIFY(g.out.startsWith(
        "def @main(%data: Tensor[(1, 3, 16, 16), float32]) -> Tensor[(1, 10), float32] {"));
    QVERIFY(g.out.contains("nn.batch_norm("));
    Run o = runLoom(base + QStringList{"--emit", "optimized"});
    QCOMPARE(o.exitCode, 0);
    QVERIFY(!o.out.contains("nn.batch_norm("));
    Run f = runLoom(base + QStringList{"--emit", "fused"});
    QCOMPARE(f.exitCode, 0);
    QCOMPARE(f.out.count("Primitive=1"), 7);
    QVERIFY(f.out.contains("Name=\"fused_nn_conv2d_nn_bias_add_nn_relu\""));
    Run l = runLoom(base + QStringList{"--emit", "fused", "--convert-layout"});
    QCOMPARE(l.exitCode, 0);
    QVERIFY(l.out.contains("layout=\"NCHW8c\""));
    // small_cnn's 3x3 convs take 3 and 8 input channels, below kMinWinogradInChannels: direct.
    QVERIFY(!l.out.contains("nn.conv2d_winograd("));
    QCOMPARE(l.out.count("nn.conv2d("), 2);
    Run d = runLoom(base + QStringList{"--emit", "dot"});
    QCOMPARE(d.exitCode, 0);
    QVERIFY(d.out.startsWith("digraph \"main\" {"));
    QCOMPARE(d.out.count("subgraph cluster_"), 7);
  }

  void printAfterAll() {
    Run r = runLoom({"graph", model("fire_net"), "--emit", "fused", "--print-after-all"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.err.contains("// ---- after simplify-inference ----\ndef @main("));
    QVERIFY(r.err.contains("// ---- after fuse-ops ----\ndef @main("));
    QVERIFY(r.err.contains("// ---- after fold-constant (unchanged) ----"));
  }

  void listOps() {
    Run r = runLoom({"graph", "--list-ops"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(
        r.out.contains("nn.conv2d  [out_elemwise_fusable] strides=[1, 1] padding=[0, 0, 0, 0]"));
    QVERIFY(r.out.contains("reshape  [injective] newshape=<int list>"));
    QVERIFY(r.out.contains("ONNX ops (opsets 6-21):"));
    // Names wrap across lines, so match whole words rather than surrounding spaces.
    for (const char* op : {"LayerNormalization", "Conv", "Softmax"})
      QVERIFY2(r.out.contains(QRegularExpression(QString("\\b%1\\b").arg(op))), op);
    Run none = runLoom({"graph"});
    QCOMPARE(none.exitCode, 1);
    QVERIFY(none.err.contains("give a model file"));
  }

  void errors() {
    Run missing = runLoom({"graph", "/nonexistent/m.onnx"});
    QCOMPARE(missing.exitCode, 1);
    QVERIFY2(missing.err.contains("/nonexistent/m.onnx: cannot open file"),
             qPrintable(missing.err));
    // A symbolic batch is kept (issue #18): the graph prints with N.
    Run dynamic = runLoom({"graph", model("small_cnn")});
    QCOMPARE(dynamic.exitCode, 0);
    QVERIFY2(dynamic.out.contains("Tensor[(N, 3, 16, 16), float32]"), qPrintable(dynamic.out));
    Run badSpec = runLoom({"graph", model("small_cnn"), "--input-shapes", "data:[1,3"});
    QCOMPARE(badSpec.exitCode, 1);
    QVERIFY2(badSpec.err.contains("--input-shapes"), qPrintable(badSpec.err));
    Run badEmit = runLoom({"graph", model("small_cnn"), "--emit", "llvm"});
    QVERIFY(badEmit.exitCode != 0);
  }
};

QTEST_APPLESS_MAIN(TestCliGraph)
#include "test_cli_graph.moc"
