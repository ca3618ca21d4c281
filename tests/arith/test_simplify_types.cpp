// Constant folding and rules across types: int widths wrap like C, floats fold only exactly,
// unsigned rules stay wrap-safe, casts fold and round-trip, vectors pass through.
#include <QtTest>

#include <cmath>
#include <random>

#include "core/arith/Analyzer.h"
#include "core/arith/Eval.h"
#include "core/arith/ExprText.h"
#include "core/tir/Buffer.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

namespace {
Expr i8(int64_t v) { return intImm(DataType::Int(8), v); }
Expr u8(int64_t v) { return intImm(DataType::UInt(8), v); }
Expr i64(int64_t v) { return intImm(DataType::Int(64), v); }
Expr f32(double v) { return floatImm(DataType::Float(32), v); }
Expr f64(double v) { return floatImm(DataType::Float(64), v); }
}  // namespace

class TestSimplifyTypes : public QObject {
  Q_OBJECT
private slots:
  void integerWidths() {
    Analyzer a;
    auto s = [&](const Expr& e) { return a.simplify(e); };
    QCOMPARE(*asConstInt(s(i8(100) + i8(100))), int64_t(-56));
    QCOMPARE(s(i8(100) + i8(100)).dtype(), DataType::Int(8));
    QCOMPARE(*asConstInt(s(u8(250) + u8(10))), int64_t(4));
    QCOMPARE(*asConstInt(s(u8(3) - u8(5))), int64_t(254));
    QCOMPARE(*asConstInt(s(Expr(2147483647) + 1)), int64_t(-2147483648LL));
    QCOMPARE(*asConstInt(s(i64(INT64_MAX) * i64(2))), int64_t(-2));
    QCOMPARE(*asConstInt(s(floordiv(i8(-7), i8(2)))), int64_t(-4));
    QCOMPARE(*asConstInt(s(truncmod(i8(-7), i8(2)))), int64_t(-1));
    QCOMPARE(*asConstInt(s(floordiv(u8(200), u8(7)))), int64_t(28));
    QCOMPARE(*asConstInt(s(min(u8(200), u8(7)))), int64_t(7));
    QCOMPARE(*asConstInt(s(u8(200) > u8(7))), int64_t(1));
    // Division by a zero constant is left alone, never folded.
    Expr dz = s(floordiv(Expr(7), Expr(0)));
    QVERIFY(!asConstInt(dz));
    QVERIFY(dz.as<BinaryNode>());
  }
  void narrowSumsWrapUnderTheRewriteRules() {
    // fuzz_difftest TIR seed 127151: (v * t) // 3 * 2 in int8, unrolled to (t * 6) // 3 * 2, became
    // t * 4, right only while t * 6 does not wrap. int8/int16 values wrap in the program, the
    // interpreter and the generated code; the simplifier (rewrite rules, bounds, canonical form)
    // must keep every result, evaluated with wrap-around, on random values, with and without a
    // bound on the variables in scope.
    std::mt19937 rng(127151);
    for (DataType t : {DataType::Int(8), DataType::Int(16)}) {
      Var x = makeVar("x", t), y = makeVar("y", t), z = makeVar("z", t);
      auto k = [&](int64_t v) { return intImm(t, v); };
      const int64_t big = t.bits() == 8 ? 100 : 30000;
      std::vector<Expr> exprs = {
          floordiv(x * k(6), k(3)) * k(2), floordiv(x * k(2), k(4)),      floordiv(x * k(3) + y, k(3)),
          floordiv(x + k(big), k(4)),      floormod(x * k(6), k(3)),      floormod(x * k(4) + y, k(2)),
          truncdiv(x * k(6), k(3)),        truncmod(x * k(6), k(3)),      x + k(big) < k(50),
          k(big) - x >= k(3),              x + k(1) < y + k(1),           max(x + k(1), x),
          min(x + k(big), x + k(1)),       min(x, y) - x,                 min(x, y - z) + z,
          max(x * k(2), y * k(2)) - y * k(2), select(x + k(big) < x, x, y)};
      const int64_t lo = t.bits() == 8 ? -128 : -32768, hi = -lo - 1;
      for (int bounded = 0; bounded < 2; ++bounded) {
        Analyzer a;
        int64_t blo = bounded ? 0 : lo, bhi = bounded ? (t.bits() == 8 ? 30 : 8000) : hi;
        if (bounded)
          for (const Var& v : {x, y, z}) a.bind(v, Range(k(blo), k(bhi - blo + 1)));
        std::uniform_int_distribution<int64_t> val(blo, bhi);
        for (const Expr& e : exprs) {
          Expr s = a.simplify(e);
          for (int trial = 0; trial < 2000; ++trial) {
            VarValueMap env{{x, val(rng)}, {y, val(rng)}, {z, val(rng)}};
            auto want = evalInt(e, env), got = evalInt(s, env);
            QVERIFY2(want && got && *want == *got,
                     qPrintable(QString::fromStdString(exprText(e) + " -> " + exprText(s) + " at x=" +
                                                       std::to_string(env[x]) + " y=" + std::to_string(env[y]) +
                                                       " z=" + std::to_string(env[z]) +
                                                       (bounded ? " (bounded)" : ""))));
          }
        }
      }
    }
    // 32-bit index arithmetic is still taken not to wrap.
    Analyzer a;
    Var i = makeVar("i");
    QCOMPARE(exprText(a.simplify(floordiv(i * 6, 3) * 2)), std::string("i*4"));
    QCOMPARE(exprText(a.simplify(max(i + 1, i))), std::string("i + 1"));
  }
  void unsignedRules() {
    Analyzer a;
    Var u = makeVar("u", DataType::UInt(32)), v = makeVar("v", DataType::UInt(32));
    QCOMPARE(exprText(a.simplify(u + intImm(DataType::UInt(32), 0))), std::string("u"));
    QCOMPARE(exprText(a.simplify(u * intImm(DataType::UInt(32), 1))), std::string("u"));
    QCOMPARE(exprText(a.simplify(u - u)), std::string("0"));
    // Ordering facts that need signed arithmetic are not used for unsigned values.
    QCOMPARE(exprText(a.simplify(u - v < intImm(DataType::UInt(32), 5))), std::string("u - v < 5"));
    QCOMPARE(exprText(a.simplify(min(u, u + intImm(DataType::UInt(32), 1)))), std::string("min(u, u + 1)"));
  }
  void floats() {
    Analyzer a;
    Var f = makeVar("f", DataType::Float(32));
    auto s = [&](const Expr& e) { return a.simplify(e); };
    QCOMPARE(s(f32(1.5) + f32(2.25)).as<FloatImmNode>()->value, 3.75);
    // float32 folding rounds like float32 arithmetic.
    double r = s(f32(0.1) + f32(0.2)).as<FloatImmNode>()->value;
    QCOMPARE(r, double(float(float(0.1) + float(0.2))));
    QCOMPARE(s(f64(0.1) + f64(0.2)).as<FloatImmNode>()->value, 0.1 + 0.2);
    QCOMPARE(s(f32(1.0) / f32(4.0)).as<FloatImmNode>()->value, 0.25);
    QVERIFY(s(f32(1.0) / f32(0.0)).as<BinaryNode>());  // not folded
    QCOMPARE(exprText(s(f * f32(1.0))), std::string("f"));
    QCOMPARE(exprText(s(f - f32(0.0))), std::string("f"));
    QCOMPARE(exprText(s(f / f32(1.0))), std::string("f"));
    // Not exact for every float: -0.0 + 0.0, NaN * 0, NaN - NaN, NaN < NaN.
    QCOMPARE(exprText(s(f + f32(0.0))), std::string("f + 0"));
    QCOMPARE(exprText(s(f * f32(0.0))), std::string("f*0"));
    QCOMPARE(exprText(s(f - f)), std::string("f - f"));
    QCOMPARE(exprText(s(!(f < f32(1.0)))), std::string("not (f < 1)"));
    QCOMPARE(*asConstInt(s(f32(2.0) < f32(3.0))), int64_t(1));
    // float16 immediates are not folded on the host.
    Expr h = floatImm(DataType::Float(16), 1.0) + floatImm(DataType::Float(16), 2.0);
    QVERIFY(s(h).as<BinaryNode>());
  }
  void casts() {
    Analyzer a;
    auto s = [&](const Expr& e) { return a.simplify(e); };
    Var x = makeVar("x"), b8 = makeVar("b8", DataType::Int(8)), l = makeVar("l", DataType::Int(64));
    QCOMPARE(*asConstInt(s(cast(DataType::Int(8), Expr(300)))), int64_t(44));
    QCOMPARE(*asConstInt(s(cast(DataType::UInt(8), Expr(-1)))), int64_t(255));
    QCOMPARE(s(cast(DataType::Float(32), Expr(3))).as<FloatImmNode>()->value, 3.0);
    QVERIFY(s(cast(DataType::Float(32), Expr(16777217))).as<CastNode>());  // not exact in float32
    QCOMPARE(*asConstInt(s(cast(DataType::Int(32), f32(-2.75)))), int64_t(-2));
    QCOMPARE(*asConstInt(s(cast(DataType::Bool(), Expr(5)))), int64_t(1));
    QCOMPARE(exprText(s(cast(DataType::Int(32), cast(DataType::Int(64), x)))), std::string("x"));
    QCOMPARE(exprText(s(cast(DataType::Int(8), cast(DataType::Int(32), b8)))), std::string("b8"));
    // Narrowing round trips change values and stay.
    QCOMPARE(exprText(s(cast(DataType::Int(64), cast(DataType::Int(32), l)))), std::string("int64(int32(l))"));
    QCOMPARE(exprText(s(cast(DataType::Int(32), cast(DataType::UInt(32), x)))), std::string("int32(uint32(x))"));
    // Bounds see through widening casts.
    a.bind(x, Range(0, 10));
    QVERIFY(a.canProve(cast(DataType::Int(64), x) < i64(10)));
  }
  void booleans() {
    Analyzer a;
    Expr p = makeVar("p", DataType::Bool()), q = makeVar("q", DataType::Bool());
    auto s = [&](const Expr& e) { return exprText(a.simplify(e)); };
    QCOMPARE(s(p && boolImm(true)), std::string("p"));
    QCOMPARE(s(boolImm(false) || p), std::string("p"));
    QCOMPARE(s(p && !p), std::string("False"));
    QCOMPARE(s(!!p), std::string("p"));
    QCOMPARE(s(!(p && q)), std::string("not p or not q"));
    QCOMPARE(s(p && (q && p)), std::string("p and q"));
    QCOMPARE(s(select(p, Expr(1), Expr(1))), std::string("1"));
    QCOMPARE(s(select(!p, Expr(1), Expr(2))), std::string("select(p, 2, 1)"));
  }
  void vectorsPassThrough() {
    Analyzer a;
    Var x = makeVar("x");
    Expr r = ramp(x + 0, 1, 4);
    Expr sr = a.simplify(r);
    QCOMPARE(sr.dtype(), DataType::Int(32, 4));
    QCOMPARE(exprText(sr), std::string("ramp(x, 1, 4)"));
    Expr b = broadcast(Expr(2) + 3, 4);
    QCOMPARE(exprText(a.simplify(b)), std::string("broadcast(5, 4)"));
  }
  void otherNodesPassThrough() {
    // Loads, calls and float lets keep their shape; integer parts inside them simplify.
    Analyzer a;
    Var i = makeVar("i"), f = makeVar("f", DataType::Float(32)), t = makeVar("t", DataType::Float(32));
    a.bind(i, Range(0, 8));
    Buffer buf = makeBuffer("A", DataType::Float(32), {Expr(32)});
    QCOMPARE(exprText(a.simplify(bufferLoad(buf, {floordiv(i * 4 + 3, 4) + 0}))), std::string("A[i]"));
    QCOMPARE(exprText(a.simplify(call("exp", {f * f32(1.0)}))), std::string("exp(f)"));
    Expr l = let(t, f + f32(1.0), t * t);
    QCOMPARE(exprText(a.simplify(l)), std::string("let(t = f + 1, t*t)"));
    QCOMPARE(a.simplify(ifThenElse(i < 8, f, f32(0.0))).dtype(), DataType::Float(32));
    QCOMPARE(exprText(a.simplify(stringImm("s"))), std::string("\"s\""));
    // Bounds of opaque integer values are their type's range.
    Buffer ib = makeBuffer("B", DataType::Int(8), {Expr(4)});
    QCOMPARE(a.constIntBound(bufferLoad(ib, {i})), ConstIntBound(-128, 127));
    QVERIFY(a.canProve(bufferLoad(ib, {i}) <= 127));
    QVERIFY(!a.canProve(bufferLoad(ib, {i}) < 127));
  }
  void rewriteOnly() {
    // The rule tables alone, without the canonical pass.
    Analyzer a;
    Var x = makeVar("x"), y = makeVar("y");
    auto rs = [&](const Expr& e) { return exprText(a.rewriteSimplify(e)); };
    QCOMPARE(rs((x + 3) + 4), std::string("x + 7"));
    QCOMPARE(rs(x - 3), std::string("x + -3"));
    QCOMPARE(rs(Expr(3) + x), std::string("x + 3"));
    QCOMPARE(rs(Expr(3) < x), std::string("x > 3"));
    QCOMPARE(rs(x * 2 + x * 3), std::string("x*5"));
    QCOMPARE(rs(floordiv(x * 8 + y, 4)), std::string("x*2 + y//4"));
    QCOMPARE(rs(select(x < y, x, y)), std::string("min(x, y)"));
    QCOMPARE(rs(min(x + 1, x)), std::string("x"));
  }
};

QTEST_APPLESS_MAIN(TestSimplifyTypes)
#include "test_simplify_types.moc"
