// The OpenCL device's API beyond memory: program build from source and kernel launch (plugin interface).
#pragma once
#include "runtime/GPUDeviceAPI.h"

namespace loom::runtime {

/// What DeviceAPI::get(DeviceType::OpenCL) returns: the plugin libloom_device_opencl.so, which
/// loads libOpenCL through the ICD loader at run time and uses the first device of the first
/// platform (LOOM_OPENCL_PLATFORM=<substring> picks a platform by name). Programs are built from
/// OpenCL C source; a launch enqueues an NDRange of grid*block work items in work-groups of
/// `block`. Failures throw RuntimeFailure with the OpenCL error name (and the build log for a
/// failed build).
class OpenCLDeviceAPI : public GPUDeviceAPI {};

}  // namespace loom::runtime
