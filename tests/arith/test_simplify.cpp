// Rewrite + canonical simplification: expected forms per rule family, each also checked by value.
#include <QtTest>

#include <random>

#include "core/arith/Analyzer.h"
#include "core/arith/Eval.h"
#include "core/arith/ExprText.h"
#include "core/tir/Op.h"
#include "core/tir/StructuralEqual.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::arith;

namespace {
struct Case {
  Expr input;
  const char* expected;
};
}  // namespace

class TestSimplify : public QObject {
  Q_OBJECT
private slots:
  /// i in [0, 8), j in [0, 4), k in [0, 16); x, y, z, n unbounded int32.
  void table() {
    Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k"), x = makeVar("x"), y = makeVar("y"), z = makeVar("z"),
        n = makeVar("n");
    Analyzer a;
    a.bind(i, Range(0, 8));
    a.bind(j, Range(0, 4));
    a.bind(k, Range(0, 16));
    std::vector<Case> cases = {
      {x + 0, "x"},
      {0 + x, "x"},
      {x - 0, "x"},
      {x * 1, "x"},
      {1 * x, "x"},
      {x * 0, "0"},
      {0 * x, "0"},
      {x - x, "0"},
      {Expr(3) + 4, "7"},
      {Expr(3) * -4, "-12"},
      {Expr(7) - 10, "-3"},
      {(x + 3) + 4, "x + 7"},
      {(x - 3) + 4, "x + 1"},
      {(3 - x) + 4, "7 - x"},
      {x + (0 - y), "x - y"},
      {(x - y) + y, "x"},
      {y + (x - y), "x"},
      {x + x, "x*2"},
      {x * 3 + x, "x*4"},
      {x + x * 3, "x*4"},
      {x * 2 + x * 3, "x*5"},
      {(x + 2) + y, "x + y + 2"},
      {x + (y + 2), "x + y + 2"},
      {x + (5 - y), "x - y + 5"},
      {floordiv(x, 4) * 4 + floormod(x, 4), "x"},
      {floormod(x, 4) + floordiv(x, 4) * 4, "x"},
      {truncdiv(x, 4) * 4 + truncmod(x, 4), "x"},
      {truncmod(x, 3) + truncdiv(x, 3) * 3, "x"},
      {min(x, y - z) + z, "min(x + z, y)"},
      {max(x, y - z) + z, "max(x + z, y)"},
      {select(x < y, x, 1) + select(x < y, 2, y), "select(x < y, x + 2, y + 1)"},
      {x - 5, "x - 5"},
      {(x + y) - x, "y"},
      {(x + y) - y, "x"},
      {x - (x + y), "y*-1"},
      {y - (x + y), "x*-1"},
      {(x - y) - x, "y*-1"},
      {x - (x - y), "y"},
      {(x + 3) - (y + 1), "x - y + 2"},
      {Expr(5) - (x + 3), "2 - x"},
      {Expr(5) - (3 - x), "x + 2"},
      {(5 - x) - (3 - y), "y - x + 2"},
      {x * 4 - x, "x*3"},
      {x - x * 4, "x*-3"},
      {x * 4 - x * 7, "x*-3"},
      {(x + 3) - y, "x - y + 3"},
      {x - (y + 3), "x - y - 3"},
      {(x + y) - (x + z), "y - z"},
      {(y + x) - (z + x), "y - z"},
      {x - floordiv(x, 8) * 8, "x%8"},
      {x - truncdiv(x, 8) * 8, "truncmod(x, 8)"},
      {min(x, y) - x, "min(y - x, 0)"},
      {max(x, y) - x, "max(y - x, 0)"},
      {select(x < 3, y, z) - select(x < 3, z, y), "select(x < 3, y - z, z - y)"},
      {(x * 3) * 4, "x*12"},
      {(x + 3) * 4, "x*4 + 12"},
      {(3 - x) * 4, "12 - x*4"},
      {(0 - x) * 4, "x*-4"},
      {select(x < y, x, 2) * 3, "select(x < y, x*3, 6)"},
      {(x + y) * (x - y), "x*x - y*y"},
      {(x + 1) * (x + 1), "x*2 + x*x + 1"},
      {i * j - j * i, "0"},
      {floordiv(x, 1), "x"},
      {floormod(x, 1), "0"},
      {truncdiv(x, 1), "x"},
      {truncmod(x, 1), "0"},
      {floordiv(x, -1), "x*-1"},
      {truncdiv(x, -1), "x*-1"},
      {floormod(x, -1), "0"},
      {floordiv(x * 8, 4), "x*2"},
      {floordiv(x * 4, 8), "x//2"},
      {floordiv(x * 8 + y, 4), "x*2 + y//4"},
      {floordiv(y + x * 8, 4), "x*2 + y//4"},
      {floordiv(x + 8, 4), "x//4 + 2"},
      {floordiv(x + 9, 4), "(x + 1)//4 + 2"},
      {floordiv(floordiv(x, 4), 2), "x//8"},
      {floordiv(i * 4 + j, 4), "i"},
      {floormod(i * 4 + j, 4), "j"},
      {floordiv(i * 4 + j, 8), "i//2"},
      {floormod(i * 4 + j, 8), "j + i%2*4"},
      {floordiv(j, 4), "0"},
      {floormod(j, 4), "j"},
      {floordiv(j + 4, 4), "1"},
      {floormod(j + 4, 4), "j"},
      {floormod(j - 4, 4), "j"},
      {floordiv(j - 4, 4), "-1"},
      {floormod(x * 8, 4), "0"},
      {floormod(x * 8 + y, 4), "y%4"},
      {floormod(y + x * 8, 4), "y%4"},
      {floormod(x + 8, 4), "x%4"},
      {floormod(x + 9, 4), "(x + 1)%4"},
      {floormod(x - 1, 4), "(x + 3)%4"},
      {floormod(floormod(x, 8), 4), "x%4"},
      {floormod(floormod(x, 4), 8), "x%4"},
      {floordiv(floormod(x, 4), 4), "0"},
      {floormod(x * 6 + 4, 4), "x%2*2"},
      {floordiv(x * 6 + 4, 4), "x*3//2 + 1"},
      {truncdiv(i, 2), "i//2"},
      {truncmod(i + 8, 4), "i%4"},
      {truncdiv(x * 6, 3), "x*2"},
      {truncmod(x * 6, 3), "0"},
      {truncdiv(x, 4), "truncdiv(x, 4)"},
      {truncmod(x, 4), "truncmod(x, 4)"},
      {truncdiv(0 - i - 1, 8), "truncdiv(i*-1 - 1, 8)"},
      {truncmod(0 - j, 8), "j*-1"},
      {floordiv(k * 16 + i * 2 + 1, 16), "k"},
      {floormod(k * 16 + i * 2 + 1, 16), "i*2 + 1"},
      {floordiv(i * 4 + j + 32, 4), "i + 8"},
      {floordiv(n * 4 + 3, 4), "n"},
      {floormod(n * 4 + 3, 4), "3"},
      {floordiv(floordiv(i * 4 + j, 2), 2), "i"},
      {floordiv(k, 16), "0"},
      {floordiv(k + 16, 16), "1"},
      {min(x, x), "x"},
      {max(x, x), "x"},
      {min(x, x + 1), "x"},
      {max(x + 2, x), "x + 2"},
      {min(x - 1, x + 1), "x - 1"},
      {min(min(x, y), x), "min(x, y)"},
      {min(x, min(x, y)), "min(x, y)"},
      {min(max(x, y), x), "x"},
      {max(min(x, y), x), "x"},
      {max(max(x, y), y), "max(x, y)"},
      {min(min(x, 3), 5), "min(x, 3)"},
      {max(max(x, 3), 5), "max(x, 5)"},
      {min(x + 3, y + 3), "min(x, y) + 3"},
      {min(x + y, x + z), "x + min(y, z)"},
      {max(y + x, z + x), "x + max(y, z)"},
      {min(x - y, x - z), "x - max(y, z)"},
      {max(y - x, z - x), "max(y, z) - x"},
      {min(x * 4, y * 4), "min(x, y)*4"},
      {min(x * -4, y * -4), "max(x, y)*-4"},
      {max(x * 4, y * 4), "max(x, y)*4"},
      {min(floordiv(x, 4), floordiv(y, 4)), "min(x, y)//4"},
      {min(i, 8), "i"},
      {max(j, 0), "j"},
      {min(i, j + 8), "i"},
      {max(i * 4 + j, 0), "i*4 + j"},
      {min(i * 4 + j, 31), "i*4 + j"},
      {min(i * 4 + j, 30), "min(i*4 + j, 30)"},
      {max(max(x, 3), 1), "max(x, 3)"},
      {min(max(x, 5), 3), "3"},
      {max(min(x, 3), 5), "5"},
      {min(select(x < 0, y, z), select(x < 0, z, y)), "select(x < 0, min(y, z), min(z, y))"},
      {i < 16, "True"},
      {i < 8, "True"},
      {i < 7, "i < 7"},
      {i >= 0, "True"},
      {i > 0, "i > 0"},
      {i <= 7, "True"},
      {i * 4 + j < 32, "True"},
      {i * 4 + j < 31, "i*4 + j < 31"},
      {eq(i, 9), "False"},
      {ne(i, 9), "True"},
      {x < x, "False"},
      {x <= x, "True"},
      {eq(x, x), "True"},
      {ne(x, x), "False"},
      {x < x + 1, "True"},
      {x + 1 <= x, "False"},
      {x < y + 1, "x < y + 1"},
      {Expr(5) < x, "x > 5"},
      {x * 4 < 8, "x < 2"},
      {x * 4 <= 7, "x <= 1"},
      {x * 4 > 7, "x > 1"},
      {x * 4 >= 7, "x >= 2"},
      {eq(x * 2, 3), "False"},
      {ne(x * 2, 3), "True"},
      {eq(x * 2, 4), "x == 2"},
      {x + 1 < y + 3, "x < y + 2"},
      {x - y < 0, "x < y"},
      {eq(x - y, 0), "x == y"},
      {Expr(3) - x < 1, "x > 2"},
      {x * 2 + y * 4 < 6, "x + y*2 < 3"},
      {floormod(x, 4) < 4, "True"},
      {floormod(x, 4) >= 0, "True"},
      {truncmod(x, 4) > -4, "True"},
      {floordiv(i, 2) < 4, "True"},
      {min(x, 3) <= 3, "True"},
      {max(x, 3) >= 3, "True"},
      {select(x < 3, 1, 5) > 0, "True"},
      {(x < 5) && (x >= 7), "False"},
      {(x < 5) && (x < 7), "x < 5"},
      {(x < 5) || (x >= 5), "True"},
      {(x < 5) || (x < 7), "x < 7"},
      {!(x < y), "x >= y"},
      {!(x <= y), "x > y"},
      {!(x > y), "x <= y"},
      {!(x >= y), "x < y"},
      {!(eq(x, y)), "x != y"},
      {!(ne(x, y)), "x == y"},
      {!!(x < y), "x < y"},
      {!((x < y) && (y < z)), "x >= y or y >= z"},
      {!((x < y) || (y < z)), "x >= y and y >= z"},
      {(x < y) && boolImm(true), "x < y"},
      {(x < y) && boolImm(false), "False"},
      {(x < y) || boolImm(true), "True"},
      {(x < y) || boolImm(false), "x < y"},
      {(x < y) && (x < y), "x < y"},
      {(x < y) && !(x < y), "False"},
      {(x < y) || !(x < y), "True"},
      {(i < 4) && (i < 8), "i < 4"},
      {(x < y) && ((x < y) || (z < y)), "x < y"},
      {(eq(x, 3)) && (eq(x, 4)), "False"},
      {(eq(x, 3)) && (x > 2), "x == 3"},
      {(x > 2) && (eq(x, 3)), "x == 3"},
      {(x < 10) && (x > 3) && (x < 4), "False"},
      {select(i < 8, x, y), "x"},
      {select(i > 8, x, y), "y"},
      {select(x < y, z, z), "z"},
      {select(!(x < y), x, y), "max(x, y)"},
      {select(x < y, x, y), "min(x, y)"},
      {select(x < y, y, x), "max(x, y)"},
      {select(x <= y, x, y), "min(x, y)"},
      {select(x > y, x, y), "max(x, y)"},
      {select(x >= y, y, x), "min(x, y)"},
      {select(x < 3, select(x < 3, y, z), x), "select(x < 3, y, x)"},
      {select(x < 3, y, select(x < 3, z, x)), "select(x < 3, y, x)"},
      {select(x < 3, x + 1, x + 5), "x + select(x < 3, 1, 5)"},
      {select(x < 3, y - z, y - x), "y - select(x < 3, z, x)"},
      {select(x < 3, select(y < 2, z, x), x), "select(x < 3 and y < 2, z, x)"},
      {select(x > 5, max(x, 5), 0), "select(x > 5, x, 0)"},
      {select(x < 3, min(x, 3), 7), "select(x < 3, x, 7)"},
      {select(eq(x, 3), x + 1, 4), "4"},
    };
    std::mt19937 rng(9);
    auto pick = [&](int lo, int hi) { return int64_t(std::uniform_int_distribution<int>(lo, hi)(rng)); };
    int failures = 0;
    for (auto& c : cases) {
      Expr r = a.simplify(c.input);
      std::string got = exprText(r);
      if (got != c.expected) {
        ++failures;
        qWarning("%s: got %s, expected %s", exprText(c.input).c_str(), got.c_str(), c.expected);
      }
      QCOMPARE(r.dtype(), c.input.dtype());
      // A fixed point: simplifying again changes nothing.
      Expr again = a.simplify(r);
      if (!structuralEqual(again, r)) {
        ++failures;
        qWarning("not idempotent: %s -> %s", got.c_str(), exprText(again).c_str());
      }
      // The simplified form means the same at points inside the bound ranges.
      for (int p = 0; p < 200; ++p) {
        VarValueMap env{{i, pick(0, 7)}, {j, pick(0, 3)}, {k, pick(0, 15)}, {x, pick(-40, 40)},
                        {y, pick(-40, 40)}, {z, pick(-40, 40)}, {n, pick(-40, 40)}};
        auto want = evalInt(c.input, env);
        if (!want) continue;
        auto have = evalInt(r, env);
        QVERIFY2(have && *have == *want, exprText(c.input).c_str());
      }
    }
    QCOMPARE(failures, 0);
    QVERIFY(cases.size() > 200);
  }
  /// Index forms that schedules produce (split, fuse, reorder), i in [0, 4), j in [0, 16),
  /// fo in [0, 8), fi in [0, 4), f in [0, 64), n in [1, 1024].
  void indexPatterns() {
    Var i = makeVar("i"), j = makeVar("j"), fo = makeVar("fo"), fi = makeVar("fi"), f = makeVar("f"), n = makeVar("n");
    Analyzer a;
    a.bind(i, Range(0, 4));
    a.bind(j, Range(0, 16));
    a.bind(fo, Range(0, 8));
    a.bind(fi, Range(0, 4));
    a.bind(f, Range(0, 64));
    a.bind(n, Range(1, 1024));
    std::vector<Case> cases = {
        {floordiv(fo * 4 + fi, 8), "fo//2"},
        {floormod(fo * 4 + fi, 8), "fi + fo%2*4"},
        {floordiv(floormod(i * 16 + j, 64), 16), "i"},
        {floormod(floordiv(i * 16 + j, 4), 4), "j//4"},
        {floordiv(f, 16) * 16 + floormod(f, 16), "f"},
        {floordiv(floordiv(f, 4), 4) * 16 + floormod(floordiv(f, 4), 4) * 4 + floormod(f, 4), "f"},
        {floormod(floordiv(f, 4), 4) * 4 + floormod(f, 4), "f%16"},
        {floordiv(i * 16 + j, 16) * 16 + floormod(i * 16 + j, 16) - (i * 16 + j), "0"},
        {floordiv(n + 3, 4) * 4 - n, "(n + 3)//4*4 - n"},
        {fo * 4 + fi < 32, "True"},
        {fo * 4 + fi < 31, "fi + fo*4 < 31"},
        {floordiv(i * n + j, n), "(i*n + j)//n"},
        {min(f, 63) + max(fi - 4, 0), "f"},
        {select(f < 64, floordiv(f, 2), 0), "f//2"},
        {floordiv(fo * 4 + fi + 4, 4), "fo + 1"},
        {floormod(f + 64, 64), "f"},
        {truncdiv(f, 8) * 8 + truncmod(f, 8), "f"},
        {floordiv(f * 4 + 3, 2), "f*2 + 1"},
        {floormod(f * 4 + 3, 2), "1"},
        {floordiv(i * 16 + j, 8), "i*2 + j//8"},
        {floordiv(i * 16 + j + 16, 32), "(i + 1)//2"},
        {floormod(i * 64 + f, 64), "f"},
        {floordiv(i * 64 + f, 64), "i"},
        {i * 64 + f < 256, "True"},
        {i * 64 + f - 255 <= 0, "True"},
    };
    int failures = 0;
    for (auto& c : cases) {
      Expr r = a.simplify(c.input);
      if (exprText(r) != c.expected) {
        ++failures;
        qWarning("%s: got %s, expected %s", exprText(c.input).c_str(), exprText(r).c_str(), c.expected);
      }
      for (int64_t p = 0; p < 64; ++p) {
        VarValueMap env{{i, p % 4}, {j, (p * 7) % 16}, {fo, (p * 3) % 8}, {fi, (p * 5) % 4}, {f, p}, {n, 1 + p * 13}};
        auto want = evalInt(c.input, env);
        QVERIFY(want.has_value());
        QCOMPARE(*evalInt(r, env), *want);
      }
    }
    QCOMPARE(failures, 0);
  }
};

QTEST_APPLESS_MAIN(TestSimplify)
#include "test_simplify.moc"
