// Layout primitives: transform_layout (re-index a buffer through an index map) and pad_einsum
// (pad a matmul-like block's iteration space to multiples so it tiles evenly).
#pragma once
#include <memory>
#include <vector>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// The buffer named by transform_layout is not one the block reads/writes (bad index or name).
LOOM_DECLARE_ERROR(BufferIndexError, ScheduleError);
/// The index map does not fit the buffer: wrong arity, unsupported construct, negative or
/// unbounded results, or it is not a bijection onto the new shape.
LOOM_DECLARE_ERROR(IndexMapError, ScheduleError);
/// The buffer cannot be re-laid out: symbolic shape, explicit strides.
LOOM_DECLARE_ERROR(UnsupportedBufferError, ScheduleError);
/// pad_einsum: the block is not an einsum (one store, every index a single iter var, loops bound
/// one-to-one to its iter vars, a sum of products when a reduce iter var is padded).
LOOM_DECLARE_ERROR(NotEinsumError, ScheduleError);

struct ScriptLambda;

/// Which buffer of a block: ("read", k) / ("write", k) in its signature, or a buffer name.
struct BufferSelector {
  bool isWrite = false;
  int64_t index = -1;   ///< when >= 0: the k-th read/write region's buffer
  std::string name;     ///< otherwise: the buffer with this name
};

/// Re-lays out the buffer `which` of `block` through `indexMap` (`lambda i, j: (j // 16, i,
/// j % 16)`): the buffer gets the shape the map's image spans and every access in the function,
/// block signatures and allocations follow. A parameter buffer changes the function's interface
/// (its argument is then expected in the new layout). The map must be a bijection onto the new
/// shape (no padding). Constant shapes only.
void transformLayout(Schedule& sch, const BlockRV& block, const BufferSelector& which,
                     const std::shared_ptr<const ScriptLambda>& indexMap);

/// Pads the iteration space of einsum `block` (matmul-like: every buffer index is one iter var)
/// so each iter var's extent becomes a multiple of `padding[k]` (one entry per iter var, 1: no
/// padding). Inputs indexed by a padded iter var are copied into zero-padded buffers `<X>_pad`
/// by new blocks before the block's loops, the block computes into `<Y>_pad` over the padded
/// loops, and a block `<name>_unpad` copies the valid part back. Returns nothing; the block RV
/// keeps naming the compute block.
void padEinsum(Schedule& sch, const BlockRV& block, const std::vector<int64_t>& padding);

void registerLayoutTransformationInstructions();

} // namespace loom::tir
