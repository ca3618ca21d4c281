// Measuring a tuning candidate on a GPU device (cuda, opencl): the worker body for GPU targets.
#pragma once
#include <functional>

#include "core/tune/Measure.h"

namespace loom::tune {

/// measureCandidate for a task whose target is "cuda" or "opencl" (measureCandidate calls it):
/// the trace applied to the task's function (an empty trace: the default GPU schedule of the
/// task's preset, the baseline), lowered for the GPU, its kernels built on the
/// target's device (driver-loaded plugin: OpenCL C on the OpenCL device, PTX on the CUDA device),
/// run once on device copies of seeded random inputs and checked against the reference (the
/// preset's C++ reference up to 2e8 flops, else the unscheduled program compiled for the host),
/// then `beforeTiming` and the timing of the kernels alone (inputs stay on the device; each call
/// waits for the device). Every failure becomes an error kind (a missing device is a build
/// error naming why); it never throws.
MeasureResult measureCandidateOnGPU(const MeasureCandidate& c, const MeasureOptions& options,
                                    const std::function<void()>& beforeTiming = {});

}  // namespace loom::tune
