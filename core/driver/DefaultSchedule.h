// The default CPU schedule of a fused group when no script or tuning record gives one: inline
// injective producers; register-tile reductions whose innermost output axis is contiguous in
// their operands (NCHWc convs, matmuls, blocked pools) with the epilogue under the tile;
// parallelize outer spatial loops and vectorize inner ones elsewhere.
#pragma once
#include <cstdint>

#include "core/tir/Function.h"

namespace loom::driver {

/// Loop iterations (all loops of a block, reduce loops included) below which the default
/// schedule leaves a block's loops serial: waking the thread pool costs more than such a block
/// takes (a 64 x 256 layer-norm step, a 4 x 64 x 64 softmax), and every launch waits for the
/// slowest worker, which on a loaded machine may be descheduled.
constexpr int64_t kMinParallelIterations = int64_t(1) << 16;

/// `f` scheduled by the default CPU rules; `vectorize` false keeps every loop scalar. Never
/// throws for a well-formed `f`: a step that does not apply leaves the program as it was.
tir::PrimFunc defaultSchedule(const tir::PrimFunc& f, bool vectorize = true);

}  // namespace loom::driver
