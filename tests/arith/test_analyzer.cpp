// The Analyzer facade: binding, constraint scopes, proofs, equality and sets under knowledge.
#include <QtTest>

#include "core/arith/Analyzer.h"
#include "core/arith/ExprText.h"
#include "core/tir/Op.h"
#include "core/tir/Printer.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

class TestAnalyzer : public QObject {
  Q_OBJECT
private slots:
  void bindRange() {
    Analyzer a;
    Var i = makeVar("i"), n = makeVar("n");
    a.bind(i, Range(0, 16));
    QVERIFY(a.canProve(i < 16));
    QVERIFY(a.canProve(i >= 0));
    QVERIFY(!a.canProve(i < 15));
    QVERIFY(!a.canProve(i > 0));
    QVERIFY(a.canProve(floordiv(i, 4) < 4));
    QVERIFY(a.canProve(floormod(i, 4) * 4 + floordiv(i, 4) < 16));
    QVERIFY(!a.canProve(n < 16));
    QVERIFY(a.canProveGreaterEqual(i * 2, 0));
    QVERIFY(a.canProveLess(i, 16));
    QVERIFY(!a.canProveLess(i, 15));
    // Extent 1 binds the value.
    Var u = makeVar("u");
    a.bind(u, Range(5, 1));
    QCOMPARE(exprText(a.simplify(u + 1)), std::string("6"));
  }
  void tileRoundingIsBounded() {
    // A symbolic extent rounded up to whole tiles covers it, rounded down stays within it: the
    // region of a register tile over a dynamic width is then the whole width (reverse_compute_at).
    Analyzer a;
    Var w = makeVar("w");
    QVERIFY(a.canProve(floordiv(w + 2, 3) * 3 >= w));
    QVERIFY(a.canProve(3 * floordiv(w + 3, 4) + floordiv(w + 3, 4) >= w));
    QVERIFY(a.canProve(floordiv(w, 3) * 3 <= w));
    QVERIFY(!a.canProve(floordiv(w, 3) * 3 >= w));
    QVERIFY(!a.canProve(floordiv(w + 2, 3) * 3 <= w));
  }
  void bindValue() {
    Analyzer a;
    Var i = makeVar("i"), j = makeVar("j"), v = makeVar("v");
    a.bind(i, Range(0, 8));
    a.bind(j, Range(0, 4));
    a.bind(v, i * 4 + j);
    QCOMPARE(exprText(a.simplify(floordiv(v, 4))), std::string("i"));
    QCOMPARE(exprText(a.simplify(floormod(v, 4))), std::string("j"));
    QVERIFY(a.canProve(v < 32));
    QCOMPARE(a.constIntBound(v), ConstIntBound(0, 31));
  }
  void selectConditionSparesLoadIndices() {
    // A select evaluates both branches (vectorized, its loads read every lane), so its condition
    // may simplify a branch's value but not the index of a branch's load: `A[min(c, 1)]` under
    // `c < 2` lost its clamp and the discarded lanes read outside A (ShuffleNet's channel shuffle).
    Analyzer a;
    Var c = makeVar("c");
    a.bind(c, Range(0, 5));
    Buffer A = makeBuffer("A", DataType::Float(32), {Expr(2)}), B = makeBuffer("B", DataType::Float(32), {Expr(3)});
    std::string got = printExpr(a.simplify(select(c < 2, bufferLoad(A, {min(c, 1)}), bufferLoad(B, {max(c - 2, 0)}))));
    QVERIFY2(got.find("T.min(c, 1)") != std::string::npos && got.find("T.max(c - 2, 0)") != std::string::npos,
             got.c_str());
    // The values themselves still use the condition, and a clamp true without it still goes.
    QCOMPARE(exprText(a.simplify(select(c < 2, min(c, 1), max(c - 2, 0)))), std::string("select(c < 2, c, c - 2)"));
    got = printExpr(a.simplify(select(c < 2, bufferLoad(B, {min(c, 7)}), 0.0f)));
    QVERIFY2(got.find("B[c]") != std::string::npos, got.c_str());
  }
  void constraintScope() {
    Analyzer a;
    Var i = makeVar("i"), n = makeVar("n"), b = makeVar("b", DataType::Bool());
    a.bind(i, Range(0, 64));
    QVERIFY(!a.canProve(i < 10));
    {
      ConstraintScope s(a, i < 10);
      QVERIFY(a.canProve(i < 10));
      QVERIFY(a.canProve(i * 2 < 20));
      QVERIFY(a.canProve(!(i >= 10)));
      QCOMPARE(exprText(a.simplify(select(i < 10, i, 0))), std::string("i"));
      QCOMPARE(exprText(a.simplify(min(i, 12))), std::string("i"));
    }
    QVERIFY(!a.canProve(i < 10));
    {
      // A symbolic fact: known literally, and its negation known false.
      ConstraintScope s(a, i < n);
      QVERIFY(a.canProve(i < n));
      QCOMPARE(exprText(a.simplify(i >= n)), std::string("False"));
      QCOMPARE(exprText(a.simplify(select(i < n, i, n))), std::string("i"));
    }
    QVERIFY(!a.canProve(i < n));
    {
      ConstraintScope s(a, b);
      QVERIFY(a.canProve(b));
      QCOMPARE(exprText(a.simplify(select(b, i, 3))), std::string("i"));
    }
    QVERIFY(!a.canProve(b));
    {
      // Nested scopes restore in order; conjunctions split.
      ConstraintScope s1(a, i >= 8 && i < 16);
      QCOMPARE(a.constIntBound(i), ConstIntBound(8, 15));
      {
        ConstraintScope s2(a, eq(i, 9));
        QCOMPARE(exprText(a.simplify(i * 2)), std::string("18"));
      }
      QCOMPARE(a.constIntBound(i), ConstIntBound(8, 15));
      QCOMPARE(exprText(a.simplify(floordiv(i, 8))), std::string("1"));
    }
    QCOMPARE(a.constIntBound(i), ConstIntBound(0, 63));
  }
  void linearFacts() {
    // A fact bounds every expression differing from it by a constant, whatever the writing.
    Analyzer a;
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    a.bind(i, Range(0, 100));
    a.bind(j, Range(0, 4));
    ConstraintScope s(a, i * 4 + j < n);
    QVERIFY(a.canProve(j + 4 * i < n));
    QVERIFY(a.canProve(i * 4 + j <= n - 1));
    QVERIFY(a.canProve(i * 4 + j + 3 < n + 5));
    QVERIFY(a.canProve(n > i * 4 + j));
    QVERIFY(a.canProve(!(i * 4 + j >= n)));
    QVERIFY(!a.canProve(i * 4 + j < n - 1));
    QVERIFY(!a.canProve(i * 4 < n - 4));
    QCOMPARE(exprText(a.simplify(select(n - j - i * 4 > 0, i, j))), std::string("i"));
    QCOMPARE(exprText(a.simplify(eq(i * 4 + j, n))), std::string("False"));
    {
      ConstraintScope eqScope(a, eq(n, i * 2 + 1));
      QVERIFY(a.canProve(ne(i * 2, n)));
      QVERIFY(a.canProve(n - i * 2 <= 1));
    }
  }
  void proveEqual() {
    Analyzer a;
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    QVERIFY(a.canProveEqual((i * 4 + j) - (j + 4 * i), 0));
    QVERIFY(a.canProveEqual(i * 4 + j, j + i * 4));
    QVERIFY(a.canProveEqual((i + j) * 2, i * 2 + j * 2));
    QVERIFY(a.canProveEqual(floordiv(n * 8 + 4, 4), n * 2 + 1));
    QVERIFY(!a.canProveEqual(i, j));
    QVERIFY(!a.canProveEqual(floordiv(i, 2) * 2, i));
    a.bind(i, Range(0, 4));
    QVERIFY(a.canProveEqual(floordiv(i, 4), 0));
    QVERIFY(a.canProveEqual(floormod(i, 4), i));
  }
  void intSetUsesKnowledge() {
    Analyzer a;
    Var i = makeVar("i"), n = makeVar("n");
    a.bind(n, Range(1, 64));
    IntSetMap dom;
    dom[i] = IntSet::interval(0, n - 1);
    IntSet s = a.intSet(i * 2 + 1, dom);
    QCOMPARE(exprText(s.minValue), std::string("1"));
    QCOMPARE(exprText(s.maxValue), std::string("n*2 - 1"));
    IntSet m = a.intSet(min(i, n), dom);
    QCOMPARE(exprText(m.maxValue), std::string("n - 1"));
  }
  void letAndCast() {
    Analyzer a;
    Var i = makeVar("i"), t = makeVar("t");
    a.bind(i, Range(0, 8));
    QCOMPARE(exprText(a.simplify(let(t, i * 4, floordiv(t, 4)))), std::string("i"));
    QCOMPARE(exprText(a.simplify(let(t, Expr(3), t + i))), std::string("i + 3"));
    Expr wide = cast(DataType::Int(64), i) * intImm(DataType::Int(64), 2);
    QVERIFY(a.canProve(wide < intImm(DataType::Int(64), 16)));
  }
};

QTEST_APPLESS_MAIN(TestAnalyzer)
#include "test_analyzer.moc"
