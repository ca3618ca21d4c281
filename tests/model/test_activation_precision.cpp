// Elu, Selu, Celu (ONNX import -> expm1), Softplus (-> log1p), Sinh, Asinh and Atanh against
// float64 libm, compiled at every opt level and on the graph evaluator.
// - Near 0, exp(x) - 1 in float32 keeps only the absolute error of exp (half an ulp of 1, so ~3e-2
//   relative at x = -1e-6); graph seed 34087 of fuzz_difftest ([Mul Elu Sub], Elu(x) - x)
//   mismatched by 1.6e-2 that way.
// - Softplus as log(exp(x) + 1) overflowed to inf above x = 88 and lost exp(x) below -17.
// - Sinh (exp(x) - exp(-x)) / 2 and Atanh 0.5 log((1 + x) / (1 - x)) lost x's digits near 0;
//   Asinh log(x + sqrt(x^2 + 1)) too, and gave -inf at x = -1e4 (the sum cancels to 0).
// The bar for one operator: within 1e-4 relative of float64; these give a few ulp.
#include <QtTest>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

#include "core/driver/CompileModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Evaluator.h"
#include "runtime/GraphExecutor.h"

using namespace loom;

namespace {

struct Act {
  const char* op;
  std::vector<std::pair<const char*, float>> attrs;
  std::function<double(double)> ref;  // float64, of the input as stored
  double maxAbs = INFINITY;           // inputs beyond it are not compared (domain, float32 overflow)
};

double eluRef(double x, double a) { return x < 0 ? a * std::expm1(x) : x; }

std::vector<Act> activations(bool f64) {
  const double seluA = 1.67326319217681884765625, seluG = 1.05070102214813232421875;
  std::vector<Act> acts = {
      {"Elu", {}, [](double x) { return eluRef(x, 1.0); }},
      {"Elu", {{"alpha", 0.7f}}, [](double x) { return eluRef(x, double(0.7f)); }},
      {"Selu", {}, [=](double x) { return seluG * (x <= 0 ? seluA * std::expm1(x) : x); }},
  };
  acts.push_back({"Softplus", {}, [](double x) { return x > 0 ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }});
  acts.push_back({"Sinh", {}, [](double x) { return std::sinh(x); }, 88.0});
  acts.push_back({"Asinh", {}, [](double x) { return std::asinh(x); }});
  acts.push_back({"Atanh", {}, [](double x) { return std::atanh(x); }, 0.9999});
  // Celu's type constraint is float32 only.
  if (!f64)
    acts.push_back({"Celu", {{"alpha", 1.3f}}, [](double x) {
                      double a = double(1.3f);
                      return std::max(0.0, x) + std::min(0.0, a * std::expm1(double(float(x / a))));
                    }});
  return acts;
}

/// One model: input x of `n` elements, one output per activation.
std::string model(const std::vector<Act>& acts, int64_t n, bool f64) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* os = m.add_opset_import();
  os->set_domain("");
  os->set_version(13);
  auto* g = m.mutable_graph();
  g->set_name("activation_precision");
  auto type = f64 ? onnx::TensorProto::DOUBLE : onnx::TensorProto::FLOAT;
  auto setShape = [&](onnx::ValueInfoProto* v) {
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    t->mutable_shape()->add_dim()->set_dim_value(n);
  };
  auto* in = g->add_input();
  in->set_name("x");
  setShape(in);
  for (size_t i = 0; i < acts.size(); ++i) {
    auto* nd = g->add_node();
    nd->set_op_type(acts[i].op);
    nd->set_name("n" + std::to_string(i));
    nd->add_input("x");
    nd->add_output("y" + std::to_string(i));
    for (auto& [name, v] : acts[i].attrs) {
      auto* a = nd->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(v);
    }
    auto* out = g->add_output();
    out->set_name("y" + std::to_string(i));
    setShape(out);
  }
  std::string bytes;
  m.SerializeToString(&bytes);
  return bytes;
}

/// Magnitudes from 1e-9 to 1e9 (both sides of the |x| < 0.5 switches, exp's overflow and
/// underflow), both signs, zeros; an odd count, so vector loops have a tail.
std::vector<double> inputs() {
  std::vector<double> v = {0.0, -0.0, 0.5, -0.5, 0.4999999, -0.4999999, 0.5000001, -0.5000001,
                           -88.0, -104.0, -110.0, 1.0, -1.0, 89.0, 100.0, -20.0, 1e4, -1e4, 1e9, -1e9};
  for (double e = -9; e <= 2.1; e += 0.25) {
    double x = std::pow(10.0, e) * (1 + 0.37 * std::fmod(std::fabs(e) * 7, 1.0));
    v.push_back(x);
    v.push_back(-x);
  }
  if (v.size() % 2 == 0) v.push_back(-3e-7);
  return v;
}

/// Max relative error of `got` against `ref`; `where` names the worst element.
double worstRel(const runtime::NDArray& got, const std::vector<double>& x, const Act& act, bool f64, std::string* where) {
  const std::function<double(double)>& ref = act.ref;
  double worst = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (std::fabs(x[i]) > act.maxAbs) continue;
    double g = f64 ? got.as<double>()[i] : double(got.as<float>()[i]);
    double r = ref(x[i]);
    // Relative, except below float32's normal range (Softplus(-100) = 3.7e-44: a denormal or 0).
    double e = std::fabs(g - r) / std::max(std::fabs(r), f64 ? 1e-300 : 1e-30);
    if (std::isnan(g)) e = INFINITY;
    if (e > worst) {
      worst = e;
      *where = "x = " + QString::number(x[i], 'g', 9).toStdString() + ": got " +
               QString::number(g, 'g', 17).toStdString() + ", float64 " +
               QString::number(r, 'g', 17).toStdString();
    }
  }
  return worst;
}

}  // namespace

class TestActivationPrecision : public QObject {
  Q_OBJECT

private slots:
  void matchesFloat64Libm_data() {
    QTest::addColumn<bool>("f64");
    QTest::newRow("float32") << false;
    QTest::newRow("float64") << true;
  }

  void matchesFloat64Libm() {
    QFETCH(bool, f64);
    std::vector<Act> acts = activations(f64);
    std::vector<double> xs = inputs();
    runtime::NDArray x = runtime::NDArray::empty({int64_t(xs.size())}, f64 ? runtime::DType{runtime::DType::Float, 64, 1}
                                                                          : runtime::DType::f32());
    for (size_t i = 0; i < xs.size(); ++i) {
      if (f64) x.as<double>()[i] = xs[i];
      else {
        x.as<float>()[i] = float(xs[i]);
        xs[i] = double(float(xs[i]));  // the reference sees the stored input
      }
    }
    // float32: a few ulp (the bar is 1e-4); float64: the polynomial's and exp's rounding.
    const double tol = f64 ? 1e-13 : 2e-6;
    graph::Module m = frontend::importOnnxBytes(model(acts, int64_t(xs.size()), f64), "activation_precision.onnx");
    std::vector<runtime::NDArray> evaluated = graph::evaluate(m.main(), {x});
    QCOMPARE(evaluated.size(), acts.size());
    for (size_t a = 0; a < acts.size(); ++a) {
      std::string where;
      double e = worstRel(evaluated[a], xs, acts[a], f64, &where);
      QVERIFY2(e <= tol, qPrintable(QString("evaluator, %1 #%2: relative error %3 at %4")
                                        .arg(acts[a].op).arg(a).arg(e).arg(QString::fromStdString(where))));
    }
    for (int level : {0, 1, 2, 3}) {
      driver::CompileModelOptions o;
      o.optLevel = level;
      auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, o));
      ex->setInput("x", x);
      ex->run();
      QCOMPARE(ex->numOutputs(), acts.size());
      for (size_t a = 0; a < acts.size(); ++a) {
        std::string where;
        double e = worstRel(ex->getOutput(a), xs, acts[a], f64, &where);
        QVERIFY2(e <= tol, qPrintable(QString("opt level %1, %2 #%3: relative error %4 at %5")
                                          .arg(level).arg(acts[a].op).arg(a).arg(e).arg(QString::fromStdString(where))));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestActivationPrecision)
#include "test_activation_precision.moc"
