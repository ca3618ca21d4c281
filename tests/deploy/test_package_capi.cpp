// The package C API (loom_package_*): a good package runs like the in-process executor; every bad
// package or bad call fails with its message through the return code and loom_get_last_error().
#include <QtTest>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "core/driver/CompileModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "loom_runtime.h"
#include "loom_runtime.hpp"
#include "runtime/Package.h"
#include "runtime/Tar.h"

using namespace loom;

namespace {

const char* kModel = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";

std::vector<float> randomFloats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-2.0f, 2.0f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

std::string readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QByteArray b = f.readAll();
  return std::string(b.constData(), size_t(b.size()));
}

void writeAll(const QString& path, const std::string& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  QCOMPARE(f.write(bytes.data(), qint64(bytes.size())), qint64(bytes.size()));
}

/// The files of `src` with `name` replaced (or dropped when `contents` is null), as a new package;
/// with `refresh`, metadata.json's member sizes and checksums are updated to match (a package
/// consistent in itself but wrong inside), else they are left (a package damaged after writing).
void rewritePackage(const QString& src, const QString& dst, const std::string& name, const std::string* contents,
                    bool refresh = false) {
  auto files = runtime::readTar(src.toStdString());
  if (contents) files[name] = *contents;
  else files.erase(name);
  if (refresh) {
    nlohmann::json meta = nlohmann::json::parse(files["metadata.json"]);
    for (const auto& [n, data] : files)
      if (n != "metadata.json") meta["members"][n] = {{"bytes", data.size()}, {"crc32", runtime::packageChecksum(data)}};
    files["metadata.json"] = meta.dump(2);
  }
  std::vector<std::pair<std::string, std::string>> out(files.begin(), files.end());
  runtime::writeTar(dst.toStdString(), out);
}

/// Loads `path` expecting failure; returns the message.
QString loadError(const QString& path) {
  LoomPackageHandle pkg = reinterpret_cast<LoomPackageHandle>(0x1);
  int rc = loom_package_load(path.toUtf8().constData(), &pkg);
  if (rc != -1) {
    loom_package_free(rc == 0 ? pkg : nullptr);
    return QStringLiteral("<loaded with rc %1>").arg(rc);
  }
  if (pkg != nullptr) return QStringLiteral("<handle not cleared>");
  return QString::fromUtf8(loom_get_last_error());
}

}  // namespace

class TestPackageCApi : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString m_pkg;
  std::vector<float> m_input, m_want;

  QString path(const char* name) const { return m_dir.path() + "/" + name; }

private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_pkg = path("small_cnn.tar");
    frontend::ImportOptions io;
    io.inputShapes["data"] = {1, 3, 16, 16};
    driver::CompileModelOptions co;
    co.outputNames = {"prob"};
    driver::CompiledModel cm = driver::compileModel(frontend::importOnnx(kModel, io), "llvm", {}, co);
    driver::writePackage(cm, m_pkg.toStdString());
    m_input = randomFloats(3 * 16 * 16, 5);
    auto ex = driver::createExecutor(cm);
    runtime::NDArray x = runtime::NDArray::empty({1, 3, 16, 16}, runtime::DType::f32());
    std::memcpy(x.data(), m_input.data(), m_input.size() * sizeof(float));
    ex->setInput(0, x);
    ex->run();
    runtime::NDArray y = ex->getOutput(0);
    m_want.assign(y.as<float>(), y.as<float>() + y.numel());
    QCOMPARE(m_want.size(), size_t(10));
  }

  void goodPackageMatchesInProcessExecutor() {
    LoomPackageHandle pkg = nullptr;
    QCOMPARE(loom_package_load(m_pkg.toUtf8().constData(), &pkg), 0);
    QVERIFY(pkg);
    int n = -1;
    QCOMPARE(loom_package_num_inputs(pkg, &n), 0);
    QCOMPARE(n, 1);
    QCOMPARE(loom_package_num_outputs(pkg, &n), 0);
    QCOMPARE(n, 1);
    const char* name = nullptr;
    QCOMPARE(loom_package_input_name(pkg, 0, &name), 0);
    QCOMPARE(QString(name), QString("data"));
    QCOMPARE(loom_package_output_name(pkg, 0, &name), 0);
    QCOMPARE(QString(name), QString("prob"));
    QCOMPARE(loom_package_output_index(pkg, "prob", &n), 0);
    QCOMPARE(n, 0);
    const int64_t* shape = nullptr;
    int ndim = 0;
    QCOMPARE(loom_package_input_shape(pkg, 0, &shape, &ndim), 0);
    QCOMPARE(std::vector<int64_t>(shape, shape + ndim), (std::vector<int64_t>{1, 3, 16, 16}));
    QCOMPARE(loom_package_output_shape(pkg, 0, &shape, &ndim), 0);
    QCOMPARE(std::vector<int64_t>(shape, shape + ndim), (std::vector<int64_t>{1, 10}));
    LoomDataType dt{};
    QCOMPARE(loom_package_input_dtype(pkg, 0, &dt), 0);
    QVERIFY(dt.code == kLoomDTypeFloat && dt.bits == 32 && dt.lanes == 1);
    size_t bytes = 0;
    QCOMPARE(loom_package_input_nbytes(pkg, 0, &bytes), 0);
    QCOMPARE(bytes, size_t(3 * 16 * 16 * 4));
    QCOMPARE(loom_package_output_nbytes(pkg, 0, &bytes), 0);
    QCOMPARE(bytes, size_t(40));
    const char* meta = nullptr;
    QCOMPARE(loom_package_metadata(pkg, &meta), 0);
    QVERIFY(std::strstr(meta, "\"format_version\": 1"));

    // By index, by name and as a tensor: the outputs equal the in-process executor's.
    std::vector<float> got(10, -1.0f);
    QCOMPARE(loom_package_set_input(pkg, 0, m_input.data(), m_input.size() * 4), 0);
    QCOMPARE(loom_package_run(pkg), 0);
    QCOMPARE(loom_package_get_output(pkg, 0, got.data(), 40), 0);
    for (size_t i = 0; i < 10; ++i) QVERIFY2(std::fabs(got[i] - m_want[i]) < 1e-6, qPrintable(QString::number(i)));
    std::vector<float> zeros(m_input.size(), 0.0f), other(10);
    QCOMPARE(loom_package_set_input_by_name(pkg, "data", zeros.data(), zeros.size() * 4), 0);
    QCOMPARE(loom_package_run(pkg), 0);
    QCOMPARE(loom_package_get_output(pkg, 0, other.data(), 40), 0);
    QVERIFY(other != got);  // the input matters
    int64_t s4[4] = {1, 3, 16, 16};
    LoomTensor t{};
    t.data = m_input.data();
    t.device = {kLoomCPU, 0};
    t.ndim = 4;
    t.dtype = {kLoomDTypeFloat, 32, 1};
    t.shape = s4;
    QCOMPARE(loom_package_set_input_tensor(pkg, 0, &t), 0);
    QCOMPARE(loom_package_run(pkg), 0);
    QCOMPARE(loom_package_get_output(pkg, 0, other.data(), 40), 0);
    QCOMPARE(other, got);
    QCOMPARE(loom_package_free(pkg), 0);
  }

  void cppWrapper() {
    rt::Package p(m_pkg.toStdString());
    QCOMPARE(p.numInputs(), 1);
    QCOMPARE(p.inputName(0), std::string("data"));
    QCOMPARE(p.inputShape(0), (std::vector<int64_t>{1, 3, 16, 16}));
    QCOMPARE(p.outputShape(p.outputIndex("prob")), (std::vector<int64_t>{1, 10}));
    p.setInput("data", m_input.data(), m_input.size() * 4);
    p.run();
    std::vector<float> got = p.output<float>(0);
    QCOMPARE(got.size(), size_t(10));
    for (size_t i = 0; i < 10; ++i) QVERIFY(std::fabs(got[i] - m_want[i]) < 1e-6);
    rt::Tensor t({1, 3, 16, 16}, LoomDataType{kLoomDTypeInt, 32, 1});
    try {
      p.setInput(0, t);
      QFAIL("an int32 tensor was accepted");
    } catch (const rt::Error& e) {
      QVERIFY2(std::strstr(e.what(), "expects float32[1, 3, 16, 16], got int32[1, 3, 16, 16]"), e.what());
    }
    try {
      rt::Package bad(path("does-not-exist.tar").toStdString());
      QFAIL("a missing package loaded");
    } catch (const rt::Error& e) {
      QVERIFY2(std::strstr(e.what(), "cannot open package"), e.what());
    }
  }

  void missingFile() { QVERIFY(loadError(path("nope.tar")).contains("cannot open package")); }

  void emptyFile() {
    writeAll(path("empty.tar"), "");
    QString e = loadError(path("empty.tar"));
    QVERIFY2(e.contains("empty.tar' is empty"), qPrintable(e));
  }

  void notATar() {
    writeAll(path("text.tar"), std::string(2000, 'x'));
    QString e = loadError(path("text.tar"));
    QVERIFY2(e.contains("is not a tar archive"), qPrintable(e));
    writeAll(path("short.tar"), "hello");
    e = loadError(path("short.tar"));
    QVERIFY2(e.contains("is not a tar archive (5 bytes"), qPrintable(e));
    // The ONNX model is not a package either.
    e = loadError(kModel);
    QVERIFY2(e.contains("is not a tar archive"), qPrintable(e));
  }

  void truncatedFile() {
    std::string bytes = readAll(m_pkg);
    QVERIFY(bytes.size() > 4096);
    // Cut at many points: inside a member's data, inside a header, at a header boundary.
    for (size_t cut : {bytes.size() / 2, bytes.size() - 1030, size_t(700), size_t(512), size_t(1024 + 100),
                       bytes.size() / 3 + 7}) {
      writeAll(path("cut.tar"), bytes.substr(0, cut));
      QString e = loadError(path("cut.tar"));
      QVERIFY2(e.contains("truncated"), qPrintable(QString::number(cut) + ": " + e));
    }
  }

  void wrongFormatVersion() {
    auto files = runtime::readTar(m_pkg.toStdString());
    std::string meta = files["metadata.json"];
    size_t at = meta.find("\"format_version\": 1");
    QVERIFY(at != std::string::npos);
    meta.replace(at, std::strlen("\"format_version\": 1"), "\"format_version\": 99");
    rewritePackage(m_pkg, path("v99.tar"), "metadata.json", &meta);
    QString e = loadError(path("v99.tar"));
    QVERIFY2(e.contains("has format version 99, this runtime reads version 1"), qPrintable(e));
    std::string notJson = "{ format";
    rewritePackage(m_pkg, path("badmeta.tar"), "metadata.json", &notJson);
    e = loadError(path("badmeta.tar"));
    QVERIFY2(e.contains("metadata.json is not valid JSON"), qPrintable(e));
  }

  void missingMember() {
    rewritePackage(m_pkg, path("noparams.tar"), "params.bin", nullptr);
    QString e = loadError(path("noparams.tar"));
    QVERIFY2(e.contains("has no params.bin"), qPrintable(e));
  }

  void missingKernelSymbol() {
    auto files = runtime::readTar(m_pkg.toStdString());
    std::string graph = files["graph.json"];
    size_t at = graph.find("\"func\": \"fused_nn_softmax\"");
    if (at == std::string::npos) at = graph.find("\"func\":\"fused_nn_softmax\"");
    QVERIFY2(at != std::string::npos, graph.c_str());
    size_t name = graph.find("fused_nn_softmax", at);
    graph.replace(name, std::strlen("fused_nn_softmax"), "fused_nn_missing");
    rewritePackage(m_pkg, path("nosym.tar"), "graph.json", &graph, true);
    QString e = loadError(path("nosym.tar"));
    QVERIFY2(e.contains("has no function 'fused_nn_missing'"), qPrintable(e));
    QVERIFY2(e.contains("nosym.tar"), qPrintable(e));
  }

  void corruptKernels() {
    std::string junk(4096, '\x7f');
    rewritePackage(m_pkg, path("junkso.tar"), "kernels.so", &junk, true);
    QString e = loadError(path("junkso.tar"));
    QVERIFY2(e.contains("cannot load kernels.so"), qPrintable(e));
  }

  void damagedMember() {
    // One flipped byte in the machine code: refused by its checksum, never run.
    auto files = runtime::readTar(m_pkg.toStdString());
    for (const char* member : {"kernels.so", "params.bin", "graph.json"}) {
      std::string bytes = files[member];
      bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 0x40);
      rewritePackage(m_pkg, path("flip.tar"), member, &bytes);
      QString e = loadError(path("flip.tar"));
      QVERIFY2(e.contains(QString(member) + " is damaged (crc32 "), qPrintable(e));
      bytes.pop_back();
      rewritePackage(m_pkg, path("short.tar"), member, &bytes);
      e = loadError(path("short.tar"));
      QVERIFY2(e.contains(QString(member) + " is damaged (" + QString::number(bytes.size()) + " bytes, metadata.json says"),
               qPrintable(e));
    }
    // zlib's CRC-32.
    QCOMPARE(runtime::packageChecksum("123456789"), std::string("cbf43926"));
    QCOMPARE(runtime::packageChecksum(""), std::string("00000000"));
  }

  void wrongInputs() {
    LoomPackageHandle pkg = nullptr;
    QCOMPARE(loom_package_load(m_pkg.toUtf8().constData(), &pkg), 0);
    auto err = [] { return QString::fromUtf8(loom_get_last_error()); };
    // Wrong size of raw bytes.
    QCOMPARE(loom_package_set_input(pkg, 0, m_input.data(), 100), -1);
    QVERIFY2(err().contains("input 'data' expects float32[1, 3, 16, 16] = 3072 bytes, got 100 bytes"), qPrintable(err()));
    // Wrong shape and wrong dtype of a tensor.
    int64_t s3[3] = {3, 16, 16}, s4[4] = {1, 3, 16, 16};
    LoomTensor t{};
    t.data = m_input.data();
    t.device = {kLoomCPU, 0};
    t.ndim = 3;
    t.dtype = {kLoomDTypeFloat, 32, 1};
    t.shape = s3;
    QCOMPARE(loom_package_set_input_tensor(pkg, 0, &t), -1);
    QVERIFY2(err().contains("expects float32[1, 3, 16, 16], got float32[3, 16, 16]"), qPrintable(err()));
    t.ndim = 4;
    t.shape = s4;
    t.dtype = {kLoomDTypeFloat, 16, 1};
    QCOMPARE(loom_package_set_input_tensor(pkg, 0, &t), -1);
    QVERIFY2(err().contains("got float16[1, 3, 16, 16]"), qPrintable(err()));
    t.dtype = {kLoomDTypeFloat, 32, 1};
    int64_t strides[4] = {768, 1, 48, 3};  // channels last: not compact row-major
    t.strides = strides;
    QCOMPARE(loom_package_set_input_tensor(pkg, 0, &t), -1);
    QVERIFY2(err().contains("not compact row-major"), qPrintable(err()));
    // Bad index and name.
    QCOMPARE(loom_package_set_input(pkg, 1, m_input.data(), 3072), -1);
    QVERIFY2(err().contains("input index 1 out of range (the model has 1 input)"), qPrintable(err()));
    QCOMPARE(loom_package_set_input_by_name(pkg, "image", m_input.data(), 3072), -1);
    QVERIFY2(err().contains("no input named 'image' (the model has: data)"), qPrintable(err()));
    const char* name = nullptr;
    QCOMPARE(loom_package_output_name(pkg, -1, &name), -1);
    QVERIFY2(err().contains("output index -1 out of range"), qPrintable(err()));
    // Output buffer of the wrong size; null handles and pointers.
    float small[4];
    QCOMPARE(loom_package_run(pkg), 0);
    QCOMPARE(loom_package_get_output(pkg, 0, small, sizeof small), -1);
    QVERIFY2(err().contains("output 'prob' is float32[1, 10] = 40 bytes, the buffer has 16 bytes"), qPrintable(err()));
    QCOMPARE(loom_package_run(nullptr), -1);
    QVERIFY2(err().contains("loom_package_run: null package"), qPrintable(err()));
    const int64_t* shape = nullptr;
    QCOMPARE(loom_package_input_shape(nullptr, 0, &shape, nullptr), -1);
    QCOMPARE(loom_package_set_input(pkg, 0, nullptr, 3072), -1);
    QVERIFY2(err().contains("null data for input 'data'"), qPrintable(err()));
    QCOMPARE(loom_package_load(nullptr, nullptr), -1);
    QCOMPARE(loom_package_free(pkg), 0);
    QCOMPARE(loom_package_free(nullptr), 0);
  }
};

QTEST_APPLESS_MAIN(TestPackageCApi)
#include "test_package_capi.moc"
