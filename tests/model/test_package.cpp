// Packages and the CLI: .npz round trips, a package run by `loom run` in a fresh process gives
// the in-process outputs, and every CLI failure exits with its code and message.
#include <QtTest>
#include <QRegularExpression>

#include "ModelTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/driver/Npz.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "runtime/Package.h"

using namespace loom;

namespace {
const QString kModel = QStringLiteral(LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx");

/// Compiles small_cnn again to `out` (already written there) with a file size limit 1 KiB below
/// its size, SIGXFSZ ignored, so the write fails with EFBIG as on a full disk: exit code 1, a
/// message naming `out`, the cause and that the previous file is unchanged; `out` unchanged and
/// no other file left in `dir`.
void compileOnAFullDisk(const QString& out, const QString& dir) {
  QFile f(out);
  QVERIFY(f.open(QIODevice::ReadOnly));
  QByteArray before = f.readAll();
  f.close();
  QString blocks = QString::number(before.size() / 1024 - 1);
  QProcess sh;
  sh.start("bash", {"-c", "trap '' XFSZ; ulimit -f " + blocks + "; exec \"$0\" \"$@\"",
                    QStringLiteral(LOOM_BINARY_DIR "/bin/loom"), "compile", kModel, "--input-shapes",
                    "data:[1,3,16,16]", "--opt-level", "1", "-o", out});
  QVERIFY(sh.waitForFinished(300000));
  QString err = QString::fromUtf8(sh.readAllStandardError());
  QCOMPARE(sh.exitStatus(), QProcess::NormalExit);
  QVERIFY2(sh.exitCode() == 1 && err.contains("cannot write '" + out + "'") && err.contains("File too large") &&
               err.contains("the previous file is unchanged"),
           qPrintable(err));
  QVERIFY(f.open(QIODevice::ReadOnly));
  QCOMPARE(f.readAll(), before);
  QCOMPARE(QDir(dir).entryList(QDir::Files | QDir::Hidden), QStringList{QFileInfo(out).fileName()});
}
}

class TestPackage : public QObject {
  Q_OBJECT

private slots:
  void npzRoundTrip() {
    QTemporaryDir dir;
    std::string path = (dir.path() + "/a.npz").toStdString();
    runtime::NDArray f = test::randomArray({2, 3, 4}, 9);
    runtime::NDArray i = runtime::NDArray::empty({3}, runtime::DType{runtime::DType::Int, 64, 1});
    for (int k = 0; k < 3; ++k) i.as<int64_t>()[k] = -7 * k;
    runtime::NDArray b = runtime::NDArray::empty({2, 2}, runtime::DType{runtime::DType::Bool, 1, 1});
    for (int k = 0; k < 4; ++k) b.as<uint8_t>()[k] = uint8_t(k % 2);
    runtime::NDArray s = runtime::NDArray::empty({}, runtime::DType::f32());
    s.as<float>()[0] = -1.5f;
    driver::writeNpz(path, {{"f", f}, {"i", i}, {"b", b}, {"s", s}});
    auto back = driver::readNpz(path);
    QCOMPARE(back.size(), size_t(4));
    std::vector<runtime::NDArray> orig = {f, i, b, s};
    for (size_t k = 0; k < 4; ++k) {
      QCOMPARE(back[k].second.shape(), orig[k].shape());
      QVERIFY(back[k].second.dtype() == orig[k].dtype());
      QCOMPARE(std::memcmp(back[k].second.data(), orig[k].data(), orig[k].byteSize()), 0);
    }
    QCOMPARE(back[0].first, std::string("f"));
    // Deflated members (np.savez_compressed) read too: recompress with Python's zipfile.
    QString deflated = dir.path() + "/c.npz";
    QProcess py;
    py.start("python3", {"-c",
                         "import zipfile,sys\n"
                         "src=zipfile.ZipFile(sys.argv[1])\n"
                         "dst=zipfile.ZipFile(sys.argv[2],'w',zipfile.ZIP_DEFLATED)\n"
                         "[dst.writestr(n,src.read(n)) for n in src.namelist()]\n"
                         "dst.close()\n",
                         QString::fromStdString(path), deflated});
    if (!py.waitForFinished(20000) || py.exitCode() != 0) QSKIP("python3 zipfile not available");
    auto z = driver::readNpz(deflated.toStdString());
    QCOMPARE(z.size(), size_t(4));
    QCOMPARE(std::memcmp(z[0].second.data(), f.data(), f.byteSize()), 0);
    // Not an npz.
    QVERIFY_THROWS_EXCEPTION(NpzError, driver::readNpz(kModel.toStdString()));
  }

  void packageInFreshProcessMatchesInProcess() {
    QTemporaryDir dir;
    QString pkg = dir.path() + "/m.tar", in = dir.path() + "/in.npz", out = dir.path() + "/out.npz";
    frontend::ImportOptions io;
    io.inputShapes["data"] = {1, 3, 16, 16};
    graph::Module m = frontend::importOnnx(kModel.toStdString(), io);
    driver::CompiledModel cm = driver::compileModel(m);
    driver::writePackage(cm, pkg.toStdString());
    QCOMPARE(cm.inputs.size(), size_t(1));
    runtime::NDArray x = test::randomArray(cm.inputs[0].shape, 21);
    driver::writeNpz(in.toStdString(), {{cm.inputs[0].name, x}});
    auto ex = driver::createExecutor(cm);
    ex->setInput(0, x);
    ex->run();
    runtime::NDArray want = ex->getOutput(0);
    // The package loads in this process through the runtime alone...
    runtime::Package p = runtime::loadPackage(pkg.toStdString());
    QVERIFY(p.metadata.find("\"outputs\"") != std::string::npos);
    p.executor->setInput(0, x);
    p.executor->run();
    QVERIFY(test::maxDiff(p.executor->getOutput(0), want) < 1e-6);
    // ...and in a fresh `loom run`.
    auto r = test::runLoom({"run", pkg, "--inputs", in, "--outputs", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    auto got = driver::readNpz(out.toStdString());
    QCOMPARE(got.size(), size_t(1));
    QVERIFY(test::maxDiff(got[0].second, want) < 1e-6);
    // --print-top / --profile / --print-time print their reports.
    r = test::runLoom({"run", pkg, "--fill-mode", "ones", "--repeat", "3", "--print-time", "--print-top", "2", "--profile"});
    QCOMPARE(r.exitCode, 0);
    QVERIFY(r.out.contains("time (ms): mean"));
    QVERIFY(r.out.contains("top 2 of"));
    QVERIFY(r.out.contains("total"));
    // tvmc's timing: warm-up runs untimed, --repeat measurements of --number runs each, with the
    // median, min, max and standard deviation; the timed runs do not change the outputs.
    r = test::runLoom({"run", pkg, "--inputs", in, "--outputs", out, "--print-time", "--warmup", "2", "--number", "4",
                       "--repeat", "3"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QRegularExpression timing(R"(time \(ms\): mean ([0-9.]+), median ([0-9.]+), min ([0-9.]+), max ([0-9.]+), std ([0-9.]+) )"
                              R"(over 3 measurements of 4 runs \(2 warm-up runs not counted\))");
    QRegularExpressionMatch tm = timing.match(r.out);
    QVERIFY2(tm.hasMatch(), qPrintable(r.out));
    const double mean = tm.captured(1).toDouble(), median = tm.captured(2).toDouble(), mn = tm.captured(3).toDouble(),
                 mx = tm.captured(4).toDouble();
    QVERIFY(mn <= median && median <= mx && mn <= mean && mean <= mx && mn > 0);
    QVERIFY(test::maxDiff(driver::readNpz(out.toStdString())[0].second, want) < 1e-6);
    QCOMPARE(test::runLoom({"run", pkg, "--number", "0"}).exitCode, 1);
  }

  void compileCommandWritesPackage() {
    QTemporaryDir dir;
    QString pkg = dir.path() + "/c.tar";
    auto r = test::runLoom({"compile", kModel, "--input-shapes", "data:[1,3,16,16]", "--opt-level", "1", "-o", pkg});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY(QFile::exists(pkg));
    r = test::runLoom({"run", pkg, "--fill-mode", "zeros"});
    QCOMPARE(r.exitCode, 0);
    // A full disk while exporting (a file size limit 1 KiB below the package's size, SIGXFSZ
    // ignored: the temporary objects fit, the package's write fails with EFBIG): exit code 1, a
    // message naming the file and the cause, the previous package unchanged and no temporary file
    // left beside it.
    compileOnAFullDisk(pkg, dir.path());
  }

  void fullDiskKeepsThePreviousLibrary() {
    // The same for a shared library, which the linker writes: a file size limit 1 KiB below
    // the library's size makes the link of NAME.so.partial fail. Exit code 1, a message naming
    // the library (not only the linker's temporary name), the cause and that the previous
    // library is unchanged; no partial file left.
    QTemporaryDir dir;
    QString lib = dir.path() + "/m.so";
    auto r = test::runLoom({"compile", kModel, "--input-shapes", "data:[1,3,16,16]", "--opt-level", "1", "-o", lib});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    compileOnAFullDisk(lib, dir.path());
  }

  void cliErrors() {
    QTemporaryDir dir;
    QString pkg = dir.path() + "/m.tar";
    QVERIFY(test::runLoom({"compile", kModel, "--input-shapes", "data:[1,3,16,16]", "-o", pkg}).exitCode == 0);
    struct Case {
      QStringList args;
      int code;
      QString text;
    };
    QString badNpz = dir.path() + "/bad.npz";
    driver::writeNpz(badNpz.toStdString(), {{"nope", test::randomArray({1}, 1)}});
    QString wrongShape = dir.path() + "/wrong.npz";
    driver::writeNpz(wrongShape.toStdString(), {{"data", test::randomArray({2, 2}, 1)}});
    QString notTar = dir.path() + "/not.tar";
    {
      QFile f(notTar);
      QVERIFY(f.open(QIODevice::WriteOnly));
      f.write(QByteArray(600, 'z'));
    }
    // A bad command line is a user error (1), like a bad file; 2 is for Loom's own failures.
    std::vector<Case> cases = {
        {{"compile", dir.path() + "/missing.onnx", "-o", pkg}, 1, "missing.onnx"},
        {{"compile", kModel, "-o", pkg, "--opt-level", "7"}, 1, "opt-level"},
        {{"compile", kModel}, 1, "output"},
        {{"compile", kModel, "-o", pkg, "--input-shapes", "data:[1,3"}, 1, "input-shapes"},
        {{"compile", kModel, "--input-shapes", "data:[1,3,16,16]", "-o", pkg, "--target", "nonsense"}, 1, "nonsense"},
        {{"run", dir.path() + "/missing.tar"}, 1, "missing.tar"},
        {{"run", notTar}, 1, "not.tar"},
        {{"run", pkg, "--inputs", badNpz}, 1, "nope"},
        {{"run", pkg, "--inputs", wrongShape}, 1, "data"},
        {{"run", pkg, "--inputs", dir.path() + "/none.npz"}, 1, "none.npz"},
        {{"run", pkg, "--fill-mode", "bogus"}, 1, "fill-mode"},
        {{"run", pkg, "--repeat", "0"}, 1, "repeat"},
        {{"onnx-test"}, 1, "no test directories"},
        {{"onnx-test", "--list", dir.path() + "/nolist.txt"}, 1, "nolist.txt"},
    };
    for (const Case& c : cases) {
      auto r = test::runLoom(c.args);
      QString all = r.out + r.err;
      QVERIFY2(r.exitCode == c.code, qPrintable(c.args.join(' ') + " -> " + QString::number(r.exitCode) + ": " + all));
      QVERIFY2(all.contains(c.text, Qt::CaseInsensitive), qPrintable(c.args.join(' ') + ": " + all));
    }
  }

  void onnxTestCountsAndFailures() {
    // A passing test directory, and one whose expected output is corrupted: counted and named.
    QTemporaryDir dir;
    QString src = QStringLiteral("/usr/share/libonnx-testdata/data/node/test_relu");
    if (!QFile::exists(src + "/model.onnx")) QSKIP("libonnx-testdata is not installed");
    QString bad = dir.path() + "/test_relu_corrupted";
    QDir().mkpath(bad + "/test_data_set_0");
    QFile::copy(src + "/model.onnx", bad + "/model.onnx");
    QFile::copy(src + "/test_data_set_0/input_0.pb", bad + "/test_data_set_0/input_0.pb");
    // Expected output = the input (relu changes the negative entries).
    QFile::copy(src + "/test_data_set_0/input_0.pb", bad + "/test_data_set_0/output_0.pb");
    auto r = test::runLoom({"onnx-test", src, bad});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.out.contains("failed: test_relu_corrupted: test_data_set_0: output 0"), qPrintable(r.out));
    QVERIFY2(r.out.trimmed().endsWith("1 passed, 1 failed, 0 skipped"), qPrintable(r.out));
  }
};

QTEST_APPLESS_MAIN(TestPackage)
#include "test_package.moc"
