// Packages for other places: cross-compiled for aarch64 (linked by ld.lld, or kernels.o when no linker
// exists) and refused here with the reason; C-source packages (--target c) whose kernels.c compiles
// with a plain `cc -c` and whose cc-built kernels give the LLVM build's outputs.
#include <QtTest>

#include <cmath>
#include <cstring>
#include <nlohmann/json.hpp>

#include "DeployTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/driver/Npz.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "runtime/Elf.h"
#include "runtime/Package.h"
#include "runtime/Tar.h"

using namespace loom;
using namespace loom::test;

namespace {

std::string readAll(const QString& path) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return {};
  QByteArray b = f.readAll();
  return std::string(b.constData(), size_t(b.size()));
}

/// e_type and e_machine of an ELF file's bytes (0, 0 when it is not ELF).
std::pair<int, int> elfTypeMachine(const std::string& bytes) {
  if (bytes.size() < 20 || bytes.compare(0, 4, "\x7f" "ELF") != 0) return {0, 0};
  uint16_t type = 0, machine = 0;
  std::memcpy(&type, bytes.data() + 16, 2);
  std::memcpy(&machine, bytes.data() + 18, 2);
  return {type, machine};
}

constexpr int kEtRel = 1, kEtDyn = 3, kEmAArch64 = 183;

const char* kSmallCnn = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";
const char* kShapes = "data:[1,3,16,16]";
const char* kArm = "llvm -mtriple=aarch64-linux-gnu";

}  // namespace

class TestCrossC : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString path(const QString& name) const { return m_dir.path() + "/" + name; }
  QString host() const { return QString::fromStdString(runtime::elfMachineName(runtime::hostElfMachine())); }

private slots:
  void initTestCase() { QVERIFY(m_dir.isValid()); }

  void aarch64Package() {
    if (QStandardPaths::findExecutable("ld.lld").isEmpty()) QSKIP("ld.lld not installed (apt-get install lld)");
    Proc c = runLoom({"compile", kSmallCnn, "--input-shapes", kShapes, "--target", kArm, "-o", path("arm.tar")});
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    QVERIFY2(!c.err.contains("note:"), qPrintable(c.err));
    auto files = runtime::readTar(path("arm.tar").toStdString());
    QCOMPARE(elfTypeMachine(files["kernels.so"]), std::make_pair(kEtDyn, kEmAArch64));
    runtime::ElfInfo elf;
    std::string why;
    QVERIFY(runtime::readElf(files["kernels.so"], &elf, &why));
    QVERIFY(elf.dynamicFunctions.count("fused_nn_softmax"));
    nlohmann::json meta = nlohmann::json::parse(files["metadata.json"]);
    QVERIFY2(meta["target"].get<std::string>().find("-mtriple=aarch64") != std::string::npos, meta.dump().c_str());

    Proc r = runLoom({"run", path("arm.tar")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("built for aarch64") && r.err.contains("this machine is " + host()), qPrintable(r.err));
    Proc i = runLoom({"inspect", path("arm.tar")});
    QCOMPARE(i.exitCode, 1);
    QVERIFY2(i.out.contains("its kernels are built for aarch64, this machine is " + host()), qPrintable(i.out));
    QVERIFY2(i.out.contains("fused_nn_softmax  (1 node)  schedule: default"), qPrintable(i.out));
  }

  void aarch64Library() {
    if (QStandardPaths::findExecutable("ld.lld").isEmpty()) QSKIP("ld.lld not installed (apt-get install lld)");
    Proc c = runLoom({"compile", kSmallCnn, "--input-shapes", kShapes, "--target", kArm, "-o", path("arm.so")});
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    std::string bytes = readAll(path("arm.so"));
    QCOMPARE(elfTypeMachine(bytes), std::make_pair(kEtDyn, kEmAArch64));
    runtime::ElfInfo elf;
    std::string why, meta;
    QVERIFY(runtime::readElf(bytes, &elf, &why));
    QVERIFY(runtime::elfSymbolBytes(bytes, elf, runtime::kLibraryMetadataSymbol, &meta));
    QVERIFY2(meta.find("aarch64") != std::string::npos, meta.c_str());
    Proc r = runLoom({"run", path("arm.so")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("library '" + path("arm.so") + "' was built for aarch64") &&
                 r.err.contains("this machine is " + host()),
             qPrintable(r.err));
    Proc d = runProgram(DEPLOY_BINARY, {path("arm.so"), path("none.raw")});
    QCOMPARE(d.exitCode, 1);
    QVERIFY2(d.err.contains("built for aarch64"), qPrintable(d.err));
  }

  void aarch64WithoutLinker() {
    QDir().mkpath(path("emptybin"));
    // A package: kernels.o instead of kernels.so, and a note on how to link it.
    Proc c = runLoom({"compile", kSmallCnn, "--input-shapes", kShapes, "--target", kArm, "-o", path("arm-o.tar")},
                     path("emptybin"));
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    QVERIFY2(c.err.contains("note:") && c.err.contains("no ld.lld on PATH") && c.err.contains("apt-get install lld") &&
                 c.err.contains("ld.lld -shared -o kernels.so kernels.o"),
             qPrintable(c.err));
    auto files = runtime::readTar(path("arm-o.tar").toStdString());
    QVERIFY(!files.count("kernels.so"));
    QCOMPARE(elfTypeMachine(files["kernels.o"]), std::make_pair(kEtRel, kEmAArch64));
    Proc r = runLoom({"run", path("arm-o.tar")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("holds kernels.o but no kernels.so"), qPrintable(r.err));
    Proc i = runLoom({"inspect", path("arm-o.tar")});
    QCOMPARE(i.exitCode, 1);
    QVERIFY2(i.out.contains("it holds kernels.o, not linked"), qPrintable(i.out));

    // A library: no .so, the object next to it, and the command that links it.
    c = runLoom({"compile", kSmallCnn, "--input-shapes", kShapes, "--target", kArm, "-o", path("arm-o.so")},
                path("emptybin"));
    QCOMPARE(c.exitCode, 1);
    QVERIFY2(c.err.contains("no ld.lld on PATH") && c.err.contains("arm-o.o"), qPrintable(c.err));
    QVERIFY(!QFile::exists(path("arm-o.so")));
    std::string obj = readAll(path("arm-o.o"));
    QCOMPARE(elfTypeMachine(obj), std::make_pair(kEtRel, kEmAArch64));
    // The command the message gives makes the library.
    if (QStandardPaths::findExecutable("ld.lld").isEmpty()) return;
    Proc l = runProgram("ld.lld", {"-shared", "-o", path("arm-o.so"), path("arm-o.o")});
    QVERIFY2(l.exitCode == 0, qPrintable(l.err));
    std::string lib = readAll(path("arm-o.so"));
    QCOMPARE(elfTypeMachine(lib), std::make_pair(kEtDyn, kEmAArch64));
    runtime::ElfInfo elf;
    std::string why, graph;
    QVERIFY(runtime::readElf(lib, &elf, &why));
    QVERIFY(runtime::elfSymbolBytes(lib, elf, runtime::kLibraryGraphSymbol, &graph));
    QVERIFY(nlohmann::json::parse(graph).contains("nodes"));
  }

  void cPackageMatchesLLVM_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("input");
    QTest::newRow("small_cnn") << "small_cnn" << "data";
    QTest::newRow("fire_net") << "fire_net" << "data";
    QTest::newRow("transformer_block") << "transformer_block" << "x";
  }

  void cPackageMatchesLLVM() {
    QFETCH(QString, model);
    QFETCH(QString, input);
    QString src = QStringLiteral(LOOM_SOURCE_DIR "/examples/models/") + model;
    runtime::NDArray x = frontend::loadTensorProto((src + "/test_data_set_0/input_0.pb").toStdString());
    QStringList dims;
    for (int64_t d : x.shape()) dims << QString::number(d);
    QString shapes = input + ":[" + dims.join(",") + "]", in = path(model + "-in.npz");
    driver::writeNpz(in.toStdString(), {{input.toStdString(), x}});

    // The LLVM build, in this process.
    frontend::ImportOptions io;
    io.inputShapes[input.toStdString()] = x.shape();
    driver::CompiledModel cm = driver::compileModel(frontend::importOnnx((src + "/model.onnx").toStdString(), io));
    auto ex = driver::createExecutor(cm);
    ex->setInput(0, x);
    ex->run();
    std::map<QString, runtime::NDArray> outs;
    outs["llvm"] = ex->getOutput(0);
    // The .so form for one model (its kernels are the same cc build; the C compiles are the slow part).
    QStringList kinds = {"c.tar"};
    if (model == "small_cnn") kinds << "c.so";
    for (const QString& kind : kinds) {
      QString pkg = path(model + "-" + kind);
      Proc c = runLoom({"compile", src + "/model.onnx", "--input-shapes", shapes, "--target", "c", "-o", pkg});
      QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
      Proc r = runLoom({"run", pkg, "--inputs", in, "--outputs", pkg + ".out.npz"});
      QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
      outs[kind] = driver::readNpz((pkg + ".out.npz").toStdString()).at(0).second;
    }
    for (const QString& kind : kinds)
      QVERIFY2(maxDiff(outs[kind], outs["llvm"]) < 1e-5, qPrintable(kind + ": " + QString::number(maxDiff(outs[kind], outs["llvm"]))));

    // kernels.c is self-contained: a plain `cc -c` compiles it (no include path, no flags).
    auto files = runtime::readTar(path(model + "-c.tar").toStdString());
    QVERIFY(files.count("kernels.c") && files.count("kernels.so"));
    QVERIFY(nlohmann::json::parse(files["metadata.json"])["target"] == "c");
    QString cfile = path(model + "-kernels.c");
    {
      QFile f(cfile);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(files["kernels.c"].data(), qint64(files["kernels.c"].size()));
    }
    Proc cc = runProgram("cc", {"-c", cfile, "-o", path(model + "-kernels.o")});
    QVERIFY2(cc.exitCode == 0, qPrintable(cc.err.left(3000)));
    QCOMPARE(elfTypeMachine(readAll(path(model + "-kernels.o"))).first, kEtRel);
  }

  void cPackageWithoutCompiler() {
    QDir().mkpath(path("emptybin"));
    Proc c = runLoom({"compile", kSmallCnn, "--input-shapes", kShapes, "--target", "c", "-o", path("c-only.tar")},
                     path("emptybin"));
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    QVERIFY2(c.err.contains("note: no C compiler 'cc' on PATH: the package holds kernels.c only"), qPrintable(c.err));
    auto files = runtime::readTar(path("c-only.tar").toStdString());
    QVERIFY(files.count("kernels.c") && !files.count("kernels.so"));
    Proc r = runLoom({"run", path("c-only.tar")});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("holds kernels.c but no kernels.so") && r.err.contains("cc -O2 -fPIC -fwrapv -shared"),
             qPrintable(r.err));
    // A library needs the compiler.
    c = runLoom({"compile", kSmallCnn, "--input-shapes", kShapes, "--target", "c", "-o", path("c-only.so")},
                path("emptybin"));
    QCOMPARE(c.exitCode, 1);
    QVERIFY2(c.err.contains("no C compiler 'cc' on PATH"), qPrintable(c.err));
  }
};

QTEST_APPLESS_MAIN(TestCrossC)
#include "test_cross_c.moc"
