// GPU lowering: barrier insertion (thread-sync), the host/device split, and the launch-limit verifier.
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/support/Error.h"
#include "core/tir/Function.h"

namespace loom {
/// A kernel asks for more threads per block than the target allows.
LOOM_DECLARE_ERROR(GPUThreadLimitError, Error);
/// A kernel's shared-memory allocations exceed the target's per-block limit.
LOOM_DECLARE_ERROR(GPUSharedMemoryError, Error);
/// A GPU function that cannot be split into kernels (code outside any thread-bound loop, a
/// non-constant launch extent, a dynamic-size allocation in a kernel, ...).
LOOM_DECLARE_ERROR(GPUSplitError, Error);
}  // namespace loom

namespace loom::transform {

/// The barrier call thread-sync inserts: `loom_thread_sync("shared")` (a void Evaluate).
inline constexpr const char* kThreadSync = "loom_thread_sync";

/// What the verifier checks against (defaults: CUDA's 1024 threads, 48 KiB static shared memory).
struct GPULimits {
  int64_t maxThreadsPerBlock = 1024;
  int64_t maxSharedMemoryBytes = 48 * 1024;
};

/// One device kernel of a split GPU function.
struct DeviceKernel {
  std::string name;
  /// The kernel's body: the outermost thread_extent region, thread vars defined by its attrs.
  tir::Stmt body;
  /// What the kernel reads from the host: buffer data handles and scalars, in first-use order.
  std::vector<tir::Var> params;
  std::array<int64_t, 3> grid{1, 1, 1};   ///< blockIdx.x/y/z extents
  std::array<int64_t, 3> block{1, 1, 1};  ///< threadIdx.x/y/z extents
  int64_t sharedBytes = 0;                ///< static shared memory per block
};

/// One step of the host side, in order.
struct HostStep {
  enum class Kind { Alloc, Launch, Free } kind = Kind::Launch;
  tir::Var var;         ///< Alloc/Free: the device buffer's handle
  DataType dtype;  ///< Alloc: element type
  int64_t count = 0;    ///< Alloc: elements
  int kernel = -1;      ///< Launch: index into kernels
};

/// A lowered GPU function as kernels and the host steps that allocate and launch them.
struct DeviceProgram {
  tir::PrimFunc func;
  std::vector<DeviceKernel> kernels;
  std::vector<HostStep> steps;
};

/// thread-sync: inside thread_extent regions, inserts loom_thread_sync("shared") between a write
/// to a shared buffer and a later read of it (and a read then a later write), and at the end of a
/// loop body that both reads and writes one (the next iteration's write). TVM's ThreadSync.
tir::PrimFunc insertThreadSync(const tir::PrimFunc& f);

/// Splits a lowered GPU function (pipeline with gpu=true) into kernels named `<func>_kernel<i>`:
/// each outermost thread_extent region is one kernel; the host part may only allocate global
/// buffers and sequence kernels. Throws GPUSplitError naming what is in the way.
DeviceProgram splitHostDevice(const tir::PrimFunc& lowered);

/// Refuses kernels over `limits`: GPUThreadLimitError (threads per block) or
/// GPUSharedMemoryError (shared bytes per block), naming the kernel and the numbers.
void verifyGPULimits(const DeviceProgram& program, const GPULimits& limits = {});

/// Pipeline pass "verify-gpu": verifyGPULimits with the default limits on every outermost
/// thread_extent region (code outside kernels is left for splitHostDevice to refuse).
tir::PrimFunc verifyGPUPass(const tir::PrimFunc& f);

}  // namespace loom::transform
