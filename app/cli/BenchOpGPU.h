// `loom bench-op` on a GPU target: runs the kernels on the OpenCL or CUDA device and checks them.
#pragma once
#include <cstdint>

#include "app/cli/ProgramInput.h"
#include "core/driver/BuildOperator.h"

namespace loom::cli {

/// bench-op for `op` lowered for a GPU target: builds the kernels on the target's device (opencl:
/// OpenCL C on the OpenCL device; cuda: PTX from NVRTC loaded by the CUDA driver), checks the
/// outputs against the preset's C++ reference (or the interpreter) unless `noCheck`, and prints
/// the mean time of `repeat` runs. A missing device is a clear error (no OpenCL platform; "no
/// CUDA driver/device (libcuda.so.1 not found)").
int benchOperatorOnGPU(const ProgramInput& in, const driver::LoweredOperator& op, uint64_t seed, int repeat, bool noCheck);

}  // namespace loom::cli
