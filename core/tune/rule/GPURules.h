// The GPU rules of the search space (MetaSchedule's CUDA rule set, in Loom's subset).
#pragma once
#include <memory>

#include "core/tune/SpaceGenerator.h"

namespace loom::tune {

/// Rule gpu-multi-level-tiling: reduction blocks with data reuse (matmul, conv, dense) get their
/// spatial loops tiled in 4 levels and reduction loops in 2 by sample_perfect_tile, ordered
/// S0 S1 S2 R0 S3 R1; the S0 tiles fused and bound to blockIdx.x, S1 to vthread.x, S2 to
/// threadIdx.x; a "local" accumulator (cache_write) written back under the thread loop; in about
/// half of the candidates the inputs' tiles of each R0 step are cache_read into "shared" memory.
std::shared_ptr<ScheduleRule> makeGPUMultiLevelTiling(int maxInnermostFactor = 16);
/// Rule gpu-cross-thread-reduction: in about half of the candidates, a reduction block without
/// data reuse (row sums, softmax, layer norm) has its spatial loops fused and bound to
/// blockIdx.x and its reduction loops fused, split by a sampled power of two (16..256) and the
/// inner part bound to threadIdx.x: a cross-thread reduction (lower-cross-thread-reduction).
std::shared_ptr<ScheduleRule> makeGPUCrossThreadReduction();
/// Rule gpu-auto-bind: every block not bound yet gets its spatial loops fused, split by a sampled
/// thread count (32..512) and bound to blockIdx.x / threadIdx.x (a block without spatial loops:
/// a unit loop bound to blockIdx.x), so every candidate lowers to kernels.
std::shared_ptr<ScheduleRule> makeGPUAutoBind();

}  // namespace loom::tune
