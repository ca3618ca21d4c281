// The host side of an OpenCL operator: kernel source built on the OpenCL device, launched in host-step order.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/transform/GPUKernels.h"
#include "runtime/NDArray.h"

namespace loom::codegen {

/// A lowered GPU function (pipeline with gpu=true) split into kernels, verified against the
/// device's limits, emitted as OpenCL C, and built on the OpenCL device (DeviceAPI plugin
/// libloom_device_opencl.so). Construction throws GPUSplitError / GPUThreadLimitError /
/// GPUSharedMemoryError / CodeGenError for the IR, and runtime::RuntimeFailure when there is
/// no OpenCL device ("no OpenCL platform is installed ...") or the build fails (with its log).
class OpenCLModule {
public:
  explicit OpenCLModule(const tir::PrimFunc& lowered);
  ~OpenCLModule();
  OpenCLModule(const OpenCLModule&) = delete;
  OpenCLModule& operator=(const OpenCLModule&) = delete;

  const std::string& source() const;
  const transform::DeviceProgram& program() const;
  /// "<platform>: <device>" of the device it runs on.
  std::string deviceDescription() const;

  /// Copies `args` (host arrays, one per parameter of the function, in order) to the device,
  /// runs the host steps `repeat` times, and copies every array back. Returns the mean seconds
  /// of one run of the kernels (copies excluded, each run waited for).
  double run(const std::vector<runtime::NDArray>& args, int repeat = 1);

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

}  // namespace loom::codegen
