// The register-tiled CPU structure shared by the rules multi-level-tiling-register and
// multi-level-tiling-with-intrin: spatial loops in three sampled levels around the whole
// reduction, a register-sized accumulator, the innermost spatial tile in vector lanes.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/schedule/Schedule.h"

namespace loom::tune::rule {

/// Block annotations the register-tiled structure leaves for the postprocessors.
inline constexpr const char* kAutoTensorizeKey = "meta_schedule.auto_tensorize";
inline constexpr const char* kDecomposeReductionKey = "meta_schedule.decompose_reduction";

/// What makes a block fit the structure, found on the untouched block.
struct RegisterTileInfo {
  int vectorAxis = -1; ///< iter var (= loop) index of the innermost spatial axis, the output's last index
  int64_t lanes = 0;   ///< vector lanes (vectorLanes: 64 bytes when they divide the axis, else 32, 16, or the axis)
  /// Reads that can be packed into a contiguous panel: a function parameter whose last index is
  /// the vector axis and that leaves out some spatial axis (reused across it).
  std::vector<int> packableReads;
  bool float32 = false;
};

/// The vector lanes for an innermost axis of `extent` elements of `bits` bits: a 64-byte vector
/// (16 fp32) when it divides the extent, else 32 or 16 bytes (8, 4 fp32: channel blocks and
/// widths that are not multiples of 16, e.g. NCHW8c, a 56-wide row), else, for an extent between
/// 16 bytes and a 64-byte vector that none divides (NCHW10c, a 14-wide row), the whole extent;
/// 0 when none fits (too narrow, or wider than a vector and not a multiple of 16 bytes).
int64_t vectorLanes(int64_t extent, int bits);

/// The block fits when it is a reduction with data reuse in its plain TE nest whose output's
/// last index is its innermost spatial iter var, of constant extent with vectorLanes > 0
/// (grouped and depthwise convs included: their weights' last index is the lane axis too).
std::optional<RegisterTileInfo> registerTileInfo(const tir::Schedule& sch, const tir::BlockNode* block);

struct RegisterTileOptions {
  /// The read (index into block->reads) packed by cache_read + compute_at under the panel loops
  /// (the outer tile loops of the axes the read depends on); -1: no packing.
  int packRead = -1;
  /// Leave the innermost "k-tile x lanes" for a tensor intrinsic: the last reduction loop is split
  /// by a sampled factor among `intrinK` and the block is annotated with kAutoTensorizeKey =
  /// `intrinPrefix` (the postprocessor rewriteTensorize tensorizes it).
  std::string intrinPrefix;
  std::vector<int64_t> intrinK;
  int64_t maxVectorTiles = 4; ///< register tile along the vector axis, in vectors
  int64_t maxRowTile = 8;     ///< register tile along the next inner spatial axis
  int64_t maxOtherTile = 4;   ///< register tile along other spatial axes
};

/// Applies the structure to block `name` (which registerTileInfo accepted):
///   S0 (the outer tiles fused into one loop, the parallel one) | S1 (packed read's axes first) |
///   write cache | R (all reduction loops) | S3 register tile (unrolled) | lanes (vectorized, or
///   the intrinsic's k-tile x lanes)
/// with sample_perfect_tile for S0/S1/S3 (with a packed panel, the axes it does not depend on
/// have no S0 tile: the panel is packed once per S0 tile). The accumulator is a "local" cache_write, or the
/// block's single elementwise consumer (a fused epilogue) put under the tile by
/// reverse_compute_at; the init is left for rewriteReductionInit to decompose out of the
/// reduction loop. Throws ScheduleError
/// when a primitive refuses.
void applyRegisterTiling(tir::Schedule& sch, const std::string& name, const RegisterTileInfo& info,
                         const RegisterTileOptions& options);

} // namespace loom::tune::rule
