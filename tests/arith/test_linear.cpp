// linearize / isQuasiAffine: coefficients, symbolic strides, rejection of non-affine forms.
#include <QtTest>

#include <random>

#include "core/arith/Analyzer.h"
#include "core/arith/Eval.h"
#include "core/arith/ExprText.h"
#include "core/arith/Linear.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

class TestLinear : public QObject {
  Q_OBJECT
private slots:
  void affine() {
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    auto f = linearize(i * 4 + j * 2 + 3, {i, j});
    QVERIFY(f);
    QCOMPARE(*f->constCoeff(0), int64_t(4));
    QCOMPARE(*f->constCoeff(1), int64_t(2));
    QCOMPARE(exprText(f->base), std::string("3"));
    f = linearize((i + 1) * 3 - (j - i) * 2, {i, j});
    QVERIFY(f);
    QCOMPARE(*f->constCoeff(0), int64_t(5));
    QCOMPARE(*f->constCoeff(1), int64_t(-2));
    QCOMPARE(exprText(f->base), std::string("3"));
    // Symbolic stride and offset.
    f = linearize(i * n + j + n * 2, {i, j});
    QVERIFY(f);
    QCOMPARE(exprText(f->coeffs[0]), std::string("n"));
    QVERIFY(!f->constCoeff(0));
    QCOMPARE(*f->constCoeff(1), int64_t(1));
    QCOMPARE(exprText(f->base), std::string("n*2"));
    // A variable that does not occur has coefficient 0.
    f = linearize(j + 7, {i, j});
    QCOMPARE(*f->constCoeff(0), int64_t(0));
    f = linearize(i - i + j, {i, j});
    QCOMPARE(*f->constCoeff(0), int64_t(0));
    // Non-integer or empty-variable cases.
    QVERIFY(linearize(n + 1, {})->base.defined());
    QVERIFY(!linearize(floatImm(DataType::Float(32), 1.0), {i}));
  }
  void notAffine() {
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    QVERIFY(!linearize(i * j, {i, j}));
    QVERIFY(!linearize(floordiv(i, 2), {i}));
    QVERIFY(!linearize(floormod(i + j, 4), {i, j}));
    QVERIFY(!linearize(min(i, 3), {i}));
    QVERIFY(!linearize(select(i < 3, i, 0), {i}));
    QVERIFY(linearize(floordiv(n, 2) + i, {i}));  // division of a symbol is fine
  }
  void quasiAffine() {
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    QVERIFY(isQuasiAffine(i * 4 + j, {i, j}));
    QVERIFY(isQuasiAffine(floordiv(i, 4) * 16 + floormod(j, 4) + n, {i, j}));
    QVERIFY(isQuasiAffine(floordiv(floormod(i * 3 + j, 12), 4), {i, j}));
    QVERIFY(!isQuasiAffine(floordiv(i, n), {i}));
    QVERIFY(!isQuasiAffine(floordiv(i, -2), {i}));
    QVERIFY(!isQuasiAffine(i * j, {i, j}));
    QVERIFY(!isQuasiAffine(truncdiv(i, 2), {i}));
    QVERIFY(!isQuasiAffine(min(i, j), {i, j}));
    QVERIFY(isQuasiAffine(i * n, {i}));
  }
  /// sum(coef * var) + base equals the input at random points.
  void randomRoundTrip() {
    Var a = makeVar("a"), b = makeVar("b"), c = makeVar("c"), s = makeVar("s");
    std::mt19937 rng(17);
    auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    std::vector<Var> vars{a, b, c};
    std::function<Expr(int)> gen = [&](int d) -> Expr {
      if (d == 0) {
        int k = r(0, 4);
        if (k < 3) return vars[size_t(k)];
        return k == 3 ? Expr(r(-5, 5)) : Expr(s);
      }
      switch (r(0, 3)) {
      case 0: return gen(d - 1) + gen(d - 1);
      case 1: return gen(d - 1) - gen(d - 1);
      case 2: return gen(d - 1) * r(-3, 3);
      default: return Expr(s) * gen(d - 1);
      }
    };
    for (int n = 0; n < 500; ++n) {
      Expr e = gen(r(1, 4));
      auto f = linearize(e, vars);
      QVERIFY2(f, exprText(e).c_str());
      for (int p = 0; p < 20; ++p) {
        VarValueMap env{{a, r(-9, 9)}, {b, r(-9, 9)}, {c, r(-9, 9)}, {s, r(-9, 9)}};
        int64_t total = *evalInt(f->base, env);
        for (size_t k = 0; k < vars.size(); ++k) total += *evalInt(f->coeffs[k], env) * env[vars[k]];
        QCOMPARE(total, *evalInt(e, env));
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestLinear)
#include "test_linear.moc"
