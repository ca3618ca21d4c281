// The float islands of a quantized model as ONNX Runtime rounds them (core/graph/qnn/OrtFloat.cpp):
// nn.ort_layer_norm, nn.ort_skip_layer_norm and nn.ort_softmax compiled (their loop kernels, opt
// levels 0 and 3) must equal their host kernels bit for bit (the host kernels are the emulation of
// ORT's arithmetic that tests/onnx/quant_ops/island_* check against ORT itself), and the float64
// definition within 1e-4, on random rows of several lengths (softmax rows shorter than and not a
// multiple of the 8 lanes too); and the pass rewrites only functions with qnn ops.
#include <QtTest>
#include <cmath>
#include <random>

#include "core/driver/CompileModel.h"
#include "core/graph/Evaluator.h"
#include "core/graph/Op.h"
#include "core/graph/PassManager.h"
#include "core/graph/qnn/Qnn.h"

using namespace loom;

namespace {

using runtime::NDArray;

NDArray randomArray(const std::vector<int64_t>& shape, unsigned seed, double scale, double offset) {
  NDArray a = NDArray::empty(shape, runtime::DType::f32());
  std::mt19937 rng(seed);
  std::normal_distribution<double> n(0, 1);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = float(n(rng) * scale + offset);
  return a;
}

std::vector<float> floats(const NDArray& a) { return std::vector<float>(a.as<float>(), a.as<float>() + a.numel()); }

/// Compiles `body` at opt levels 0 and 3; both must equal the evaluator (the host kernel) exactly.
std::vector<float> compiledEqualsHostKernel(const std::vector<graph::Var>& params, const graph::Expr& body,
                                            const std::vector<NDArray>& inputs) {
  graph::Module m;
  m.functions["main"] = graph::makeFunction(params, body);
  std::vector<float> ref = floats(graph::evaluate(m.main(), inputs)[0]);
  for (int level : {0, 3}) {
    driver::CompileModelOptions o;
    o.optLevel = level;
    auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, o));
    for (size_t i = 0; i < inputs.size(); ++i) ex->setInput(i, inputs[i]);
    ex->run();
    std::vector<float> got = floats(ex->getOutput(0));
    if (got.size() != ref.size()) QTest::qFail("output sizes differ", __FILE__, __LINE__);
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != ref[i] && bad++ == 0) first = i;
    if (bad)
      QTest::qFail(qPrintable(QString("opt %1: %2 of %3 elements differ from the host kernel, first %4: %5 vs %6")
                                  .arg(level).arg(bad).arg(got.size()).arg(first).arg(double(got[first]), 0, 'g', 9)
                                  .arg(double(ref[first]), 0, 'g', 9)),
                   __FILE__, __LINE__);
  }
  return ref;
}

void closeToFloat64(const std::vector<float>& got, const std::vector<double>& want, double tol) {
  double worst = 0;
  for (size_t i = 0; i < got.size(); ++i) worst = std::max(worst, std::fabs(double(got[i]) - want[i]));
  QVERIFY2(worst <= tol, qPrintable(QString("max difference to the float64 definition %1").arg(worst)));
}

/// The float64 layer norm of rows of `n` (x already the sum for the skip variant).
std::vector<double> layerNorm64(const std::vector<double>& x, int64_t n, const NDArray& g, const NDArray& b) {
  std::vector<double> y(x.size());
  for (size_t r = 0; r < x.size() / size_t(n); ++r) {
    double mean = 0, var = 0;
    for (int64_t h = 0; h < n; ++h) mean += x[r * size_t(n) + size_t(h)];
    mean /= double(n);
    for (int64_t h = 0; h < n; ++h) var += std::pow(x[r * size_t(n) + size_t(h)] - mean, 2);
    double inv = 1 / std::sqrt(var / double(n) + double(1e-5f));
    for (int64_t h = 0; h < n; ++h)
      y[r * size_t(n) + size_t(h)] = (x[r * size_t(n) + size_t(h)] - mean) * inv * g.as<float>()[h] + b.as<float>()[h];
  }
  return y;
}

graph::Var var(const char* name, const std::vector<int64_t>& shape) {
  return graph::makeVar(name, graph::tensorType(shape, DataType::Float(32)));
}

std::vector<std::string> opsAfterPipeline(const std::vector<graph::Var>& params, const graph::Expr& body) {
  graph::Module m;
  m.functions["main"] = graph::makeFunction(params, body);
  m = graph::runGraphPasses(m, graph::optimizePipeline());
  std::vector<std::string> ops;
  for (const graph::Expr& e : graph::postOrder(m.main()->body))
    if (auto* c = e.as<graph::CallNode>(); c && c->op) ops.push_back(c->op->name);
  return ops;
}

bool has(const std::vector<std::string>& ops, const std::string& op) {
  return std::find(ops.begin(), ops.end(), op) != ops.end();
}

}  // namespace

class TestOrtFloat : public QObject {
  Q_OBJECT

private slots:
  void layerNorm_data() {
    QTest::addColumn<QVector<qint64>>("shape");
    QTest::addColumn<bool>("skip");
    QTest::newRow("3x256") << QVector<qint64>{3, 256} << false;
    QTest::newRow("2x5x64") << QVector<qint64>{2, 5, 64} << false;
    QTest::newRow("1x2x3x8") << QVector<qint64>{1, 2, 3, 8} << false;
    QTest::newRow("skip 2x7x128") << QVector<qint64>{2, 7, 128} << true;
    QTest::newRow("skip 1x3x24") << QVector<qint64>{1, 3, 24} << true;
    QTest::newRow("skip 4x13") << QVector<qint64>{4, 13} << true;
  }
  void layerNorm() {
    QFETCH(QVector<qint64>, shape);
    QFETCH(bool, skip);
    std::vector<int64_t> s(shape.begin(), shape.end());
    const int64_t n = s.back();
    NDArray a = randomArray(s, 1, 3.0, 1.5), c = randomArray(s, 2, 1.0, -0.5);
    NDArray g = randomArray({n}, 3, 1.0, 0.2), b = randomArray({n}, 4, 1.0, 0.0);
    graph::Var va = var("a", s), vc = var("c", s), vg = var("g", {n}), vb = var("b", {n});
    graph::Attrs eps{{"epsilon", 1e-5}};
    std::vector<float> got;
    std::vector<double> x(size_t(a.numel()));
    if (skip) {
      got = compiledEqualsHostKernel({va, vc, vg, vb}, graph::makeCall("nn.ort_skip_layer_norm", {va, vc, vg, vb}, eps),
                                     {a, c, g, b});
      for (size_t i = 0; i < x.size(); ++i) x[i] = double(a.as<float>()[i] + c.as<float>()[i]);
    } else {
      got = compiledEqualsHostKernel({va, vg, vb}, graph::makeCall("nn.ort_layer_norm", {va, vg, vb}, eps), {a, g, b});
      for (size_t i = 0; i < x.size(); ++i) x[i] = double(a.as<float>()[i]);
    }
    closeToFloat64(got, layerNorm64(x, n, g, b), 1e-4);
  }

  void softmax_data() {
    QTest::addColumn<QVector<qint64>>("shape");
    QTest::newRow("5x128") << QVector<qint64>{5, 128};
    QTest::newRow("2x3x37") << QVector<qint64>{2, 3, 37};
    QTest::newRow("3x8") << QVector<qint64>{3, 8};
    QTest::newRow("4x5") << QVector<qint64>{4, 5};
    QTest::newRow("6x1") << QVector<qint64>{6, 1};
    QTest::newRow("wide range 2x200") << QVector<qint64>{2, 200};
  }
  void softmax() {
    QFETCH(QVector<qint64>, shape);
    std::vector<int64_t> s(shape.begin(), shape.end());
    const int64_t n = s.back();
    // The wide row reaches exp's lower clamp (x - max below -88: 0, as MLAS gives).
    NDArray x = randomArray(s, 7, n == 200 ? 40.0 : 3.0, 0.5);
    graph::Var vx = var("x", s);
    std::vector<float> got = compiledEqualsHostKernel({vx}, graph::makeCall("nn.ort_softmax", {vx}), {x});
    std::vector<double> want(got.size());
    for (size_t r = 0; r < got.size() / size_t(n); ++r) {
      double mx = -INFINITY, sum = 0;
      for (int64_t h = 0; h < n; ++h) mx = std::max(mx, double(x.as<float>()[r * size_t(n) + size_t(h)]));
      for (int64_t h = 0; h < n; ++h) sum += std::exp(double(x.as<float>()[r * size_t(n) + size_t(h)]) - mx);
      for (int64_t h = 0; h < n; ++h)
        want[r * size_t(n) + size_t(h)] = std::exp(double(x.as<float>()[r * size_t(n) + size_t(h)]) - mx) / sum;
    }
    closeToFloat64(got, want, 1e-6);
  }

  void rewritesOnlyQuantizedFunctions() {
    // LN(a + c) with the sum used once -> the skip variant; used again -> the plain ORT norm;
    // softmax and Gelu's erf(x / sqrt 2) too; a function without qnn ops keeps Loom's own.
    const std::vector<int64_t> s{1, 4, 16};
    graph::Var q = graph::makeVar("q", graph::tensorType(s, DataType::UInt(8)));
    graph::Var c = var("c", s), g = var("g", {16}), b = var("b", {16});
    auto build = [&](graph::Expr x, bool sharedSum) {
      graph::Expr sum = graph::makeCall("add", {x, c});
      graph::Expr ln = graph::makeCall("nn.layer_norm", {sum, g, b}, {{"axis", int64_t(-1)}, {"epsilon", 1e-5}});
      if (sharedSum) ln = graph::makeCall("add", {ln, sum});
      graph::Expr sm = graph::makeCall("nn.softmax", {ln}, {{"axis", int64_t(-1)}});
      graph::Expr div = graph::makeCall("divide", {sm, graph::makeScalar(std::sqrt(2.0), DataType::Float(32))});
      graph::Expr one = graph::makeCall("add", {graph::makeCall("erf", {div}), graph::makeScalar(1.0, DataType::Float(32))});
      return graph::makeCall("multiply", {sm, one});
    };
    graph::Expr dq = graph::makeCall("qnn.dequantize", {q, graph::makeScalar(0.05, DataType::Float(32)),
                                                        graph::makeScalar(128, DataType::UInt(8))},
                                     {{"axis", int64_t(1)}});
    std::vector<std::string> ops = opsAfterPipeline({q, c, g, b}, build(dq, false));
    QVERIFY(has(ops, "nn.ort_skip_layer_norm"));
    QVERIFY(!has(ops, "nn.ort_layer_norm"));
    QVERIFY(has(ops, "nn.ort_softmax"));
    QVERIFY(!has(ops, "divide"));  // erf(x * float32(1/sqrt 2))
    ops = opsAfterPipeline({q, c, g, b}, build(dq, true));
    QVERIFY(has(ops, "nn.ort_layer_norm"));
    QVERIFY(!has(ops, "nn.ort_skip_layer_norm"));
    graph::Var xf = var("x", s);
    ops = opsAfterPipeline({xf, c, g, b}, build(xf, false));
    for (const char* op : {"nn.ort_layer_norm", "nn.ort_skip_layer_norm", "nn.ort_softmax"}) QVERIFY(!has(ops, op));
    QVERIFY(has(ops, "nn.softmax"));
  }
};

QTEST_GUILESS_MAIN(TestOrtFloat)
#include "test_ort_float.moc"
