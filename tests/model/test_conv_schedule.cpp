// The default CPU schedule of reduction groups: a conv keeps its padded input as a buffer and runs
// its output columns in vector lanes below the reduce loops; a dense layer sums 16 lanes of k at
// a time (rfactor); results against the graph evaluator.
#include <QtTest>

#include "ModelTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/graph/Evaluator.h"
#include "core/tir/Printer.h"

using namespace loom;

namespace {

struct ConvCase {
  int64_t c, h, w, k, kh, kw, stride;
  std::vector<int64_t> pad;
};

/// conv2d -> bias_add -> relu on (1, c, h, w) with weights (k, c, kh, kw).
graph::Module convModule(const ConvCase& cs) {
  graph::Var x = graph::makeVar("data", graph::tensorType(std::vector<int64_t>{1, cs.c, cs.h, cs.w}, DataType::Float(32)));
  graph::Constant wt = graph::makeConstant(test::randomArray({cs.k, cs.c, cs.kh, cs.kw}, 21), "w");
  graph::Constant b = graph::makeConstant(test::randomArray({cs.k}, 22), "b");
  graph::Attrs attrs;
  attrs.set("padding", cs.pad);
  attrs.set("strides", std::vector<int64_t>{cs.stride, cs.stride});
  graph::Expr conv = graph::makeCall("nn.conv2d", {x, wt}, attrs);
  graph::Expr y = graph::makeCall("nn.relu", {graph::makeCall("nn.bias_add", {conv, b})});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, y);
  return m;
}

double runAgainstEvaluator(const graph::Module& m, const std::vector<int64_t>& inShape, std::string* text) {
  runtime::NDArray xv = test::randomArray(inShape, 7);
  runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
  // The NCHW path (opt level 3 defaults to NCHWc; test_nchwc_schedule covers that one).
  driver::CompileModelOptions o;
  o.desiredLayout = "NCHW";
  driver::CompiledModel cm = driver::compileModel(m, "llvm", {}, o);
  if (text)
    for (const auto& k : cm.kernels) *text += tir::printFunc(k);
  auto ex = driver::createExecutor(cm);
  ex->setInput(0, xv);
  ex->run();
  return test::maxDiff(ex->getOutput(0), want);
}

/// dense(x, w) + b -> relu on x (rows, k), w (n, k).
graph::Module denseModule(int64_t rows, int64_t k, int64_t n) {
  graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{rows, k}, DataType::Float(32)));
  graph::Constant w = graph::makeConstant(test::randomArray({n, k}, 31), "w");
  graph::Constant b = graph::makeConstant(test::randomArray({n}, 32), "b");
  graph::Expr y = graph::makeCall("nn.relu", {graph::makeCall("add", {graph::makeCall("nn.dense", {x, w}), b})});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, y);
  return m;
}

/// op(x) over every axis to a scalar (keepdims 0) or to a tensor of extent-1 axes (keepdims 1),
/// plus 1 (so the reduction is a kernel's intermediate, as DynamicQuantizeLinear's max and min
/// are), on x of `shape`.
graph::Module fullReductionModule(const std::string& op, const std::vector<int64_t>& shape, bool keepdims = false) {
  graph::Var x = graph::makeVar("x", graph::tensorType(shape, DataType::Float(32)));
  graph::Attrs all{{"axis", std::vector<int64_t>{}}, {"keepdims", int64_t(keepdims ? 1 : 0)}};
  graph::Expr y = graph::makeCall("add", {graph::makeCall(op, {x}, all), graph::makeScalar(1.0, DataType::Float(32))});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, y);
  return m;
}

struct ConvTransposeCase {
  int64_t c, h, w, o, k, stride, groups, dilation;
  std::vector<int64_t> pad, outputPadding;
};

/// conv2d_transpose -> bias_add -> sigmoid on (1, c, h, w) with weights (c, o / groups, k, k).
graph::Module convTransposeModule(const ConvTransposeCase& cs) {
  graph::Var x = graph::makeVar("data", graph::tensorType(std::vector<int64_t>{1, cs.c, cs.h, cs.w}, DataType::Float(32)));
  graph::Constant wt = graph::makeConstant(test::randomArray({cs.c, cs.o / cs.groups, cs.k, cs.k}, 23), "w");
  graph::Constant b = graph::makeConstant(test::randomArray({cs.o}, 24), "b");
  graph::Attrs attrs;
  attrs.set("padding", cs.pad);
  attrs.set("strides", std::vector<int64_t>{cs.stride, cs.stride});
  attrs.set("dilation", std::vector<int64_t>{cs.dilation, cs.dilation});
  attrs.set("groups", cs.groups);
  attrs.set("output_padding", cs.outputPadding);
  graph::Expr conv = graph::makeCall("nn.conv2d_transpose", {x, wt}, attrs);
  graph::Expr y = graph::makeCall("sigmoid", {graph::makeCall("nn.bias_add", {conv, b})});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, y);
  return m;
}

}  // namespace

class TestConvSchedule : public QObject {
  Q_OBJECT

private slots:
  void convMatchesEvaluator_data() {
    QTest::addColumn<int>("index");
    QTest::newRow("3x3 pad 1, width 16 (one vector)") << 0;
    QTest::newRow("3x3 pad 1, width 40 (split by 8)") << 1;
    QTest::newRow("3x3 stride 2, uneven pad, width 19 (tail)") << 2;
    QTest::newRow("1x1 no pad, width 7") << 3;
    QTest::newRow("7x7 stride 2 pad 3, width 30") << 4;
  }
  void convMatchesEvaluator() {
    QFETCH(int, index);
    const std::vector<ConvCase> cases = {
        {8, 16, 16, 16, 3, 3, 1, {1, 1, 1, 1}},
        {4, 12, 40, 8, 3, 3, 1, {1, 1, 1, 1}},
        {3, 21, 37, 4, 3, 3, 2, {1, 0, 2, 1}},
        {16, 7, 7, 32, 1, 1, 1, {0, 0, 0, 0}},
        {3, 30, 59, 8, 7, 7, 2, {3, 3, 3, 3}},
    };
    const ConvCase& cs = cases[size_t(index)];
    std::string text;
    double d = runAgainstEvaluator(convModule(cs), {1, cs.c, cs.h, cs.w}, &text);
    QVERIFY2(d < 1e-3, qPrintable(QString("max diff %1").arg(d)));
    QVERIFY2(text.find("parallel") != std::string::npos, text.c_str());
  }

  void convVectorizesOutputColumnsAndKeepsPadBuffer() {
    std::string text;
    ConvCase cs{8, 16, 16, 16, 3, 3, 1, {1, 1, 1, 1}};
    QVERIFY(runAgainstEvaluator(convModule(cs), {1, cs.c, cs.h, cs.w}, &text) < 1e-3);
    // The padded input is written once to a buffer of its own (not tested inside the reduction) ...
    QVERIFY2(text.find("pad_temp = T.allocate") != std::string::npos, text.c_str());
    // ... and each reduction step updates a vector of output columns: a vector of padded inputs
    // times one weight broadcast over the lanes.
    QVERIFY2(text.find("pad_temp_1[T.Ramp(") != std::string::npos, text.c_str());
    QVERIFY2(text.find("] * T.Broadcast(p1_2[") != std::string::npos, text.c_str());
  }

  // ConvTranspose by output phase: with 4 or more input channels per group a GEMM into a col
  // buffer (its input columns in vector lanes, in parallel) and a gather of each output's taps
  // with the epilogue; else the phased sum (only the taps the stride does not zero). Dilated
  // ones keep the sum over every tap.
  void convTransposeMatchesEvaluator_data() {
    QTest::addColumn<int>("index");
    QTest::addColumn<bool>("colGemm");
    QTest::newRow("k2 s2 (one tap per output), 16 -> 16, 20x20") << 0 << true;
    QTest::newRow("k2 s2, 16 -> 1 (one output channel)") << 1 << true;
    QTest::newRow("k4 s2 pad 1 (two taps per axis)") << 2 << true;
    QTest::newRow("k3 s2 pad 1 output_padding 1 (guarded taps)") << 3 << true;
    QTest::newRow("groups 2, 8 channels per group, k3 s1 pad 1") << 4 << true;
    QTest::newRow("depthwise (groups = channels), k4 s2 pad 1") << 5 << false;
    QTest::newRow("3 input channels, k5 s3 pad 2, width 11") << 6 << false;
    QTest::newRow("dilation 2 (every tap)") << 7 << false;
  }
  void convTransposeMatchesEvaluator() {
    QFETCH(int, index);
    QFETCH(bool, colGemm);
    const std::vector<ConvTransposeCase> cases = {
        {16, 20, 20, 16, 2, 2, 1, 1, {0, 0, 0, 0}, {0, 0}},
        {16, 12, 24, 1, 2, 2, 1, 1, {0, 0, 0, 0}, {0, 0}},
        {8, 9, 13, 12, 4, 2, 1, 1, {1, 1, 1, 1}, {0, 0}},
        {8, 7, 10, 8, 3, 2, 1, 1, {1, 1, 1, 1}, {1, 1}},
        {16, 6, 18, 8, 3, 1, 2, 1, {1, 1, 1, 1}, {0, 0}},
        {8, 10, 10, 8, 4, 2, 8, 1, {1, 1, 1, 1}, {0, 0}},
        {3, 6, 11, 5, 5, 3, 1, 1, {2, 2, 2, 2}, {0, 0}},
        {8, 6, 9, 4, 3, 2, 1, 2, {1, 1, 1, 1}, {1, 1}},
    };
    const ConvTransposeCase& cs = cases[size_t(index)];
    std::string text;
    double d = runAgainstEvaluator(convTransposeModule(cs), {1, cs.c, cs.h, cs.w}, &text);
    QVERIFY2(d < 1e-4, qPrintable(QString("max diff %1").arg(d)));
    QVERIFY2(text.find("T.parallel") != std::string::npos, text.c_str());
    QCOMPARE(text.find("conv2d_transpose_col = T.allocate") != std::string::npos, colGemm);
    if (colGemm) {
      // The GEMM updates vectors of input columns: a vector load of the data times a weight
      // broadcast over the lanes.
      QVERIFY2(text.find("] * T.Broadcast(") != std::string::npos, text.c_str());
    }
  }

  void denseMatchesEvaluator_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<bool>("lanes");
    QTest::newRow("64x256 -> 48 (k in 16 lanes)") << 64 << 256 << 48 << true;
    QTest::newRow("1x128 -> 10 (k in 16 lanes)") << 1 << 128 << 10 << true;
    QTest::newRow("5x40 -> 7 (k in 8 lanes)") << 5 << 40 << 7 << true;
    QTest::newRow("3x48 -> 9 (k in 16 lanes)") << 3 << 48 << 9 << true;
    QTest::newRow("2x37 -> 5 (k in 16 lanes, a partial last vector)") << 2 << 37 << 5 << true;
    QTest::newRow("3x24 -> 9 (k too short to split)") << 3 << 24 << 9 << false;
  }
  void denseMatchesEvaluator() {
    QFETCH(int, rows);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(bool, lanes);
    std::string text;
    double d = runAgainstEvaluator(denseModule(rows, k, n), {rows, k}, &text);
    QVERIFY2(d < 1e-3, qPrintable(QString("max diff %1").arg(d)));
    // The partial sums over vector lanes of k exist exactly when k has at least 32 values.
    QCOMPARE(text.find("T_dense_rf = T.allocate") != std::string::npos, lanes);
  }

  void fullReductionInVectorLanes_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<QList<qlonglong>>("shape");
    QTest::addColumn<bool>("keepdims");
    QTest::addColumn<bool>("lanes");
    QTest::newRow("max [1, 128, 256] (int8 BERT's DynamicQuantizeLinear)") << "max" << QList<qlonglong>{1, 128, 256} << false << true;
    QTest::newRow("min [128, 64]") << "min" << QList<qlonglong>{128, 64} << false << true;
    QTest::newRow("sum [3, 5, 40] (rows of 40: 8 lanes)") << "sum" << QList<qlonglong>{3, 5, 40} << false << true;
    QTest::newRow("max [7, 37] (lanes across rows, a partial last vector)") << "max" << QList<qlonglong>{7, 37} << false << true;
    QTest::newRow("max [1000]") << "max" << QList<qlonglong>{1000} << false << true;
    QTest::newRow("sum [5, 7] (too short to split)") << "sum" << QList<qlonglong>{5, 7} << false << false;
    // keepdims 1: the output keeps every axis at extent 1, so the block has spatial iter vars of
    // one iteration each (ONNX ReduceMax's default); they took the scalar loop before.
    QTest::newRow("max [1, 128, 256] keepdims") << "max" << QList<qlonglong>{1, 128, 256} << true << true;
    QTest::newRow("min [128, 64] keepdims") << "min" << QList<qlonglong>{128, 64} << true << true;
    QTest::newRow("sum [3, 5, 40] keepdims") << "sum" << QList<qlonglong>{3, 5, 40} << true << true;
    QTest::newRow("prod [2, 3, 37] keepdims (a partial last vector)") << "prod" << QList<qlonglong>{2, 3, 37} << true << true;
    QTest::newRow("max [1000] keepdims") << "max" << QList<qlonglong>{1000} << true << true;
    QTest::newRow("sum [5, 7] keepdims (too short to split)") << "sum" << QList<qlonglong>{5, 7} << true << false;
  }
  void fullReductionInVectorLanes() {
    QFETCH(QString, op);
    QFETCH(QList<qlonglong>, shape);
    QFETCH(bool, keepdims);
    QFETCH(bool, lanes);
    std::vector<int64_t> s(shape.begin(), shape.end());
    std::string text;
    double d = runAgainstEvaluator(fullReductionModule(op.toStdString(), s, keepdims), s, &text);
    QVERIFY2(d < 1e-3, qPrintable(QString("max diff %1").arg(d)));
    // The partial results in vector lanes (an rfactor block), updated a vector at a time; before,
    // the whole tensor was one scalar loop.
    QVERIFY2((text.find("_rf = T.allocate") != std::string::npos) == lanes, text.c_str());
    if (lanes) QVERIFY2(text.find("T.Ramp(") != std::string::npos, text.c_str());
    // No thread-pool launch for the lanes' init (16 stores) or anything else of it.
    if (lanes) QVERIFY2(text.find("T.parallel(") == std::string::npos, text.c_str());
  }

  void bigWeightStripsRunOutsideTheRowLoops() {
    // A matmul over (1, 4, 4, 1024) rows with a 1024x768 weight (3 MiB, past L2): the parallel
    // loop takes the column strips outside the 4 row loops, so each strip is read by 4
    // consecutive units (ConvNeXt-T's stage 4 had streamed its 9.4 MB weight 7 times a call:
    // 10.9 -> 4.9 ms for three calls, one thread).
    const std::vector<int64_t> s{1, 4, 4, 1024};
    graph::Var x = graph::makeVar("x", graph::tensorType(s, DataType::Float(32)));
    graph::Expr w = graph::makeConstant(test::randomArray({1024, 768}, 51), "w");
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, graph::makeCall("nn.matmul", {x, w}));
    std::string text;
    double d = runAgainstEvaluator(m, s, &text);
    QVERIFY2(d < 1e-3, qPrintable(QString("max diff %1").arg(d)));
    const size_t par = text.find("T.parallel(");
    QVERIFY2(par != std::string::npos, text.c_str());
    const size_t lineStart = text.rfind("for ", par);
    const std::string loopName = text.substr(lineStart + 4, text.find(' ', lineStart + 4) - lineStart - 4);
    // The strip loop (over the 768 output columns) leads the fused parallel loop's name.
    QVERIFY2(loopName.rfind("i3_", 0) == 0, (loopName + "\n" + text).c_str());
  }

  void rowMeanSumsInVectorLanes_data() {
    QTest::addColumn<QList<qlonglong>>("shape");
    QTest::addColumn<bool>("keepdims");
    // GroupNorm's and LayerNorm's means over the last axis: a mean lowers to a sum and a
    // division, which were both blocks named "T_mean"; the schedule lost the sum after its
    // rfactor and left it a scalar loop (256 rows of 3199: 0.40 -> 0.03 ms).
    QTest::newRow("[1, 256, 3199] keepdims") << QList<qlonglong>{1, 256, 3199} << true;
    QTest::newRow("[64, 200]") << QList<qlonglong>{64, 200} << false;
  }
  void rowMeanSumsInVectorLanes() {
    QFETCH(QList<qlonglong>, shape);
    QFETCH(bool, keepdims);
    std::vector<int64_t> s(shape.begin(), shape.end());
    graph::Var x = graph::makeVar("x", graph::tensorType(s, DataType::Float(32)));
    graph::Attrs last{{"axis", std::vector<int64_t>{int64_t(s.size()) - 1}}, {"keepdims", int64_t(keepdims ? 1 : 0)}};
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, graph::makeCall("mean", {x}, last));
    std::string text;
    double d = runAgainstEvaluator(m, s, &text);
    QVERIFY2(d < 1e-4, qPrintable(QString("max diff %1").arg(d)));
    QVERIFY2(text.find("T_mean_rf") != std::string::npos, text.c_str());
    QVERIFY2(text.find("T.Ramp(") != std::string::npos, text.c_str());
  }
};

QTEST_APPLESS_MAIN(TestConvSchedule)
#include "test_conv_schedule.moc"
