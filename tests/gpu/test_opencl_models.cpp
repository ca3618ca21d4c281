// Models from examples/models compiled for `opencl` (a default GPU schedule per fused group, kernels
// on the OpenCL device, storage in device memory) give the CPU build's outputs on PoCL.
#include <QtTest>

#include <cmath>
#include <random>

#include "GPUTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/driver/CompileModelGPU.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/transform/GPUKernels.h"

using namespace loom;

namespace {

graph::Module importModel(const std::string& name, const std::string& shapes) {
  frontend::ImportOptions io;
  if (!shapes.empty()) io.inputShapes = frontend::parseInputShapes(shapes);
  return frontend::importOnnx(LOOM_SOURCE_DIR "/examples/models/" + name + "/model.onnx", io);
}

runtime::NDArray randomInput(const driver::TensorInfo& t, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(t.shape, t.dtype);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = u(rng);
  return a;
}

std::vector<runtime::NDArray> run(runtime::GraphExecutor& ex, const driver::CompiledModel& cm, unsigned seed) {
  for (size_t i = 0; i < cm.inputs.size(); ++i) ex.setInput(i, randomInput(cm.inputs[i], seed + unsigned(i)));
  ex.run();
  std::vector<runtime::NDArray> outs;
  for (size_t i = 0; i < cm.outputs.size(); ++i) outs.push_back(ex.getOutput(i));
  return outs;
}

/// "" when |got - want| <= atol + rtol * |want| everywhere, else the worst element.
std::string compare(const runtime::NDArray& got, const runtime::NDArray& want, double rtol, double atol) {
  if (got.shape() != want.shape()) return "shapes differ";
  for (int64_t i = 0; i < got.numel(); ++i) {
    double g = got.as<float>()[i], w = want.as<float>()[i];
    if (!(std::fabs(g - w) <= atol + rtol * std::fabs(w)))
      return "element " + std::to_string(i) + ": " + std::to_string(g) + " vs " + std::to_string(w);
  }
  return {};
}

}  // namespace

class TestOpenCLModels : public QObject {
  Q_OBJECT
  std::string m_unavailable;

private slots:
  void initTestCase() {
    gputest::usePluginsOfThisBuild();
    m_unavailable = gputest::openclUnavailable();
    if (!m_unavailable.empty()) qWarning("no OpenCL device: %s", m_unavailable.c_str());
  }

  void defaultScheduleBindsEveryBlock() {
    // Any program, nothing recognised by name: the padding inlined into the conv, every loop
    // nest bound to blocks and threads, so the host/device split finds only kernels.
    graph::Module m = importModel("small_cnn", "data:[1,3,16,16]");
    driver::CompileModelOptions o;
    o.desiredLayout = "NCHW";
    auto groups = driver::extractGroups(m, {}, o);
    QVERIFY(groups.size() >= 3);
    driver::CompiledModel cm = driver::compileModel(m, "opencl", {}, o);
    QCOMPARE(cm.kernels.size(), groups.size());
    for (size_t k = 0; k < cm.kernels.size(); ++k) {
      QCOMPARE(cm.scheduleSources[k], std::string("default-gpu"));
      transform::DeviceProgram p = transform::splitHostDevice(cm.kernels[k]);
      QVERIFY(!p.kernels.empty());
      for (auto& kernel : p.kernels) QVERIFY(kernel.block[0] * kernel.block[1] * kernel.block[2] <= 64);
    }
    std::string src = driver::modelKernelSource(cm);
    QVERIFY2(src.find("__kernel void " + cm.kernels[0]->name + "_kernel0") != std::string::npos, src.c_str());
  }

  void modelsMatchTheCpu_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("shapes");
    QTest::addColumn<QString>("layout");
    QTest::newRow("small_cnn") << "small_cnn" << "data:[1,3,16,16]" << "";
    QTest::newRow("fire_net") << "fire_net" << "" << "";
    QTest::newRow("transformer_block") << "transformer_block" << "" << "";
    // Channel-blocked convs (the NCHW16c kernels the CPU schedule is made for) on the GPU too.
    QTest::newRow("small_cnn NCHWc") << "small_cnn" << "data:[1,3,16,16]" << "NCHWc";
  }
  void modelsMatchTheCpu() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    QFETCH(QString, model);
    QFETCH(QString, shapes);
    QFETCH(QString, layout);
    graph::Module m = importModel(model.toStdString(), shapes.toStdString());
    driver::CompileModelOptions o;
    o.desiredLayout = layout.toStdString();
    driver::CompiledModel cpu = driver::compileModel(m, "llvm");
    driver::CompiledModel gpu = driver::compileModel(m, "opencl", {}, o);
    QCOMPARE(gpu.target, std::string("opencl"));
    auto cpuEx = driver::createExecutor(cpu);
    auto gpuEx = driver::createExecutor(gpu);
    // Two runs with different inputs on one executor: params stay bound on the device, and
    // outputs follow the inputs.
    for (unsigned seed : {11u, 29u}) {
      auto want = run(*cpuEx, cpu, seed);
      auto got = run(*gpuEx, gpu, seed);
      QCOMPARE(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        std::string diff = compare(got[i], want[i], 1e-3, 1e-5);
        QVERIFY2(diff.empty(), (model.toStdString() + " output " + std::to_string(i) + ": " + diff).c_str());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestOpenCLModels)
#include "test_opencl_models.moc"
