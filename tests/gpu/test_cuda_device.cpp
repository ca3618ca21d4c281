// The CUDA device plugin (driver API through dlopen("libcuda.so.1")): without a driver it refuses
// with a clear message, through the device API, the kernel module and `loom bench-op`; with one,
// a shared-memory matmul and a model run on it and match the interpreter / the CPU.
#include <QtTest>

#include <dlfcn.h>

#include "GPUTestUtil.h"
#include "codegen/CodeGenCUDANVRTC.h"
#include "codegen/CodeGenOpenCL.h"
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
    if (!driverInstalled()) QSKIP("no CUDA driver here (libcuda.so.1): nothing runs on CUDA");
    std::string why;
    if (!codegen::nvrtcAvailable(&why)) QSKIP(("NVRTC missing: " + why).c_str());
    auto c = gputest::lowerForGPU("matmul:M=64,N=48,K=32", transform::gpuScheduleMatmulShared(8, 16));
    runtime::Module mod = codegen::buildGPUKernelModule({c.lowered}, codegen::Target::parse("cuda"));
    auto args = gputest::randomArgs(c, 3);
    auto want = gputest::interpreterResult(c, args);
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
    QVERIFY2(diff.empty(), diff.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCudaDevice)
#include "test_cuda_device.moc"
