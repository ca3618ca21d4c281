// Default GPU schedules (as schedule scripts) for tensor programs: thread binding, shared-memory tiling.
#pragma once
#include <string>

#include "core/tir/Function.h"

namespace loom::transform {

/// Every block of `f` (unscheduled, loops in iter-var order) gets its leading spatial loops fused,
/// split by `threads` and bound to blockIdx.x / threadIdx.x; reduction loops stay serial in the
/// thread. One kernel per block. A schedule script (the tvm.tir.Schedule Python subset).
std::string gpuScheduleFlat(const tir::PrimFunc& f, int threads = 64);
/// Like gpuScheduleFlat with 2-D thread blocks: the fused spatial loop split into
/// blockIdx.x x threadIdx.y (`ty`) x threadIdx.x (`tx`).
std::string gpuSchedule2D(const tir::PrimFunc& f, int ty = 4, int tx = 16);
/// matmul (block "C", loops i, j, k): `tile` x `tile` output tiles per block (blockIdx.y/x), one
/// thread per output element (threadIdx.y/x), k in steps of `kTile` (0: `tile`) with the A tile
/// (tile x kTile) and the B tile (kTile x tile) of each step fetched into shared memory by the
/// block's threads together (cache_read "shared" under the k loop, its copy loops fused and bound
/// to threadIdx.y/x); thread-sync puts barriers between fetch and use. compact-buffers makes each
/// shared buffer the tile of one block, so a block needs 2 * tile * kTile * 4 bytes of shared
/// memory. M, N, K must be multiples of `tile` and `kTile`.
std::string gpuScheduleMatmulShared(int tile = 8, int kTile = 0);
/// matmul (block "C", loops i, j, k) with virtual threads, TVM's GPU GEMM pattern: blocks of
/// (vthreads * threads)^2 outputs (blockIdx.y/x), `threads` x `threads` threads (threadIdx.y/x),
/// and `vthreads` x `vthreads` virtual threads (vthread.y/x) so each thread computes vthreads^2
/// outputs `threads` apart; k in steps of `kTile` with the A and B tiles of the block fetched
/// into shared memory cooperatively. M and N must be multiples of vthreads * threads, K of kTile.
std::string gpuScheduleMatmulVThread(int threads = 8, int vthreads = 2, int kTile = 8);
/// gpuScheduleMatmulVThread with each thread's vthreads^2 outputs accumulated in registers
/// (cache_write "local" written back under the block's loops), not in device memory: 256 threads
/// and 64x64 outputs per block with the defaults, A and B tiles of 64 x kTile and kTile x 64 in
/// shared memory. M and N must be multiples of vthreads * threads, K of kTile. On an H200 (fp32,
/// 1024^3) 4.9x the 8x8 shared-memory schedule (docs/gpu.md).
std::string gpuScheduleMatmulLocal(int threads = 16, int vthreads = 4, int kTile = 16);
/// reduce_sum (block "A_red", loops i, k): the row sum split in two kernels with rfactor: `parts`
/// partial sums per row computed by `parts` threads of one block per row, then a write-back kernel.
std::string gpuScheduleReduceRfactor(int parts = 8);
/// reduce_sum (block "A_red", loops i, k): one block per row, the row's reduction split over
/// `threads` threads (k split, the inner part bound to threadIdx.x): a cross-thread reduction,
/// lowered to a shared-memory tree by lower-cross-thread-reduction.
std::string gpuScheduleReduceCrossThread(int threads = 32);
/// The default GPU schedule of a preset. For "matmul" (or, when `workload` is empty, a program
/// whose one block "C" looks like one): gpuScheduleMatmulLocal() when M and N are multiples of 64,
/// K of 16 and there are at least 32 blocks of 64x64 outputs (fewer lose to the 8x8 tiles), else
/// the shared-memory matmul (8x8 tiles) when M, N and K are multiples of 8. The cross-thread
/// reduction for "reduce_sum" when N is a multiple of 32; gpuScheduleFlat otherwise.
std::string defaultGPUSchedule(const std::string& workload, const tir::PrimFunc& f);

}  // namespace loom::transform
