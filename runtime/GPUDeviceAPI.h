// The API of a device that runs kernels (CUDA, OpenCL): program build from source and kernel launch (plugin interface).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "runtime/DeviceAPI.h"

namespace loom::runtime {

/// One kernel argument: a device buffer (what allocData returned) or a scalar by value.
struct KernelArg {
  enum class Kind { Buffer, Int32, Int64, Float32, Float64 } kind = Kind::Buffer;
  void* buffer = nullptr;
  int64_t i = 0;
  double f = 0;
};

/// What DeviceAPI::get returns for a GPU-style device (its plugin implements it): memory as any
/// DeviceAPI, plus programs and launches. All members are virtual, so a plugin needs nothing
/// from the runtime's binary. Failures throw RuntimeFailure.
class GPUDeviceAPI : public DeviceAPI {
public:
  /// Builds a program from the device's source form (OpenCL C for OpenCL, PTX for CUDA); the
  /// handle lives until releaseProgram.
  virtual void* buildProgram(const std::string& source) = 0;
  virtual void releaseProgram(void* program) = 0;
  /// Enqueues `kernel` of `program` over `grid` blocks of `block` threads (static shared memory
  /// only); returns without waiting (sync waits).
  virtual void launch(void* program, const std::string& kernel, const std::vector<KernelArg>& args,
                      std::array<int64_t, 3> grid, std::array<int64_t, 3> block) = 0;
  /// "<platform>: <device>".
  virtual std::string description() = 0;
};

}  // namespace loom::runtime
