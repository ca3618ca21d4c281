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
/// What produced one line of emitted GPU source: the TIR statement whose emission wrote it, and
/// the innermost For loop around it (the loop itself for a `for` line and its closing brace).
/// Null for lines no statement wrote: the prelude, kernel signatures, thread indices, blank lines.
/// The pointers are nodes of the programs' functions (DeviceKernel::body shares them with the
/// lowered PrimFunc), valid while those live.
struct GPUSourceLine {
  const tir::StmtNode* stmt = nullptr;
  const tir::ForNode* loop = nullptr;
};

/// GPU source with its line map: `lines[i]` is line i + 1 of `text` (text ends with a newline).
struct GPUSource {
  std::string text;
  std::vector<GPUSourceLine> lines;
};

/// emitGPUSource with the line map (the same text).
GPUSource emitGPUSourceWithMap(const std::vector<transform::DeviceProgram>& programs, GPUDialect dialect);

/// One translation unit with the kernels of several programs (e.g. every kernel of a model;
/// kernel names are unique when the programs' function names are).
std::string emitGPUSource(const std::vector<transform::DeviceProgram>& programs, GPUDialect dialect);

}  // namespace loom::codegen
