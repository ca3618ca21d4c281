// IntSet: loop-nest regions, symbolic ends, union / intersection, and random soundness.
#include <QtTest>

#include "RandomExpr.h"
#include "core/arith/Analyzer.h"
#include "core/arith/ExprText.h"
#include "core/arith/IntSet.h"
#include "core/support/Error.h"
#include "core/tir/Buffer.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

namespace {
std::string text(const IntSet& s) {
  if (s.empty) return "{}";
  return "[" + (s.minValue.defined() ? exprText(s.minValue) : std::string("-inf")) + ", " +
         (s.maxValue.defined() ? exprText(s.maxValue) : std::string("+inf")) + "]";
}
IntSetMap doms(std::initializer_list<std::pair<Var, Range>> l) {
  IntSetMap m;
  for (auto& [v, r] : l) m[v] = IntSet::fromRange(r);
  return m;
}
}  // namespace

class TestIntSet : public QObject {
  Q_OBJECT
private slots:
  void loopNestRegion() {
    Var i = makeVar("i"), ii = makeVar("ii");
    IntSetMap dom = doms({{i, Range(0, 8)}, {ii, Range(0, 4)}});
    QCOMPARE(text(evalSet(i * 4 + ii, dom)), std::string("[0, 31]"));
    auto region = evalRegion({i * 4 + ii, ii}, dom);
    QCOMPARE(region.size(), size_t(2));
    QCOMPARE(exprText(region[0].min), std::string("0"));
    QCOMPARE(exprText(region[0].extent), std::string("32"));
    QCOMPARE(exprText(region[1].extent), std::string("4"));
    // A fixed outer index: only ii varies.
    IntSetMap inner = doms({{ii, Range(0, 4)}});
    auto r2 = evalRegion({i * 4 + ii}, inner);
    QCOMPARE(exprText(r2[0].min), std::string("i*4"));
    QCOMPARE(exprText(r2[0].extent), std::string("4"));
  }
  void table_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("expected");
    const char* rows[] = {"[0, 31]", "[-7, 0]", "[-3, 14]", "[0, 1]", "[0, 3]", "[0, 7]", "[0, 3]", "[2, 9]",
                          "[-14, 0]", "[0, 15]", "[0, 2]", "[n, n + 7]", "[n*2, n*2 + 14]", "[0, n - 1]",
                          "[i, i + 3]", "[0, 7]", "[-inf, +inf]", "[0, 5]", "[4, 8]", "[0, 21]"};
    for (int k = 0; k < int(std::size(rows)); ++k) QTest::newRow(qPrintable(QString::number(k))) << k << rows[k];
  }
  void table() {
    QFETCH(int, which);
    QFETCH(QString, expected);
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n"), m = makeVar("m"), t = makeVar("t");
    IntSetMap dom = doms({{i, Range(0, 8)}, {j, Range(0, 4)}});
    dom[t] = IntSet::interval(0, n - 1);
    Expr exprs[] = {i * 4 + j,
                    0 - i,
                    i * 2 - j,
                    floordiv(i, 4),
                    floormod(i, 4),
                    floormod(i + j * 8, 8),
                    floormod(i * 4 + j, 4),
                    max(i, 2) + min(j, 2),
                    i * -2,
                    truncdiv(i * 4 + j, 2),
                    truncmod(j, 3),
                    n + i,
                    (n + i) * 2,
                    t,
                    i - i + j + i,  // simplified before evaluation: [i..] has i fixed? no: i varies
                    select(i < 4, i, j),
                    m,
                    min(i, j + 2),
                    floordiv(i, 4) * 4 + 4,
                    i * j};
    IntSetMap d = dom;
    if (which == 14) d.erase(i);  // j varies, i is a symbol
    if (which == 16) d[m] = IntSet::everything();
    IntSet s = evalSet(exprs[which], d);
    QCOMPARE(QString::fromStdString(text(s)), expected);
  }
  void unionIntersect() {
    Var n = makeVar("n");
    Analyzer a;
    a.bind(n, Range(0, 100));
    IntSet u = unionSets(IntSet::interval(0, 3), IntSet::interval(2, 9), &a);
    QCOMPARE(text(u), std::string("[0, 9]"));
    IntSet s = intersectSets(IntSet::interval(0, 7), IntSet::interval(5, 9), &a);
    QCOMPARE(text(s), std::string("[5, 7]"));
    QVERIFY(intersectSets(IntSet::interval(0, 3), IntSet::interval(5, 9), &a).empty);
    QCOMPARE(text(unionSets(IntSet::interval(n, n + 3), IntSet::interval(n + 1, n + 8), &a)), std::string("[n, n + 8]"));
    QCOMPARE(text(unionSets(IntSet::nothing(), IntSet::point(n))), std::string("[n, n]"));
    QCOMPARE(text(unionSets(IntSet::interval(Expr(), 3), IntSet::interval(0, 9))), std::string("[-inf, 9]"));
    QCOMPARE(text(intersectSets(IntSet::interval(Expr(), 3), IntSet::interval(0, Expr()))), std::string("[0, 3]"));
    QVERIFY(IntSet::everything().isEverything());
    QVERIFY(IntSet::point(n).isSinglePoint());
  }
  void coverRange() {
    Var n = makeVar("n");
    Range r = IntSet::interval(n, n + 7).coverRange(Range(0, 100));
    QCOMPARE(exprText(r.min), std::string("n"));
    QCOMPARE(exprText(r.extent), std::string("8"));
    Range full = IntSet::interval(0, Expr()).coverRange(Range(0, 100));
    QCOMPARE(exprText(full.extent), std::string("100"));
    QCOMPARE(exprText(IntSet::point(n).coverRange(Range(0, 1)).extent), std::string("1"));
    QCOMPARE(exprText(IntSet::nothing().coverRange(Range(0, 5)).extent), std::string("0"));
  }
  void unboundedRegion() {
    Var i = makeVar("i"), m = makeVar("m");
    IntSetMap dom = doms({{i, Range(0, 8)}});
    dom[m] = IntSet::interval(0, Expr());
    bool threw = false;
    try {
      evalRegion({i + m}, dom);
    } catch (const ValueError& e) {
      threw = true;
      QVERIFY(std::string(e.what()).find("i + m") != std::string::npos);
    }
    QVERIFY(threw);
    std::vector<Expr> shape = {Expr(64)};
    auto r = evalRegion({i + m}, dom, nullptr, &shape);
    QCOMPARE(exprText(r[0].min), std::string("0"));
    QCOMPARE(exprText(r[0].extent), std::string("64"));
  }
  /// Every sampled value lies inside the evaluated set (all ends constant here).
  void randomSoundness() {
    Var x = makeVar("x"), y = makeVar("y"), z = makeVar("z"), w = makeVar("w");
    testing::RandomExprGen gen(31337, {{x, -8, 8}, {y, 0, 15}, {z, -20, -3}, {w, 1, 5}});
    IntSetMap dom;
    for (auto& v : gen.vars()) dom[v.var] = IntSet::interval(int(v.lo), int(v.hi));
    Analyzer a;
    int checked = 0, bounded = 0;
    for (int n = 0; n < 1500; ++n) {
      Expr e = gen.intExpr(int(gen.uniform(2, 5)));
      IntSet s = evalSet(e, dom, &a);
      QVERIFY(!s.empty);
      // Ends are constants, except for expressions free of the domain variables (a point).
      VarValueMap none;
      auto lo = s.minValue.defined() ? evalInt(s.minValue, none) : std::nullopt;
      auto hi = s.maxValue.defined() ? evalInt(s.maxValue, none) : std::nullopt;
      if (s.minValue.defined() && asConstInt(s.minValue) && s.maxValue.defined() && asConstInt(s.maxValue)) ++bounded;
      for (int p = 0; p < 40; ++p) {
        auto v = evalInt(e, gen.point());
        if (!v) continue;
        ++checked;
        if ((lo && *v < *lo) || (hi && *v > *hi))
          QFAIL(qPrintable(QString("%1 outside %2 for %3").arg(*v).arg(QString::fromStdString(text(s)),
                                                                       QString::fromStdString(exprText(e)))));
      }
    }
    QVERIFY(checked > 30000);
    QVERIFY(bounded > 1400);
  }
  /// Symbolic domains: sets over [0, n) checked by picking n and sampling.
  void randomSymbolic() {
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    Analyzer a;
    a.bind(n, Range(1, 20));
    IntSetMap dom;
    dom[i] = IntSet::interval(0, n - 1);
    dom[j] = IntSet::interval(0, 3);
    testing::RandomExprGen gen(99, {{i, 0, 0}, {j, 0, 3}});
    std::mt19937 rng(5);
    int checked = 0;
    for (int k = 0; k < 400; ++k) {
      // Affine-ish index expressions: c1*i + c2*j + c3 with floordiv / floormod by constants.
      int c1 = int(gen.uniform(-4, 4)), c2 = int(gen.uniform(-4, 4)), c3 = int(gen.uniform(-9, 9));
      Expr e = i * c1 + j * c2 + c3;
      if (k % 3 == 1) e = floordiv(e, int(gen.uniform(1, 5)));
      if (k % 3 == 2) e = floormod(e, int(gen.uniform(1, 5)));
      IntSet s = evalSet(e, dom, &a);
      for (int p = 0; p < 30; ++p) {
        int64_t nv = std::uniform_int_distribution<int64_t>(1, 20)(rng);
        VarValueMap env{{n, nv}, {i, std::uniform_int_distribution<int64_t>(0, nv - 1)(rng)},
                        {j, std::uniform_int_distribution<int64_t>(0, 3)(rng)}};
        auto v = evalInt(e, env);
        QVERIFY(v.has_value());
        if (s.minValue.defined()) QVERIFY2(*evalInt(s.minValue, env) <= *v, qPrintable(QString::fromStdString(exprText(e) + " " + text(s))));
        if (s.maxValue.defined()) QVERIFY2(*evalInt(s.maxValue, env) >= *v, qPrintable(QString::fromStdString(exprText(e) + " " + text(s))));
        ++checked;
      }
    }
    QVERIFY(checked == 12000);
  }
};

QTEST_APPLESS_MAIN(TestIntSet)
#include "test_int_set.moc"
