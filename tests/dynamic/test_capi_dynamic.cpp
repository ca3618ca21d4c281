// Dynamic packages through the C API and the C++ wrapper (runtime/include/loom_runtime.h{,pp}):
// capi_dynamic.c (plain C) runs a package at several widths and checks values and errors; the
// C++ wrapper runs the small CNN at two batch sizes against the graph evaluator.
#include <QTemporaryDir>
#include <QtTest>

#include "DynamicTestModels.h"
#include "core/driver/LoadModel.h"
#include "core/graph/Evaluator.h"
#include "loom_runtime.hpp"
#include "tests/common/ProcessRun.h"

using namespace loom;

namespace {

std::string smallCnn() { return std::string(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx"; }

void compileWithLoom(const std::string& model, const QString& shapes, const QString& out) {
  test::ProcessResult r = test::runLoomBinary({"compile", QString::fromStdString(model), "--input-shapes", shapes, "-q", "-o", out}, 300000);
  QVERIFY2(r.exitCode == 0, qPrintable(r.err));
}

}  // namespace

class TestCapiDynamic : public QObject {
  Q_OBJECT

private slots:
  void plainCProgram() {
    QTemporaryDir dir;
    std::string add = test::writeOnnxModel(dir.filePath("add.onnx").toStdString(), {{"x", {"2", "W"}}, {"y", {"2", "W"}}}, "Add");
    QString so = dir.filePath("add.so");
    compileWithLoom(add, "x:[2,W<=512],y:[2,W]", so);
    test::ProcessResult r = test::runProcess(CAPI_DYNAMIC, {so}, 60000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QCOMPARE(r.out.trimmed(), QString("ok"));
  }

  void cppWrapperAgainstEvaluator() {
    QTemporaryDir dir;
    QString so = dir.filePath("cnn.so");
    compileWithLoom(smallCnn(), "data:[B<=4,3,16,16]", so);
    graph::Module m = driver::loadModel(smallCnn()).module;
    rt::Package pkg(so.toStdString());
    QVERIFY(pkg.isDynamic());
    QCOMPARE(pkg.inputDim(0, 0), (std::pair<std::string, int64_t>{"B", 4}));
    QCOMPARE(pkg.inputDim(0, 1), (std::pair<std::string, int64_t>{"3", -1}));
    for (int64_t b : {1, 3}) {
      std::vector<float> x(size_t(b * 3 * 16 * 16));
      for (size_t i = 0; i < x.size(); ++i) x[i] = float((i * 131) % 257) / 128.0f - 1.0f;
      pkg.setInput(0, x, {b, 3, 16, 16});
      pkg.run();
      QCOMPARE(pkg.inputShape(0), (std::vector<int64_t>{b, 3, 16, 16}));
      QCOMPARE(pkg.outputShape(0), (std::vector<int64_t>{b, 10}));
      std::vector<float> got = pkg.output<float>(0);
      runtime::NDArray in = runtime::NDArray::empty({b, 3, 16, 16}, runtime::DType::f32());
      std::memcpy(in.data(), x.data(), x.size() * sizeof(float));
      runtime::NDArray want = graph::evaluate(m.main(), {in})[0];
      QCOMPARE(int64_t(got.size()), want.numel());
      for (size_t i = 0; i < got.size(); ++i)
        QVERIFY2(std::fabs(got[i] - want.as<float>()[int64_t(i)]) < 1e-3f * (1 + std::fabs(want.as<float>()[int64_t(i)])),
                 qPrintable(QString("B = %1, element %2").arg(b).arg(i)));
    }
    std::vector<float> big(size_t(5 * 3 * 16 * 16));
    try {
      pkg.setInput(0, big, {5, 3, 16, 16});
      QFAIL("B = 5 above the bound was accepted");
    } catch (const rt::Error& e) {
      QVERIFY2(std::string(e.what()).find("dimension 0 (B) is 5, above its bound B <= 4") != std::string::npos, e.what());
    }
  }

  void staticPackageTakesItsShapeOnly() {
    QTemporaryDir dir;
    QString so = dir.filePath("static.so");
    compileWithLoom(smallCnn(), "data:[2,3,16,16]", so);
    rt::Package pkg(so.toStdString());
    QVERIFY(!pkg.isDynamic());
    std::vector<float> x(size_t(3 * 3 * 16 * 16));
    try {
      pkg.setInput(0, x, {3, 3, 16, 16});
      QFAIL("a static package took another shape");
    } catch (const rt::Error& e) {
      QVERIFY2(std::string(e.what()).find("input 'data' expects float32[2, 3, 16, 16], got the shape float32[3, 3, 16, 16] "
                                          "(the package is static)") != std::string::npos, e.what());
    }
    x.resize(size_t(2 * 3 * 16 * 16));
    pkg.setInput(0, x, {2, 3, 16, 16});
    pkg.run();
    QCOMPARE(pkg.outputShape(0), (std::vector<int64_t>{2, 10}));
  }
};

QTEST_GUILESS_MAIN(TestCapiDynamic)
#include "test_capi_dynamic.moc"
