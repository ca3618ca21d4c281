// Real TorchScript models (examples/models/make_torchscript_models.py): each compiled from its .pt
// within rtol 1e-3 of PyTorch, and the same model from .pt and from its ONNX export giving the
// same fused groups; with LOOM_TORCH_MODELS_LATENCY=1 prints both compiled modules' latency
// (interleaved runs) for the notes.
#include <QFile>
#include <QtTest>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "core/driver/CompileModel.h"
#include "core/driver/LoadModel.h"
#include "core/driver/Npz.h"
#include "core/frontend/torch/TorchImporter.h"
#include "tests/common/ProcessRun.h"

using namespace loom;

namespace {

const char* kModels[] = {"resnet18", "mobilenet_v3_large", "efficientnet_b0", "shufflenet_v2_x1_0",
                         "deeplabv3_mobilenet", "fcn_resnet50", "transformer_encoder", "scripted_loop_if"};

QString readText(const QString& path) {
  QFile f(path);
  return f.open(QIODevice::ReadOnly) ? QString::fromUtf8(f.readAll()).trimmed() : QString();
}

std::vector<std::string> groupSignature(const graph::Module& m) {
  std::vector<std::string> sig;
  for (const driver::ModelGroup& g : driver::extractGroups(m)) {
    std::string s = std::to_string(g.occurrences) + "x";
    for (const std::string& op : g.ops) s += " " + op;
    sig.push_back(s);
  }
  std::sort(sig.begin(), sig.end());
  return sig;
}

double runMs(runtime::GraphExecutor& ex) {
  auto t0 = std::chrono::steady_clock::now();
  ex.run();
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

} // namespace

class TestTorchModels : public QObject {
  Q_OBJECT
  QString m_dir;

private slots:
  void initTestCase() {
#if !LOOM_HAVE_TORCH_READER
    QSKIP("built without libtorch (install libtorch-dev)");
#endif
    if (test::runProcess("/usr/bin/python3", {"-c", "import torch, torchvision, onnx"}, 60000).exitCode != 0)
      QSKIP("/usr/bin/python3 cannot import torch, torchvision and onnx (scripts/install-bench-deps.sh)");
    m_dir = qEnvironmentVariable("LOOM_TORCHSCRIPT_MODELS", LOOM_BINARY_DIR "/torchscript-models");
    test::ProcessResult r = test::runProcess(
        "/usr/bin/python3", {"-W", "ignore", LOOM_SOURCE_DIR "/examples/models/make_torchscript_models.py", "--out", m_dir},
        1800000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
  }

  void model_data() {
    QTest::addColumn<QString>("name");
    for (const char* m : kModels) QTest::newRow(m) << QString(m);
  }

  void model() {
    QFETCH(QString, name);
    QString dir = m_dir + "/" + name;
    std::string shapes = readText(dir + "/shapes.txt").toStdString();
    std::map<std::string, runtime::NDArray> data;
    for (auto& [k, v] : driver::readNpz((dir + "/data.npz").toStdString())) data[k] = v;
    try {
      driver::LoadedModel pt = driver::loadModel((dir + "/model.pt").toStdString(), shapes);
      const std::string input = pt.module.main()->params.at(0)->name;
      driver::CompileModelOptions co;
      co.outputNames = pt.outputNames;
      driver::CompiledModel cm = driver::compileModel(pt.module, "llvm", {}, co);
      auto ex = driver::createExecutor(cm);
      ex->setInput(input, data.at(input));
      ex->run();
      runtime::NDArray got = ex->getOutput(0), want = data.at("output_0");
      QCOMPARE(got.shape(), want.shape());
      // numpy.allclose(loom, torch, rtol=1e-3, atol=1e-3 * max|torch|): fp32 sums in another
      // order differ by ~1e-4 of the output's range on 50-layer nets (fcn_resnet50's ONNX export
      // compiled by Loom differs as much), so near-zero outputs need the absolute part.
      double scale = 0, worst = 0, worstAbs = 0;
      for (int64_t i = 0; i < want.numel(); ++i) scale = std::max(scale, double(std::fabs(want.as<float>()[i])));
      for (int64_t i = 0; i < want.numel(); ++i) {
        double g = got.as<float>()[i], w = want.as<float>()[i];
        worst = std::max(worst, std::fabs(g - w) / (1e-3 * scale + 1e-3 * std::fabs(w)));
        worstAbs = std::max(worstAbs, std::fabs(g - w));
      }
      qInfo("%s: max |loom - torch| = %.3g (max |torch| %.3g); worst |loom - torch| / (1e-3 max|torch| + 1e-3 |torch|) = %.3g",
            qPrintable(name), worstAbs, scale, worst);
      QVERIFY2(worst <= 1, qPrintable(QString("outside rtol 1e-3, atol 1e-3 max|torch|: %1").arg(worst)));

      if (!QFile::exists(dir + "/model.onnx")) return;
      driver::LoadedModel ox = driver::loadModel((dir + "/model.onnx").toStdString(), shapes);
      std::vector<std::string> a = groupSignature(pt.module), b = groupSignature(ox.module);
      if (a != b) {
        QString diff;
        for (const auto& s : a) if (!std::count(b.begin(), b.end(), s)) diff += "\n  .pt only:   " + QString::fromStdString(s);
        for (const auto& s : b) if (!std::count(a.begin(), a.end(), s)) diff += "\n  .onnx only: " + QString::fromStdString(s);
        qWarning("%s: fused groups differ:%s", qPrintable(name), qPrintable(diff));
      }
      qInfo("%s: %zu kernels from .pt, %zu from .onnx; fused groups %s", qPrintable(name), a.size(), b.size(),
            a == b ? "identical" : "differ");
      QVERIFY2(a == b, "the .pt and the ONNX export fuse differently");

      // Latency of the two compiled modules, interleaved (for the notes, not a pass criterion;
      // compiling the ONNX model too doubles the time, so only with LOOM_TORCH_MODELS_LATENCY=1).
      if (qEnvironmentVariable("LOOM_TORCH_MODELS_LATENCY") != "1") return;
      driver::CompileModelOptions oo;
      driver::CompiledModel cmo = driver::compileModel(ox.module, "llvm", {}, oo);
      auto exo = driver::createExecutor(cmo);
      exo->setInput(0, data.at(input));
      std::vector<double> tp, to;
      for (int i = 0; i < 3; ++i) { runMs(*ex); runMs(*exo); }
      for (int i = 0; i < 15; ++i) { tp.push_back(runMs(*ex)); to.push_back(runMs(*exo)); }
      auto mean = [](const std::vector<double>& v) { double s = 0; for (double x : v) s += x; return s / double(v.size()); };
      qInfo("%s latency ms: .pt min %.3f mean %.3f | .onnx min %.3f mean %.3f | loadavg %s", qPrintable(name),
            *std::min_element(tp.begin(), tp.end()), mean(tp), *std::min_element(to.begin(), to.end()), mean(to),
            qPrintable(readText("/proc/loadavg")));
    } catch (const std::exception& e) {
      QFAIL(e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestTorchModels)
#include "test_torch_models.moc"
