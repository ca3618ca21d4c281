// Meaning of parsed text: hand-written TVMScript run by the reference interpreter on random
// inputs matches plain C++ (operators map to the right TIR semantics), before and after a round trip.
#include <QtTest>

#include <cmath>

#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"

using namespace loom;
using namespace loom::tir;
using runtime::DType;
using runtime::NDArray;

namespace {
PrimFunc parseOrFail(const std::string& text) {
  try {
    return parseFunc(text, "semantics.py");
  } catch (const Error& e) {
    qFatal("%s", e.formatted().c_str());
  }
}

/// The function as parsed, and as parsed again from its printed text.
std::vector<PrimFunc> bothForms(const std::string& text) {
  PrimFunc f = parseOrFail(text);
  return {f, parseOrFail(printFunc(f))};
}

int64_t floorDiv(int64_t a, int64_t b) { return a / b - ((a % b != 0) && ((a < 0) != (b < 0))); }
int64_t floorMod(int64_t a, int64_t b) { return a - floorDiv(a, b) * b; }

const char* kIntOps = R"(@T.prim_func
def ops(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), O: T.Buffer((64, 8), "int32")):
    for i in range(64):
        a: T.int32 = A[i] * 3 - 5
        b: T.int32 = T.Select(B[i] == 0, 3, B[i])
        O[i, 0] = a // b
        O[i, 1] = a % b
        O[i, 2] = T.truncdiv(a, b)
        O[i, 3] = T.truncmod(a, b)
        O[i, 4] = T.min(a, b) * T.max(a, b)
        O[i, 5] = T.if_then_else(a < 0 and not b > 2, 1, 0) + T.Cast("int32", a > b or a == 0)
        O[i, 6] = T.Let(t, a + b, t * t)
        O[i, 7] = 0 - a
)";

const char* kFloatBlocks = R"(@T.prim_func
def f(X: T.Buffer((4, 8), "float32"), Y: T.Buffer((4,), "float32"), Z: T.Buffer((8,), "float32")):
    for i, k in T.grid(4, 8):
        with T.block("sum"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(X[vi, vk])
            T.writes(Y[vi])
            with T.init():
                Y[vi] = T.float32(0)
            Y[vi] = Y[vi] + T.exp(X[vi, vk]) * T.float32(0.5)
    for j in T.vectorized(2):
        Z[T.Ramp(j * 4, 1, 4)] = X[0, T.Ramp(j * 4, 1, 4)] + T.Broadcast(T.float32(1), 4)
)";

const char* kControl = R"(@T.prim_func
def g(A: T.Buffer((8,), "float32"), n: T.int32):
    assert n > 0, "n must be positive"
    buf = T.allocate([8], "float32", "global")
    S = T.decl_buffer((8,), "float32", data=buf)
    for i in range(8):
        S[i] = A[i] * T.float32(2)
    c = T.allocate([1], "int32", "global")
    C = T.decl_buffer((1,), "int32", data=c)
    C[0] = 0
    while C[0] < n:
        A[C[0]] = S[C[0]] + T.float32(1)
        C[0] = C[0] + 1
)";
}  // namespace

class TestSemantics : public QObject {
  Q_OBJECT
private slots:
  void integerOperators() {
    for (const PrimFunc& f : bothForms(kIntOps)) {
      NDArray A = NDArray::empty({64}, DType{DType::Int, 32, 1}), B = NDArray::empty({64}, DType{DType::Int, 32, 1});
      NDArray O = NDArray::empty({64, 8}, DType{DType::Int, 32, 1});
      fillRandom(A, 1);
      fillRandom(B, 2);
      interpret(f, {A, B, O});
      for (int64_t i = 0; i < 64; ++i) {
        int64_t a = int64_t(getElement(A, i)) * 3 - 5, b = int64_t(getElement(B, i));
        if (b == 0) b = 3;
        int64_t want[8] = {floorDiv(a, b), floorMod(a, b), a / b, a % b, std::min(a, b) * std::max(a, b),
                           ((a < 0 && !(b > 2)) ? 1 : 0) + ((a > b || a == 0) ? 1 : 0), (a + b) * (a + b), -a};
        for (int c = 0; c < 8; ++c)
          QVERIFY2(int64_t(getElement(O, i * 8 + c)) == want[c],
                   qPrintable(QString("i=%1 column %2: a=%3 b=%4 got %5 want %6")
                                  .arg(i).arg(c).arg(a).arg(b).arg(getElement(O, i * 8 + c)).arg(want[c])));
      }
    }
  }

  void reductionBlocksAndVectors() {
    for (const PrimFunc& f : bothForms(kFloatBlocks)) {
      QVERIFY(f->body.as<BlockRealizeNode>());  // wrapped in the implicit root block
      NDArray X = NDArray::empty({4, 8}, DType::f32()), Y = NDArray::empty({4}, DType::f32()),
              Z = NDArray::empty({8}, DType::f32());
      fillRandom(X, 3);
      interpret(f, {X, Y, Z});
      NDArray wantY = NDArray::empty({4}, DType::f32()), wantZ = NDArray::empty({8}, DType::f32());
      for (int i = 0; i < 4; ++i) {
        float s = 0;
        for (int k = 0; k < 8; ++k) s += float(std::exp(getElement(X, i * 8 + k))) * 0.5f;
        setElement(wantY, i, s);
      }
      for (int j = 0; j < 8; ++j) setElement(wantZ, j, float(getElement(X, j)) + 1.0f);
      QVERIFY2(allClose(Y, wantY), mismatchReport(Y, wantY).c_str());
      QVERIFY2(allClose(Z, wantZ), mismatchReport(Z, wantZ).c_str());
    }
  }

  void controlFlowAllocationAndAssert() {
    for (const PrimFunc& f : bothForms(kControl)) {
      NDArray A = NDArray::empty({8}, DType::f32());
      fillRandom(A, 4);
      std::vector<double> before;
      for (int i = 0; i < 8; ++i) before.push_back(getElement(A, i));
      interpret(f, {A, int64_t(5)});
      for (int i = 0; i < 8; ++i) {
        double want = i < 5 ? double(float(before[i]) * 2.0f + 1.0f) : before[i];
        QCOMPARE(getElement(A, i), want);
      }
      try {
        interpret(f, {A, int64_t(0)});
        QFAIL("the assert should fail for n = 0");
      } catch (const RuntimeError& e) {
        QVERIFY2(QString(e.what()).contains("n must be positive"), e.what());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestSemantics)
#include "test_semantics.moc"
