// The integer evaluator: TVM semantics of every operator, wrap-around, undefined cases.
#include <QtTest>

#include "core/arith/Eval.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

class TestEval : public QObject {
  Q_OBJECT
private slots:
  void divisionRounding_data() {
    QTest::addColumn<int>("a");
    QTest::addColumn<int>("b");
    QTest::addColumn<int>("tdiv");
    QTest::addColumn<int>("tmod");
    QTest::addColumn<int>("fdiv");
    QTest::addColumn<int>("fmod");
    QTest::newRow("7/2") << 7 << 2 << 3 << 1 << 3 << 1;
    QTest::newRow("-7/2") << -7 << 2 << -3 << -1 << -4 << 1;
    QTest::newRow("7/-2") << 7 << -2 << -3 << 1 << -4 << -1;
    QTest::newRow("-7/-2") << -7 << -2 << 3 << -1 << 3 << -1;
    QTest::newRow("-8/4") << -8 << 4 << -2 << 0 << -2 << 0;
    QTest::newRow("0/-3") << 0 << -3 << 0 << 0 << 0 << 0;
    QTest::newRow("-1/5") << -1 << 5 << 0 << -1 << -1 << 4;
    QTest::newRow("1/-5") << 1 << -5 << 0 << 1 << -1 << -4;
  }
  void divisionRounding() {
    QFETCH(int, a);
    QFETCH(int, b);
    QFETCH(int, tdiv);
    QFETCH(int, tmod);
    QFETCH(int, fdiv);
    QFETCH(int, fmod);
    VarValueMap env;
    QCOMPARE(*evalInt(truncdiv(Expr(a), Expr(b)), env), int64_t(tdiv));
    QCOMPARE(*evalInt(truncmod(Expr(a), Expr(b)), env), int64_t(tmod));
    QCOMPARE(*evalInt(floordiv(Expr(a), Expr(b)), env), int64_t(fdiv));
    QCOMPARE(*evalInt(floormod(Expr(a), Expr(b)), env), int64_t(fmod));
    // The identities that define both pairs.
    QCOMPARE(int64_t(tdiv) * b + tmod, int64_t(a));
    QCOMPARE(int64_t(fdiv) * b + fmod, int64_t(a));
  }
  void variablesAndOps() {
    Var x = makeVar("x"), y = makeVar("y");
    VarValueMap env{{x, 5}, {y, -3}};
    QCOMPARE(*evalInt(x + y * 2, env), int64_t(-1));
    QCOMPARE(*evalInt(x - y, env), int64_t(8));
    QCOMPARE(*evalInt(min(x, y), env), int64_t(-3));
    QCOMPARE(*evalInt(max(x, y), env), int64_t(5));
    QCOMPARE(*evalInt(x < y, env), int64_t(0));
    QCOMPARE(*evalInt(x >= y, env), int64_t(1));
    QCOMPARE(*evalInt(eq(x, 5), env), int64_t(1));
    QCOMPARE(*evalInt(ne(x, 5), env), int64_t(0));
    QCOMPARE(*evalInt(x <= 5 && y > -3, env), int64_t(0));
    QCOMPARE(*evalInt(x <= 5 || y > -3, env), int64_t(1));
    QCOMPARE(*evalInt(!(x < y), env), int64_t(1));
    QCOMPARE(*evalInt(select(x > y, x * 10, y), env), int64_t(50));
    Var t = makeVar("t");
    QCOMPARE(*evalInt(let(t, x + 1, t * t), env), int64_t(36));
  }
  void undefinedCases() {
    Var x = makeVar("x"), z = makeVar("z");
    VarValueMap env{{x, 5}};
    QVERIFY(!evalInt(z + 1, env));                      // unbound variable
    QVERIFY(!evalInt(floordiv(x, x - 5), env));         // division by zero
    QVERIFY(!evalInt(truncmod(x, 0), env));
    QVERIFY(!evalInt(select(x > 0, x, floordiv(1, x - 5)), env));  // both branches evaluated
    QCOMPARE(*evalInt(select(x > 0, x, floordiv(1, x - 5)), env, /*strictSelect=*/false), int64_t(5));
    QVERIFY(!evalInt(select(x < 0, x, floordiv(1, x - 5)), env, false));
    QVERIFY(!evalInt(floatImm(DataType::Float(32), 1.0), env));
  }
  void wrapAround() {
    VarValueMap env;
    Expr big = intImm(DataType::Int(32), 2147483647);
    QCOMPARE(*evalInt(big + 1, env), int64_t(-2147483648LL));
    Expr u8 = intImm(DataType::UInt(8), 250);
    QCOMPARE(*evalInt(u8 + intImm(DataType::UInt(8), 10), env), int64_t(4));
    QCOMPARE(*evalInt(cast(DataType::Int(8), Expr(200)), env), int64_t(-56));
    QCOMPARE(*evalInt(cast(DataType::UInt(8), Expr(-1)), env), int64_t(255));
    QCOMPARE(*evalInt(cast(DataType::Bool(), Expr(7)), env), int64_t(1));
    // Unsigned comparison and division use unsigned semantics.
    Expr u32max = intImm(DataType::UInt(32), 4294967295LL);
    QCOMPARE(*evalInt(u32max > intImm(DataType::UInt(32), 1), env), int64_t(1));
    QCOMPARE(*evalInt(floordiv(u32max, intImm(DataType::UInt(32), 2)), env), int64_t(2147483647));
    Expr i64min = intImm(DataType::Int(64), INT64_MIN);
    QCOMPARE(*evalInt(truncdiv(i64min, intImm(DataType::Int(64), -1)), env), INT64_MIN);
    QCOMPARE(*evalInt(floormod(i64min, intImm(DataType::Int(64), -1)), env), int64_t(0));
  }
  void wrapHelper() {
    QCOMPARE(wrapToType(300, DataType::Int(8)), int64_t(44));
    QCOMPARE(wrapToType(-129, DataType::Int(8)), int64_t(127));
    QCOMPARE(wrapToType(-1, DataType::UInt(16)), int64_t(65535));
    QCOMPARE(wrapToType(5, DataType::Bool()), int64_t(1));
    QCOMPARE(wrapToType(-5, DataType::Int(64)), int64_t(-5));
  }
};

QTEST_APPLESS_MAIN(TestEval)
#include "test_eval.moc"
