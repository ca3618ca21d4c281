// `loom bench-op` on a GPU target: runs the kernels on the OpenCL or CUDA device and checks them.
#include "app/cli/BenchOpGPU.h"

#include <chrono>
#include <functional>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "codegen/CodeGenOpenCL.h"
#include "core/transform/GPUKernels.h"
#include "runtime/DeviceAPI.h"
#include "runtime/GPUDeviceAPI.h"
#include "runtime/PackedFunc.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/topi/Workloads.h"
#include "runtime/RuntimeFailure.h"

namespace loom::cli {

namespace {

/// One way of running the operator on a device: `run(arrays, repeat)` copies the host arrays in,
/// runs `repeat` times, copies them back, and returns the mean seconds of a run.
struct DeviceRunner {
  std::function<double(std::vector<runtime::NDArray>&, int)> run;
  std::string description;
  size_t kernels = 0;
};

DeviceRunner openclRunner(const driver::LoweredOperator& op) {
  std::shared_ptr<codegen::OpenCLModule> mod;
  try {
    mod = std::make_shared<codegen::OpenCLModule>(op.lowered);
  } catch (const runtime::RuntimeFailure& e) {
    LOOM_THROW(Error) << "bench-op: cannot run on OpenCL: " << e.what();
  }
  return {[mod](std::vector<runtime::NDArray>& a, int repeat) { return mod->run(a, repeat); }, mod->deviceDescription(),
          mod->program().kernels.size()};
}

/// The CUDA device (plugin libloom_device_cuda.so over the CUDA driver): the operator's PTX loaded
/// by the driver, run on device arrays.
DeviceRunner cudaRunner(const driver::LoweredOperator& op) {
  runtime::DeviceAPI* api = nullptr;
  try {
    api = runtime::DeviceAPI::get(runtime::DeviceType::CUDA);
  } catch (const runtime::RuntimeFailure& e) {
    LOOM_THROW(Error) << "bench-op: cannot run on CUDA: " << e.what()
                      << "; `loom lower --emit cuda` or `--emit ptx` prints the kernels, `--target opencl` runs them";
  }
  runtime::Module mod = codegen::buildGPUKernelModule({op.lowered}, op.target);
  runtime::PackedFunc fn = mod.getFunction(op.lowered->name);
  auto gpuApi = static_cast<runtime::GPUDeviceAPI*>(api);
  runtime::Device dev{runtime::DeviceType::CUDA, 0};
  size_t kernels = transform::splitHostDevice(op.lowered).kernels.size();
  auto run = [fn, api, dev](std::vector<runtime::NDArray>& host, int repeat) {
    std::vector<runtime::NDArray> onDevice;
    std::vector<runtime::PackedArg> args;
    for (auto& h : host) {
      onDevice.push_back(runtime::NDArray::empty(h.shape(), h.dtype(), dev));
      onDevice.back().copyFrom(h);
    }
    for (auto& d : onDevice) args.emplace_back(d);
    double total = 0;
    for (int r = 0; r < std::max(1, repeat); ++r) {
      auto t0 = std::chrono::steady_clock::now();
      fn.call(std::span<const runtime::PackedArg>(args.data(), args.size()));
      api->sync(dev);
      total += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
    for (size_t i = 0; i < host.size(); ++i) host[i].copyFrom(onDevice[i]);
    return total / std::max(1, repeat);
  };
  return {run, gpuApi->description(), kernels};
}

}  // namespace

int benchOperatorOnGPU(const ProgramInput& in, const driver::LoweredOperator& op, uint64_t seed, int repeat, bool noCheck) {
  runtime::useDevicePluginsBesideProgram();
  DeviceRunner dev = op.target.kind == "cuda" ? cudaRunner(op) : openclRunner(op);
  std::vector<runtime::NDArray> arrays = topi::makeParamArrays(in.func);
  size_t numInputs = in.workload ? size_t(in.workload->workload->numInputs) : arrays.size();
  for (size_t i = 0; i < numInputs; ++i) tir::fillRandom(arrays[i], seed + i);
  dev.run(arrays, 1);
  if (!noCheck) {
    std::vector<runtime::NDArray> want;
    for (size_t i = 0; i < arrays.size(); ++i) want.push_back(i < numInputs ? arrays[i] : arrays[i].copy());
    std::string refName;
    if (in.workload && topi::workloadFlops(*in.workload) <= 2e8) {
      topi::runReference(*in.workload, want);
      refName = "the C++ reference";
    } else {
      std::vector<tir::Arg> args(want.begin(), want.end());
      tir::interpret(in.func, args);
      refName = "the reference interpreter";
    }
    double tolerance = in.workload ? topi::checkTolerance(*in.workload) : 1e-4;
    double worst = 0;
    for (size_t i = numInputs; i < arrays.size(); ++i) {
      double err = tir::maxRelError(arrays[i], want[i]);
      worst = err > worst || err != err ? err : worst;
    }
    bool ok = worst <= tolerance;
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.2e", worst);
    std::cout << "check: " << (ok ? "correct" : "WRONG") << " (max rel err " << buf << " vs " << refName << ")\n";
    if (!ok) {
      std::cerr << "error: " << in.origin << ": result differs from " << refName << "\n";
      return 1;
    }
  }
  double seconds = dev.run(arrays, std::max(1, repeat));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", seconds * 1e3);
  std::cout << "operator: " << in.origin << "\ntarget: " << op.target.str() << " (" << dev.description << ", "
            << dev.kernels << " kernel(s))\n";
  std::cout << "time: mean " << buf << " ms over " << std::max(1, repeat) << " runs (copies excluded)\n";
  if (in.workload) {
    std::snprintf(buf, sizeof buf, "%.2f", topi::workloadFlops(*in.workload) / seconds / 1e9);
    std::cout << "throughput: " << buf << " GFLOP/s\n";
  }
  return 0;
}

}  // namespace loom::cli
