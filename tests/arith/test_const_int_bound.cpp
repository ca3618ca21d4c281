// ConstIntBound: exact cases per operator, infinities, and soundness on random expressions.
#include <QtTest>

#include "RandomExpr.h"
#include "core/arith/Analyzer.h"
#include "core/arith/ConstIntBound.h"
#include "core/arith/ExprText.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

namespace {
using B = ConstIntBound;
constexpr int64_t kPos = B::kPosInf, kNeg = B::kNegInf;
}  // namespace

class TestConstIntBound : public QObject {
  Q_OBJECT
private slots:
  void perOperator() {
    Var x = makeVar("x"), y = makeVar("y");
    VarBoundMap m{{x, B(-3, 7)}, {y, B(2, 5)}};
    auto b = [&](const Expr& e) { return constIntBound(e, m); };
    QCOMPARE(b(x + y), B(-1, 12));
    QCOMPARE(b(x - y), B(-8, 5));
    QCOMPARE(b(x * y), B(-15, 35));
    QCOMPARE(b(x * -2), B(-14, 6));
    QCOMPARE(b(floordiv(x, 2)), B(-2, 3));
    QCOMPARE(b(truncdiv(x, 2)), B(-1, 3));
    QCOMPARE(b(floordiv(x, y)), B(-2, 3));
    QCOMPARE(b(truncdiv(x, y)), B(-1, 3));
    QCOMPARE(b(floormod(x, 4)), B(0, 3));
    QCOMPARE(b(floormod(y, 8)), B(2, 5));
    QCOMPARE(b(floormod(x, -4)), B(-3, 0));
    QCOMPARE(b(truncmod(x, 4)), B(-3, 3));
    QCOMPARE(b(truncmod(y, 4)), B(0, 3));
    QCOMPARE(b(floormod(x, y)), B(0, 4));
    QCOMPARE(b(min(x, y)), B(-3, 5));
    QCOMPARE(b(max(x, y)), B(2, 7));
    QCOMPARE(b(select(x > 0, y, x)), B(-3, 7));
    QCOMPARE(b(truncmod(y, 7)), B(2, 5));
    QCOMPARE(b(truncmod(0 - y, 7)), B(-5, -2));
    QCOMPARE(b(select(y > 0, y, x)), B(2, 5));  // condition decided by the bounds
    QCOMPARE(b(x < 10), B(1, 1));
    QCOMPARE(b(x < 0), B(0, 1));
    QCOMPARE(b(y > x + 8), B(0, 0));
    QCOMPARE(b(Expr(42)), B(42, 42));
    QCOMPARE(b(cast(DataType::Int(64), x)), B(-3, 7));
    QCOMPARE(b(cast(DataType::Int(8), x * 100)), B(-128, 127));
    QCOMPARE(b(cast(DataType::UInt(8), x)), B(0, 255));
    Var t = makeVar("t");
    QCOMPARE(b(let(t, y * 2, t + 1)), B(5, 11));
  }
  void typeRangesAndInfinity() {
    Var x = makeVar("x"), u = makeVar("u", DataType::UInt(8)), l = makeVar("l", DataType::Int(64));
    QCOMPARE(constIntBound(x), B(-2147483648LL, 2147483647LL));
    QCOMPARE(constIntBound(u), B(0, 255));
    QCOMPARE(constIntBound(l), B());
    QVERIFY(constIntBound(l + 1).isEverything());
    QCOMPARE(constIntBound(l * 0), B(0, 0));
    VarBoundMap m{{l, B(0, kPos)}};
    QCOMPARE(constIntBound(l + 5, m), B(5, kPos));
    QCOMPARE(constIntBound(l * -2, m), B(kNeg, 0));
    QCOMPARE(constIntBound(floormod(l, intImm(DataType::Int(64), 16)), m), B(0, 15));
    QCOMPARE(constIntBound(floordiv(l, intImm(DataType::Int(64), 16)), m), B(0, kPos));
    QCOMPARE(constIntBound(0 - l, m), B(kNeg, 0));
    // Saturation instead of overflow.
    VarBoundMap big{{l, B(INT64_MAX / 2, INT64_MAX / 2 + 10)}};
    QCOMPARE(constIntBound(l * intImm(DataType::Int(64), 4), big).maxValue, kPos);
    QVERIFY(B(1, 0).isEmpty());
    QCOMPARE(B(kNeg, 3).str(), std::string("[-inf, 3]"));
  }
  void divisorTouchingZero() {
    Var x = makeVar("x"), d = makeVar("d");
    VarBoundMap m{{x, B(0, 100)}, {d, B(0, 4)}};  // d == 0 would be undefined: read as [1, 4]
    QCOMPARE(constIntBound(floordiv(x, d), m), B(0, 100));
    QCOMPARE(constIntBound(floormod(x, d), m), B(0, 3));
    VarBoundMap mixed{{x, B(-10, 100)}, {d, B(-4, 4)}};
    B r = constIntBound(floordiv(x, d), mixed);
    QVERIFY(r.contains(-100) && r.contains(100));
    QCOMPARE(constIntBound(truncmod(x, d), mixed), B(-3, 3));
  }
  void unionIntersect() {
    QCOMPARE(unionOf(B(0, 3), B(5, 9)), B(0, 9));
    QCOMPARE(intersect(B(0, 7), B(5, 9)), B(5, 7));
    QVERIFY(intersect(B(0, 3), B(5, 9)).isEmpty());
    QCOMPARE(unionOf(B(1, 0), B(5, 9)), B(5, 9));
  }
  void analyzerBinding() {
    Analyzer a;
    Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k");
    a.bind(i, Range(0, 16));
    a.bind(j, Range(i, 4));
    a.bind(k, i * 2 + 1);
    QCOMPARE(a.constIntBound(i), B(0, 15));
    QCOMPARE(a.constIntBound(j), B(0, 18));
    QCOMPARE(a.constIntBound(k), B(1, 31));
    {
      ConstraintScope s(a, i < 4);
      QCOMPARE(a.constIntBound(i), B(0, 3));
      ConstraintScope s2(a, i >= 2 && 8 > j);
      QCOMPARE(a.constIntBound(i), B(2, 3));
      QCOMPARE(a.constIntBound(j), B(0, 7));
    }
    QCOMPARE(a.constIntBound(i), B(0, 15));
    QCOMPARE(a.constIntBound(j), B(0, 18));
  }
  /// The true value always lies inside the computed bound.
  void randomSoundness() {
    Var x = makeVar("x"), y = makeVar("y"), z = makeVar("z"), w = makeVar("w");
    testing::RandomExprGen gen(1234, {{x, -8, 8}, {y, 0, 15}, {z, -20, -3}, {w, 1, 5}});
    VarBoundMap m;
    for (auto& v : gen.vars()) m[v.var] = B(v.lo, v.hi);
    int checked = 0, exact = 0;
    for (int n = 0; n < 3000; ++n) {
      Expr e = n % 5 == 0 ? gen.boolExpr(int(gen.uniform(2, 5))) : gen.intExpr(int(gen.uniform(2, 6)));
      B bound = constIntBound(e, m);
      QVERIFY2(!bound.isEmpty(), exprText(e).c_str());
      int64_t lo = kPos, hi = kNeg;
      for (int p = 0; p < 40; ++p) {
        auto v = evalInt(e, gen.point());
        if (!v) continue;
        ++checked;
        lo = std::min(lo, *v);
        hi = std::max(hi, *v);
        if (!bound.contains(*v)) {
          QFAIL(qPrintable(QString("value %1 outside %2 for %3")
                               .arg(*v)
                               .arg(QString::fromStdString(bound.str()))
                               .arg(QString::fromStdString(exprText(e)))));
        }
      }
      if (lo == bound.minValue && hi == bound.maxValue) ++exact;
    }
    QVERIFY(checked > 50000);
    QVERIFY(exact > 300);  // bounds are often tight, not just sound
  }
};

QTEST_APPLESS_MAIN(TestConstIntBound)
#include "test_const_int_bound.moc"
