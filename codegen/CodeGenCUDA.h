// GPU kernel source in two C dialects: CUDA C (for NVRTC/nvcc) and OpenCL C (for any OpenCL device).
#pragma once
#include <string>
#include <vector>

#include "core/transform/GPUKernels.h"

namespace loom::codegen {

enum class GPUDialect { CUDA, OpenCL };

/// One translation unit defining every kernel of `program` (named DeviceKernel::name, parameters
/// in DeviceKernel::params order: buffers as global pointers of their element type, scalars by
/// value). CUDA: `extern "C" __global__`, blockIdx/threadIdx, `__shared__`, `__syncthreads()`.
/// OpenCL: `__kernel`, get_group_id/get_local_id, `__local`, `barrier(CLK_LOCAL_MEM_FENCE)`.
/// A thread region narrower than the launch is guarded by `if (threadIdx < extent)`. Throws
/// CodeGenError for vector code, float16/bfloat16, or an intrinsic without a GPU form.
std::string emitGPUSource(const transform::DeviceProgram& program, GPUDialect dialect);
/// One translation unit with the kernels of several programs (e.g. every kernel of a model;
/// kernel names are unique when the programs' function names are).
std::string emitGPUSource(const std::vector<transform::DeviceProgram>& programs, GPUDialect dialect);

}  // namespace loom::codegen
