// Random integer expressions: simplification preserves values, canProve never lies.
#include <QtTest>

#include "RandomExpr.h"
#include "core/arith/Analyzer.h"
#include "core/arith/ExprText.h"
#include "core/tir/Visitor.h"

#include <functional>
#include <random>

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

namespace {

struct Setup {
  Var x = makeVar("x"), y = makeVar("y"), z = makeVar("z"), w = makeVar("w");
  std::vector<testing::BoundedVar> vars() { return {{x, -8, 8}, {y, 0, 15}, {z, -20, -3}, {w, 1, 5}}; }
  void bindAll(Analyzer& a) {
    for (auto& v : vars()) a.bind(v.var, Range(int(v.lo), int(v.hi - v.lo + 1)));
  }
};

size_t nodeCount(const Expr& e) {
  size_t n = 0;
  postOrderVisit(e, [&](const IRNode*) { ++n; });
  return n;
}

}  // namespace

class TestSimplifyRandom : public QObject {
  Q_OBJECT
private slots:
  void simplifyPreservesValues_data() {
    QTest::addColumn<uint32_t>("seed");
    QTest::addColumn<bool>("boolean");
    for (uint32_t s = 1; s <= 4; ++s) {
      QTest::newRow(qPrintable(QString("int seed %1").arg(s))) << s << false;
      QTest::newRow(qPrintable(QString("bool seed %1").arg(s))) << s + 100 << true;
    }
  }
  void simplifyPreservesValues() {
    QFETCH(uint32_t, seed);
    QFETCH(bool, boolean);
    Setup s;
    testing::RandomExprGen gen(seed, s.vars());
    Analyzer a;
    s.bindAll(a);
    size_t before = 0, after = 0;
    int compared = 0;
    for (int n = 0; n < 800; ++n) {
      Expr e = boolean ? gen.boolExpr(int(gen.uniform(2, 5))) : gen.intExpr(int(gen.uniform(4, 6)));
      Expr r = a.simplify(e);
      QCOMPARE(r.dtype(), e.dtype());
      before += nodeCount(e);
      after += nodeCount(r);
      for (int p = 0; p < 30; ++p) {
        VarValueMap env = gen.point();
        auto want = evalInt(e, env);
        if (!want) continue;
        auto got = evalInt(r, env, /*strictSelect=*/false);
        ++compared;
        if (!got || *got != *want) {
          QString msg = QString("%1\n  simplified to %2\n  at x=%3 y=%4 z=%5 w=%6: %7 vs %8")
                            .arg(QString::fromStdString(exprText(e)), QString::fromStdString(exprText(r)))
                            .arg(env[s.x]).arg(env[s.y]).arg(env[s.z]).arg(env[s.w])
                            .arg(*want).arg(got ? QString::number(*got) : QString("undefined"));
          QFAIL(qPrintable(msg));
        }
      }
    }
    QVERIFY(compared > 10000);
    QVERIFY2(after * 10 < before * 8, qPrintable(QString("%1 -> %2 nodes").arg(before).arg(after)));
  }

  /// int64 variables (constants widen, mixed-width leaves add casts) and variables the
  /// analyzer knows nothing about.
  void simplifyInt64AndUnbound() {
    DataType t = DataType::Int(64);
    Var x = makeVar("x", t), y = makeVar("y", t), z = makeVar("z"), w = makeVar("w", t);
    testing::RandomExprGen gen(555, {{x, -100, 100}, {y, 0, 15}, {z, -20, -3}, {w, -3, 40}});
    Analyzer a;
    a.bind(y, Range(intImm(t, 0), intImm(t, 16)));  // x, z and w stay unbounded for the analyzer
    int compared = 0;
    for (int n = 0; n < 1500; ++n) {
      Expr e = n % 4 == 0 ? gen.boolExpr(int(gen.uniform(2, 4))) : gen.intExpr(int(gen.uniform(3, 6)));
      Expr r = a.simplify(e);
      QCOMPARE(r.dtype(), e.dtype());
      for (int p = 0; p < 20; ++p) {
        VarValueMap env = gen.point();
        auto want = evalInt(e, env);
        if (!want) continue;
        auto got = evalInt(r, env, /*strictSelect=*/false);
        ++compared;
        if (!got || *got != *want)
          QFAIL(qPrintable(QString::fromStdString(exprText(e) + "\n  -> " + exprText(r))));
      }
    }
    QVERIFY(compared > 20000);
  }

  /// Index-like expressions (split / fuse factors) over loop ranges [0, extent): simplify,
  /// constIntBound and evalSet agree with evaluation.
  void indexExpressions() {
    int compared = 0;
    for (int seed = 1; seed <= 8; ++seed) {
      std::mt19937 rng{uint32_t(seed)};
      auto r = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
      std::vector<Var> vs{makeVar("i"), makeVar("j"), makeVar("k"), makeVar("l")};
      std::vector<int> ext{r(1, 16), r(1, 8), r(1, 32), r(1, 4)};
      Analyzer a;
      IntSetMap dom;
      for (size_t t = 0; t < vs.size(); ++t) {
        a.bind(vs[t], Range(0, ext[t]));
        dom[vs[t]] = IntSet::interval(0, ext[t] - 1);
      }
      const int factors[] = {1, 2, 3, 4, 8, 16, 32, 6, 12};
      std::function<Expr(int)> gen = [&](int d) -> Expr {
        if (d == 0) return r(0, 4) ? Expr(vs[size_t(r(0, 3))]) : Expr(r(0, 40));
        switch (r(0, 7)) {
        case 0:
        case 1: return gen(d - 1) + gen(d - 1);
        case 2: return gen(d - 1) * factors[r(0, 8)];
        case 3: return floordiv(gen(d - 1), factors[r(0, 8)]);
        case 4: return floormod(gen(d - 1), factors[r(0, 8)]);
        case 5: return gen(d - 1) - gen(d - 1);
        case 6: return truncdiv(gen(d - 1), factors[r(0, 8)]);
        default: return truncmod(gen(d - 1), factors[r(0, 8)]);
        }
      };
      for (int n = 0; n < 250; ++n) {
        Expr e = gen(r(2, 6));
        Expr simple = a.simplify(e);
        ConstIntBound bound = a.constIntBound(e);
        IntSet set = evalSet(e, dom, &a);
        QVERIFY(set.minValue.defined() && set.maxValue.defined());
        VarValueMap none;
        int64_t lo = *evalInt(set.minValue, none), hi = *evalInt(set.maxValue, none);
        for (int p = 0; p < 30; ++p) {
          VarValueMap env;
          for (size_t t = 0; t < vs.size(); ++t) env[vs[t]] = r(0, ext[t] - 1);
          int64_t want = *evalInt(e, env);
          auto got = evalInt(simple, env);
          ++compared;
          if (!got || *got != want || !bound.contains(want) || want < lo || want > hi)
            QFAIL(qPrintable(QString::fromStdString(exprText(e) + " -> " + exprText(simple) + " bound " + bound.str() +
                                                    " set [" + std::to_string(lo) + ", " + std::to_string(hi) + "]")));
        }
      }
    }
    QVERIFY(compared == 8 * 250 * 30);
  }

  /// canProve(c) must mean c holds at every sampled point; proofs happen often enough to matter.
  void canProveNeverLies() {
    Setup s;
    testing::RandomExprGen gen(77, s.vars());
    Analyzer a;
    s.bindAll(a);
    int proved = 0, refuted = 0;
    for (int n = 0; n < 4000; ++n) {
      Expr c = gen.boolExpr(int(gen.uniform(1, 4)));
      bool yes = a.canProve(c);
      bool no = a.canProve(!c);
      QVERIFY2(!(yes && no), qPrintable(QString::fromStdString(exprText(c))));
      if (!yes && !no) continue;
      (yes ? proved : refuted)++;
      for (int p = 0; p < 60; ++p) {
        auto v = evalInt(c, gen.point());
        if (!v) continue;
        if ((*v != 0) != yes)
          QFAIL(qPrintable(QString("claimed %1 always %2").arg(QString::fromStdString(exprText(c))).arg(yes)));
      }
    }
    QVERIFY(proved > 100);
    QVERIFY(refuted > 100);
  }

  /// Under a random constraint, simplification stays valid at every point satisfying it.
  void simplifyUnderConstraint() {
    Setup s;
    testing::RandomExprGen gen(4242, s.vars());
    Analyzer a;
    s.bindAll(a);
    int compared = 0;
    for (int n = 0; n < 600; ++n) {
      Expr cond = gen.boolExpr(2);
      Expr e = gen.intExpr(int(gen.uniform(3, 5)));
      Expr r;
      {
        ConstraintScope scope(a, cond);
        r = a.simplify(e);
      }
      for (int p = 0; p < 40; ++p) {
        VarValueMap env = gen.point();
        auto holds = evalInt(cond, env);
        if (!holds || !*holds) continue;
        auto want = evalInt(e, env);
        if (!want) continue;
        auto got = evalInt(r, env, /*strictSelect=*/false);
        ++compared;
        if (!got || *got != *want)
          QFAIL(qPrintable(QString("under %1: %2 -> %3")
                               .arg(QString::fromStdString(exprText(cond)), QString::fromStdString(exprText(e)),
                                    QString::fromStdString(exprText(r)))));
      }
    }
    QVERIFY(compared > 3000);
  }
};

QTEST_APPLESS_MAIN(TestSimplifyRandom)
#include "test_simplify_random.moc"
