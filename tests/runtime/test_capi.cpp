// The application C API (loom_runtime.h) and its C++ wrapper (loom_runtime.hpp) on the test module.
#include <QtTest>

#include <cstring>
#include <random>

#include "loom_runtime.hpp"

class TestCApi : public QObject {
  Q_OBJECT
private slots:
  void arrays() {
    int64_t shape[] = {2, 3};
    LoomDataType f32{kLoomDTypeFloat, 32, 1};
    LoomNDArrayHandle a = nullptr;
    QCOMPARE(loom_ndarray_empty(shape, 2, f32, LoomDevice{kLoomCPU, 0}, &a), 0);
    LoomTensor* t = loom_ndarray_tensor(a);
    QCOMPARE(t->ndim, 2);
    QCOMPARE(t->shape[0], int64_t(2));
    QCOMPARE(t->shape[1], int64_t(3));
    QCOMPARE(reinterpret_cast<uintptr_t>(t->data) % 64, uintptr_t(0));
    float in[6] = {1, 2, 3, 4, 5, 6}, out[6] = {};
    QCOMPARE(loom_ndarray_copy_from_bytes(a, in, sizeof in), 0);
    LoomNDArrayHandle b = nullptr;
    QCOMPARE(loom_ndarray_copy(a, &b), 0);
    QVERIFY(loom_ndarray_tensor(b)->data != t->data);
    QCOMPARE(loom_ndarray_copy_to_bytes(b, out, sizeof out), 0);
    QCOMPARE(std::memcmp(in, out, sizeof in), 0);
    QCOMPARE(loom_ndarray_copy_to_bytes(b, out, 5), -1);
    QVERIFY(QString(loom_get_last_error()).contains("5 bytes asked of float32[2, 3]"));
    QCOMPARE(loom_ndarray_free(a), 0);
    QCOMPARE(loom_ndarray_free(b), 0);
    QCOMPARE(loom_ndarray_free(nullptr), 0);
    QVERIFY(loom_ndarray_tensor(nullptr) == nullptr);

    int64_t bad[] = {-4};
    LoomNDArrayHandle c = nullptr;
    QCOMPARE(loom_ndarray_empty(bad, 1, f32, LoomDevice{kLoomCPU, 0}, &c), -1);
    QVERIFY(QString(loom_get_last_error()).contains("negative dimension"));
    QVERIFY(c == nullptr);
    QCOMPARE(loom_ndarray_empty(shape, 2, f32, LoomDevice{kLoomOpenCL, 0}, &c), -1);
    QVERIFY(QString(loom_get_last_error()).contains("no device API for opencl"));
    QCOMPARE(loom_ndarray_empty(shape, 2, f32, LoomDevice{kLoomCPU, 0}, nullptr), -1);
  }

  void modulesAndCalls() {
    LoomModuleHandle m = nullptr;
    QCOMPARE(loom_module_load(FIXTURE_MODULE, &m), 0);
    QVERIFY(QString(loom_module_meta(m)).contains("fixture_add"));
    LoomFunctionHandle echo = nullptr;
    QCOMPARE(loom_module_get_function(m, "fixture_echo", &echo), 0);
    QCOMPARE(loom_module_free(m), 0);  // the function keeps the library loaded

    LoomValue arg, ret;
    int code = kLoomArgStr, retCode = -1;
    char text[] = "through C";
    arg.v_str = text;
    QCOMPARE(loom_function_call(echo, &arg, &code, 1, &ret, &retCode), 0);
    QCOMPARE(retCode, int(kLoomArgStr));
    std::strcpy(text, "changed!!");  // the result was copied
    QCOMPARE(QString(ret.v_str), QString("through C"));
    code = kLoomArgFloat;
    arg.v_float64 = 6.5;
    QCOMPARE(loom_function_call(echo, &arg, &code, 1, &ret, &retCode), 0);
    QCOMPARE(retCode, int(kLoomArgFloat));
    QCOMPARE(ret.v_float64, 6.5);
    QCOMPARE(loom_function_call(echo, &arg, &code, 1, nullptr, nullptr), 0);
    QCOMPARE(loom_function_call(echo, &arg, &code, 0, &ret, &retCode), -1);
    QCOMPARE(QString(loom_get_last_error()), QString("fixture_echo: fixture_echo: expected 1 argument"));
    QCOMPARE(loom_function_free(echo), 0);

    QCOMPARE(loom_module_load(FIXTURE_MODULE, &m), 0);
    LoomFunctionHandle none = nullptr;
    QCOMPARE(loom_module_get_function(m, "missing_fn", &none), -1);
    QVERIFY(QString(loom_get_last_error()).contains("has no function 'missing_fn'"));
    QCOMPARE(loom_module_free(m), 0);
    QCOMPARE(loom_module_load("/no/such/file.so", &m), -1);
    QCOMPARE(QString(loom_get_last_error()),
             QString("loom_module_load: cannot load module '/no/such/file.so': no such file"));
    QCOMPARE(loom_module_load(FIXTURE_NOMETA, &m), 0);
    QVERIFY(loom_module_meta(m) == nullptr);
    QCOMPARE(loom_module_free(m), 0);
    QCOMPARE(loom_function_call(nullptr, nullptr, nullptr, 0, nullptr, nullptr), -1);
    QVERIFY(loom_runtime_num_threads() >= 1);
  }

  void cppWrapper() {
    loom::rt::Module m(FIXTURE_MODULE);
    QVERIFY(QString::fromStdString(m.meta()).contains("fixture_echo"));
    loom::rt::Function add = m.function("fixture_add");
    LoomDataType f32{kLoomDTypeFloat, 32, 1};
    loom::rt::Tensor a({4, 8}, f32), b({4, 8}, f32), c({4, 8}, f32);
    std::mt19937 rng(11);
    for (int i = 0; i < 32; ++i) {
      a.data<float>()[i] = float(rng() % 100) / 4.0f;
      b.data<float>()[i] = float(rng() % 100) / 8.0f;
    }
    int code = -1;
    QCOMPARE(add({a, b, c}, &code).v_int64, int64_t(32));
    QCOMPARE(code, int(kLoomArgInt));
    for (int i = 0; i < 32; ++i) QCOMPARE(c.data<float>()[i], a.data<float>()[i] + b.data<float>()[i]);
    loom::rt::Tensor d = c.copy();
    QCOMPARE(d.shape(), (std::vector<int64_t>{4, 8}));
    QCOMPARE(d.data<float>()[31], c.data<float>()[31]);
    try {
      add({a, b});
      QFAIL("no exception");
    } catch (const loom::rt::Error& e) {
      QVERIFY(QString(e.what()).contains("expected 3 arguments"));
    }
    QVERIFY_THROWS_EXCEPTION(loom::rt::Error, m.function("nope"));
    QVERIFY_THROWS_EXCEPTION(loom::rt::Error, loom::rt::Module("/no/such.so"));
    QVERIFY(loom::rt::numThreads() >= 1);
  }
};

QTEST_APPLESS_MAIN(TestCApi)
#include "test_capi.moc"
