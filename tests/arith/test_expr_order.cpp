// exprEqual / exprCompare (the term order) and exprText (the infix printer).
#include <QtTest>

#include <algorithm>

#include "RandomExpr.h"
#include "core/arith/ExprOrder.h"
#include "core/arith/ExprText.h"
#include "core/tir/Buffer.h"
#include "core/tir/StructuralEqual.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

class TestExprOrder : public QObject {
  Q_OBJECT
private slots:
  void equality() {
    Var x = makeVar("x"), x2 = makeVar("x"), y = makeVar("y");
    QVERIFY(exprEqual(x + 1, x + 1));
    QVERIFY(!exprEqual(x + 1, x2 + 1));  // same name, different variable
    QVERIFY(!exprEqual(cast(DataType::Int(64), x), cast(DataType::Int(16), x)));
    QVERIFY(!exprEqual(floordiv(x, 2), truncdiv(x, 2)));
    QVERIFY(exprEqual(select(x < y, x, y), select(x < y, x, y)));
    QVERIFY(!exprEqual(floatImm(DataType::Float(32), 0.0), floatImm(DataType::Float(32), -0.0)));
  }
  /// A strict weak order consistent with equality, agreeing with structuralEqual on free vars.
  void totalOrder() {
    Var x = makeVar("x"), y = makeVar("y"), z = makeVar("z");
    testing::RandomExprGen gen(8, {{x, -3, 3}, {y, -3, 3}, {z, -3, 3}});
    std::vector<Expr> es;
    for (int n = 0; n < 300; ++n) es.push_back(gen.intExpr(int(gen.uniform(0, 3))));
    for (size_t i = 0; i < es.size(); i += 7) {
      for (size_t j = 0; j < es.size(); j += 5) {
        int a = exprCompare(es[i], es[j]), b = exprCompare(es[j], es[i]);
        QCOMPARE(a < 0, b > 0);
        QCOMPARE(a == 0, exprEqual(es[i], es[j]));
        QCOMPARE(a == 0, structuralEqual(es[i], es[j]));
      }
    }
    std::sort(es.begin(), es.end(), ExprLess());
    for (size_t i = 1; i < es.size(); ++i) QVERIFY(exprCompare(es[i - 1], es[i]) <= 0);
    // Variables sort first, by name.
    QVERIFY(exprCompare(x, Expr(1)) < 0);
    QVERIFY(exprCompare(x, y) < 0);
    QVERIFY(exprCompare(y, x * 2) < 0);
  }
  /// Loads of different buffers sort by the buffers' names, not by where they live in memory:
  /// the same program must simplify to the same text in every run (fuzz_difftest seed 1230077
  /// lowered to `t0[0] + R0[..]` in some runs and `R0[..] + t0[0]` in others).
  void loadsSortByBufferName() {
    Var i = makeVar("i");
    for (int order = 0; order < 2; ++order) {
      std::vector<Buffer> made;
      for (int k = 0; k < 64; ++k) {  // many, so that heap order disagrees with name order somewhere
        bool first = (k % 2) == order;
        made.push_back(makeBuffer(first ? "A" : "B", DataType::Float(32), {Expr(4)}));
      }
      for (size_t k = 0; k + 1 < made.size(); ++k) {
        const Buffer& a = made[k]->name == "A" ? made[k] : made[k + 1];
        const Buffer& b = made[k]->name == "A" ? made[k + 1] : made[k];
        QVERIFY(exprCompare(bufferLoad(a, {i}), bufferLoad(b, {i})) < 0);
        QVERIFY(exprCompare(bufferLoad(b, {i}), bufferLoad(a, {i})) > 0);
      }
    }
    // Same name: the indices decide before the identity.
    Buffer t1 = makeBuffer("t", DataType::Float(32), {Expr(4)}), t2 = makeBuffer("t", DataType::Float(32), {Expr(4)});
    QVERIFY(exprCompare(bufferLoad(t1, {Expr(1)}), bufferLoad(t2, {Expr(2)})) < 0);
    QVERIFY(exprCompare(bufferLoad(t2, {Expr(1)}), bufferLoad(t1, {Expr(2)})) < 0);
    QVERIFY(exprCompare(bufferLoad(t1, {Expr(1)}), bufferLoad(t2, {Expr(1)})) != 0);
  }
  void text() {
    Var x = makeVar("x"), y = makeVar("y"), z = makeVar("z");
    QCOMPARE(exprText(x + y * 2), std::string("x + y*2"));
    QCOMPARE(exprText((x + y) * 2), std::string("(x + y)*2"));
    QCOMPARE(exprText(x - (y - z)), std::string("x - (y - z)"));
    QCOMPARE(exprText((x - y) - z), std::string("x - y - z"));
    QCOMPARE(exprText(floordiv(x + 1, 4)), std::string("(x + 1)//4"));
    QCOMPARE(exprText(floormod(x, 4) * 2), std::string("x%4*2"));
    QCOMPARE(exprText(x * floordiv(y, 2)), std::string("x*(y//2)"));
    QCOMPARE(exprText(truncdiv(x, 2) + min(y, 3)), std::string("truncdiv(x, 2) + min(y, 3)"));
    QCOMPARE(exprText(x < y && (y < z || eq(x, z))), std::string("x < y and (y < z or x == z)"));
    QCOMPARE(exprText(!(x < y)), std::string("not (x < y)"));
    QCOMPARE(exprText(x + -3), std::string("x + -3"));
    QCOMPARE(exprText(cast(DataType::Int(64), x)), std::string("int64(x)"));
    QCOMPARE(exprText(boolImm(true)), std::string("True"));
    Buffer a = makeBuffer("A", DataType::Float(32), {Expr(4), Expr(4)});
    QCOMPARE(exprText(bufferLoad(a, {x, y + 1})), std::string("A[x, y + 1]"));
  }
};

QTEST_APPLESS_MAIN(TestExprOrder)
#include "test_expr_order.moc"
