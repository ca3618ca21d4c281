// examples/deploy in a fresh process: `loom compile` writes a package, the plain-C deploy program
// (libloom_runtime.so only, checked with ldd) prints the top-5 classes the in-process runtime
// computes; `loom inspect` describes good and bad packages.
#include <QtTest>

#include <algorithm>
#include <cstring>
#include <random>

#include "DeployTestUtil.h"
#include "runtime/Package.h"
#include "runtime/Tar.h"

using namespace loom;
using namespace loom::test;

namespace {

void writeAll(const QString& path, const std::string& bytes) {
  QFile f(path);
  QVERIFY(f.open(QIODevice::WriteOnly));
  QCOMPARE(f.write(bytes.data(), qint64(bytes.size())), qint64(bytes.size()));
}

/// A version-1 .npy of float32 data with `shape`.
std::string npy(const std::vector<float>& v, const std::string& shape) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + ", }";
  while ((10 + header.size() + 1) % 64) header += ' ';
  header += '\n';
  std::string out = "\x93NUMPY";
  out += char(1);
  out += char(0);
  out += char(header.size() & 0xff);
  out += char(header.size() >> 8);
  out += header;
  out.append(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  return out;
}

/// (class, score) pairs of the deploy program's "  N. class C  score S" lines.
std::vector<std::pair<int, double>> parseTop(const QString& out) {
  std::vector<std::pair<int, double>> r;
  static const QRegularExpression line(R"(^\s*\d+\. class (\d+)\s+score (\S+)$)", QRegularExpression::MultilineOption);
  for (auto it = line.globalMatch(out); it.hasNext();) {
    auto m = it.next();
    r.emplace_back(m.captured(1).toInt(), m.captured(2).toDouble());
  }
  return r;
}

}  // namespace

class TestExample : public QObject {
  Q_OBJECT

  QTemporaryDir m_dir;
  QString m_pkg;
  std::vector<float> m_input;

  QString path(const char* name) const { return m_dir.path() + "/" + name; }

private slots:
  void initTestCase() {
    QVERIFY(m_dir.isValid());
    m_pkg = path("small_cnn.tar");
    Proc c = runProgram(LOOM_CLI, {"compile", LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx", "--target",
                                   "llvm", "--input-shapes", "data:[1,3,16,16]", "--output", m_pkg});
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    std::mt19937 rng(17);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    m_input.resize(3 * 16 * 16);
    for (float& x : m_input) x = u(rng);
  }

  void deployPrintsTopFiveOfTheRuntime() {
    // What the runtime computes in this process.
    runtime::Package p = runtime::loadPackage(m_pkg.toStdString());
    runtime::NDArray x = runtime::NDArray::empty({1, 3, 16, 16}, runtime::DType::f32());
    std::memcpy(x.data(), m_input.data(), m_input.size() * sizeof(float));
    p.executor->setInput(0, x);
    p.executor->run();
    runtime::NDArray y = p.executor->getOutput(0);
    std::vector<std::pair<float, int>> want;
    for (int i = 0; i < int(y.numel()); ++i) want.emplace_back(y.as<float>()[i], i);
    std::stable_sort(want.begin(), want.end(), [](auto a, auto b) { return a.first > b.first; });

    // The deploy program, from raw float32 and from .npy.
    writeAll(path("in.raw"), std::string(reinterpret_cast<const char*>(m_input.data()), m_input.size() * 4));
    writeAll(path("in.npy"), npy(m_input, "(1, 3, 16, 16)"));
    for (const char* in : {"in.raw", "in.npy"}) {
      Proc d = runProgram(DEPLOY_BINARY, {m_pkg, path(in)});
      QVERIFY2(d.exitCode == 0, qPrintable(d.out + d.err));
      QVERIFY2(d.out.contains("input 'data': shape [1, 3, 16, 16]"), qPrintable(d.out));
      QVERIFY2(d.out.contains("output 'prob': 10 scores, top 5:"), qPrintable(d.out));
      auto top = parseTop(d.out);
      QCOMPARE(top.size(), size_t(5));
      for (size_t r = 0; r < 5; ++r) {
        QCOMPARE(top[r].first, want[r].second);
        QVERIFY2(std::fabs(top[r].second - want[r].first) < 2e-6, qPrintable(d.out));
      }
    }
    // K from the command line.
    Proc d3 = runProgram(DEPLOY_BINARY, {m_pkg, path("in.raw"), "3"});
    QCOMPARE(d3.exitCode, 0);
    QCOMPARE(parseTop(d3.out).size(), size_t(3));
  }

  void deployReportsBadInputAndPackage() {
    writeAll(path("short.raw"), std::string(100, '\0'));
    Proc d = runProgram(DEPLOY_BINARY, {m_pkg, path("short.raw")});
    QCOMPARE(d.exitCode, 1);
    QVERIFY2(d.err.contains("input 'data' expects float32[1, 3, 16, 16] = 3072 bytes, got 100 bytes"), qPrintable(d.err));
    std::string f64 = npy(m_input, "(1, 3, 16, 16)");
    f64.replace(f64.find("<f4"), 3, "<f8");
    writeAll(path("in64.npy"), f64);
    d = runProgram(DEPLOY_BINARY, {m_pkg, path("in64.npy")});
    QCOMPARE(d.exitCode, 1);
    QVERIFY2(d.err.contains("must hold float32"), qPrintable(d.err));
    d = runProgram(DEPLOY_BINARY, {LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx", path("short.raw")});
    QCOMPARE(d.exitCode, 1);
    QVERIFY2(d.err.contains("is not a tar archive"), qPrintable(d.err));
    d = runProgram(DEPLOY_BINARY, {m_pkg});
    QCOMPARE(d.exitCode, 2);
    QVERIFY(d.err.contains("usage: deploy"));
  }

  void deployLinksOnlyTheRuntime() {
    Proc l = runProgram("ldd", {DEPLOY_BINARY});
    if (l.exitCode == -2 || (l.exitCode != 0 && l.out.isEmpty())) QSKIP("ldd not available");
    QVERIFY2(l.out.contains("libloom_runtime.so"), qPrintable(l.out));
    QVERIFY2(!l.out.contains("not found"), qPrintable(l.out));
    static const QRegularExpression forbidden(R"(llvm|LLVM|libQt|onnx|protobuf|clang)");
    QVERIFY2(!forbidden.match(l.out).hasMatch(), qPrintable(l.out));
  }

  void inspectDescribesThePackage() {
    Proc i = runProgram(LOOM_CLI, {"inspect", m_pkg});
    QVERIFY2(i.exitCode == 0, qPrintable(i.out + i.err));
    for (const char* want : {"format version  1", "loom version", "target          llvm", "data  float32[1, 3, 16, 16]",
                             "prob  float32[1, 10]", "fused_nn_softmax  (1 node)", "kernels.so", "params.bin",
                             "params: 6 tensors"})
      QVERIFY2(i.out.contains(want), qPrintable(QString(want) + " not in:\n" + i.out));
    // The member sizes are the archive's.
    auto files = runtime::readTar(m_pkg.toStdString());
    QVERIFY(i.out.contains(QString("(%1 bytes)").arg(files["kernels.so"].size())));
    Proc h = runProgram(LOOM_CLI, {"inspect", "--help"});
    QCOMPARE(h.exitCode, 0);
    QVERIFY(h.out.contains("Example:") && h.out.contains("loom inspect small_cnn.tar"));
  }

  void inspectFlagsBadPackages() {
    auto files = runtime::readTar(m_pkg.toStdString());
    std::string graph = files["graph.json"];
    size_t at = graph.find("fused_nn_softmax");
    QVERIFY(at != std::string::npos);
    graph.replace(at, std::strlen("fused_nn_softmax"), "fused_nn_missing");
    std::vector<std::pair<std::string, std::string>> out;
    for (const auto& [n, data] : files) out.emplace_back(n, n == "graph.json" ? graph : data);
    runtime::writeTar(path("nosym.tar").toStdString(), out);
    Proc i = runProgram(LOOM_CLI, {"inspect", path("nosym.tar")});
    QCOMPARE(i.exitCode, 1);
    QVERIFY2(i.out.contains("fused_nn_missing  (1 node)  MISSING from kernels.so"), qPrintable(i.out));
    QVERIFY2(i.out.contains("fused_nn_softmax  (not called by the graph)"), qPrintable(i.out));
    QVERIFY2(i.out.contains("1 kernel(s) missing from kernels.so"), qPrintable(i.out));
    // graph.json no longer matches the checksum metadata.json recorded.
    QVERIFY2(i.out.contains(QRegularExpression(R"(graph.json .*DAMAGED)")), qPrintable(i.out));
    QVERIFY2(i.out.contains("this package cannot run here:\n  1 member(s) damaged"), qPrintable(i.out));
    QVERIFY2(QRegularExpression(R"(kernels.so .*crc32 [0-9a-f]{8} ok)").match(i.out).hasMatch(), qPrintable(i.out));
    Proc n = runProgram(LOOM_CLI, {"inspect", LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx"});
    QCOMPARE(n.exitCode, 1);
    QVERIFY2(n.err.contains("malformed tar header"), qPrintable(n.err));
    Proc m = runProgram(LOOM_CLI, {"inspect", path("no-such.tar")});
    QCOMPARE(m.exitCode, 1);
    QVERIFY2(m.err.contains("cannot open package"), qPrintable(m.err));
  }
};

QTEST_APPLESS_MAIN(TestExample)
#include "test_example.moc"
