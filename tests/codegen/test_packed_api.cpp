// make-packed-api: every argument check of the packed entry, with its exact message.
#include <QtTest>

#include "CodegenTestUtil.h"
#include "core/tir/Op.h"
#include "runtime/RuntimeFailure.h"

using namespace loom;
using namespace loom::tir;
using loom::runtime::NDArray;
using loom::codegen::testutil::callRaw;

namespace {
const DataType f32 = DataType::Float(32);

/// main(A: float32[64, 64], B: float32[64, 64], n: int32): B[i] = A[i] + n over the flat data.
PrimFunc fixedShapes() {
  Buffer A = makeBuffer("A", f32, {64, 64}), B = makeBuffer("B", f32, {64, 64});
  Buffer Af = makeBuffer("A_flat", f32, {4096}), Bf = makeBuffer("B_flat", f32, {4096});
  auto view = [](Buffer flat, const Buffer& of) {
    auto* n = new BufferNode(*flat.get());
    n->data = of->data;
    return Buffer(n);
  };
  Af = view(Af, A);
  Bf = view(Bf, B);
  Var n = makeVar("n");
  Var i = makeVar("i");
  Stmt body = declBuffer(Af, declBuffer(Bf, forLoop(i, 0, 4096, ForKind::Serial,
                                                   bufferStore(Bf, bufferLoad(Af, {i}) + cast(f32, n), {i}))));
  return makePrimFunc("main", {A->data, B->data, n}, {{A->data, A}, {B->data, B}}, body);
}

/// main(A: float32[m, 8], B: float32[m, 8]) with symbolic m.
PrimFunc symbolicShapes() {
  Var m = makeVar("m");
  Buffer A = makeBuffer("A", f32, {m, 8}), B = makeBuffer("B", f32, {m, 8});
  Var i = makeVar("i"), j = makeVar("j");
  Stmt body = forLoop(i, 0, m, ForKind::Serial,
                      forLoop(j, 0, 8, ForKind::Serial, bufferStore(B, bufferLoad(A, {i, j}) * 2, {i, j})));
  return makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
}

NDArray f32Array(std::vector<int64_t> shape) { return NDArray::empty(std::move(shape), runtime::DType::f32()); }

LoomValue handleValue(void* p) {
  LoomValue v;
  v.v_handle = p;
  return v;
}
LoomValue intValue(int64_t i) {
  LoomValue v;
  v.v_int64 = i;
  return v;
}
LoomValue floatValue(double d) {
  LoomValue v;
  v.v_float64 = d;
  return v;
}
}  // namespace

class TestPackedAPI : public QObject {
  Q_OBJECT
  runtime::PackedFunc m_fixed, m_symbolic;

private slots:
  void initTestCase() {
    m_fixed = codegen::testutil::jitPacked(fixedShapes());
    m_symbolic = codegen::testutil::jitPacked(symbolicShapes());
  }

  void goodCallRuns() {
    NDArray a = f32Array({64, 64}), b = f32Array({64, 64});
    for (int k = 0; k < 4096; ++k) a.as<float>()[k] = float(k);
    m_fixed(a, b, 3);
    QCOMPARE(b.as<float>()[4095], 4098.0f);
    NDArray c = f32Array({5, 8}), d = f32Array({5, 8});
    c.as<float>()[39] = 1.5f;
    m_symbolic(c, d);
    QCOMPARE(d.as<float>()[39], 3.0f);
  }

  void argumentErrors_data() {
    QTest::addColumn<int>("which");
    QTest::addColumn<QString>("message");
    QTest::newRow("count") << 0 << "main: expected 3 arguments, got 2";
    QTest::newRow("tensor type") << 1 << "main: argument 0 (A) must be a tensor, got int";
    QTest::newRow("scalar type") << 2 << "main: argument 2 (n) must be an int, got float";
    QTest::newRow("rank") << 3 << "main: argument 1 (B) has rank 1, expected 2";
    QTest::newRow("dtype") << 4 << "main: argument 1 (B) has dtype float64, expected float32";
    QTest::newRow("dtype bool") << 5 << "main: argument 0 (A) has dtype bool, expected float32";
    QTest::newRow("shape") << 6 << "main: argument 1 (B) has shape [32, 64], expected [64, 64]";
    QTest::newRow("symbolic shape") << 7 << "main: argument 1 (B) has shape [9, 8], expected [8, 8]";
    QTest::newRow("alignment") << 8 << "main: argument 0 (A) data is not aligned to 64 bytes";
    QTest::newRow("strides") << 9 << "main: argument 0 (A) is not compact (its strides are not row-major)";
    QTest::newRow("device") << 10 << "main: argument 1 (B) is on device type 2, expected the CPU (1)";
    QTest::newRow("null for tensor") << 11 << "main: argument 1 (B) must be a tensor, got null";
  }
  void argumentErrors() {
    QFETCH(int, which);
    QFETCH(QString, message);
    NDArray a = f32Array({64, 64}), b = f32Array({64, 64});
    LoomTensor ta = runtime::tensorView(a), tb = runtime::tensorView(b);
    std::vector<LoomValue> values = {handleValue(&ta), handleValue(&tb), intValue(1)};
    std::vector<int> codes = {kLoomArgTensor, kLoomArgTensor, kLoomArgInt};
    runtime::PackedFunc f = m_fixed;
    NDArray keep;
    int64_t shape1[1] = {4096}, shape32[2] = {32, 64};
    int64_t strides[2] = {1, 64};
    switch (which) {
    case 0: values.pop_back(), codes.pop_back(); break;
    case 1: values[0] = intValue(5), codes[0] = kLoomArgInt; break;
    case 2: values[2] = floatValue(1.5), codes[2] = kLoomArgFloat; break;
    case 3: tb.ndim = 1, tb.shape = shape1; break;
    case 4: tb.dtype = {kLoomDTypeFloat, 64, 1}; break;
    case 5: ta.dtype = {kLoomDTypeBool, 8, 1}; break;
    case 6: tb.shape = shape32; break;
    case 7: {
      f = m_symbolic;
      keep = f32Array({9, 8});
      NDArray a8 = f32Array({8, 8});
      ta = runtime::tensorView(a8);
      tb = runtime::tensorView(keep);
      values.pop_back(), codes.pop_back();
      std::string err;
      QVERIFY(callRaw(f, values, codes, &err) != 0);
      QCOMPARE(QString::fromStdString(err), message);
      return;
    }
    case 8: ta.byte_offset = 4; break;
    case 9: ta.strides = strides; break;
    case 10: tb.device = {kLoomCUDA, 0}; break;
    case 11: values[1] = handleValue(nullptr), codes[1] = kLoomArgNull; break;
    }
    std::string err;
    QCOMPARE(callRaw(f, values, codes, &err), -1);
    QCOMPARE(QString::fromStdString(err), message);
  }

  void compactStridesAreAccepted() {
    NDArray a = f32Array({64, 64}), b = f32Array({64, 64});
    LoomTensor ta = runtime::tensorView(a), tb = runtime::tensorView(b);
    int64_t strides[2] = {64, 1};
    ta.strides = strides;
    std::string err;
    QCOMPARE(callRaw(m_fixed, {handleValue(&ta), handleValue(&tb), intValue(2)},
                     {kLoomArgTensor, kLoomArgTensor, kLoomArgInt}, &err), 0);
  }

  void errorThroughPackedFunc() {
    NDArray a = f32Array({64, 64}), b = f32Array({32, 64});
    try {
      m_fixed(a, b, 1);
      QFAIL("expected a RuntimeFailure");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY2(QString(e.what()).endsWith("main: argument 1 (B) has shape [32, 64], expected [64, 64]"), e.what());
    }
  }

  void scalarParamAgreesWithShape() {
    // f(A: float32[n], n: int32): n comes from A's shape first, then the scalar must match.
    Var n = makeVar("n");
    Buffer A = makeBuffer("A", f32, {n});
    Var i = makeVar("i");
    PrimFunc f = makePrimFunc("main", {A->data, n}, {{A->data, A}},
                              forLoop(i, 0, n, ForKind::Serial, bufferStore(A, floatImm(f32, 1), {i})));
    runtime::PackedFunc fn = codegen::testutil::jitPacked(f);
    NDArray a = f32Array({6});
    fn(a, 6);
    QCOMPARE(a.as<float>()[5], 1.0f);
    LoomTensor ta = runtime::tensorView(a);
    std::string err;
    QCOMPARE(callRaw(fn, {handleValue(&ta), intValue(7)}, {kLoomArgTensor, kLoomArgInt}, &err), -1);
    QCOMPARE(QString::fromStdString(err), QString("main: argument 1 (n) is 7, but the shapes give n = 6"));
  }

  void packedTwiceIsIdentity() {
    PrimFunc p = transform::makePackedAPI(fixedShapes());
    QVERIFY(transform::makePackedAPI(p).same_as(p));
    QCOMPARE(p->params.size(), size_t(6));
  }
};

QTEST_APPLESS_MAIN(TestPackedAPI)
#include "test_packed_api.moc"
