// The CUDA device plugin (driver API through dlopen("libcuda.so.1")): without a driver it refuses
// with a clear message, through the device API, the kernel module and `loom bench-op`; with one,
// every preset under several GPU schedules and whole models run on it and match the interpreter
// / the CPU build (these cases skip where there is no driver, as on CI).
#include <QtTest>

#include <dlfcn.h>

#include <cmath>
#include <random>

#include "GPUTestUtil.h"
#include "codegen/CodeGenCUDANVRTC.h"
#include "codegen/CodeGenOpenCL.h"
#include "core/driver/CompileModel.h"
#include "core/driver/CompileModelGPU.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/transform/GPUSchedules.h"
#include "runtime/PackedFunc.h"
#include "runtime/RuntimeFailure.h"

using namespace loom;

namespace {
const char* kNoDriver = "no CUDA driver/device (libcuda.so.1 not found)";

bool driverInstalled() {
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (lib) dlclose(lib);
  return lib != nullptr;
}

/// Why CUDA kernels cannot run here, or empty.
std::string cudaUnavailable() {
  if (!driverInstalled()) return "no CUDA driver here (libcuda.so.1): nothing runs on CUDA";
  std::string why;
  if (!codegen::nvrtcAvailable(&why)) return "NVRTC missing: " + why;
  try {
    runtime::DeviceAPI::get(runtime::DeviceType::CUDA);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

/// Small parameters of each preset (every one of them, so a new preset is noticed).
std::string smallSpec(const std::string& name) {
  if (name == "add") return "add:M=24,N=40";
  if (name == "batch_matmul") return "batch_matmul:B=2,M=16,N=24,K=16";
  if (name == "conv2d") return "conv2d:N=1,C=4,H=8,W=8,K=8,R=3,S=3";
  if (name == "depthwise_conv2d") return "depthwise_conv2d:N=1,C=4,H=8,W=8";
  if (name == "layernorm") return "layernorm:M=12,N=40";
  if (name == "matmul") return "matmul:M=32,N=24,K=40";
  if (name == "reduce_sum") return "reduce_sum:M=20,N=48";
  if (name == "relu") return "relu:M=24,N=40";
  if (name == "softmax") return "softmax:M=12,N=40";
  if (name == "transpose") return "transpose:M=24,N=40";
  return name;
}

/// Runs `c` on the CUDA device (outputs poisoned first, so a kernel that skips elements cannot
/// pass); "" when it matches the interpreter, else what differs (with the CUDA C).
std::string runOnCuda(const gputest::GPUCase& c, const std::string& target = "cuda") {
  runtime::Module mod = codegen::buildGPUKernelModule({c.lowered}, codegen::Target::parse(target));
  auto args = gputest::randomArgs(c, 7);
  auto want = gputest::interpreterResult(c, args);
  for (size_t i = size_t(c.spec.workload->numInputs); i < args.size(); ++i) tir::fillRandom(args[i], 99 + i);
  runtime::Device dev{runtime::DeviceType::CUDA, 0};
  std::vector<runtime::NDArray> onDevice;
  std::vector<runtime::PackedArg> packed;
  for (auto& a : args) {
    onDevice.push_back(runtime::NDArray::empty(a.shape(), a.dtype(), dev));
    onDevice.back().copyFrom(a);
  }
  for (auto& d : onDevice) packed.emplace_back(d);
  mod.getFunction("main").call(std::span<const runtime::PackedArg>(packed.data(), packed.size()));
  for (size_t i = 0; i < args.size(); ++i) args[i].copyFrom(onDevice[i]);
  std::string diff = gputest::compareOutputs(c, args, want);
  if (!diff.empty()) diff += "\n" + mod.meta().value_or("");
  return diff;
}

graph::Module importModel(const std::string& name, const std::string& shapes) {
  frontend::ImportOptions io;
  if (!shapes.empty()) io.inputShapes = frontend::parseInputShapes(shapes);
  return frontend::importOnnx(LOOM_SOURCE_DIR "/examples/models/" + name + "/model.onnx", io);
}

std::vector<runtime::NDArray> runModel(runtime::GraphExecutor& ex, const driver::CompiledModel& cm, unsigned seed) {
  for (size_t i = 0; i < cm.inputs.size(); ++i) {
    runtime::NDArray a = runtime::NDArray::empty(cm.inputs[i].shape, cm.inputs[i].dtype);
    std::mt19937 rng(seed + unsigned(i));
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    for (int64_t k = 0; k < a.numel(); ++k) a.as<float>()[k] = u(rng);
    ex.setInput(i, a);
  }
  ex.run();
  std::vector<runtime::NDArray> outs;
  for (size_t i = 0; i < cm.outputs.size(); ++i) outs.push_back(ex.getOutput(i));
  return outs;
}
}  // namespace

class TestCudaDevice : public QObject {
  Q_OBJECT

private slots:
  void initTestCase() { gputest::usePluginsOfThisBuild(); }

  void noDriverSaysSo() {
#ifndef LOOM_HAVE_CUDA_PLUGIN
    QSKIP("the CUDA device plugin is not built (no CUDA toolkit headers)");
#endif
    if (driverInstalled()) QSKIP("libcuda.so.1 is installed here: runOnTheDevice covers it");
    try {
      runtime::DeviceAPI::get(runtime::DeviceType::CUDA);
      QFAIL("a CUDA device API without a driver");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY2(std::string(e.what()).find(kNoDriver) != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("libloom_device_cuda.so") != std::string::npos, e.what());
    }
    // The kernel module asks for the device first, before compiling anything.
    auto c = gputest::lowerForGPU("relu:M=8,N=8", transform::gpuScheduleFlat(topi::buildWorkload(topi::parseWorkloadSpec("relu:M=8,N=8")), 8));
    try {
      codegen::buildGPUKernelModule({c.lowered}, codegen::Target::parse("cuda -arch=sm_80"));
      QFAIL("a CUDA kernel module without a driver");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY2(std::string(e.what()).find(kNoDriver) != std::string::npos, e.what());
    }
  }

  void runOnTheDevice() {
    if (std::string why = cudaUnavailable(); !why.empty()) QSKIP(why.c_str());
    auto c = gputest::lowerForGPU("matmul:M=64,N=48,K=32", transform::gpuScheduleMatmulShared(8, 16));
    std::string diff = runOnCuda(c);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void presetsOnTheDevice_data() {
    QTest::addColumn<QString>("spec");
    for (auto& w : topi::allWorkloads()) QTest::newRow(w.name.c_str()) << QString::fromStdString(smallSpec(w.name));
  }
  void presetsOnTheDevice() {
    if (std::string why = cudaUnavailable(); !why.empty()) QSKIP(why.c_str());
    QFETCH(QString, spec);
    std::string s = spec.toStdString();
    topi::WorkloadSpec ws = topi::parseWorkloadSpec(s);
    tir::PrimFunc f = topi::buildWorkload(ws);
    for (auto& [script, name] : std::vector<std::pair<std::string, std::string>>{
             {transform::gpuScheduleFlat(f, 64), "flat 64 threads"},
             {transform::gpuScheduleFlat(f, 7), "flat 7 threads (ragged tail)"},
             {transform::gpuSchedule2D(f, 4, 8), "2-D 4x8 threads"},
             {transform::defaultGPUSchedule(ws.workload->name, f), "default"}}) {
      std::string diff = runOnCuda(gputest::lowerForGPU(s, script));
      QVERIFY2(diff.empty(), (name + ": " + diff).c_str());
    }
  }

  void schedulesOnTheDevice_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("script");
    QTest::newRow("shared 8x8") << "matmul:M=32,N=24,K=40" << QString::fromStdString(transform::gpuScheduleMatmulShared(8));
    QTest::newRow("shared 16x16, k 8") << "matmul:M=96,N=64,K=32" << QString::fromStdString(transform::gpuScheduleMatmulShared(16, 8));
    QTest::newRow("shared 16x16, 256^3") << "matmul:M=256,N=256,K=256" << QString::fromStdString(transform::gpuScheduleMatmulShared(16));
    QTest::newRow("vthread 2x2") << "matmul:M=64,N=48,K=40" << QString::fromStdString(transform::gpuScheduleMatmulVThread(8, 2, 8));
    QTest::newRow("vthread 4x4") << "matmul:M=32,N=64,K=16" << QString::fromStdString(transform::gpuScheduleMatmulVThread(4, 4, 4));
    QTest::newRow("local 16x16 threads, 4x4 vthreads") << "matmul:M=512,N=256,K=48" << QString::fromStdString(transform::gpuScheduleMatmulLocal());
    QTest::newRow("rfactor") << "reduce_sum:M=20,N=48" << QString::fromStdString(transform::gpuScheduleReduceRfactor(8));
    QTest::newRow("cross-thread 32") << "reduce_sum:M=20,N=64" << QString::fromStdString(transform::gpuScheduleReduceCrossThread(32));
    QTest::newRow("cross-thread 16 ragged") << "reduce_sum:M=7,N=48" << QString::fromStdString(transform::gpuScheduleReduceCrossThread(16));
  }
  void schedulesOnTheDevice() {
    if (std::string why = cudaUnavailable(); !why.empty()) QSKIP(why.c_str());
    QFETCH(QString, spec);
    QFETCH(QString, script);
    std::string diff = runOnCuda(gputest::lowerForGPU(spec.toStdString(), script.toStdString()));
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void modelsMatchTheCpu_data() {
    QTest::addColumn<QString>("model");
    QTest::addColumn<QString>("shapes");
    QTest::addColumn<QString>("layout");
    QTest::newRow("small_cnn") << "small_cnn" << "data:[1,3,16,16]" << "";
    QTest::newRow("fire_net") << "fire_net" << "" << "";
    QTest::newRow("transformer_block") << "transformer_block" << "" << "";
    QTest::newRow("small_cnn NCHWc") << "small_cnn" << "data:[1,3,16,16]" << "NCHWc";
  }
  void modelsMatchTheCpu() {
    if (std::string why = cudaUnavailable(); !why.empty()) QSKIP(why.c_str());
    QFETCH(QString, model);
    QFETCH(QString, shapes);
    QFETCH(QString, layout);
    graph::Module m = importModel(model.toStdString(), shapes.toStdString());
    driver::CompileModelOptions o;
    o.desiredLayout = layout.toStdString();
    driver::CompiledModel cpu = driver::compileModel(m, "llvm");
    driver::CompiledModel gpu = driver::compileModel(m, "cuda", {}, o);
    auto cpuEx = driver::createExecutor(cpu);
    auto gpuEx = driver::createExecutor(gpu);
    // Two runs with different inputs on one executor: outputs follow the inputs.
    for (unsigned seed : {11u, 29u}) {
      auto want = runModel(*cpuEx, cpu, seed);
      auto got = runModel(*gpuEx, gpu, seed);
      QCOMPARE(got.size(), want.size());
      for (size_t i = 0; i < got.size(); ++i) {
        double err = tir::maxRelError(got[i], want[i]);
        QVERIFY2(err <= 1e-3, (model.toStdString() + " output " + std::to_string(i) + ": max rel err " +
                               std::to_string(err)).c_str());
      }
    }
  }
};

QTEST_APPLESS_MAIN(TestCudaDevice)
#include "test_cuda_device.moc"
