// The default CPU schedule of a fused group when no script or tuning record gives one: inline
// injective producers; register-tile reductions whose innermost output axis is contiguous in
// their operands (NCHWc convs, matmuls, blocked pools) with the epilogue under the tile (a row
// extent without a fitting divisor gets a partial last tile, a lane extent that is no multiple
// of 8 a partial last 16-lane chunk with masked loads and stores; weights too big for L1 get the
// reduction blocked outside the tiles, LOOM_NO_KBLOCK=1 turns that off; a padded conv runs in
// bands of output rows that pad their own input rows, except a depthwise conv, which reads its
// padding in place (loop partitioning peels the edges); tiles whose kernel columns share
// unrolled input loads, depthwise convs and unpadded RGB stems, leave registers for them); row reductions with
// the elementwise output that reads them (softmax) one row at a time under one parallel loop;
// reductions along the contiguous axis (dense, mean) as partial sums in vector lanes;
// parallelize outer spatial loops and vectorize inner ones elsewhere (with a partial last vector).
#pragma once
#include <string>

#include "core/schedule/Trace.h"
#include "core/tir/Function.h"

namespace loom::driver {

/// `f` scheduled by the default CPU rules; `vectorize` false keeps every loop scalar. Never
/// throws for a well-formed `f`: a step that does not apply leaves the program as it was.
tir::PrimFunc defaultSchedule(const tir::PrimFunc& f, bool vectorize = true);

/// The same schedule as a schedule script (its trace): running it on `f` (driver::applySchedule)
/// gives defaultSchedule(f, vectorize). The Studio starts a fused group's editor from it.
std::string defaultScheduleScript(const tir::PrimFunc& f, bool vectorize = true);

/// The same schedule as a trace. A register-tiled reduction's row block and output-channel chunk
/// are `sample_perfect_tile` instructions whose decisions are the defaults, so the trace is a
/// design the tuner can start from and mutate (TaskSchedulerOptions::seedTrace).
tir::Trace defaultScheduleTrace(const tir::PrimFunc& f, bool vectorize = true);

}  // namespace loom::driver
