// Module: loading a C test library with dlopen, its packed functions and metadata, loaders, imports, and load errors.
#include <QtTest>

#include <QTemporaryDir>
#include <fstream>
#include <random>

#include "runtime/Module.h"
#include "runtime/RuntimeFailure.h"

using namespace loom::runtime;

namespace {

QString failureOf(const std::function<void()>& body) {
  try {
    body();
  } catch (const RuntimeFailure& e) {
    return e.what();
  }
  return "no failure";
}

int constantSeven(LoomValue*, int*, int, LoomValue* ret, int* retCode, void*) {
  ret->v_int64 = 7;
  *retCode = kLoomArgInt;
  return 0;
}

// A module kind of the test's own, to show the loader table and imports.
class SevenModule : public ModuleNode {
public:
  const char* typeKey() const override { return "seven"; }
  PackedFunc findFunction(const std::string& name) override {
    if (name != "seven") return {};
    return PackedFunc(constantSeven, nullptr, name, shared_from_this());
  }
  std::optional<std::string> meta() const override { return "seven-meta"; }
};

}  // namespace

class TestModule : public QObject {
  Q_OBJECT
private slots:
  void loadsAndCalls() {
    Module m = Module::loadFile(FIXTURE_MODULE);
    QCOMPARE(QString(m.typeKey()), QString("library"));
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-10.0f, 10.0f);
    NDArray a = NDArray::empty({3, 17}, DType::f32());
    NDArray b = NDArray::empty({3, 17}, DType::f32());
    NDArray c = NDArray::empty({3, 17}, DType::f32());
    for (int i = 0; i < 51; ++i) {
      a.as<float>()[i] = dist(rng);
      b.as<float>()[i] = dist(rng);
    }
    PackedFunc add = m.getFunction("fixture_add");
    QCOMPARE(add(a, b, c).asInt(), int64_t(51));
    for (int i = 0; i < 51; ++i) QCOMPARE(c.as<float>()[i], a.as<float>()[i] + b.as<float>()[i]);
  }

  void everyTypeCodeThroughTheLibrary() {
    PackedFunc echo = Module::loadFile(FIXTURE_MODULE).getFunction("fixture_echo");
    QCOMPARE(echo(int64_t(-5)).asInt(), int64_t(-5));
    QCOMPARE(echo(PackedArg::uint(1ull << 63)).asUInt(), 1ull << 63);
    QCOMPARE(echo(-0.25).asFloat(), -0.25);
    int x = 0;
    QCOMPARE(echo(static_cast<void*>(&x)).asHandle(), static_cast<void*>(&x));
    QVERIFY(echo(nullptr).isNull());
    QCOMPARE(echo("text").asStr(), std::string("text"));
    LoomTensor t{};
    QCOMPARE(echo(&t).asTensor(), &t);
  }

  void errorsFromTheLibrary() {
    Module m = Module::loadFile(FIXTURE_MODULE);
    QCOMPARE(failureOf([&] { m.getFunction("fixture_fail")(); }),
             QString("fixture_fail: fixture_fail: failed on purpose"));
    QCOMPARE(QString(loom_get_last_error()), QString("fixture_fail: failed on purpose"));
    QCOMPARE(failureOf([&] { m.getFunction("fixture_add")(1, 2); }),
             QString("fixture_add: fixture_add: expected 3 arguments"));
  }

  void libraryCallsBackIntoTheRuntime() {
    // The library resolves loom_backend_* from this executable (exported by loom_runtime).
    Module m = Module::loadFile(FIXTURE_MODULE);
    NDArray in = NDArray::empty({1001}, DType::f32());
    NDArray out = NDArray::empty({1001}, DType::f32());
    for (int i = 0; i < 1001; ++i) in.as<float>()[i] = float(i % 13) - 6.0f;
    int64_t threads = m.getFunction("fixture_parallel_square")(in, out).asInt();
    QCOMPARE(threads, int64_t(loom_backend_num_threads()));
    for (int i = 0; i < 1001; ++i) QCOMPARE(out.as<float>()[i], in.as<float>()[i] * in.as<float>()[i]);
  }

  void metadata() {
    auto meta = Module::loadFile(FIXTURE_MODULE).meta();
    QVERIFY(meta.has_value());
    QCOMPARE(QString::fromStdString(*meta),
             QString("{\"functions\": [\"fixture_add\", \"fixture_echo\"]}"));
    QVERIFY(!Module::loadFile(FIXTURE_NOMETA).meta().has_value());
    QCOMPARE(Module::loadFile(FIXTURE_NOMETA).getFunction("nometa_answer")().asInt(), int64_t(42));
  }

  void functionKeepsLibraryLoaded() {
    PackedFunc f;
    {
      Module m = Module::loadFile(FIXTURE_NOMETA);
      f = m.getFunction("nometa_answer");
    }
    QCOMPARE(f().asInt(), int64_t(42));
  }

  void missingFile() {
    QString msg = failureOf([] { Module::loadFile("/nonexistent/dir/model.so"); });
    QCOMPARE(msg, QString("cannot load module '/nonexistent/dir/model.so': no such file"));
    QTemporaryDir dir;
    msg = failureOf([&] { Module::loadFile(dir.path().toStdString()); });
    QVERIFY2(msg.contains("is a directory"), qPrintable(msg));
  }

  void notASharedLibrary() {
    QTemporaryDir dir;
    std::string path = dir.filePath("fake.so").toStdString();
    std::ofstream(path) << "this is not an ELF file\n";
    QString msg = failureOf([&] { Module::loadFile(path); });
    QVERIFY2(msg.startsWith(QString::fromStdString("cannot load module '" + path +
                                                   "': not a loadable shared library (")),
             qPrintable(msg));
  }

  void missingSymbol() {
    Module m = Module::loadFile(FIXTURE_MODULE);
    QString msg = failureOf([&] { m.getFunction("no_such_function"); });
    QVERIFY2(msg.startsWith("module library '") &&
                 msg.endsWith("has no function 'no_such_function'"),
             qPrintable(msg));
    QVERIFY(!m.findFunction("no_such_function").defined());
    QVERIFY(!m.findFunction(LOOM_MODULE_META_SYMBOL).defined());  // data, not a function
    QVERIFY(failureOf([] { Module().getFunction("f"); }).contains("undefined module"));
  }

  void loadersAndImports() {
    Module::registerLoader(".seven", [](const std::string&) {
      return Module(std::make_shared<SevenModule>());
    });
    Module s = Module::loadFile("anything.seven");  // no file needed by this loader
    QCOMPARE(QString(s.typeKey()), QString("seven"));
    QCOMPARE(*s.meta(), std::string("seven-meta"));
    Module lib = Module::loadFile(FIXTURE_NOMETA);
    QVERIFY(!lib.findFunction("seven").defined());
    lib.import(s);
    QCOMPARE(lib.getFunction("seven")().asInt(), int64_t(7));  // found through the import
    QCOMPARE(lib.getFunction("nometa_answer")().asInt(), int64_t(42));
    QVERIFY(failureOf([&] { lib.import(lib); }).contains("cannot import itself"));
  }
};

QTEST_APPLESS_MAIN(TestModule)
#include "test_module.moc"
