// Export -> fresh process: each example model compiled by `loom compile` (one .so library and a .tar)
// and run by `loom run` and by the plain-C deploy program in new processes gives the in-process
// executor's outputs, and both match the model's reference data.
#include <QtTest>

#include <algorithm>
#include <cmath>

#include "DeployTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/driver/Npz.h"
#include "core/frontend/onnx/OnnxImporter.h"

using namespace loom;
using namespace loom::test;

class TestExport : public QObject {
  Q_OBJECT

private slots:
  void freshProcessMatchesInProcess_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("input");
    QTest::addColumn<QString>("format");
    for (const char* format : {"so", "tar"}) {
      QTest::addRow("small_cnn.%s", format) << "small_cnn" << "data" << format;
      QTest::addRow("fire_net.%s", format) << "fire_net" << "data" << format;
      QTest::addRow("transformer_block.%s", format) << "transformer_block" << "x" << format;
    }
  }

  void freshProcessMatchesInProcess() {
    QFETCH(QString, model);
    QFETCH(QString, input);
    QFETCH(QString, format);
    QTemporaryDir dir;
    QString src = QStringLiteral(LOOM_SOURCE_DIR "/examples/models/") + model;
    runtime::NDArray x = frontend::loadTensorProto((src + "/test_data_set_0/input_0.pb").toStdString());
    runtime::NDArray ref = frontend::loadTensorProto((src + "/test_data_set_0/output_0.pb").toStdString());
    QStringList dims;
    for (int64_t d : x.shape()) dims << QString::number(d);
    QString shapes = input + ":[" + dims.join(",") + "]";

    // In this process.
    frontend::ImportOptions io;
    io.inputShapes[input.toStdString()] = x.shape();
    driver::CompiledModel cm = driver::compileModel(frontend::importOnnx((src + "/model.onnx").toStdString(), io));
    auto ex = driver::createExecutor(cm);
    ex->setInput(0, x);
    ex->run();
    runtime::NDArray want = ex->getOutput(0);
    QVERIFY2(maxDiff(want, ref) < 1e-4, qPrintable(QString::number(maxDiff(want, ref))));

    // Exported, then loaded and run by fresh processes.
    QString pkg = dir.path() + "/m." + format, in = dir.path() + "/in.npz", out = dir.path() + "/out.npz";
    Proc c = runLoom({"compile", src + "/model.onnx", "--target", "llvm", "--input-shapes", shapes, "--output", pkg});
    QVERIFY2(c.exitCode == 0, qPrintable(c.out + c.err));
    driver::writeNpz(in.toStdString(), {{input.toStdString(), x}});
    Proc r = runLoom({"run", pkg, "--inputs", in, "--outputs", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    auto got = driver::readNpz(out.toStdString());
    QCOMPARE(got.size(), size_t(1));
    QVERIFY2(maxDiff(got[0].second, want) < 1e-5, qPrintable(QString::number(maxDiff(got[0].second, want))));
    QVERIFY(maxDiff(got[0].second, ref) < 1e-4);
    Proc i = runLoom({"inspect", pkg});
    QVERIFY2(i.exitCode == 0, qPrintable(i.out + i.err));
    QVERIFY2(i.out.contains(input + "  float32[" + dims.join(", ") + "]"), qPrintable(i.out));
    QVERIFY2(i.out.contains(format == "so" ? "(one shared library)" : "(tar package)"), qPrintable(i.out));

    // The plain-C deploy program (libloom_runtime.so only) prints the top 5 of the first output.
    QFile raw(dir.path() + "/in.raw");
    QVERIFY(raw.open(QIODevice::WriteOnly));
    raw.write(static_cast<const char*>(x.data()), qint64(x.byteSize()));
    raw.close();
    Proc d = runProgram(DEPLOY_BINARY, {pkg, raw.fileName()});
    QVERIFY2(d.exitCode == 0, qPrintable(d.out + d.err));
    std::vector<std::pair<float, int>> top;
    for (int k = 0; k < int(want.numel()); ++k) top.emplace_back(want.as<float>()[k], k);
    std::stable_sort(top.begin(), top.end(), [](auto a, auto b) { return a.first > b.first; });
    static const QRegularExpression line(R"(^\s*(\d+)\. class (\d+)\s+score (\S+)$)", QRegularExpression::MultilineOption);
    int seen = 0;
    for (auto it = line.globalMatch(d.out); it.hasNext(); ++seen) {
      auto m = it.next();
      size_t rank = size_t(m.captured(1).toInt() - 1);
      QVERIFY(rank < top.size());
      QVERIFY2(std::fabs(m.captured(3).toDouble() - top[rank].first) < 2e-6, qPrintable(d.out));
    }
    QCOMPARE(seen, std::min(5, int(want.numel())));
  }
};

QTEST_APPLESS_MAIN(TestExport)
#include "test_export.moc"
