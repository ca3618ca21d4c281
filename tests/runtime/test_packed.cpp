// Packed calls: every type code both ways, tensor views, return values, and errors through loom_get_last_error.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <limits>

#include "runtime/PackedFunc.h"
#include "runtime/RuntimeFailure.h"

using namespace loom::runtime;

namespace {

// Returns its only argument with its type code.
int echo(LoomValue* args, int* codes, int n, LoomValue* ret, int* retCode, void*) {
  if (n != 1) {
    loom_set_last_error("echo: expected one argument");
    return -1;
  }
  *ret = args[0];
  *retCode = codes[0];
  return 0;
}

// Records what it was called with into the resource (a Seen).
struct Seen {
  int n = 0;
  int codes[8] = {};
  LoomValue values[8] = {};
  std::string strs[8];
  LoomTensor tensors[8] = {};
  std::vector<int64_t> shapes[8];
};
int record(LoomValue* args, int* codes, int n, LoomValue* ret, int* retCode, void* resource) {
  auto* s = static_cast<Seen*>(resource);
  s->n = n;
  for (int i = 0; i < n && i < 8; ++i) {
    s->codes[i] = codes[i];
    s->values[i] = args[i];
    if (codes[i] == kLoomArgStr) s->strs[i] = args[i].v_str;
    if (codes[i] == kLoomArgTensor) {
      s->tensors[i] = *static_cast<LoomTensor*>(args[i].v_handle);
      s->shapes[i].assign(s->tensors[i].shape, s->tensors[i].shape + s->tensors[i].ndim);
    }
  }
  return 0;  // no return value: stays null
}

// y[i] = alpha * x[i] + y[i] over float32 tensors; returns the element count.
int axpy(LoomValue* args, int* codes, int n, LoomValue* ret, int* retCode, void*) {
  if (n != 3 || codes[0] != kLoomArgFloat || codes[1] != kLoomArgTensor ||
      codes[2] != kLoomArgTensor) {
    loom_set_last_error("axpy: expected (float, tensor, tensor)");
    return -1;
  }
  auto* x = static_cast<LoomTensor*>(args[1].v_handle);
  auto* y = static_cast<LoomTensor*>(args[2].v_handle);
  int64_t count = 1;
  for (int d = 0; d < x->ndim; ++d) count *= x->shape[d];
  auto* px = static_cast<const float*>(x->data);
  auto* py = static_cast<float*>(y->data);
  for (int64_t i = 0; i < count; ++i) py[i] = float(args[0].v_float64) * px[i] + py[i];
  ret->v_int64 = count;
  *retCode = kLoomArgInt;
  return 0;
}

int failing(LoomValue*, int*, int, LoomValue*, int*, void*) {
  loom_set_last_error("failing: the reason");
  return -1;
}
int failingSilently(LoomValue*, int*, int, LoomValue*, int*, void*) { return -3; }
int badReturnCode(LoomValue*, int*, int, LoomValue* ret, int* retCode, void*) {
  ret->v_int64 = 0;
  *retCode = 99;
  return 0;
}

}  // namespace

class TestPacked : public QObject {
  Q_OBJECT
private slots:
  void everyTypeCodeRoundTrips() {
    PackedFunc f(echo, nullptr, "echo");
    PackedRet r = f(int64_t(-1234567890123));
    QCOMPARE(r.typeCode(), int(kLoomArgInt));
    QCOMPARE(r.asInt(), int64_t(-1234567890123));
    r = f(PackedArg::uint(std::numeric_limits<uint64_t>::max()));
    QCOMPARE(r.typeCode(), int(kLoomArgUInt));
    QCOMPARE(r.asUInt(), std::numeric_limits<uint64_t>::max());
    r = f(2.5);
    QCOMPARE(r.typeCode(), int(kLoomArgFloat));
    QCOMPARE(r.asFloat(), 2.5);
    r = f(1.25f);
    QCOMPARE(r.asFloat(), 1.25);
    int local = 0;
    r = f(static_cast<void*>(&local));
    QCOMPARE(r.typeCode(), int(kLoomArgHandle));
    QCOMPARE(r.asHandle(), static_cast<void*>(&local));
    r = f(nullptr);
    QCOMPARE(r.typeCode(), int(kLoomArgNull));
    QVERIFY(r.isNull());
    QCOMPARE(r.asHandle(), nullptr);
    r = f("hello packed");
    QCOMPARE(r.typeCode(), int(kLoomArgStr));
    QCOMPARE(r.asStr(), std::string("hello packed"));  // copied: the argument is gone
    r = f(std::string("owned"));
    QCOMPARE(r.asStr(), std::string("owned"));
    LoomTensor raw{};
    r = f(&raw);
    QCOMPARE(r.typeCode(), int(kLoomArgTensor));
    QCOMPARE(r.asTensor(), &raw);
    r = f(true);
    QCOMPARE(r.asInt(), int64_t(1));
  }

  void argumentsArriveAsPacked() {
    Seen seen;
    PackedFunc f(record, &seen, "record");
    NDArray a = NDArray::empty({2, 3, 4}, DType{DType::Int, 16, 1});
    PackedRet r = f(7, PackedArg::uint(9), 0.5, static_cast<void*>(&seen), nullptr, "s", a);
    QVERIFY(r.isNull());
    QCOMPARE(seen.n, 7);
    int expected[] = {kLoomArgInt, kLoomArgUInt, kLoomArgFloat, kLoomArgHandle,
                      kLoomArgNull, kLoomArgStr, kLoomArgTensor};
    for (int i = 0; i < 7; ++i) QCOMPARE(seen.codes[i], expected[i]);
    QCOMPARE(seen.values[0].v_int64, int64_t(7));
    QCOMPARE(seen.values[1].v_int64, int64_t(9));
    QCOMPARE(seen.values[2].v_float64, 0.5);
    QCOMPARE(seen.values[3].v_handle, static_cast<void*>(&seen));
    QCOMPARE(seen.strs[5], std::string("s"));
    const LoomTensor& t = seen.tensors[6];
    QCOMPARE(t.data, a.data());
    QCOMPARE(t.ndim, 3);
    QCOMPARE(seen.shapes[6], (std::vector<int64_t>{2, 3, 4}));
    QCOMPARE(int(t.dtype.code), int(kLoomDTypeInt));
    QCOMPARE(int(t.dtype.bits), 16);
    QCOMPARE(int(t.dtype.lanes), 1);
    QCOMPARE(t.device.device_type, int32_t(kLoomCPU));
    QCOMPARE(t.device.device_id, 0);
    QVERIFY(t.strides == nullptr);
    QCOMPARE(t.byte_offset, uint64_t(0));
  }

  void computesThroughTensors() {
    NDArray x = NDArray::empty({5, 7}, DType::f32());
    NDArray y = NDArray::empty({5, 7}, DType::f32());
    std::vector<float> ref(35);
    for (int i = 0; i < 35; ++i) {
      x.as<float>()[i] = float(i) * 0.5f - 3.0f;
      y.as<float>()[i] = float(i % 4);
      ref[i] = 3.0f * x.as<float>()[i] + y.as<float>()[i];
    }
    PackedFunc f(axpy, nullptr, "axpy");
    QCOMPARE(f(3.0, x, y).asInt(), int64_t(35));
    for (int i = 0; i < 35; ++i) QCOMPARE(y.as<float>()[i], ref[i]);
  }

  void errorsBecomeExceptions() {
    PackedFunc f(failing, nullptr, "failing");
    try {
      f(1);
      QFAIL("no exception");
    } catch (const RuntimeFailure& e) {
      QCOMPARE(QString(e.what()), QString("failing: failing: the reason"));
    }
    QCOMPARE(QString(loom_get_last_error()), QString("failing: the reason"));
    // A failure without a message must not report an older one.
    PackedFunc g(failingSilently, nullptr, "quiet");
    try {
      g();
      QFAIL("no exception");
    } catch (const std::runtime_error& e) {
      QCOMPARE(QString(e.what()), QString("quiet: returned -3 without a message"));
    }
    PackedFunc echoF(echo, nullptr, "echo");
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, echoF(1, 2));  // echo's own error
    QVERIFY(QString(loom_get_last_error()).contains("expected one argument"));
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, PackedFunc(badReturnCode, nullptr, "bad")());
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, PackedFunc()());
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, (void)PackedArg(NDArray{}));
  }

  void lastErrorIsPerThread() {
    loom_set_last_error("main thread");
    std::string other;
    std::thread t([&] {
      other = loom_get_last_error();
      loom_set_last_error("worker");
    });
    t.join();
    QCOMPARE(other, std::string(""));
    QCOMPARE(QString(loom_get_last_error()), QString("main thread"));
    loom_set_last_error(nullptr);
    QCOMPARE(QString(loom_get_last_error()), QString(""));
  }

  void wrongReturnTypesThrow() {
    PackedFunc f(echo, nullptr, "echo");
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, f(1.5).asInt());
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, f(1).asStr());
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, f("x").asFloat());
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, f(-1).asUInt());
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, f(1).asTensor());
    QVERIFY_THROWS_EXCEPTION(RuntimeFailure, f(1).asHandle());
    QCOMPARE(f(3).asFloat(), 3.0);  // ints widen to float
  }
};

QTEST_APPLESS_MAIN(TestPacked)
#include "test_packed.moc"
