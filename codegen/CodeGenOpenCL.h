// The host side of an OpenCL operator: kernel source built on the OpenCL device, launched in host-step order.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "codegen/Target.h"
#include "core/transform/GPUKernels.h"
#include "runtime/Module.h"
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

/// The kernels of several lowered GPU functions (pipeline with gpu=true; e.g. every kernel of a
/// compiled model) built as one program on the device of `target` (the first device of its
/// kind), as a runtime::Module: its function `<name>` runs the host steps of the PrimFunc called
/// `name` (temporaries, launches), taking one tensor per parameter whose data is the device's
/// buffer handle (what a GraphExecutor on that device passes). OpenCL: OpenCL C built by the
/// OpenCL device; CUDA: the CUDA C compiled to PTX by NVRTC for the target's -arch and loaded by
/// the CUDA device (plugin libloom_device_cuda.so). Throws RuntimeFailure when the device is
/// missing (its plugin's reason), and like OpenCLModule's constructor otherwise.
runtime::Module buildGPUKernelModule(const std::vector<tir::PrimFunc>& lowered, const Target& target);

}  // namespace loom::codegen
