// Every built-in intrinsic through the interpreter against std:: functions, for float32 and float64.
#include <QtTest>

#include <cmath>
#include <functional>
#include <map>

#include "Harness.h"
#include "core/tir/Intrinsics.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;
using runtime::NDArray;

namespace {
const DataType f32 = DataType::Float(32), f64 = DataType::Float(64);
using Fn = std::function<double(double, double)>;

/// The reference semantics of each intrinsic, written independently of Intrinsics.cpp.
const std::map<std::string, std::pair<int, Fn>>& references() {
  static const std::map<std::string, std::pair<int, Fn>> m = {
      {"exp", {1, [](double x, double) { return std::exp(x); }}},
      {"exp2", {1, [](double x, double) { return std::exp2(x); }}},
      {"log", {1, [](double x, double) { return std::log(x); }}},
      {"log2", {1, [](double x, double) { return std::log2(x); }}},
      {"log10", {1, [](double x, double) { return std::log10(x); }}},
      {"sqrt", {1, [](double x, double) { return std::sqrt(x); }}},
      {"rsqrt", {1, [](double x, double) { return 1.0 / std::sqrt(x); }}},
      {"tanh", {1, [](double x, double) { return std::tanh(x); }}},
      {"sigmoid", {1, [](double x, double) { return 1.0 / (1.0 + std::exp(-x)); }}},
      {"erf", {1, [](double x, double) { return std::erf(x); }}},
      {"fabs", {1, [](double x, double) { return std::fabs(x); }}},
      {"floor", {1, [](double x, double) { return std::floor(x); }}},
      {"ceil", {1, [](double x, double) { return std::ceil(x); }}},
      {"trunc", {1, [](double x, double) { return std::trunc(x); }}},
      {"round", {1, [](double x, double) { return std::nearbyint(x); }}},
      {"sin", {1, [](double x, double) { return std::sin(x); }}},
      {"cos", {1, [](double x, double) { return std::cos(x); }}},
      {"pow", {2, [](double x, double y) { return std::pow(x, y); }}},
      {"fmod", {2, [](double x, double y) { return std::fmod(x, y); }}},
  };
  return m;
}

bool positiveOnly(const std::string& n) { return n == "log" || n == "log2" || n == "log10" || n == "sqrt" || n == "rsqrt"; }
}  // namespace

class TestIntrinsics : public QObject {
  Q_OBJECT
private slots:
  void everyIntrinsicIsCovered() {
    for (auto& [name, ref] : references()) {
      const Intrinsic* in = findIntrinsic(name);
      QVERIFY2(in, name.c_str());
      QCOMPARE(in->numArgs, ref.first);
    }
    QVERIFY(findIntrinsic("if_then_else"));
  }

  void againstStd() {
    const double inputs[] = {-2.5, -1.0, -0.5, -0.1, 0.0, 0.3, 0.5, 1.0, 1.5, 2.5, 3.7, 10.0};
    int checks = 0;
    for (auto& [name, ref] : references()) {
      for (DataType t : {f32, f64}) {
        Var x = makeVar("x", t), y = makeVar("y", t);
        for (double a : inputs) {
          if (positiveOnly(name) && a <= 0) continue;
          double av = t == f32 ? double(float(a)) : a;
          double bv = t == f32 ? double(float(1.75)) : 1.75;
          std::vector<Expr> args = {x};
          std::vector<Arg> vals = {av};
          if (ref.first == 2) {
            args.push_back(y);
            vals.push_back(bv);
          }
          NDArray r = runExpr(call(t, name, args), ref.first == 2 ? std::vector<Var>{x, y} : std::vector<Var>{x}, vals);
          double want = ref.second(av, bv);
          double got = t == f32 ? double(rawAt<float>(r)) : rawAt<double>(r);
          if (t == f32) want = double(float(want));  // computed in float64, rounded to the result type
          QVERIFY2(got == want || (std::isnan(got) && std::isnan(want)),
                   qPrintable(QString("%1(%2) as %3: got %4 want %5").arg(name.c_str()).arg(av).arg(t.str().c_str())
                                  .arg(got, 0, 'g', 17).arg(want, 0, 'g', 17)));
          ++checks;
        }
      }
    }
    QVERIFY(checks > 300);
  }

  void roundIsHalfToEven() {
    Var x = makeVar("x", f32);
    QCOMPARE(rawAt<float>(runExpr(call("round", {x}), {x}, {2.5})), 2.0f);
    QCOMPARE(rawAt<float>(runExpr(call("round", {x}), {x}, {3.5})), 4.0f);
    QCOMPARE(rawAt<float>(runExpr(call("round", {x}), {x}, {-2.5})), -2.0f);
  }

  void vectorAndHalfIntrinsics() {
    Expr v = call(DataType::Float(32, 4), "exp", {ramp(floatImm(f32, 0), floatImm(f32, 0.5), 4)});
    NDArray r = runExpr(v);
    for (int k = 0; k < 4; ++k) QCOMPARE(rawAt<float>(r, k), float(std::exp(double(float(0.5 * k)))));
    Var h = makeVar("h", DataType::Float(16));
    NDArray rh = runExpr(call("sqrt", {h}), {h}, {2.0});
    QCOMPARE(rawAt<uint16_t>(rh), toHalfBits(std::sqrt(2.0)));
  }

  void ifThenElseEvaluatesOnlyTheTakenBranch() {
    // out[i] = if_then_else(i < 4, A[i], -1) over i < 8 with A of 4 elements: never out of bounds.
    Buffer A = makeBuffer("A", f32, {4}), out = makeBuffer("out", f32, {8});
    Var i = makeVar("i");
    auto prog = [&](Expr value) {
      return makePrimFunc("ite", {A->data, out->data}, {{A->data, A}, {out->data, out}},
                          forLoop(i, 0, 8, ForKind::Serial, bufferStore(out, value, {i})));
    };
    NDArray a = randomArray({4}, 5), o = array({8});
    interpret(prog(ifThenElse(Expr(i) < 4, bufferLoad(A, {i}), floatImm(f32, -1))), {a, o});
    for (int k = 0; k < 8; ++k) QCOMPARE(o.as<float>()[k], k < 4 ? a.as<float>()[k] : -1.0f);
    // Select evaluates both sides, so the same program with select reads out of bounds.
    QString err = runtimeErrorOf([&] {
      interpret(prog(select(Expr(i) < 4, bufferLoad(A, {i}), floatImm(f32, -1))), {a, o});
    });
    QVERIFY2(err.contains("out-of-bounds load") && err.contains("buffer A"), qPrintable(err));
  }

  void registeredIntrinsicsAndVoidCalls() {
    registerIntrinsic(Intrinsic{"test_twice_plus", 2, true, [](const std::vector<double>& a) { return 2 * a[0] + a[1]; }});
    Var x = makeVar("x", DataType::Int(32));
    QCOMPARE(rawAt<int32_t>(runExpr(call("test_twice_plus", {x, Expr(3)}), {x}, {int64_t(20)})), 43);
    // A void call (a barrier) with a string argument is a no-op when run sequentially.
    registerIntrinsic(Intrinsic{"test_barrier", -1, false, [](const std::vector<double>&) { return 0.0; }});
    Buffer out = makeBuffer("out", f32, {1});
    PrimFunc f = makePrimFunc("b", {out->data}, {{out->data, out}},
                              seq({bufferStore(out, floatImm(f32, 1), {0}),
                                   evaluate(call(DataType::Void(), "test_barrier", {stringImm("shared")})),
                                   bufferStore(out, bufferLoad(out, {0}) + floatImm(f32, 1), {0})}));
    NDArray o = array({1});
    interpret(f, {o});
    QCOMPARE(o.as<float>()[0], 2.0f);
  }

  void intrinsicArgumentCount() {
    QString err = runtimeErrorOf([&] { runExpr(call(f32, "exp", {floatImm(f32, 1), floatImm(f32, 2)})); });
    QVERIFY2(err.contains("'exp'") && err.contains("1 arguments"), qPrintable(err));
  }
};

QTEST_APPLESS_MAIN(TestIntrinsics)
#include "test_intrinsics.moc"
