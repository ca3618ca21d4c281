// The Studio with int8 (quantized) models (offscreen): the graph's properties of qnn ops name
// their scales and zero points and the quantized type of what they read or write; a packed int8
// kernel of a QDQ model opens in the schedule editor, compiles with its byte dot product
// intrinsic, and Run finds it equal to the unscheduled program.
#include <QApplication>
#include <QFile>
#include <QStandardPaths>
#include <QtTest>

#include "core/graph/Expr.h"
#include "core/graph/pass/InferType.h"
#include "core/graph/qnn/Qnn.h"
#include "views/CodePane.h"
#include "views/MainWindow.h"
#include "views/ModelJobs.h"
#include "views/ProblemsModel.h"
#include "views/Resources.h"
#include "views/RunsModel.h"
#include "views/Session.h"

using namespace loom;
using namespace loom::views;

namespace {

QString qlinearConv() {
  return QString(LOOM_SOURCE_DIR) + "/tests/onnx/quant_ops/qlinearconv_per_channel_stride2/model.onnx";
}

/// The properties of the first node of `g` with op `op` ("" when none).
QStringList propertiesOf(const GraphData& g, const QString& op) {
  for (const GraphNode& n : g.nodes)
    if (n.op == op) return n.properties;
  return {};
}

graph::Expr scalar(double v, DataType t) { return graph::makeScalar(v, t); }

}  // namespace

class TestQnnView : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioQnnViewTest");
    initResources();
  }

  void qnnPropertiesShowScalesAndZeroPoints() {
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{1, 2, 4, 4}, u8));
    runtime::NDArray ws = runtime::NDArray::empty({3}, runtime::DType::f32());
    for (int i = 0; i < 3; ++i) ws.as<float>()[i] = 0.001f * float(i + 1);
    runtime::NDArray w = runtime::NDArray::empty({3, 2, 1, 1}, runtime::DType{runtime::DType::Int, 8, 1});
    for (int i = 0; i < 6; ++i) w.as<int8_t>()[i] = int8_t(i - 3);
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(130, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {graph::makeConstant(w), graph::makeConstant(ws), scalar(0, i8)},
                                     {{"axis", int64_t(0)}});
    graph::Expr y = graph::makeCall("nn.conv2d", {dx, dw});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(0.25, f32), scalar(7, u8)}, {{"out_dtype", u8}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, q);
    m = graph::inferType(m);
    GraphData g = buildGraphData(m.main());

    QStringList qp = propertiesOf(g, "qnn.quantize");
    QVERIFY2(qp.contains("quantized output\tuint8, scale 0.25, zero point 7"), qPrintable(qp.join(" | ")));
    QVERIFY(qp.contains("scale\t0.25"));
    QVERIFY(qp.contains("zero point\t7"));
    // The scale and zero point are listed by name, not again as anonymous constant inputs.
    for (const QString& p : qp) QVERIFY2(!p.startsWith("input 1") && !p.startsWith("input 2"), qPrintable(p));
    // The data's dequantize: its quantized input type; the weight's: per-channel scales.
    bool data = false, weight = false;
    for (const GraphNode& n : g.nodes) {
      if (n.op != "qnn.dequantize") continue;
      data |= n.properties.contains("quantized input\tuint8, scale 0.02, zero point 130");
      weight |= n.properties.contains("scale\tper channel (3): 0.001 .. 0.003") && n.properties.contains("zero point\t0");
    }
    QVERIFY(data);
    QVERIFY(weight);
  }

  /// A quantized sigmoid becomes a qnn.lookup: its properties name the function and the table.
  void lookupPropertiesNameTheTable() {
    DataType u8 = DataType::UInt(8), f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{1, 4, 2, 2}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.05, f32), scalar(128, u8)});
    graph::Expr q = graph::makeCall("qnn.quantize", {graph::makeCall("sigmoid", {dx}), scalar(1.0 / 256, f32), scalar(0, u8)},
                                    {{"out_dtype", u8}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, q);
    m = graph::inferType(graph::qnn::fakeQuantizationToInteger(m));
    QStringList lp = propertiesOf(buildGraphData(m.main()), "qnn.lookup");
    QVERIFY2(lp.contains("attr function\t\"sigmoid of the dequantized input\""), qPrintable(lp.join(" | ")));
    QVERIFY2(lp.contains("lookup\tuint8 table of 256 entries, one per uint8 input value, built at compile time"),
             qPrintable(lp.join(" | ")));
    QVERIFY2(!lp.filter(QRegularExpression("^table\tTensor\\[\\(256,\\), uint8\\].*min 0 max 255")).isEmpty(),
             qPrintable(lp.join(" | ")));
  }

  void int8KernelOpensInEditorAndRuns() {
    if (!QFile::exists(qlinearConv())) QSKIP("tests/onnx/quant_ops model missing");
    MainWindow w;
    w.resize(1400, 900);
    w.session()->setModelLayout("NCHWc");
    QSignalSpy ready(w.session(), &Session::groupsReady);
    w.openModel(qlinearConv());
    QVERIFY(ready.wait(120000) || ready.count() > 0);
    const ModelData* m = w.session()->model();
    const ModelGroups* g = w.session()->modelGroups();
    QVERIFY(m && g);
    // The imported QLinearConv is quantize(conv(dequantize(...))): the properties say how.
    QStringList qp = propertiesOf(m->imported, "qnn.quantize");
    QVERIFY2(!qp.filter("quantized output\tuint8, scale ").isEmpty(), qPrintable(qp.join(" | ")));
    // The fused view's packed int8 conv says what it multiplies.
    QStringList cp = propertiesOf(m->fused, "qnn.conv2d_u8s8");
    QVERIFY2(cp.contains("integer product\tuint8 x int8 -> int32 accumulator"), qPrintable(cp.join(" | ")));
    QVERIFY2(!cp.filter("data zero point\t120: the padding value").isEmpty(), qPrintable(cp.join(" | ")));
    // The packed weight words are described by their int8 values (the model's weights are
    // 7-bit: -64 .. 63), not as int32 statistics.
    QStringList wp = cp.filter("weights\t");
    QVERIFY2(wp.size() == 2 && wp[0].contains("int8, 4 per int32 word") && wp[0].contains("min -64 max 6"),
             qPrintable(cp.join(" | ")));
    QVERIFY2(cp.filter(QRegularExpression("^input 1")).isEmpty(), qPrintable(cp.join(" | ")));
    int cluster = -1;
    for (int c = 0; c < g->clusterGroup.size() && cluster < 0; ++c)
      if (int k = g->clusterGroup[c]; k >= 0)
        for (const std::string& op : g->groups[size_t(k)].ops)
          if (op == "qnn.conv2d_u8s8") cluster = c;
    QVERIFY(cluster >= 0);
    QVERIFY(w.openCluster(cluster));
    const auto& group = g->groups[size_t(g->clusterGroup[cluster])];
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && !w.asmPane()->text().isEmpty() &&
                                 w.session()->lastCompile().preset == QString::fromStdString(group.name),
                             120000);
    QVERIFY2(w.problems()->rowCount() == 0, qPrintable(w.session()->lastCompile().errorMessage));
    QVERIFY(w.tirPane()->text().contains("dot4_u8s8"));  // the byte dot product intrinsic
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 1, 120000);
    RunRecord r = w.session()->runs()->record(0);
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(r.correct);
    QCOMPARE(r.reference, QString("unscheduled program"));
  }
};

QTEST_MAIN(TestQnnView)
#include "test_qnn_view.moc"
