// compileModel for GPU targets (cuda, opencl): a default GPU schedule per kernel, GPU lowering, kernel source, executor.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/driver/CompileModel.h"
#include "core/tir/Function.h"
#include "runtime/GraphExecutor.h"

namespace loom::driver {

/// True for targets whose kernels run on a GPU device ("cuda [-arch=sm_XX]", "opencl"): the
/// first word of the target text (other words are not checked here).
bool isGPUTarget(const std::string& target);

/// The default GPU schedule of any tensor program (a model's fused group; nothing is recognised
/// by name): every block that can be is inlined into its consumers (padding, bias, activations),
/// then each remaining block gets its spatial loops fused, split by min(`threads`, extent) and
/// bound to blockIdx.x / threadIdx.x, its reduction loops serial in the thread (one kernel per
/// block); a block without spatial loops runs in one thread of a one-block kernel. Throws
/// UnsupportedError naming a block whose loops are not one per iter var (not made by TE).
tir::PrimFunc defaultGPUScheduleFunc(const tir::PrimFunc& f, int threads = 64);

/// compileModel's GPU part, called by compileModel for GPU targets with the planned model (graph
/// JSON, params, inputs, outputs, `target` set) and its kernels unscheduled. Each kernel gets the
/// provider's schedule (opt level >= 1) or defaultGPUScheduleFunc, then cross-thread reductions
/// and the GPU lowering pipeline; `kernels` are the lowered PrimFuncs (no packed entry), each
/// split into device kernels and checked against the default limits here, so a kernel that
/// cannot run fails at compile time (GPUSplitError, GPUThreadLimitError, GPUSharedMemoryError).
CompiledModel compileModelGPU(CompiledModel model, const std::vector<ModelGroup>& groups,
                              const CompileModelOptions& options);

/// The kernel source of every kernel of a model compiled for a GPU target, in one translation
/// unit: CUDA C for "cuda", OpenCL C for "opencl".
std::string modelKernelSource(const CompiledModel& model);

/// The graph executor of a model compiled for a GPU target, on the target's device: one program
/// with every kernel (OpenCL: OpenCL C built by the OpenCL device; CUDA: PTX from NVRTC loaded
/// by the CUDA driver), storage in device memory, params uploaded once, inputs and outputs
/// copied by setInput / getOutput. Throws RuntimeFailure naming why when there is no such device
/// (e.g. "no CUDA driver/device (libcuda.so.1 not found)").
std::unique_ptr<runtime::GraphExecutor> createGPUExecutor(const CompiledModel& model);

}  // namespace loom::driver
