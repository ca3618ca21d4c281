// The qnn ops and passes against a float64 reference of ONNX's (and ONNX Runtime's) definitions:
// quantize/dequantize/requantize, QDQ conv (regular, strided, depthwise, 1x1, with relu) and
// dense turned into integer kernels by fake-quantization-to-integer, and an integer matmul with a
// runtime zero point (MatMulInteger). Compiled at opt levels 0 and 3 (NCHWc) and evaluated with
// the host kernels; integer results must be exact, with full-range and 7-bit (reduce_range)
// weights. The u8 x s8 convs, depthwise convs and dense layers become the packed int8 ops, whose
// kernels use the byte dot-product instructions (checked in the assembly for AVX2 and VNNI).
#include <QtTest>
#include <cmath>
#include <random>
#include <set>
#include <sstream>

#include "ModelTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/driver/ExportLibrary.h"
#include "core/graph/Evaluator.h"
#include "core/graph/Op.h"
#include "core/graph/PassManager.h"
#include "core/graph/qnn/Qnn.h"
#include "core/graph/qnn/QnnUtil.h"
#include "core/tir/Printer.h"

using namespace loom;

namespace {

using runtime::DType;
using runtime::NDArray;

graph::Type tt(std::vector<int64_t> shape, DataType t) { return graph::tensorType(shape, t); }

DType dtypeOf(DataType t) { return graph::toDType(t); }

/// An array of `t` holding `v` (values already in range).
NDArray array(const std::vector<int64_t>& shape, DataType t, const std::vector<double>& v) {
  NDArray a = NDArray::empty(shape, dtypeOf(t));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DataType::UInt(8)) a.as<uint8_t>()[i] = uint8_t(v[i]);
    else if (t == DataType::Int(8)) a.as<int8_t>()[i] = int8_t(v[i]);
    else if (t == DataType::Int(32)) a.as<int32_t>()[i] = int32_t(v[i]);
    else a.as<float>()[i] = float(v[i]);
  }
  return a;
}

std::vector<double> values(const NDArray& a) {
  std::vector<double> v(size_t(a.numel()));
  DataType t = graph::toDataType(a.dtype());
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DataType::UInt(8)) v[i] = a.as<uint8_t>()[i];
    else if (t == DataType::Int(8)) v[i] = a.as<int8_t>()[i];
    else if (t == DataType::Int(32)) v[i] = a.as<int32_t>()[i];
    else v[i] = a.as<float>()[i];
  }
  return v;
}

std::vector<double> randomInts(size_t n, int lo, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(lo, hi);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

graph::Expr constant(const std::vector<int64_t>& shape, DataType t, const std::vector<double>& v) {
  return graph::makeConstant(array(shape, t, v));
}

graph::Expr scalar(double v, DataType t) { return graph::makeScalar(v, t); }

/// ONNX Runtime's requantization of an int32 accumulator: float32 multiplier, round half to even.
double requant(double acc, float multiplier, double zp, double lo, double hi) {
  double q = double(std::nearbyint(float(acc) * multiplier)) + zp;
  return std::clamp(q, lo, hi);
}

/// Runs `body` compiled at opt levels 0 and 3 (which must agree exactly) and with the evaluator
/// (the host kernels; a QDQ graph there is the float simulation, so within `evaluatorTol`).
std::vector<double> runAll(std::vector<graph::Var> params, graph::Expr body, std::vector<NDArray> inputs,
                           double evaluatorTol = 0) {
  graph::Module m;
  m.functions["main"] = graph::makeFunction(params, body);
  std::vector<double> ref = values(graph::evaluate(m.main(), inputs)[0]);
  std::vector<double> first;
  for (int level : {0, 3}) {
    driver::CompileModelOptions o;
    o.optLevel = level;
    auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, o));
    for (size_t i = 0; i < inputs.size(); ++i) ex->setInput(i, inputs[i]);
    ex->run();
    std::vector<double> got = values(ex->getOutput(0));
    if (got.size() != ref.size()) QTest::qFail("output sizes differ", __FILE__, __LINE__);
    double d = 0, e = 0;
    for (size_t i = 0; i < got.size() && i < ref.size(); ++i) {
      e = std::max(e, std::fabs(got[i] - ref[i]));
      if (!first.empty()) d = std::max(d, std::fabs(got[i] - first[i]));
    }
    if (d != 0) QTest::qFail(qPrintable(QString("opt levels 0 and 3 differ by %1").arg(d)), __FILE__, __LINE__);
    if (e > evaluatorTol)
      QTest::qFail(qPrintable(QString("opt level %1 differs from the evaluator by %2").arg(level).arg(e)), __FILE__,
                   __LINE__);
    if (first.empty()) first = got;
  }
  return first;
}

/// The ops of `m` after the optimization pipeline.
std::vector<std::string> optimizedOps(std::vector<graph::Var> params, graph::Expr body) {
  graph::Module m;
  m.functions["main"] = graph::makeFunction(params, body);
  m = graph::runGraphPasses(m, graph::optimizePipeline());
  std::vector<std::string> ops;
  for (const graph::Expr& e : graph::postOrder(m.main()->body))
    if (auto* c = e.as<graph::CallNode>(); c && c->op)
      ops.push_back(c->op->name + ":" + graph::typeStr(c->checkedType ? graph::Type(c->checkedType) : graph::Type()) +
                    (c->attrs.has("pairs16") ? " pairs16=" + std::to_string(c->attrs.getInt("pairs16")) : ""));
  return ops;
}

}  // namespace

class TestQnnOps : public QObject {
  Q_OBJECT

private slots:
  void quantizeRoundsHalfToEvenAndSaturates() {
    // Per tensor, scale a power of two so every x / scale is exact: ties must go to even.
    std::vector<double> x{-1.0, -0.375, -0.125, 0.0, 0.125, 0.375, 0.625, 0.875, 40.0, -40.0, 0.3, 1.1};
    graph::Var v = graph::makeVar("x", tt({12}, DataType::Float(32)));
    graph::Expr q = graph::makeCall("qnn.quantize", {v, scalar(0.25, DataType::Float(32)), scalar(128, DataType::UInt(8))},
                                    {{"axis", int64_t(0)}, {"out_dtype", DataType::UInt(8)}});
    std::vector<double> got = runAll({v}, q, {array({12}, DataType::Float(32), x)});
    for (size_t i = 0; i < x.size(); ++i) {
      double want = std::clamp(std::nearbyint(x[i] / 0.25) + 128, 0.0, 255.0);
      QCOMPARE(got[i], want);
    }
    QCOMPARE(got[4], 128.0);  // 0.5 -> 0
    QCOMPARE(got[5], 130.0);  // 1.5 -> 2
    QCOMPARE(got[6], 130.0);  // 2.5 -> 2
    QCOMPARE(got[8], 255.0);  // saturated
    QCOMPARE(got[9], 0.0);
  }

  void quantizePerAxisInt8() {
    std::vector<double> s{0.25, 0.5, 1.0}, z{0, -3, 5};
    std::vector<double> x(24);
    for (size_t i = 0; i < x.size(); ++i) x[i] = (double(i) - 11.0) * 0.375;
    graph::Var v = graph::makeVar("x", tt({2, 3, 4}, DataType::Float(32)));
    graph::Expr q = graph::makeCall("qnn.quantize", {v, constant({3}, DataType::Float(32), s), constant({3}, DataType::Int(8), z)},
                                    {{"axis", int64_t(1)}, {"out_dtype", DataType::Int(8)}});
    std::vector<double> got = runAll({v}, q, {array({2, 3, 4}, DataType::Float(32), x)});
    for (size_t i = 0; i < x.size(); ++i) {
      size_t c = (i / 4) % 3;
      QCOMPARE(got[i], std::clamp(std::nearbyint(x[i] / s[c]) + z[c], -128.0, 127.0));
    }
  }

  void dequantizePerAxis() {
    std::vector<double> s{0.1, 0.02}, z{7, -2};
    std::vector<double> x = randomInts(8, -128, 127, 3);
    graph::Var v = graph::makeVar("x", tt({4, 2}, DataType::Int(8)));
    graph::Expr d = graph::makeCall("qnn.dequantize", {v, constant({2}, DataType::Float(32), s), constant({2}, DataType::Int(8), z)},
                                    {{"axis", int64_t(-1)}});
    std::vector<double> got = runAll({v}, d, {array({4, 2}, DataType::Int(8), x)});
    for (size_t i = 0; i < x.size(); ++i) QVERIFY(std::fabs(got[i] - (x[i] - z[i % 2]) * s[i % 2]) < 1e-6);
  }

  void requantizePerChannel() {
    std::vector<double> acc = randomInts(2 * 3 * 5, -40000, 40000, 5);
    std::vector<double> in{0.0003, 0.0011, 0.00007};
    graph::Var v = graph::makeVar("acc", tt({2, 3, 5}, DataType::Int(32)));
    graph::Expr r = graph::makeCall("qnn.requantize",
                                    {v, constant({3}, DataType::Float(32), in), scalar(0.05, DataType::Float(32)), scalar(9, DataType::UInt(8))},
                                    {{"axis", int64_t(1)}, {"out_dtype", DataType::UInt(8)}});
    std::vector<double> got = runAll({v}, r, {array({2, 3, 5}, DataType::Int(32), acc)});
    for (size_t i = 0; i < acc.size(); ++i) {
      size_t c = (i / 5) % 3;
      QCOMPARE(got[i], requant(acc[i], float(in[c]) / 0.05f, 9, 0, 255));
    }
  }

  void qdqConvBecomesIntegerAndIsExact_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("outChannels");
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("groups");
    QTest::addColumn<bool>("relu");
    QTest::addColumn<int>("wmax");  // weights in [-wmax, wmax]: 64 is ORT's reduce_range (vpmaddubsw exact)
    QTest::newRow("3x3 pad 1") << 16 << 32 << 3 << 1 << 1 << false << 127;
    QTest::newRow("3x3 stride 2 relu") << 8 << 16 << 3 << 2 << 1 << true << 127;
    QTest::newRow("depthwise 3x3") << 32 << 32 << 3 << 1 << 32 << true << 127;
    QTest::newRow("1x1 odd channels") << 5 << 7 << 1 << 1 << 1 << false << 127;
    QTest::newRow("3x3 pad 1 7-bit weights") << 16 << 32 << 3 << 1 << 1 << false << 64;
    QTest::newRow("3x3 stride 2 relu 7-bit") << 24 << 40 << 3 << 2 << 1 << true << 64;
    QTest::newRow("7x7 stride 2 3 channels 7-bit") << 3 << 16 << 7 << 2 << 1 << true << 64;
    QTest::newRow("depthwise 3x3 stride 2, 24 channels") << 24 << 24 << 3 << 2 << 24 << false << 127;
    QTest::newRow("depthwise 5x5, 20 channels") << 20 << 20 << 5 << 1 << 20 << true << 127;
    QTest::newRow("1x1 odd channels 7-bit") << 12 << 20 << 1 << 1 << 1 << false << 64;
    // MobileNet-v2's 576 -> 96 projection: weights beyond the reduction-blocking budget.
    QTest::newRow("1x1 576 -> 96") << 576 << 96 << 1 << 1 << 1 << false << 127;
    // 7-bit depthwise weights: the taps of a row summed pairwise in int16 (pairs16), 5x5 with
    // an unpaired last tap.
    QTest::newRow("depthwise 3x3 7-bit") << 32 << 32 << 3 << 1 << 32 << true << 64;
    QTest::newRow("depthwise 3x3 stride 2 7-bit, 24 channels") << 24 << 24 << 3 << 2 << 24 << false << 64;
    QTest::newRow("depthwise 5x5 7-bit, 20 channels") << 20 << 20 << 5 << 1 << 20 << true << 64;
  }
  void qdqConvBecomesIntegerAndIsExact() {
    QFETCH(int, channels);
    QFETCH(int, outChannels);
    QFETCH(int, kernel);
    QFETCH(int, stride);
    QFETCH(int, groups);
    QFETCH(bool, relu);
    QFETCH(int, wmax);
    const int64_t C = channels, O = outChannels, K = kernel, S = stride, H = 9, W = 10, P = K / 2;
    const int64_t CI = C / groups;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32), i32 = DataType::Int(32);
    const double xs = 0.02, ys = 0.1, xz = 131, yz = relu ? 0 : 120;
    std::vector<double> ws(static_cast<size_t>(O)), bias = randomInts(size_t(O), -3000, 3000, 11);
    for (int64_t o = 0; o < O; ++o) ws[size_t(o)] = 0.001 * double(1 + o % 5);
    std::vector<double> xv = randomInts(size_t(C * H * W), 0, 255, 1), wv = randomInts(size_t(O * CI * K * K), -wmax, wmax, 2);
    std::vector<double> bs(static_cast<size_t>(O));
    for (int64_t o = 0; o < O; ++o) bs[size_t(o)] = double(float(xs) * float(ws[size_t(o)]));

    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(xs, f32), scalar(xz, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {constant({O, CI, K, K}, i8, wv), constant({O}, f32, ws), scalar(0, i8)},
                                     {{"axis", int64_t(0)}});
    graph::Expr db = graph::makeCall("qnn.dequantize", {constant({O}, i32, bias), constant({O}, f32, bs), scalar(0, i32)},
                                     {{"axis", int64_t(0)}});
    graph::Expr y = graph::makeCall("nn.conv2d", {dx, dw},
                                    {{"strides", std::vector<int64_t>{S, S}}, {"padding", std::vector<int64_t>{P, P, P, P}}, {"groups", int64_t(groups)}});
    y = graph::makeCall("nn.bias_add", {y, db}, {{"axis", int64_t(1)}});
    if (relu) y = graph::makeCall("nn.relu", {y});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(ys, f32), scalar(yz, u8)}, {{"out_dtype", u8}});

    // The pass made it integer: an int32 conv (u8 x s8 packed unless depthwise), no float one.
    bool intConv = false;
    for (const std::string& op : optimizedOps({x}, q)) {
      QVERIFY2(op.rfind("nn.conv2d:", 0) != 0 || op.find("int32") != std::string::npos, op.c_str());
      intConv |= op.rfind(groups > 1 ? "qnn.depthwise_conv2d_u8s8:" : "qnn.conv2d_u8s8:", 0) == 0;
      // The depthwise conv adds tap pairs in int16 exactly when every pair keeps int16:
      // |w0| + |w1| <= 128 holds for all 7-bit weights and (with these random weights) fails
      // for some pair of the full-range ones.
      if (op.rfind("qnn.depthwise_conv2d_u8s8:", 0) == 0)
        QVERIFY2(op.find(wmax <= 64 ? "pairs16=1" : "pairs16=0") != std::string::npos, op.c_str());
    }
    QVERIFY(intConv);

    std::vector<double> got = runAll({x}, q, {array({1, C, H, W}, u8, xv)}, 1);
    const int64_t OH = (H + 2 * P - K) / S + 1, OW = (W + 2 * P - K) / S + 1;
    QCOMPARE(int64_t(got.size()), O * OH * OW);
    const int64_t opg = O / groups;
    for (int64_t o = 0; o < O; ++o)
      for (int64_t i = 0; i < OH; ++i)
        for (int64_t j = 0; j < OW; ++j) {
          double acc = bias[size_t(o)];
          for (int64_t c = 0; c < CI; ++c)
            for (int64_t ky = 0; ky < K; ++ky)
              for (int64_t kx = 0; kx < K; ++kx) {
                int64_t yy = i * S + ky - P, xx = j * S + kx - P;
                if (yy < 0 || yy >= H || xx < 0 || xx >= W) continue;  // padding is x's zero point
                int64_t ic = (o / opg) * CI + c;
                acc += (xv[size_t((ic * H + yy) * W + xx)] - xz) * wv[size_t(((o * CI + c) * K + ky) * K + kx)];
              }
          double want = requant(acc, float(bs[size_t(o)]) / float(ys), yz, 0, 255);
          if (relu) want = std::max(want, yz);
          double g = got[size_t((o * OH + i) * OW + j)];
          if (g != want)
            QFAIL(qPrintable(QString("output (%1, %2, %3): %4, reference %5").arg(o).arg(i).arg(j).arg(g).arg(want)));
        }
  }

  // Residual add, global average pool and concat of a QDQ graph: integer ops after
  // fake-quantization-to-integer (no dequantize left), exact against the float64 reference of
  // the ONNX definition (dequantize, the float op, quantize with round half to even).
  void qdqAddPoolConcatAreInteger_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<bool>("relu");
    QTest::newRow("add") << "add" << false;
    QTest::newRow("add relu") << "add" << true;
    QTest::newRow("global avg pool") << "gap" << false;
    QTest::newRow("global avg pool relu") << "gap" << true;
    QTest::newRow("concat of three scales") << "concat" << false;
  }
  void qdqAddPoolConcatAreInteger() {
    QFETCH(QString, op);
    QFETCH(bool, relu);
    DataType u8 = DataType::UInt(8), f32 = DataType::Float(32);
    const int64_t C = 24, H = 7, W = 9, n = C * H * W;
    // Scales as float32 values (the model's), zero points; the output's last.
    const std::vector<double> s{double(0.0371f), double(0.0213f), double(0.0517f)}, z{121, 87, 140};
    const double ys = double(relu ? 0.0297f : 0.0452f), yz = relu ? 0 : 128;
    std::vector<graph::Var> xs;
    std::vector<std::vector<double>> xv;
    std::vector<NDArray> ins;
    const int inputs = op == "add" ? 2 : op == "gap" ? 1 : 3;
    for (int i = 0; i < inputs; ++i) {
      xs.push_back(graph::makeVar("x" + std::to_string(i), tt({1, C, H, W}, u8)));
      xv.push_back(randomInts(size_t(n), 0, 255, unsigned(31 + i)));
      ins.push_back(array({1, C, H, W}, u8, xv.back()));
    }
    auto dq = [&](int i) {
      return graph::makeCall("qnn.dequantize", {xs[size_t(i)], scalar(s[size_t(i)], f32), scalar(z[size_t(i)], u8)});
    };
    // The second concat input has the output's parameters: it passes through unchanged.
    const double cs1 = op == "concat" ? ys : s[1], cz1 = op == "concat" ? yz : z[1];
    graph::Expr y;
    if (op == "add") {
      y = graph::makeCall("add", {dq(0), dq(1)});
    } else if (op == "gap") {
      y = graph::makeCall("nn.global_avg_pool2d", {dq(0)});
    } else {
      graph::Expr d1 = graph::makeCall("qnn.dequantize", {xs[1], scalar(cs1, f32), scalar(cz1, u8)});
      y = graph::makeCall("concatenate", {dq(0), d1, dq(2)}, {{"axis", int64_t(1)}});
    }
    if (relu) y = graph::makeCall("nn.relu", {y});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(ys, f32), scalar(yz, u8)}, {{"out_dtype", u8}});

    graph::Module m;
    m.functions["main"] = graph::makeFunction(xs, q);
    m = graph::qnn::fakeQuantizationToInteger(m);
    std::set<std::string> ops;
    for (const graph::Expr& e : graph::postOrder(m.main()->body))
      if (auto* c = e.as<graph::CallNode>(); c && c->op) ops.insert(c->op->name);
    QVERIFY2(!ops.count("qnn.dequantize") && !ops.count("qnn.quantize"), "a float round trip is left");
    QVERIFY(ops.count(op == "add" ? "qnn.add" : "qnn.requantize"));

    std::vector<double> got = runAll(xs, q, ins, 1);
    auto quant = [&](double v) {
      if (relu) v = std::max(v, 0.0);
      return std::clamp(std::nearbyint(v / ys) + yz, 0.0, 255.0);
    };
    std::vector<double> want;
    if (op == "add") {
      // ONNX Runtime's QLinearAdd (MLAS's AVX2 kernel): float32 scale ratios, the zero points in
      // a fixed part, two fused multiply-adds, round half to even. It differs from the exact
      // definition next to .5 ties (output 827 here).
      const float ra = float(s[0]) / float(ys), rb = float(s[1]) / float(ys);
      const float zb = rb * float(z[1]);
      const float fixed = float(yz) - std::fmaf(ra, float(z[0]), zb);
      for (int64_t i = 0; i < n; ++i) {
        const float v = std::fmaf(float(xv[0][size_t(i)]), ra, std::fmaf(float(xv[1][size_t(i)]), rb, fixed));
        want.push_back(std::clamp(double(std::nearbyint(v)), relu ? yz : 0.0, 255.0));
      }
    } else if (op == "gap") {
      for (int64_t c = 0; c < C; ++c) {
        double sum = 0;
        for (int64_t i = 0; i < H * W; ++i) sum += (xv[0][size_t(c * H * W + i)] - z[0]) * s[0];
        want.push_back(quant(sum / double(H * W)));
      }
    } else {
      for (int i = 0; i < 3; ++i)
        for (int64_t k = 0; k < n; ++k) {
          const double sc = i == 1 ? cs1 : s[size_t(i)], zp = i == 1 ? cz1 : z[size_t(i)];
          want.push_back(quant((xv[size_t(i)][size_t(k)] - zp) * sc));
        }
    }
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i])
        QFAIL(qPrintable(QString("output %1: %2, reference %3").arg(i).arg(got[i]).arg(want[i])));
  }

  void qdqLookupMulAvgPoolAreInteger_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<bool>("int8");
    QTest::newRow("sigmoid u8") << "sigmoid" << false;
    QTest::newRow("sigmoid s8") << "sigmoid" << true;
    QTest::newRow("leaky relu u8") << "leaky" << false;
    QTest::newRow("leaky relu s8") << "leaky" << true;
    QTest::newRow("mul by [1,C,1,1] u8") << "mul" << false;
    QTest::newRow("mul by [1,C,1,1] s8") << "mul" << true;
    QTest::newRow("add of [1,C,1,1] u8") << "add" << false;
    QTest::newRow("add of [1,C,1,1] s8") << "add" << true;
    QTest::newRow("avg pool 3x3 s2 pads count_include_pad 0 u8") << "avgpool0" << false;
    QTest::newRow("avg pool 3x3 s1 pads count_include_pad 1 u8") << "avgpool1" << false;
    QTest::newRow("avg pool 3x3 s2 pads count_include_pad 0 s8") << "avgpool0" << true;
    QTest::newRow("avg pool 3x3 s3 ceil_mode count_include_pad 0 u8") << "avgpoolceil0" << false;
    QTest::newRow("avg pool 3x3 s3 ceil_mode count_include_pad 1 u8") << "avgpoolceil1" << false;
    QTest::newRow("avg pool 3x3 s3 ceil_mode count_include_pad 1 s8") << "avgpoolceil1" << true;
  }
  /// QLinearSigmoid / QLinearLeakyRelu (a 256-entry table), QLinearMul and QLinearAdd with
  /// broadcasting (an SE block's [N, C, H, W] x [N, C, 1, 1]) and QLinearAveragePool with padding:
  /// no dequantize/quantize left after fake-quantization-to-integer, and the results equal the
  /// float64 reference of the ONNX definition (dequantize, the float op, quantize) exactly at
  /// opt levels 0 and 3. Every input value of the table ops is covered.
  void qdqLookupMulAvgPoolAreInteger() {
    QFETCH(QString, op);
    QFETCH(bool, int8);
    const DataType qt = int8 ? DataType::Int(8) : DataType::UInt(8), f32 = DataType::Float(32);
    const double lo = int8 ? -128 : 0, hi = int8 ? 127 : 255;
    const int64_t C = 20, H = 11, W = 13, n = C * H * W;
    const double xs = double(0.0371f), xz = int8 ? -7 : 121, bs = double(0.0613f), bz = int8 ? 9 : 140;
    const double ys = double(op == "sigmoid" ? 0.00391f : 0.0297f), yz = int8 ? (op == "sigmoid" ? -128 : 3) : 17;
    const bool binary = op == "mul" || op == "add";
    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, qt));
    graph::Var b = graph::makeVar("b", tt({1, C, 1, 1}, qt));
    std::vector<double> xv = randomInts(size_t(n), int(lo), int(hi), 41), bv = randomInts(size_t(C), int(lo), int(hi), 42);
    for (int64_t i = 0; i < 256; ++i) xv[size_t(i)] = lo + double(i);  // every value of the type
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(xs, f32), scalar(xz, qt)});
    graph::Expr db = graph::makeCall("qnn.dequantize", {b, scalar(bs, f32), scalar(bz, qt)});
    const double alpha = 0.13;
    // ceil_mode: 11 x 13 with stride 3 and pads (0, 1, 0, 0): the last windows reach past the end.
    const bool ceil = op.startsWith("avgpoolceil");
    const bool includePad = op == "avgpool1" || op == "avgpoolceil1";
    const std::vector<int64_t> pads = ceil ? std::vector<int64_t>{0, 1, 0, 0} : std::vector<int64_t>{1, 1, 1, 1};
    const int64_t stride = op == "avgpool1" ? 1 : ceil ? 3 : 2;
    graph::Expr y;
    if (op == "sigmoid") y = graph::makeCall("sigmoid", {dx});
    else if (op == "leaky") y = graph::makeCall("nn.leaky_relu", {dx}, {{"alpha", alpha}});
    else if (op == "mul") y = graph::makeCall("multiply", {dx, db});
    else if (op == "add") y = graph::makeCall("add", {dx, db});
    else
      y = graph::makeCall("nn.avg_pool2d", {dx},
                          {{"pool_size", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{stride, stride}},
                           {"padding", pads}, {"count_include_pad", int64_t(includePad)}, {"ceil_mode", int64_t(ceil)}});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(ys, f32), scalar(yz, qt)}, {{"out_dtype", qt}});
    std::vector<graph::Var> params{x};
    std::vector<NDArray> ins{array({1, C, H, W}, qt, xv)};
    if (binary) {
      params.push_back(b);
      ins.push_back(array({1, C, 1, 1}, qt, bv));
    }

    graph::Module m;
    m.functions["main"] = graph::makeFunction(params, q);
    m = graph::qnn::fakeQuantizationToInteger(m);
    std::set<std::string> ops;
    for (const graph::Expr& e : graph::postOrder(m.main()->body))
      if (auto* c = e.as<graph::CallNode>(); c && c->op) ops.insert(c->op->name);
    QVERIFY2(!ops.count("qnn.dequantize") && !ops.count("qnn.quantize"), "a float round trip is left");
    if (op == "sigmoid" || op == "leaky") QVERIFY(ops.count("qnn.lookup"));

    // The evaluator's float avg_pool2d counts a ceil_mode window only up to the padded end; ONNX
    // Runtime's QLinearAveragePool (and the integer pool) divide by the kernel's area.
    std::vector<double> got = runAll(params, q, ins, op == "avgpoolceil1" ? 1e9 : 0);
    auto quant = [&](double v) { return std::clamp(std::nearbyint(v / ys) + yz, lo, hi); };
    std::vector<double> want;
    if (op == "sigmoid" || op == "leaky" || binary) {
      for (int64_t i = 0; i < n; ++i) {
        const double v = (xv[size_t(i)] - xz) * xs, w = (bv[size_t(i / (H * W))] - bz) * bs;
        want.push_back(quant(op == "sigmoid" ? 1 / (1 + std::exp(-v))
                             : op == "leaky" ? (v >= 0 ? v : v * alpha)
                             : op == "mul"   ? v * w
                                             : v + w));
      }
    } else {
      const int64_t ph = pads[0] + pads[2], pw = pads[1] + pads[3];
      auto outSize = [&](int64_t n, int64_t p) { return (n + p - 3 + (ceil ? stride - 1 : 0)) / stride + 1; };
      const int64_t OH = outSize(H, ph), OW = outSize(W, pw);
      QVERIFY(!ceil || ((OH - 1) * stride - pads[0] + 2 >= H && (OW - 1) * stride - pads[1] + 2 >= W));  // past the end
      for (int64_t c = 0; c < C; ++c)
        for (int64_t oh = 0; oh < OH; ++oh)
          for (int64_t ow = 0; ow < OW; ++ow) {
            double sum = 0;
            int64_t count = 0;
            for (int64_t i = oh * stride - pads[0]; i < oh * stride - pads[0] + 3; ++i)
              for (int64_t j = ow * stride - pads[1]; j < ow * stride - pads[1] + 3; ++j)
                if (i >= 0 && i < H && j >= 0 && j < W) {
                  sum += (xv[size_t((c * H + i) * W + j)] - xz) * xs;
                  ++count;
                }
            want.push_back(quant(sum / double(includePad ? 9 : count)));
          }
    }
    QCOMPARE(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i])
        QFAIL(qPrintable(QString("output %1: %2, reference %3").arg(i).arg(got[i]).arg(want[i])));
  }

  // A global average pool after a packed int8 conv: ConvertLayout blocks qnn.global_sum_pool2d
  // (NCHW{k}c, one kernel, no layout_transform before it) and opt levels 0 (NCHW) and 3 agree
  // exactly.
  void globalSumPoolIsBlockedAfterAConv() {
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    const int64_t C = 16, O = 32, H = 7, W = 7;
    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(120, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {constant({O, C, 1, 1}, i8, randomInts(size_t(O * C), -64, 64, 9)),
                                                        scalar(0.004, f32), scalar(0, i8)});
    graph::Expr y = graph::makeCall("nn.relu", {graph::makeCall("nn.conv2d", {dx, dw})});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(0.05, f32), scalar(0, u8)}, {{"out_dtype", u8}});
    graph::Expr p = graph::makeCall("nn.global_avg_pool2d", {graph::makeCall("qnn.dequantize", {q, scalar(0.05, f32), scalar(0, u8)})});
    graph::Expr out = graph::makeCall("qnn.quantize", {p, scalar(0.03, f32), scalar(5, u8)}, {{"out_dtype", u8}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, out);
    m = graph::runGraphPasses(m, graph::fusePipeline(true));
    bool blocked = false;
    for (const graph::Expr& e : graph::postOrder(m.main()->body, true))
      if (auto* c = e.as<graph::CallNode>(); c && c->op && c->op->name == "qnn.global_sum_pool2d")
        blocked |= c->attrs.getString("layout") != "NCHW";
    QVERIFY(blocked);
    runAll({x}, out, {array({1, C, H, W}, u8, randomInts(size_t(C * H * W), 0, 255, 10))}, 1);
  }

  // A quantized sigmoid after a packed int8 conv (an SE gate, SiLU): ConvertLayout keeps the
  // qnn.lookup in the conv's NCHW{k}c layout (no layout_transform around the table), and opt
  // levels 0 (NCHW) and 3 agree exactly.
  void lookupIsBlockedAfterAConv() {
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    const int64_t C = 16, O = 32, H = 6, W = 6;
    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(120, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {constant({O, C, 1, 1}, i8, randomInts(size_t(O * C), -64, 64, 19)),
                                                        scalar(0.004, f32), scalar(0, i8)});
    graph::Expr q = graph::makeCall("qnn.quantize", {graph::makeCall("nn.conv2d", {dx, dw}), scalar(0.05, f32), scalar(128, u8)},
                                    {{"out_dtype", u8}});
    graph::Expr s = graph::makeCall("sigmoid", {graph::makeCall("qnn.dequantize", {q, scalar(0.05, f32), scalar(128, u8)})});
    graph::Expr out = graph::makeCall("qnn.quantize", {s, scalar(1.0 / 256, f32), scalar(0, u8)}, {{"out_dtype", u8}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, out);
    m = graph::runGraphPasses(m, graph::fusePipeline(true));
    bool blocked = false;
    for (const graph::Expr& e : graph::postOrder(m.main()->body, true))
      if (auto* c = e.as<graph::CallNode>(); c && c->op && c->op->name == "qnn.lookup")
        blocked |= graph::qnn::tensorTypeOf(c->args[0]).ndim() == 5;
    QVERIFY(blocked);
    runAll({x}, out, {array({1, C, H, W}, u8, randomInts(size_t(C * H * W), 0, 255, 20))}, 1);
  }

  void int8KernelsUseByteDotProducts_data() {
    QTest::addColumn<QString>("target");
    QTest::addColumn<int>("wmax");
    QTest::addColumn<QString>("want");
    QTest::addColumn<QString>("notWant");
    // This machine's AVX2 (no VNNI): 7-bit weights -> vpmaddubsw + vpmaddwd; full-range weights
    // (a pair of products may leave int16) -> exact 16-bit vpmaddwd, never vpmaddubsw.
    QTest::newRow("avx2 7-bit") << "llvm -mcpu=haswell" << 64 << "vpmaddubsw,vpmaddwd" << "vpmulld,vpdpbusd";
    QTest::newRow("avx2 8-bit") << "llvm -mcpu=haswell" << 127 << "vpmaddwd" << "vpmaddubsw,vpdpbusd";
    // AVX-512 VNNI (compiled, not run here: the machine has none): vpdpbusd for either range.
    QTest::newRow("vnni 7-bit") << "llvm -mcpu=icelake-server" << 64 << "vpdpbusd" << "vpmaddubsw,vpmulld";
    QTest::newRow("vnni 8-bit") << "llvm -mcpu=icelake-server" << 127 << "vpdpbusd" << "vpmaddubsw,vpmulld";
  }
  /// The structure of the int8 kernels: the conv and dense of a QDQ graph compile to the byte dot
  /// product instructions (not the int32 multiply vpmulld over widened operands).
  void int8KernelsUseByteDotProducts() {
    QFETCH(QString, target);
    QFETCH(int, wmax);
    QFETCH(QString, want);
    QFETCH(QString, notWant);
    const int64_t C = 32, O = 64, H = 8, W = 8, N = 48;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(128, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {constant({O, C, 3, 3}, i8, randomInts(size_t(O * C * 9), -wmax, wmax, 3)),
                                                        scalar(0.001, f32), scalar(0, i8)});
    graph::Expr y = graph::makeCall("nn.conv2d", {dx, dw}, {{"padding", std::vector<int64_t>{1, 1, 1, 1}}});
    y = graph::makeCall("nn.relu", {y});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(0.1, f32), scalar(0, u8)}, {{"out_dtype", u8}});
    q = graph::makeCall("reshape", {q}, {{"newshape", std::vector<int64_t>{O, H * W}}});
    graph::Expr dq = graph::makeCall("qnn.dequantize", {q, scalar(0.1, f32), scalar(0, u8)});
    graph::Expr dw2 = graph::makeCall("qnn.dequantize", {constant({N, H * W}, i8, randomInts(size_t(N * H * W), -wmax, wmax, 4)),
                                                         scalar(0.001, f32), scalar(0, i8)});
    graph::Expr z = graph::makeCall("qnn.quantize", {graph::makeCall("nn.dense", {dq, dw2}), scalar(0.2, f32), scalar(3, u8)},
                                    {{"out_dtype", u8}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, z);
    driver::CompiledModel cm = driver::compileModel(m, target.toStdString());
    const std::string asmText = driver::buildModelKernels(cm).assembly();
    for (const QString& w : want.split(','))
      QVERIFY2(asmText.find(w.toStdString()) != std::string::npos, qPrintable("no " + w + " in the kernels"));
    for (const QString& w : notWant.split(','))
      QVERIFY2(asmText.find(w.toStdString()) == std::string::npos, qPrintable(w + " in the kernels"));
    if (want == "vpdpbusd") {
      // The accumulator is vpdpbusd's own operand: no separate vpaddd per product.
      auto count = [&](const std::string& s) {
        int n = 0;
        for (size_t p = asmText.find(s); p != std::string::npos; p = asmText.find(s, p + 1)) ++n;
        return n;
      };
      const int dots = count("vpdpbusd"), adds = count("vpaddd");
      QVERIFY2(adds * 4 < dots, qPrintable(QString("%1 vpaddd for %2 vpdpbusd").arg(adds).arg(dots)));
    }
  }

  /// MobileNet-v2's 576 -> 96 int8 projection over 14x14 (19 KiB of weights per output-channel
  /// pair on AVX-512): not reduction-blocked (main's 5e383d4 raised the rule from 16 KiB to 512
  /// KiB per parallel unit), so each tile keeps its byte dot products' accumulators in registers
  /// and runs its epilogue right after, and the parallel loop takes the output rows too. Under the
  /// 16 KiB rule the input channels were split into 2 blocks, the accumulators went through memory
  /// and the parallel loop was the 3 channel pairs alone: on one AVX-512 core 72.8 us against 26.4
  /// us unblocked, and at 2 threads 48.6 us (3 units over 2 threads) against 12.9.
  void int8ProjectionIsNotBlocked() {
    const int64_t C = 576, O = 96, H = 14, W = 14;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(128, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {constant({O, C, 1, 1}, i8, randomInts(size_t(O * C), -127, 127, 5)),
                                                        scalar(0.001, f32), scalar(0, i8)});
    graph::Expr y = graph::makeCall("nn.conv2d", {dx, dw});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(0.1, f32), scalar(120, u8)}, {{"out_dtype", u8}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, q);
    driver::CompiledModel cm = driver::compileModel(m, "llvm -mcpu=icelake-server");
    std::string text;
    for (const auto& k : cm.kernels) text += tir::printFunc(k);
    QVERIFY2(text.find("dot4_u8s8") != std::string::npos, text.c_str());
    QVERIFY2(text.find("rco_0") == std::string::npos, text.c_str());
    // The widest parallel loop has at least 8 iterations (it had 3).
    int64_t widest = 0;
    for (size_t p = text.find("T.parallel("); p != std::string::npos; p = text.find("T.parallel(", p + 1))
      widest = std::max<int64_t>(widest, std::atoll(text.c_str() + p + 11));
    QVERIFY2(widest >= 8, text.c_str());
  }

  void int8ConvReadsInputBytesAsWords_data() {
    QTest::addColumn<QString>("target");
    QTest::addColumn<int>("wmax");
    QTest::addColumn<QString>("dot");
    QTest::newRow("vnni") << "llvm -mcpu=icelake-server" << 127 << "vpdpbusd";
    QTest::newRow("avx2 7-bit") << "llvm -mcpu=haswell" << 64 << "vpmaddubsw";
  }
  /// MobileNet-v2's first 1x1 int8 projection (32 -> 16 channels) over 28x28: each byte dot
  /// product broadcasts 4 input channels of one pixel, packed from 4 consecutive uint8 loads; the
  /// codegen loads them as one 32-bit word (emitPackedBytes). Before, LLVM merged the bytes of
  /// only some rows of the register tile (4 of 28 with AVX-512) and loaded the others byte by
  /// byte: about 4 movzbl per vpdpbusd, and the model's 1x1 convs ran up to 2x slower.
  void int8ConvReadsInputBytesAsWords() {
    QFETCH(QString, target);
    QFETCH(int, wmax);
    QFETCH(QString, dot);
    const int64_t C = 32, O = 16, H = 28, W = 28;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(128, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {constant({O, C, 1, 1}, i8, randomInts(size_t(O * C), -wmax, wmax, 6)),
                                                        scalar(0.001, f32), scalar(0, i8)});
    graph::Expr q = graph::makeCall("qnn.quantize", {graph::makeCall("nn.conv2d", {dx, dw}), scalar(0.1, f32), scalar(120, u8)},
                                    {{"out_dtype", u8}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, q);
    driver::CompiledModel cm = driver::compileModel(m, target.toStdString());
    const std::string asmText = driver::buildModelKernels(cm).assembly();
    // Counted in the conv kernel's loop body (the parallel closure) only: the layout transforms
    // move bytes too, and the argument checks read the tensors' dtype bytes.
    int dots = 0, bytes = 0;
    bool inConv = false;
    std::istringstream lines(asmText);
    for (std::string line; std::getline(lines, line);) {
      if (!line.empty() && line.back() == ':' && line[0] != '.' && line[0] != ' ' && line[0] != '\t')
        inConv = line.find("conv2d_u8s8") != std::string::npos && line.find("_parallel_") != std::string::npos;
      if (!inConv) continue;
      dots += line.find(dot.toStdString()) != std::string::npos;
      bytes += line.find("movzbl") != std::string::npos;
    }
    QVERIFY2(dots >= 16, qPrintable(QString("%1 %2").arg(dots).arg(dot)));
    QVERIFY2(bytes * 4 < dots, qPrintable(QString("%1 byte loads for %2 %3").arg(bytes).arg(dots).arg(dot)));
  }

  void qdqDenseBecomesIntegerAndIsExact() {
    const int64_t M = 3, K = 37, N = 20;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    const double as = 0.03, az = 100, ys = 0.2, yz = 77;
    std::vector<double> ws(static_cast<size_t>(N)), bf(static_cast<size_t>(N));
    for (int64_t n = 0; n < N; ++n) {
      ws[size_t(n)] = 0.002 + 0.0005 * double(n % 3);
      bf[size_t(n)] = 0.05 * double(n) - 0.4;  // a float bias, quantized at the accumulator's scale
    }
    std::vector<double> av = randomInts(size_t(M * K), 0, 255, 21), wv = randomInts(size_t(N * K), -128, 127, 22);
    graph::Var a = graph::makeVar("a", tt({M, K}, u8));
    graph::Expr da = graph::makeCall("qnn.dequantize", {a, scalar(as, f32), scalar(az, u8)});
    graph::Expr dw = graph::makeCall("qnn.dequantize", {constant({N, K}, i8, wv), constant({N}, f32, ws), scalar(0, i8)},
                                     {{"axis", int64_t(0)}});
    graph::Expr y = graph::makeCall("add", {graph::makeCall("nn.dense", {da, dw}), constant({N}, f32, bf)});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(ys, f32), scalar(yz, u8)}, {{"out_dtype", u8}});
    bool intDense = false;
    for (const std::string& op : optimizedOps({a}, q)) intDense |= op.rfind("qnn.dense_u8s8:", 0) == 0;
    QVERIFY(intDense);
    std::vector<double> got = runAll({a}, q, {array({M, K}, u8, av)}, 1);
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        float accScale = float(as) * float(ws[size_t(n)]);
        double acc = std::nearbyint(bf[size_t(n)] / double(accScale));
        for (int64_t k = 0; k < K; ++k) acc += (av[size_t(m * K + k)] - az) * wv[size_t(n * K + k)];
        QCOMPARE(got[size_t(m * N + n)], requant(acc, accScale / float(ys), yz, 0, 255));
      }
  }

  void matmulIntegerDenseWithRuntimeZeroPoint_data() {
    QTest::addColumn<int>("wmax");
    QTest::newRow("8-bit weights") << 127;
    QTest::newRow("7-bit weights") << 64;
  }
  /// ORT's quantize_dynamic: DynamicQuantizeLinear's run-time zero point, MatMulInteger with a
  /// constant 2-D int8 weight (imported as qnn.dense of its transpose): the packed u8 x s8 dense,
  /// exact; K not a multiple of 4 pads the data.
  void matmulIntegerDenseWithRuntimeZeroPoint() {
    QFETCH(int, wmax);
    const int64_t B = 2, M = 5, K = 37, N = 24;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8);
    std::vector<double> av = randomInts(size_t(B * M * K), 0, 255, 41), bv = randomInts(size_t(K * N), -wmax, wmax, 42);
    graph::Var a = graph::makeVar("a", tt({B, M, K}, u8));
    graph::Var az = graph::makeVar("a_zero_point", tt({}, u8));
    graph::Expr wT = graph::makeCall("transpose", {constant({K, N}, i8, bv)}, {{"axes", std::vector<int64_t>{1, 0}}});
    graph::Expr y = graph::makeCall("qnn.dense", {a, wT, az, scalar(0, i8)});
    bool packed = false;
    for (const std::string& op : optimizedOps({a, az}, y)) packed |= op.rfind("qnn.dense_u8s8:", 0) == 0;
    QVERIFY(packed);
    std::vector<double> got = runAll({a, az}, y, {array({B, M, K}, u8, av), array({}, u8, {117})});
    for (int64_t r = 0; r < B * M; ++r)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k) acc += (av[size_t(r * K + k)] - 117) * bv[size_t(k * N + n)];
        QCOMPARE(got[size_t(r * N + n)], acc);
      }
  }

  void integerMatmulWithRuntimeZeroPoint() {
    // MatMulInteger after DynamicQuantizeLinear: a's zero point is computed at run time.
    const int64_t B = 2, M = 4, K = 19, N = 9;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8);
    std::vector<double> av = randomInts(size_t(B * M * K), 0, 255, 31), bv = randomInts(size_t(K * N), -128, 127, 32);
    std::vector<double> bz = randomInts(size_t(N), -5, 5, 33);
    graph::Var a = graph::makeVar("a", tt({B, M, K}, u8));
    graph::Var az = graph::makeVar("a_zero_point", tt({}, u8));
    graph::Expr y = graph::makeCall("qnn.matmul", {a, constant({K, N}, i8, bv), az, constant({N}, i8, bz)});
    std::vector<double> got = runAll({a, az}, y, {array({B, M, K}, u8, av), array({}, u8, {143})});
    for (int64_t b = 0; b < B; ++b)
      for (int64_t m = 0; m < M; ++m)
        for (int64_t n = 0; n < N; ++n) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k) acc += (av[size_t((b * M + m) * K + k)] - 143) * (bv[size_t(k * N + n)] - bz[size_t(n)]);
          QCOMPARE(got[size_t((b * M + m) * N + n)], acc);
        }
  }

  /// quantize_dynamic's MatMulInteger -> Cast -> Mul(scale) -> Add(bias), which ONNX Runtime
  /// fuses into DynamicQuantizeMatMul: the product is rounded to float32, then the bias added (two
  /// roundings). Fused into one kernel here, LLVM would contract the two into one fused
  /// multiply-add and a quarter of the outputs differed in the last bit (BERT dyn); the multiply
  /// of the cast accumulator is fenced. Exact against the two-rounding reference at opt 0 and 3.
  void matmulIntegerToFloatRoundsTheProductBeforeTheBias() {
    const int64_t M = 16, K = 64, N = 48;
    DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
    std::vector<double> av = randomInts(size_t(M * K), 0, 255, 51), bv = randomInts(size_t(K * N), -127, 127, 52);
    std::vector<double> biasv(static_cast<size_t>(N), 0.0);
    std::mt19937 rng(53);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (double& b : biasv) b = u(rng);
    graph::Var a = graph::makeVar("a", tt({M, K}, u8));
    graph::Var az = graph::makeVar("a_zero_point", tt({}, u8));
    graph::Var s = graph::makeVar("scale", tt({}, f32));
    graph::Expr wT = graph::makeCall("transpose", {constant({K, N}, i8, bv)}, {{"axes", std::vector<int64_t>{1, 0}}});
    graph::Expr acc = graph::makeCall("qnn.dense", {a, wT, az, scalar(0, i8)});
    graph::Expr y = graph::makeCall(
        "add", {graph::makeCall("multiply", {graph::makeCall("cast", {acc}, {{"dtype", f32}}), s}), constant({N}, f32, biasv)});
    const float scale = 1.0f / 4099.0f;
    std::vector<double> got =
        runAll({a, az, s}, y, {array({M, K}, u8, av), array({}, u8, {113}), array({}, f32, {scale})}, 1e-5);
    int64_t fusedWouldDiffer = 0;
    for (int64_t r = 0; r < M; ++r)
      for (int64_t n = 0; n < N; ++n) {
        double acc64 = 0;
        for (int64_t k = 0; k < K; ++k) acc64 += (av[size_t(r * K + k)] - 113) * bv[size_t(k * N + n)];
        volatile float product = float(acc64) * scale;
        float want = product + float(biasv[size_t(n)]);
        fusedWouldDiffer += std::fmaf(float(acc64), scale, float(biasv[size_t(n)])) != want;
        QCOMPARE(float(got[size_t(r * N + n)]), want);
      }
    QVERIFY2(fusedWouldDiffer > 0, "no output where a fused multiply-add rounds differently: the test cannot fail");
  }

  /// A QDQ fallback (an op that stays float: here an add of a float constant per channel):
  /// DequantizeLinear's output is rounded to float32 before the op, as ONNX Runtime runs the two
  /// nodes. Fused into one kernel, LLVM contracted (x - zp) * s + c into one fused multiply-add;
  /// the constants are chosen next to quantization ties, where the two roundings move the result by
  /// a step. Exact against the two-rounding reference at opt 0 and 3 (fails without the fence).
  void dequantizeIsRoundedBeforeAFloatOp() {
    const int64_t C = 16, W = 256;
    DataType u8 = DataType::UInt(8), f32 = DataType::Float(32);
    const float xs = 0.0371f, ys = 0.0297f;
    const double xz = 121, yz = 17;
    auto twoRoundings = [&](double q, float c) {
      volatile float d = float(q - xz) * xs;
      float v = d + c;
      return std::clamp(double(std::nearbyint(v / ys)) + yz, 0.0, 255.0);
    };
    auto fused = [&](double q, float c) {
      return std::clamp(double(std::nearbyint(std::fmaf(float(q - xz), xs, c) / ys)) + yz, 0.0, 255.0);
    };
    // Per channel: a constant c next to a tie for some input value q (found by search), so that
    // the fused form rounds to the other step.
    std::vector<double> cv(static_cast<size_t>(C), 0.0);
    int64_t ties = 0;
    for (int64_t ch = 0; ch < C; ++ch) {
      bool found = false;
      for (int q = int(7 * ch + 3); q < 256 && !found; q += 5)
        for (int k = -20; k <= 20 && !found; ++k) {
          float c = float((double(ch) + 0.5) * ys) - float(q - xz) * xs;
          for (int step = 0; step < std::abs(k); ++step) c = std::nextafter(c, k > 0 ? 1e9f : -1e9f);
          if (twoRoundings(q, c) != fused(q, c)) {
            cv[size_t(ch)] = c;
            found = true;
          }
        }
      ties += found;
    }
    QVERIFY2(ties > 0, "no constant found where a fused multiply-add rounds differently: the test cannot fail");
    std::vector<double> xv(static_cast<size_t>(C * W), 0.0);
    for (int64_t i = 0; i < C * W; ++i) xv[size_t(i)] = double(i % W);
    graph::Var x = graph::makeVar("x", tt({1, C, 1, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(xs, f32), scalar(xz, u8)});
    graph::Expr y = graph::makeCall("add", {dx, constant({C, 1, 1}, f32, cv)});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(ys, f32), scalar(yz, u8)}, {{"out_dtype", u8}});
    std::vector<double> got = runAll({x}, q, {array({1, C, 1, W}, u8, xv)}, 1);
    for (int64_t i = 0; i < C * W; ++i)
      QCOMPARE(got[size_t(i)], twoRoundings(xv[size_t(i)], float(cv[size_t(i / W)])));
  }

  /// An average pool whose output parameters are its input's (as ORT's QDQ quantizer writes it):
  /// the edge windows (counts 6 and 4) average to exact .5 ties. ONNX Runtime's
  /// QLinearAveragePool (which its optimizer makes of the QDQ group too) rounds them by its float32
  /// sum of the dequantized values: nearbyint(sum / count / y_scale + y_zp). Loom follows it
  /// exactly; the exact integer average rounded half to even differs at some ties (checked, so the
  /// test can fail).
  void avgPoolTiesRoundAsOrtQLinearAveragePool() {
    const int64_t C = 8, H = 9, W = 11;
    DataType u8 = DataType::UInt(8), f32 = DataType::Float(32);
    const float s = 0.027543958f;
    const double zp = 121;
    std::vector<double> xv = randomInts(size_t(C * H * W), 0, 255, 61);
    graph::Var x = graph::makeVar("x", tt({1, C, H, W}, u8));
    graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(s, f32), scalar(zp, u8)});
    graph::Expr y = graph::makeCall("nn.avg_pool2d", {dx},
                                    {{"pool_size", std::vector<int64_t>{3, 3}}, {"strides", std::vector<int64_t>{1, 1}},
                                     {"padding", std::vector<int64_t>{1, 1, 1, 1}}, {"count_include_pad", int64_t(0)}});
    graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(s, f32), scalar(zp, u8)}, {{"out_dtype", u8}});
    std::vector<double> got = runAll({x}, q, {array({1, C, H, W}, u8, xv)}, 1);
    int64_t exactDiffers = 0;
    for (int64_t c = 0; c < C; ++c)
      for (int64_t oh = 0; oh < H; ++oh)
        for (int64_t ow = 0; ow < W; ++ow) {
          float sum = 0;
          int64_t n = 0, isum = 0;
          for (int64_t i = std::max<int64_t>(oh - 1, 0); i < std::min(oh + 2, H); ++i)
            for (int64_t j = std::max<int64_t>(ow - 1, 0); j < std::min(ow + 2, W); ++j) {
              const int64_t v = int64_t(xv[size_t((c * H + i) * W + j)]) - int64_t(zp);
              volatile float d = s * float(v);
              sum += d;
              isum += v;
              ++n;
            }
          volatile float avg = sum / float(n);
          volatile float scaled = avg / s;
          const double want = std::clamp(double(std::nearbyint(scaled + float(zp))), 0.0, 255.0);
          exactDiffers += std::clamp(std::nearbyint(double(isum) / double(n)) + zp, 0.0, 255.0) != want;
          QCOMPARE(got[size_t((c * H + oh) * W + ow)], want);
        }
    QVERIFY2(exactDiffers > 0, "no tie where the exact average rounds differently: the test cannot fail");
  }

  void badParametersAreTypeErrors() {
    graph::Var v = graph::makeVar("x", tt({2, 3}, DataType::Float(32)));
    graph::Expr q = graph::makeCall("qnn.quantize", {v, constant({4}, DataType::Float(32), {1, 1, 1, 1}), scalar(0, DataType::UInt(8))},
                                    {{"axis", int64_t(1)}, {"out_dtype", DataType::UInt(8)}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({v}, q);
    try {
      graph::runGraphPasses(m, {"infer-type"});
      QFAIL("a 4-element scale on an axis of 3 was accepted");
    } catch (const graph::GraphTypeError& e) {
      QVERIFY2(QString(e.what()).contains("qnn.quantize") && QString(e.what()).contains("axis 1"), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestQnnOps)
#include "test_qnn_ops.moc"
