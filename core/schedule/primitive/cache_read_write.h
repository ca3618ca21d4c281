// Buffer placement: cache_read, cache_write (copy blocks through a new buffer in another storage
// scope), set_scope and storage_align.
#pragma once
#include <string>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// A buffer index past the block's reads / writes.
LOOM_DECLARE_ERROR(BufferIndexOutOfRangeError, ScheduleError);
/// A storage scope that is not "global", "shared", "local", ... (optionally with a ".tag").
LOOM_DECLARE_ERROR(InvalidStorageScopeError, ScheduleError);
/// The cache copy cannot be placed: a block writing (cache_read) or reading (cache_write) the
/// buffer shares a loop with the block.
LOOM_DECLARE_ERROR(CachePositionError, ScheduleError);
/// set_scope / storage_align of a buffer the function does not allocate (a parameter).
LOOM_DECLARE_ERROR(NotAllocatedBufferError, ScheduleError);
/// storage_align: an axis outside the buffer, a non-positive factor or a negative offset.
LOOM_DECLARE_ERROR(InvalidStorageAlignError, ScheduleError);

/// Reads buffer `block->reads[readBufferIndex]` through a copy `<name>_<scope>` in `scope`: a new
/// block (returned) copies the whole buffer after its last writer before the consumers, which
/// then read the copy. The consumers are `block` and `consumerBlocks`, or, when that list is
/// empty, every block of the scope reading the buffer (TVM's default).
BlockRV cacheRead(Schedule& sch, const BlockRV& block, int64_t readBufferIndex,
                  const std::string& scope, const std::vector<BlockRV>& consumerBlocks = {});
/// Makes `block` write `block->writes[writeBufferIndex]` into a new buffer in `scope`; a new block
/// (returned) copies it to the original buffer right after `block`'s loop nest.
BlockRV cacheWrite(Schedule& sch, const BlockRV& block, int64_t writeBufferIndex,
                   const std::string& scope);
/// Moves the allocated buffer `block->writes[bufferIndex]` to storage scope `scope`.
void setScope(Schedule& sch, const BlockRV& block, int64_t bufferIndex, const std::string& scope);
/// Pads the stride of dimension `axis` of `block->writes[bufferIndex]` so that it is
/// `factor * k + offset` elements; recorded as the block annotation "buffer_dim_align" (TVM's
/// format: per write buffer, a list of (axis, factor, offset) as nested T.tvm_tuple calls).
void storageAlign(Schedule& sch, const BlockRV& block, int64_t bufferIndex, int64_t axis,
                  int64_t factor, int64_t offset);

void registerCacheReadWriteInstructions();

} // namespace loom::tir
