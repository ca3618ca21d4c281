// Model libraries (`loom compile --output model.so`) through the C API and the C++ wrapper: a good one
// runs like the .tar and the in-process executor; every bad one (not a Loom library, missing symbol,
// wrong format version, truncated, damaged, empty) is refused with its message, never loaded or crashed on.
#include <QtTest>

#include <cstring>
#include <nlohmann/json.hpp>
#include <random>

#include "core/driver/CompileModel.h"
#include "core/driver/ExportLibrary.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "loom_runtime.h"
#include "loom_runtime.hpp"
#include "runtime/Elf.h"
#include "runtime/Package.h"

using namespace loom;

namespace {

const char* kModel = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";

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

/// Replaces every occurrence of `from` by `to` (same length) in `bytes`; returns the count.
int replaceAll(std::string& bytes, const std::string& from, const std::string& to) {
  int n = 0;
  for (size_t at = bytes.find(from); at != std::string::npos; at = bytes.find(from, at + to.size()), ++n)
    bytes.replace(at, from.size(), to);
  return n;
}

/// Writes `bytes` to `path` with a fresh file checksum: a library consistent in itself but changed
/// inside (as if another Loom had written it).
void writeStamped(const QString& path, std::string bytes) {
  runtime::ElfInfo elf;
  std::string why;
  QVERIFY(runtime::readElf(bytes, &elf, &why));
  uint64_t at = elf.symbols.at(runtime::kLibraryChecksumSymbol).fileOffset;
  std::memcpy(bytes.data() + at, runtime::kLibraryChecksumPlaceholder, 8);
  writeAll(path, bytes);
  runtime::stampLibraryChecksum(path.toStdString());
}

std::vector<float> run(loom::rt::Package& p, const std::vector<float>& x) {
  p.setInput(0, x.data(), x.size() * sizeof(float));
  p.run();
  return p.output<float>(0);
}

}  // namespace

class TestLibrary : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString m_so, m_tar;
  std::string m_bytes;
  std::vector<float> m_input, m_want;

  QString path(const char* name) const { return m_dir.path() + "/" + name; }

private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    frontend::ImportOptions io;
    io.inputShapes["data"] = {1, 3, 16, 16};
    driver::CompiledModel cm = driver::compileModel(frontend::importOnnx(kModel, io));
    m_so = path("m.so");
    m_tar = path("m.tar");
    driver::exportLibrary(cm, m_so.toStdString());
    driver::exportPackage(cm, m_tar.toStdString());
    m_bytes = readAll(m_so);
    QVERIFY(m_bytes.size() > 1000);
    std::mt19937 rng(5);
    std::uniform_real_distribution<float> u(-2.0f, 2.0f);
    for (int i = 0; i < 3 * 16 * 16; ++i) m_input.push_back(u(rng));
    auto ex = driver::createExecutor(cm);
    runtime::NDArray x = runtime::NDArray::empty({1, 3, 16, 16}, runtime::DType::f32());
    std::memcpy(x.data(), m_input.data(), m_input.size() * 4);
    ex->setInput(0, x);
    ex->run();
    runtime::NDArray y = ex->getOutput(0);
    m_want.assign(y.as<float>(), y.as<float>() + y.numel());
  }

  void libraryRunsLikeTheExecutorAndTheTar() {
    loom::rt::Package so(m_so.toStdString()), tar(m_tar.toStdString());
    QCOMPARE(so.numInputs(), 1);
    QCOMPARE(so.inputName(0), std::string("data"));
    QCOMPARE(so.outputName(0), std::string("output0"));  // compileModel without output names
    QCOMPARE(so.inputShape(0), (std::vector<int64_t>{1, 3, 16, 16}));
    std::vector<float> a = run(so, m_input), b = run(tar, m_input);
    QCOMPARE(a.size(), m_want.size());
    for (size_t i = 0; i < a.size(); ++i) {
      QVERIFY2(std::fabs(a[i] - m_want[i]) <= 1e-5f, qPrintable(QString::number(i)));
      QCOMPARE(a[i], b[i]);  // the same machine code
    }
    nlohmann::json meta = nlohmann::json::parse(so.metadata());
    QCOMPARE(meta["container"].get<std::string>(), std::string("so"));
    QCOMPARE(meta["format_version"].get<int>(), runtime::kPackageFormatVersion);
    QVERIFY(meta["members"].contains("graph.json") && meta["members"].contains("params.bin"));
    QCOMPARE(nlohmann::json::parse(tar.metadata())["container"].get<std::string>(), std::string("tar"));
    // The embedded data is exported data, readable from the file without loading it.
    runtime::ElfInfo elf;
    std::string why, graph;
    QVERIFY2(runtime::readElf(m_bytes, &elf, &why), why.c_str());
    QCOMPARE(elf.machine, runtime::hostElfMachine());
    QVERIFY(runtime::elfSymbolBytes(m_bytes, elf, runtime::kLibraryGraphSymbol, &graph));
    QVERIFY(nlohmann::json::parse(graph).contains("nodes"));
    QVERIFY(elf.dynamicFunctions.count("fused_nn_softmax"));
    QCOMPARE(loadError(m_so), QStringLiteral("<loaded with rc 0>"));
  }

  void twoHandlesOfOneLibrary() {
    // The same file loaded twice (dlopen shares it) runs independently.
    loom::rt::Package a(m_so.toStdString()), b(m_so.toStdString());
    std::vector<float> zeros(m_input.size(), 0.0f);
    std::vector<float> ya = run(a, m_input), yb = run(b, zeros), ya2 = run(a, m_input);
    QCOMPARE(ya, ya2);
    QVERIFY(ya != yb);
  }

  void notALoomLibrary() {
    // A shared library, but not a model: refused before it is loaded.
    writeAll(path("plain.c"), "int answer(void) { return 42; }\n");
    QProcess cc;
    cc.start("cc", {"-shared", "-fPIC", "-o", path("plain.so"), path("plain.c")});
    QVERIFY(cc.waitForFinished(60000) && cc.exitCode() == 0);
    QString e = loadError(path("plain.so"));
    QVERIFY2(e.contains("is not a Loom model library: it exports no __loom_metadata"), qPrintable(e));
    QVERIFY2(e.contains("plain.so"), qPrintable(e));
    // An object file is not a shared library.
    cc.start("cc", {"-c", "-fPIC", "-o", path("plain.o"), path("plain.c")});
    QVERIFY(cc.waitForFinished(60000) && cc.exitCode() == 0);
    e = loadError(path("plain.o"));
    QVERIFY2(e.contains("is not a shared library (ELF type 1"), qPrintable(e));
    // Neither ELF nor tar.
    writeAll(path("text.so"), std::string(2000, 'x'));
    e = loadError(path("text.so"));
    QVERIFY2(e.contains("is not a tar archive"), qPrintable(e));
    writeAll(path("empty.so"), "");
    e = loadError(path("empty.so"));
    QVERIFY2(e.contains("is empty"), qPrintable(e));
    e = loadError(path("no-such.so"));
    QVERIFY2(e.contains("cannot open package"), qPrintable(e));
  }

  void missingSymbols() {
    for (const char* sym : {"__loom_params", "__loom_graph_json", "__loom_params_size"}) {
      std::string bytes = m_bytes, name = sym;
      std::string renamed = name.substr(0, name.size() - 1) + "Z";
      QVERIFY(replaceAll(bytes, name + '\0', renamed + '\0') >= 1);
      writeAll(path("nosym.so"), bytes);
      QString e = loadError(path("nosym.so"));
      QVERIFY2(e.contains(QString("lacks the symbol ") + sym), qPrintable(e));
    }
    // A kernel the graph calls, renamed in the library: dlsym fails, the message names it.
    std::string bytes = m_bytes;
    QVERIFY(replaceAll(bytes, std::string("fused_nn_softmax") + '\0', std::string("fused_nn_softmaZ") + '\0') >= 1);
    writeAll(path("nokernel.so"), bytes);
    QString e = loadError(path("nokernel.so"));
    QVERIFY2(e.contains("nokernel.so' is damaged (crc32"), qPrintable(e));
    writeStamped(path("nokernel.so"), bytes);
    e = loadError(path("nokernel.so"));
    QVERIFY2(e.contains("fused_nn_softmax"), qPrintable(e));
  }

  void wrongFormatVersion() {
    std::string bytes = m_bytes;
    QCOMPARE(replaceAll(bytes, "\"format_version\": 1", "\"format_version\": 7"), 1);
    writeStamped(path("v7.so"), bytes);
    QString e = loadError(path("v7.so"));
    QVERIFY2(e.contains("has format version 7, this runtime reads version 1"), qPrintable(e));
    try {
      loom::rt::Package p(path("v7.so").toStdString());
      QFAIL("loaded a version-7 library");
    } catch (const loom::rt::Error& err) {
      QVERIFY(QString(err.what()).contains("format version 7"));
    }
  }

  void truncated() {
    for (size_t keep : {size_t(20), size_t(63), size_t(64), m_bytes.size() / 2, m_bytes.size() - 1}) {
      writeAll(path("cut.so"), m_bytes.substr(0, keep));
      QString e = loadError(path("cut.so"));
      QVERIFY2(e.contains("is truncated"), qPrintable(QString::number(keep) + ": " + e));
    }
  }

  void damagedData() {
    runtime::ElfInfo elf;
    std::string why;
    QVERIFY(runtime::readElf(m_bytes, &elf, &why));
    for (const char* sym : {runtime::kLibraryParamsSymbol, runtime::kLibraryGraphSymbol}) {
      std::string bytes = m_bytes;
      uint64_t at = elf.symbols.at(sym).fileOffset;
      QVERIFY(at < bytes.size());
      bytes[size_t(at) + 7] ^= 0x20;
      // Caught by the file checksum, and (restamped) by the metadata's checksum of the member.
      writeAll(path("damaged.so"), bytes);
      QString e = loadError(path("damaged.so"));
      QVERIFY2(e.contains("damaged.so' is damaged (crc32") && e.contains("of the file"), qPrintable(e));
      writeStamped(path("damaged.so"), bytes);
      e = loadError(path("damaged.so"));
      QVERIFY2(e.contains(sym == std::string(runtime::kLibraryParamsSymbol) ? "params.bin is damaged (crc32"
                                                                            : "graph.json is damaged (crc32"),
               qPrintable(e));
    }
    // A flipped byte in the machine code: refused by the file checksum, never run.
    {
      std::string bytes = m_bytes;
      uint64_t at = elf.symbols.at("fused_nn_softmax").fileOffset;
      bytes[size_t(at) + 3] ^= 0x5a;
      writeAll(path("code.so"), bytes);
      QString e = loadError(path("code.so"));
      QVERIFY2(e.contains("is damaged (crc32"), qPrintable(e));
    }
    // A size past the end of the file.
    std::string bytes = m_bytes;
    uint64_t at = elf.symbols.at(std::string(runtime::kLibraryParamsSymbol) + "_size").fileOffset;
    uint64_t huge = uint64_t(1) << 40;
    std::memcpy(bytes.data() + at, &huge, 8);
    writeStamped(path("huge.so"), bytes);
    QString e = loadError(path("huge.so"));
    QVERIFY2(e.contains("is damaged: the data of __loom_params lies outside the file"), qPrintable(e));
  }

  void inspectReadsLibrariesWithoutLoading() {
    auto inspect = [](const QString& file) {
      QProcess p;
      p.start(LOOM_CLI, {"inspect", file});
      p.waitForFinished(120000);
      return std::make_pair(p.exitCode(), QString::fromUtf8(p.readAllStandardOutput() + p.readAllStandardError()));
    };
    auto [code, out] = inspect(m_so);
    QVERIFY2(code == 0, qPrintable(out));
    for (const char* want : {"(one shared library)", "file checksum: ok", "members (embedded data):",
                             "fused_nn_softmax  (1 node)  schedule: default", "tuning records  none",
                             "data  float32[1, 3, 16, 16]", "params: 6 tensors"})
      QVERIFY2(out.contains(want), qPrintable(QString(want) + " not in:\n" + out));
    QVERIFY2(QRegularExpression(R"(params.bin .*crc32 [0-9a-f]{8} ok)").match(out).hasMatch(), qPrintable(out));
    // A damaged library: the file checksum and the member's say so.
    runtime::ElfInfo elf;
    std::string why, bytes = m_bytes;
    QVERIFY(runtime::readElf(bytes, &elf, &why));
    bytes[size_t(elf.symbols.at(runtime::kLibraryParamsSymbol).fileOffset) + 9] ^= 1;
    writeAll(path("inspect-damaged.so"), bytes);
    std::tie(code, out) = inspect(path("inspect-damaged.so"));
    QCOMPARE(code, 1);
    QVERIFY2(out.contains("file checksum: damaged") && QRegularExpression(R"(params.bin .*DAMAGED)").match(out).hasMatch(),
             qPrintable(out));
    QVERIFY2(out.contains("this package cannot run here:"), qPrintable(out));
    writeAll(path("inspect-cut.so"), m_bytes.substr(0, m_bytes.size() - 100));
    std::tie(code, out) = inspect(path("inspect-cut.so"));
    QCOMPARE(code, 1);
    QVERIFY2(out.contains("is truncated"), qPrintable(out));
    bytes = m_bytes;
    QCOMPARE(replaceAll(bytes, "\"format_version\": 1", "\"format_version\": 7"), 1);
    writeStamped(path("inspect-v7.so"), bytes);
    std::tie(code, out) = inspect(path("inspect-v7.so"));
    QCOMPARE(code, 1);
    QVERIFY2(out.contains("format version 7, this Loom reads 1") && out.contains("file checksum: ok"), qPrintable(out));
  }

  void byteFlipsNeverCrash() {
    // Flips anywhere (ELF and program headers, where a flip makes dlopen itself crash, code, data,
    // section headers): every load fails with a message, and nothing of the file runs.
    std::mt19937 rng(3);
    std::uniform_int_distribution<size_t> head(0, 511), any(0, m_bytes.size() - 1);
    std::uniform_int_distribution<int> byte(1, 255);
    int failed = 0;
    for (int k = 0; k < 80; ++k) {
      std::string bytes = m_bytes;
      size_t at = k % 2 ? head(rng) : any(rng);
      bytes[at] = char(bytes[at] ^ byte(rng));
      writeAll(path("flip.so"), bytes);
      LoomPackageHandle pkg = nullptr;
      if (loom_package_load(path("flip.so").toUtf8().constData(), &pkg) != 0) {
        ++failed;
        QVERIFY(std::strlen(loom_get_last_error()) > 0);
        continue;
      }
      loom_package_free(pkg);
    }
    QCOMPARE(failed, 80);
  }
};

QTEST_APPLESS_MAIN(TestLibrary)
#include "test_library.moc"
