// Canonical form: like terms, term order, division splitting, comparison normal form, and
// differently written equal index expressions becoming identical.
#include <QtTest>

#include <random>

#include "core/arith/Analyzer.h"
#include "core/arith/Eval.h"
#include "core/arith/ExprOrder.h"
#include "core/arith/ExprText.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

class TestCanonical : public QObject {
  Q_OBJECT
private slots:
  void forms() {
    Analyzer a;
    Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k"), n = makeVar("n");
    auto c = [&](const Expr& e) { return exprText(a.canonicalSimplify(e)); };
    QCOMPARE(c((i * 4 + j) - (j + 4 * i)), std::string("0"));
    QCOMPARE(c(j + i * 4 + 3 + i), std::string("i*5 + j + 3"));
    QCOMPARE(c(3 - k + j - i), std::string("j - i - k + 3"));
    QCOMPARE(c(0 - i - 5), std::string("i*-1 - 5"));
    QCOMPARE(c(2 * (i + j) - i), std::string("i + j*2"));
    QCOMPARE(c((i + 1) * (j + 2)), std::string("i*2 + i*j + j + 2"));
    QCOMPARE(c(i * j * 3 - j * i), std::string("i*j*2"));
    QCOMPARE(c(floordiv(i * 8 + j * 4 + 6, 4)), std::string("i*2 + j + 1"));
    QCOMPARE(c(floordiv(i * 6 + 4, 4)), std::string("i*3//2 + 1"));
    QCOMPARE(c(floormod(i * 6 + 4, 4)), std::string("i%2*2"));
    QCOMPARE(c(floormod(i * 5 + 7, 4)), std::string("(i + 3)%4"));
    QCOMPARE(c(truncdiv(i * 4, 2)), std::string("truncdiv(i*4, 2)"));  // sign of i unknown
    QCOMPARE(c(min(i + j - j, n)), std::string("min(i, n)"));
    QCOMPARE(c(i < j), std::string("i < j"));
    QCOMPARE(c(j > i), std::string("i < j"));
    QCOMPARE(c(i + 3 <= j + 1), std::string("i <= j - 2"));
    QCOMPARE(c(i * 6 < j * 3 + 7), std::string("i*2 < j + 3"));
    QCOMPARE(c(eq(i * 4, j * 2 + 1)), std::string("False"));
    QCOMPARE(c(ne(i * 4, j * 2 + 1)), std::string("True"));
    QCOMPARE(c(eq(i * 4, j * 2 + 2)), std::string("i*2 == j + 1"));
    QCOMPARE(c(eq(i - i, 0)), std::string("True"));
    // Not touched: floats, unsigned, booleans pass through with canonical children.
    Var f = makeVar("f", DataType::Float(32));
    QCOMPARE(c(f + f), std::string("f + f"));
    Var u = makeVar("u", DataType::UInt(32));
    QCOMPARE(c(u - u), std::string("u - u"));
  }
  void narrowTypesWrapUnderDivisionAndModulo() {
    // fuzz_difftest TIR seed 100432: ((d - t) * m) % 5 in int8 became (t*m*4 + d*m) % 5, equal
    // only when d - t and the products do not wrap. int8/int16 sums keep their + - * forms but
    // division, modulo and comparisons of them are left as written; evaluated with wrap-around
    // (as the program, the interpreter and the compiled code do) the result must not change.
    Analyzer a;
    std::mt19937 rng(100432);
    for (DataType t : {DataType::Int(8), DataType::Int(16)}) {
      Var d = makeVar("d", t), u = makeVar("t", t), m = makeVar("m", t);
      auto k = [&](int64_t v) { return intImm(t, v); };
      std::vector<Expr> exprs = {floormod((d - u) * m, k(5)), floordiv(d * k(3) - u, k(7)), truncmod(d + u * k(9), k(6)),
                                 d + k(1) < u + k(1), d * k(2) <= u * k(2), floormod(d * k(6) + k(4), k(4))};
      for (const Expr& e : exprs) {
        Expr s = a.canonicalSimplify(e);
        int64_t lo = t.bits() == 8 ? -128 : -32768, hi = -lo - 1;
        std::uniform_int_distribution<int64_t> val(lo, hi);
        for (int trial = 0; trial < 3000; ++trial) {
          VarValueMap env{{d, val(rng)}, {u, val(rng)}, {m, val(rng)}};
          auto want = evalInt(e, env), got = evalInt(s, env);
          QVERIFY2(want && got && *want == *got,
                   qPrintable(QString::fromStdString(exprText(e) + " -> " + exprText(s) + " at d=" +
                                                     std::to_string(env[d]) + " t=" + std::to_string(env[u]) +
                                                     " m=" + std::to_string(env[m]))));
        }
      }
    }
    // 32-bit index arithmetic is still taken not to wrap.
    Var i = makeVar("i");
    QCOMPARE(exprText(a.canonicalSimplify(floormod(i * 6 + 4, 4))), std::string("i%2*2"));
  }
  void boundsInsideDivision() {
    Analyzer a;
    Var i = makeVar("i"), j = makeVar("j");
    a.bind(i, Range(0, 8));
    a.bind(j, Range(0, 4));
    auto c = [&](const Expr& e) { return exprText(a.canonicalSimplify(e)); };
    QCOMPARE(c(floordiv(i * 4 + j, 4)), std::string("i"));
    QCOMPARE(c(floormod(i * 4 + j, 4)), std::string("j"));
    QCOMPARE(c(floordiv(j + 5, 4)), std::string("(j + 1)//4 + 1"));
    QCOMPARE(c(truncdiv(i * 4 + j, 4)), std::string("i"));
    QCOMPARE(c(truncmod(i * 4 + j + 8, 4)), std::string("j"));
    QCOMPARE(c(floordiv(i * 2 + 1, 2) * 2 + floormod(i * 2 + 1, 2)), std::string("i*2 + 1"));
  }
  /// The same random affine expression written two ways simplifies to identical trees.
  void differentWritingsMeet() {
    Var v[4] = {makeVar("a"), makeVar("b"), makeVar("c"), makeVar("d")};
    std::mt19937 rng(3);
    auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
    Analyzer an;
    for (int n = 0; n < 500; ++n) {
      int coef[4], k = r(-20, 20);
      for (int& x : coef) x = r(-5, 5);
      // Writing 1: sum in order. Writing 2: shuffled, split and regrouped with parentheses.
      Expr e1 = Expr(k);
      for (int t = 0; t < 4; ++t) e1 = e1 + v[t] * coef[t];
      std::vector<int> order{0, 1, 2, 3};
      std::shuffle(order.begin(), order.end(), rng);
      int split = r(-9, 9);
      Expr e2 = Expr(k - split);
      for (int t : order) {
        int part = r(-3, 3);
        e2 = r(0, 1) ? Expr(v[t] * (coef[t] - part) + e2) + v[t] * part : e2 - (v[t] * (part - coef[t]) - v[t] * part);
      }
      e2 = e2 + split;
      Expr s1 = an.simplify(e1), s2 = an.simplify(e2);
      QVERIFY2(exprEqual(s1, s2), qPrintable(QString::fromStdString(exprText(s1) + " vs " + exprText(s2))));
      QVERIFY2(structuralEqual(s1, s2), structuralDiff(s1, s2).c_str());
      VarValueMap env{{v[0], r(-9, 9)}, {v[1], r(-9, 9)}, {v[2], r(-9, 9)}, {v[3], r(-9, 9)}};
      QCOMPARE(*evalInt(s1, env), *evalInt(e1, env));
      QCOMPARE(*evalInt(s2, env), *evalInt(e2, env));
    }
  }
  void idempotent() {
    Analyzer a;
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    Expr es[] = {i * 4 + j - n, floordiv(i * 3 + j, 4) + floormod(n, 8), min(i, j) * 2 - j, i * j + (i - 1) * (j + 1)};
    for (auto& e : es) {
      Expr once = a.simplify(e);
      QVERIFY2(exprEqual(a.simplify(once), once), exprText(once).c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestCanonical)
#include "test_canonical.moc"
