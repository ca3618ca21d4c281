// Interpreter arithmetic per dtype: integer wrapping, C division, casts, float16 / bfloat16 rounding.
#include <QtTest>

#include <cmath>
#include <cstdint>
#include <limits>

#include "Harness.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;
using runtime::NDArray;

namespace {
const DataType i8 = DataType::Int(8), i16 = DataType::Int(16), i32 = DataType::Int(32), i64 = DataType::Int(64);
const DataType u8 = DataType::UInt(8), u32 = DataType::UInt(32), u64 = DataType::UInt(64);
const DataType f16 = DataType::Float(16), bf16 = DataType::BFloat16(), f32 = DataType::Float(32),
               f64 = DataType::Float(64);

/// op(x, y) for scalar params x, y of type t bound to a and b; the raw result as T.
template <class T> T bin(BinOp op, DataType t, int64_t a, int64_t b) {
  Var x = makeVar("x", t), y = makeVar("y", t);
  return rawAt<T>(runExpr(binary(op, x, y), {x, y}, {a, b}));
}
template <class T> T castOf(DataType to, DataType from, Arg v) {
  Var x = makeVar("x", from);
  return rawAt<T>(runExpr(cast(to, x), {x}, {v}));
}
uint16_t bits16(DataType t, double v) { return castOf<uint16_t>(t, f64, v); }
}  // namespace

class TestDtypes : public QObject {
  Q_OBJECT
private slots:
  void int8Wraps() {
    QCOMPARE(int(bin<int8_t>(BinOp::Add, i8, 127, 1)), -128);
    QCOMPARE(int(bin<int8_t>(BinOp::Mul, i8, 100, 3)), 44);
    QCOMPARE(int(bin<int8_t>(BinOp::Sub, i8, -128, 1)), 127);
    QCOMPARE(int(bin<int8_t>(BinOp::Div, i8, -128, -1)), -128);  // 128 wraps
    QCOMPARE(int(bin<int16_t>(BinOp::Mul, i16, 300, 300)), int(int16_t(90000 - 65536 * 1)));
    // A scalar int8 param given an out-of-range value wraps at entry.
    QCOMPARE(int(bin<int8_t>(BinOp::Add, i8, 200, 0)), -56);
  }

  void uint32Wraps() {
    QCOMPARE(bin<uint32_t>(BinOp::Sub, u32, 0, 1), 4294967295u);
    QCOMPARE(bin<uint32_t>(BinOp::Add, u32, 4294967295ll, 1), 0u);
    QCOMPARE(bin<uint32_t>(BinOp::Div, u32, 4294967295ll, 2), 2147483647u);
    QCOMPARE(bin<uint32_t>(BinOp::Mul, u32, 65536, 65536), 0u);
    // Comparisons and min/max are unsigned.
    QCOMPARE(bin<uint8_t>(BinOp::GT, u32, 4294967295ll, 1), uint8_t(1));
    QCOMPARE(bin<uint32_t>(BinOp::Max, u32, 4294967295ll, 1), 4294967295u);
    QCOMPARE(bin<uint8_t>(BinOp::FloorDiv, u8, 250, 7), uint8_t(35));
    QCOMPARE(bin<uint64_t>(BinOp::Div, u64, -1, 3), 0x5555555555555555ull);
    QCOMPARE(bin<uint64_t>(BinOp::Mod, u64, -1, 10), 18446744073709551615ull % 10);
  }

  void int64Extremes() {
    const int64_t mn = std::numeric_limits<int64_t>::min(), mx = std::numeric_limits<int64_t>::max();
    QCOMPARE(bin<int64_t>(BinOp::Add, i64, mx, 1), mn);
    QCOMPARE(bin<int64_t>(BinOp::Div, i64, mn, -1), mn);
    QCOMPARE(bin<int64_t>(BinOp::Mod, i64, mn, -1), int64_t(0));
    QCOMPARE(bin<int64_t>(BinOp::FloorDiv, i64, mn, -1), mn);
    QCOMPARE(bin<int64_t>(BinOp::Mul, i64, int64_t(1) << 62, 4), int64_t(0));
  }

  void truncAndFloorDivision() {
    struct Case { int64_t a, b, div, mod, fdiv, fmod; };
    const Case cases[] = {{-7, 2, -3, -1, -4, 1}, {7, -2, -3, 1, -4, -1}, {-7, -2, 3, -1, 3, -1},
                          {7, 2, 3, 1, 3, 1},     {-8, 2, -4, 0, -4, 0},  {0, -3, 0, 0, 0, 0},
                          {-1, 5, 0, -1, -1, 4}};
    for (auto& c : cases) {
      QCOMPARE(bin<int32_t>(BinOp::Div, i32, c.a, c.b), int32_t(c.div));
      QCOMPARE(bin<int32_t>(BinOp::Mod, i32, c.a, c.b), int32_t(c.mod));
      QCOMPARE(bin<int32_t>(BinOp::FloorDiv, i32, c.a, c.b), int32_t(c.fdiv));
      QCOMPARE(bin<int32_t>(BinOp::FloorMod, i32, c.a, c.b), int32_t(c.fmod));
      QCOMPARE(bin<int64_t>(BinOp::FloorDiv, i64, c.a, c.b), c.fdiv);
    }
  }

  void castsFollowC() {
    QCOMPARE(castOf<int32_t>(i32, f32, -2.7), -2);
    QCOMPARE(castOf<int32_t>(i32, f32, 2.7), 2);
    QCOMPARE(castOf<int32_t>(i32, f64, -0.5), 0);
    QCOMPARE(int(castOf<uint8_t>(u8, f32, 300.5)), 44);
    QCOMPARE(int(castOf<int8_t>(i8, i32, int64_t(200))), -56);
    QCOMPARE(int(castOf<int16_t>(i16, i32, int64_t(70000))), 4464);
    QCOMPARE(castOf<uint32_t>(u32, i8, int64_t(-1)), 4294967295u);  // sign-extends, then wraps
    QCOMPARE(castOf<int64_t>(i64, u32, int64_t(4294967295ll)), int64_t(4294967295ll));  // zero-extends
    QCOMPARE(int(castOf<uint8_t>(DataType::Bool(), f32, 0.25)), 1);
    QCOMPARE(int(castOf<uint8_t>(DataType::Bool(), i32, int64_t(0))), 0);
    QCOMPARE(castOf<float>(f32, i32, int64_t(16777217)), 16777216.0f);  // int -> float rounds
    QCOMPARE(castOf<float>(f32, f64, 0.1), 0.1f);
    QCOMPARE(castOf<double>(f64, u64, int64_t(-1)), 18446744073709551616.0);
  }

  void float32ArithmeticIsFloat32() {
    Var x = makeVar("x", f32), y = makeVar("y", f32);
    // In double, (1e8 + 1) - 1e8 is 1; in float32 the 1 is lost.
    QCOMPARE(rawAt<float>(runExpr((Expr(x) + y) - x, {x, y}, {1e8, 1.0})), 0.0f);
    float a = 0.1f, b = 0.2f;
    QCOMPARE(rawAt<float>(runExpr(Expr(x) + y, {x, y}, {double(a), double(b)})), a + b);
    QCOMPARE(rawAt<float>(runExpr(Expr(x) * y, {x, y}, {double(a), double(b)})), a * b);
    QCOMPARE(rawAt<float>(runExpr(Expr(x) / y, {x, y}, {double(a), double(b)})), a / b);
    // A float64 param keeps double precision.
    Var p = makeVar("p", f64), q = makeVar("q", f64);
    QCOMPARE(rawAt<double>(runExpr(Expr(p) + q, {p, q}, {0.1, 0.2})), 0.1 + 0.2);
    // floordiv / floormod on floats.
    QCOMPARE(rawAt<float>(runExpr(floordiv(x, y), {x, y}, {-7.0, 2.0})), -4.0f);
    QCOMPARE(rawAt<float>(runExpr(floormod(x, y), {x, y}, {-7.0, 2.0})), 1.0f);
  }

  void float16Rounding() {
    QCOMPARE(bits16(f16, 1.0), uint16_t(0x3C00));
    QCOMPARE(bits16(f16, 1.0 + std::ldexp(1.0, -11)), uint16_t(0x3C00));                 // tie -> even
    QCOMPARE(bits16(f16, 1.0 + 3 * std::ldexp(1.0, -11)), uint16_t(0x3C02));             // tie -> even (up)
    QCOMPARE(bits16(f16, 1.0 + std::ldexp(1.0, -11) + std::ldexp(1.0, -20)), uint16_t(0x3C01));  // above tie
    QCOMPARE(bits16(f16, 65504.0), uint16_t(0x7BFF));
    QCOMPARE(bits16(f16, 65519.0), uint16_t(0x7BFF));
    QCOMPARE(bits16(f16, 65520.0), uint16_t(0x7C00));  // overflow to inf
    QCOMPARE(bits16(f16, -65520.0), uint16_t(0xFC00));
    QCOMPARE(bits16(f16, std::ldexp(1.0, -24)), uint16_t(0x0001));  // smallest subnormal
    QCOMPARE(bits16(f16, std::ldexp(1.0, -25)), uint16_t(0x0000));  // tie -> even zero
    QCOMPARE(bits16(f16, std::ldexp(3.0, -25)), uint16_t(0x0002));
    QCOMPARE(bits16(f16, -0.0), uint16_t(0x8000));
    QVERIFY((bits16(f16, std::numeric_limits<double>::quiet_NaN()) & 0x7C00) == 0x7C00);
    // Arithmetic in float32 then rounded: 2048 + 1 is a tie between 2048 and 2050 -> 2048;
    // 2048 + 3 ties between 2050 and 2052 -> 2052.
    Var x = makeVar("x", f16), y = makeVar("y", f16);
    QCOMPARE(rawAt<uint16_t>(runExpr(Expr(x) + y, {x, y}, {2048.0, 1.0})), toHalfBits(2048.0));
    QCOMPARE(rawAt<uint16_t>(runExpr(Expr(x) + y, {x, y}, {2048.0, 3.0})), toHalfBits(2052.0));
    QCOMPARE(rawAt<uint16_t>(runExpr(Expr(x) * y, {x, y}, {300.0, 300.0})), uint16_t(0x7C00));  // 90000 -> inf
    // Loads and stores of float16 buffers round-trip through 16 bits.
    QCOMPARE(fromHalfBits(rawAt<uint16_t>(runExpr(cast(f16, floatImm(f32, 0.1))))), 0.0999755859375);
  }

  void bfloat16Rounding() {
    QCOMPARE(bits16(bf16, 1.0), uint16_t(0x3F80));
    QCOMPARE(bits16(bf16, 1.0 + std::ldexp(1.0, -8)), uint16_t(0x3F80));      // tie -> even
    QCOMPARE(bits16(bf16, 1.0 + 3 * std::ldexp(1.0, -8)), uint16_t(0x3F82));  // tie -> even (up)
    QCOMPARE(bits16(bf16, double(3.14159265f)), uint16_t(0x4049));
    QCOMPARE(bits16(bf16, -2.0), uint16_t(0xC000));
    QCOMPARE(bits16(bf16, 3.5e38), uint16_t(0x7F80));  // overflow to inf
    Var x = makeVar("x", bf16), y = makeVar("y", bf16);
    // 256 + 1 in bfloat16 (spacing 2 at 256) ties -> 256.
    QCOMPARE(rawAt<uint16_t>(runExpr(Expr(x) + y, {x, y}, {256.0, 1.0})), uint16_t(0x4380));
    QCOMPARE(fromBFloat16Bits(rawAt<uint16_t>(runExpr(Expr(x) * y, {x, y}, {1.5, 1.5}))), 2.25);
  }

  void boolOps() {
    Var a = makeVar("a", DataType::Bool()), b = makeVar("b", DataType::Bool());
    for (int p = 0; p < 2; ++p)
      for (int q = 0; q < 2; ++q) {
        QCOMPARE(int(rawAt<uint8_t>(runExpr(Expr(a) && b, {a, b}, {int64_t(p), int64_t(q)}))), p & q);
        QCOMPARE(int(rawAt<uint8_t>(runExpr(Expr(a) || b, {a, b}, {int64_t(p), int64_t(q)}))), p | q);
        QCOMPARE(int(rawAt<uint8_t>(runExpr(!Expr(a), {a}, {int64_t(p)}))), 1 - p);
      }
    Var x = makeVar("x", f32);
    QCOMPARE(int(rawAt<uint8_t>(runExpr(Expr(x) < floatImm(f32, 1), {x}, {0.5}))), 1);
    double nan = std::numeric_limits<double>::quiet_NaN();
    QCOMPARE(int(rawAt<uint8_t>(runExpr(eq(x, x), {x}, {nan}))), 0);  // NaN != NaN
    QCOMPARE(int(rawAt<uint8_t>(runExpr(ne(x, x), {x}, {nan}))), 1);
  }

  void vectorsOfEveryWidth() {
    // Elementwise vector ops wrap per lane like scalars.
    Expr v = ramp(intImm(i8, 100), intImm(i8, 10), 4) + broadcast(intImm(i8, 20), 4);
    NDArray r = runExpr(v);
    const int want[4] = {120, -126, -116, -106};
    for (int k = 0; k < 4; ++k) QCOMPARE(int(rawAt<int8_t>(r, k)), want[k]);
    Expr u = cast(DataType::UInt(16, 4), ramp(intImm(i32, -2), intImm(i32, 1), 4));
    NDArray ru = runExpr(u);
    QCOMPARE(rawAt<uint16_t>(ru, 0), uint16_t(65534));
    QCOMPARE(rawAt<uint16_t>(ru, 3), uint16_t(1));
    Expr h = cast(DataType::Float(16, 4), ramp(floatImm(f32, 2048), floatImm(f32, 1), 4));
    NDArray rh = runExpr(h);
    QCOMPARE(fromHalfBits(rawAt<uint16_t>(rh, 1)), 2048.0);  // 2049 ties to even
    QCOMPARE(fromHalfBits(rawAt<uint16_t>(rh, 3)), 2052.0);  // 2051 ties to even (up)
  }
};

QTEST_APPLESS_MAIN(TestDtypes)
#include "test_dtypes.moc"
