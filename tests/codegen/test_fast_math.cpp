// Accuracy of the compiled float32 exp/tanh/sigmoid/erf approximations and libm-backed math.
#include <QtTest>

#include <cmath>
#include <limits>

#include "CodegenTestUtil.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using loom::runtime::NDArray;

namespace {
/// B = op(A) over n elements, vectorized by `lanes` (n divisible by lanes).
PrimFunc unaryFunc(const std::string& op, DataType t, int n, int lanes) {
  Buffer A = makeBuffer("A", t, {n}), B = makeBuffer("B", t, {n});
  Var i = makeVar("i");
  Expr idx = lanes == 1 ? Expr(i) : ramp(i * lanes, 1, lanes);
  Stmt body = forLoop(i, 0, n / lanes, ForKind::Serial, bufferStore(B, call(op, {bufferLoad(A, {idx})}), {idx}));
  return makePrimFunc(op + "_" + t.str() + "_x" + std::to_string(lanes), {A->data, B->data},
                      {{A->data, A}, {B->data, B}}, body);
}

double reference(const std::string& op, double x) {
  if (op == "exp") return std::exp(x);
  if (op == "tanh") return std::tanh(x);
  if (op == "sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (op == "erf") return std::erf(x);
  if (op == "log") return std::log(x);
  if (op == "sqrt") return std::sqrt(x);
  if (op == "sin") return std::sin(x);
  return std::nan("");
}
}  // namespace

class TestFastMath : public QObject {
  Q_OBJECT
private slots:
  void float32Accuracy_data() {
    QTest::addColumn<QString>("op");
    QTest::addColumn<double>("lo");
    QTest::addColumn<double>("hi");
    QTest::addColumn<double>("tolerance");
    QTest::newRow("exp") << "exp" << -87.0 << 88.0 << 1e-6;
    QTest::newRow("tanh") << "tanh" << -20.0 << 20.0 << 1e-6;
    QTest::newRow("sigmoid") << "sigmoid" << -80.0 << 80.0 << 1e-6;
    QTest::newRow("erf") << "erf" << -6.0 << 6.0 << 1e-6;
    QTest::newRow("tanh near 0") << "tanh" << -1e-3 << 1e-3 << 1e-6;
    QTest::newRow("erf near 0") << "erf" << -1e-3 << 1e-3 << 1e-6;
  }
  void float32Accuracy() {
    QFETCH(QString, op);
    QFETCH(double, lo);
    QFETCH(double, hi);
    QFETCH(double, tolerance);
    const int n = 1 << 18;
    std::vector<PrimFunc> fs = {unaryFunc(op.toStdString(), DataType::Float(32), n, 16),
                                unaryFunc(op.toStdString(), DataType::Float(32), n, 1)};
    std::vector<PrimFunc> packed;
    for (auto& f : fs) packed.push_back(transform::makePackedAPI(f));
    codegen::JITModule jit(codegen::buildLLVM(packed, codegen::Target::parse("llvm")));
    NDArray a = NDArray::empty({n}, runtime::DType::f32());
    for (int k = 0; k < n; ++k) a.as<float>()[k] = float(lo + (hi - lo) * k / (n - 1));
    for (auto& f : fs) {
      NDArray b = NDArray::empty({n}, runtime::DType::f32());
      jit.getFunction(f->name)(a, b);
      double worst = 0;
      float worstX = 0;
      for (int k = 0; k < n; ++k) {
        double x = a.as<float>()[k];
        double want = reference(op.toStdString(), x);
        double got = b.as<float>()[k];
        // Relative error, with the smallest normal float as the floor (results there flush).
        double err = std::abs(got - want) / std::max(std::abs(want), double(std::numeric_limits<float>::min()));
        if (!(err <= worst)) {
          worst = err;
          worstX = float(x);
        }
      }
      qInfo("%s: max relative error %.3g at x = %.9g over [%g, %g]", f->name.c_str(), worst, worstX, lo, hi);
      QVERIFY2(worst <= tolerance, qPrintable(QString("%1 error %2 at %3").arg(f->name.c_str()).arg(worst).arg(worstX)));
    }
  }

  void float32SpecialValues() {
    const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
    std::vector<float> xs = {inf, -inf, nan, 0.0f, -0.0f, 100.0f, -100.0f, 89.0f, -88.0f, 1e-30f};
    int n = 16;
    for (const char* op : {"exp", "tanh", "sigmoid", "erf"}) {
      PrimFunc f = unaryFunc(op, DataType::Float(32), n, 16);
      runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
      NDArray a = NDArray::empty({n}, runtime::DType::f32()), b = NDArray::empty({n}, runtime::DType::f32());
      for (int k = 0; k < n; ++k) a.as<float>()[k] = xs[size_t(k) % xs.size()];
      fn(a, b);
      for (size_t k = 0; k < xs.size(); ++k) {
        double x = xs[k], got = b.as<float>()[k];
        double want = double(float(reference(op, x)));  // what float32 can hold (inf past FLT_MAX)
        if (std::isnan(want)) {
          QVERIFY2(std::isnan(got), qPrintable(QString("%1(%2) = %3").arg(op).arg(x).arg(got)));
          continue;
        }
        double floor = double(std::numeric_limits<float>::min());
        bool ok = got == want || std::abs(got - want) <= 1e-6 * std::abs(want) ||
                  (std::abs(want) < floor && std::abs(got) < floor);
        QVERIFY2(ok, qPrintable(QString("%1(%2) = %3, expected %4").arg(op).arg(x).arg(got).arg(want)));
      }
    }
  }

  void sigmoidTakesAReciprocalEstimateOnAvx512() {
    // On AVX-512 a 16-, 8- or 4-lane sigmoid computes 1 / (1 + e) as VRCP14PS and a Newton step
    // (the accuracy test above runs it on AVX-512 hosts); a 16-lane vdivps issues every 5 cycles
    // and was the slowest part of EfficientNet's SiLU epilogues (the model 7.0 -> 6.5 ms on one
    // core with 16-lane elementwise loops). AVX2 keeps the division.
    for (int lanes : {16, 8}) {
      std::vector<PrimFunc> fs = {transform::makePackedAPI(unaryFunc("sigmoid", DataType::Float(32), 64, lanes))};
      const std::string avx512 = codegen::buildLLVM(fs, codegen::Target::parse("llvm -mcpu=znver4")).assembly();
      QVERIFY2(avx512.find("vrcp14ps") != std::string::npos, avx512.c_str());
      QVERIFY2(avx512.find("vdivps") == std::string::npos, avx512.c_str());
      const std::string avx2 = codegen::buildLLVM(fs, codegen::Target::parse("llvm -mcpu=haswell")).assembly();
      QVERIFY2(avx2.find("vdivps") != std::string::npos, avx2.c_str());
      QVERIFY2(avx2.find("rcp") == std::string::npos, avx2.c_str());
    }
  }

  void float64UsesLibm() {
    // float64 goes to libm (and LLVM intrinsics): exact agreement with std:: on the same inputs.
    const int n = 4096;
    for (const char* op : {"exp", "tanh", "erf", "log", "sqrt", "sin", "sigmoid"}) {
      PrimFunc f = unaryFunc(op, DataType::Float(64), n, 4);
      runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
      NDArray a = NDArray::empty({n}, runtime::DType{runtime::DType::Float, 64, 1});
      NDArray b = NDArray::empty({n}, runtime::DType{runtime::DType::Float, 64, 1});
      for (int k = 0; k < n; ++k) a.as<double>()[k] = 0.01 + 30.0 * k / n;
      fn(a, b);
      for (int k = 0; k < n; ++k) {
        double want = reference(op, a.as<double>()[k]), got = b.as<double>()[k];
        QVERIFY2(std::abs(got - want) <= 1e-15 * std::abs(want),
                 qPrintable(QString("%1(%2) = %3, expected %4").arg(op).arg(a.as<double>()[k]).arg(got).arg(want)));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestFastMath)
#include "test_fast_math.moc"
