// `loom bench-op` on a GPU target: runs the kernels on the OpenCL device and checks them.
#pragma once
#include <cstdint>

#include "app/cli/ProgramInput.h"
#include "core/driver/BuildOperator.h"

namespace loom::cli {

/// bench-op for `op` lowered for a GPU target. opencl: builds the kernels on the OpenCL device,
/// checks the outputs against the preset's C++ reference (or the interpreter) unless `noCheck`,
/// and prints the mean time of `repeat` runs. cuda: says that no CUDA device runtime exists here
/// (use `loom lower --emit cuda|ptx`). A missing OpenCL platform is a clear error.
int benchOperatorOnGPU(const ProgramInput& in, const driver::LoweredOperator& op, uint64_t seed, int repeat, bool noCheck);

}  // namespace loom::cli
