// DeviceAPI: memory and synchronization of one kind of device, and the registry that finds it by DeviceType.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <variant>

#include "runtime/NDArray.h"

namespace loom::runtime {

/// What DeviceAPI::attr can be asked. A device answers what it knows; the rest is empty.
enum class DeviceAttr {
  Exist,                // int: 1 when the device is present
  DeviceName,           // string
  MultiProcessorCount,  // int: hardware threads on the CPU, SMs/compute units on a GPU
  MaxThreadsPerBlock,   // int
  WarpSize,             // int
  TotalMemory,          // int: bytes
};
using AttrValue = std::variant<std::monostate, int64_t, std::string>;

/// One kind of device. The CPU's is built in. Any other is either registered in-process with
/// DeviceAPI::registerAPI, or found at run time the first time it is asked for: the runtime
/// dlopens `libloom_device_<name>.so` (name from deviceTypeName: cuda, opencl), looking first in
/// each directory of the colon-separated LOOM_DEVICE_PATH, then where dlopen looks, and calls
///     extern "C" loom::runtime::DeviceAPI* loom_device_api_create(int device_type);
/// which returns a new API (the runtime owns it) or null after loom_set_last_error when the
/// device is unusable. All members are virtual and the defaults inline, so such a plugin needs
/// nothing from the runtime's binary to implement one. Failures throw RuntimeFailure.
class DeviceAPI {
public:
  virtual ~DeviceAPI() = default;

  /// `nbytes` of device memory aligned to `alignment` (a power of two); never returns null.
  virtual void* allocData(Device dev, size_t nbytes, size_t alignment, DType hint) = 0;
  virtual void freeData(Device dev, void* ptr) = 0;
  /// Copies `nbytes` from `from + fromOffset` on `fromDev` to `to + toOffset` on `toDev`; one
  /// of the two is this API's device kind, the other the same kind or the CPU.
  virtual void copyData(const void* from, size_t fromOffset, void* to, size_t toOffset,
                        size_t nbytes, Device fromDev, Device toDev) = 0;
  /// Waits until all work queued on `dev` has finished.
  virtual void sync(Device dev) = 0;
  virtual AttrValue attr(Device dev, DeviceAttr kind) = 0;

  /// Scratch memory for one kernel; by default ordinary 64-byte aligned data.
  virtual void* allocWorkspace(Device dev, size_t nbytes, DType hint) {
    return allocData(dev, nbytes, 64, hint);
  }
  virtual void freeWorkspace(Device dev, void* ptr) { freeData(dev, ptr); }

  /// The API for `type`, or nullptr when this process has none (registered or as a plugin).
  static DeviceAPI* find(DeviceType type);
  /// The API for `type`; throws RuntimeFailure naming the device kind, and why no plugin was
  /// found, when there is none.
  static DeviceAPI* get(DeviceType type);
  /// Installs (or replaces) the API of `type`; the registry owns it until exit. The CPU's
  /// cannot be replaced.
  static void registerAPI(DeviceType type, std::unique_ptr<DeviceAPI> api);
};

/// "cpu", "cuda", "opencl", or "device(<n>)".
std::string deviceTypeName(DeviceType type);

/// Unless the user set LOOM_DEVICE_PATH, sets it to the running program's ../lib, ../lib/loom and
/// own directory, so the plugins of its build tree or install are found (by this process and by
/// the child processes it starts). Programs call it at start; the runtime alone does not.
void useDevicePluginsBesideProgram();

}  // namespace loom::runtime
