// The OpenCL device's API beyond memory: program build from source and kernel launch (plugin interface).
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

/// What DeviceAPI::get(DeviceType::OpenCL) returns: the plugin libloom_device_opencl.so, which
/// loads libOpenCL through the ICD loader at run time and uses the first device of the first
/// platform (LOOM_OPENCL_PLATFORM=<substring> picks a platform by name). Failures throw
/// RuntimeFailure with the OpenCL error name (and the build log for a failed build).
class OpenCLDeviceAPI : public DeviceAPI {
public:
  /// Compiles OpenCL C source; the handle lives until releaseProgram.
  virtual void* buildProgram(const std::string& source) = 0;
  virtual void releaseProgram(void* program) = 0;
  /// Enqueues `kernel` of `program` over grid x block work-groups (NDRange grid*block, local
  /// size block); returns without waiting (sync waits).
  virtual void launch(void* program, const std::string& kernel, const std::vector<KernelArg>& args,
                      std::array<int64_t, 3> grid, std::array<int64_t, 3> block) = 0;
  /// "<platform>: <device>".
  virtual std::string description() = 0;
};

}  // namespace loom::runtime
