// The executor's storage blocks: on the CPU, large ones are anonymous mappings whose pages the
// kernel maps (zeroed) on first touch; a plan sized for the symbols' bounds then costs resident
// memory only for the bytes a run at its shape writes (docs/dynamic-shapes.md, "Memory").
//
// Each mapping has as many untouched bytes before and after the block as the block holds: a
// vectorized select loads both of its branches, and the simplifier used to drop a branch's index
// clamp under the select's condition, so the lanes the select discards read outside the buffer
// (ShuffleNet's channel shuffle read up to 100 KB before and 38 KB after a 100 KB input, and
// faulted on an exact-size mapping). The simplifier no longer does (arith: a select's condition
// spares its branches' load indices; with these slack pages made PROT_NONE ShuffleNet passes),
// and the slack stays as a margin. Pages never touched cost no memory; a read of one maps the
// shared zero page.
#include <sys/mman.h>

#include <algorithm>

#include "runtime/GraphExecutor.h"
#include "runtime/RuntimeFailure.h"

namespace loom::runtime {

GraphExecutor::Block GraphExecutor::Block::allocate(size_t bytes, Device dev) {
  Block b;
  bytes = std::max<size_t>(bytes, 1);
  b.m_bytes = bytes;
  constexpr size_t kMapFrom = size_t(1) << 16;
  if (dev.type == DeviceType::CPU && bytes >= kMapFrom) {
    const size_t page = 4096, slack = (bytes + page - 1) / page * page, mapped = bytes + 2 * slack;
    void* p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED) throw RuntimeFailure("cpu: out of memory mapping " + std::to_string(bytes) + " bytes of storage");
    b.m_pages = std::shared_ptr<void>(p, [mapped](void* q) { ::munmap(q, mapped); });
    b.m_data = static_cast<char*>(p) + slack;
    return b;
  }
  b.m_array = NDArray::empty({int64_t(bytes)}, DType{DType::UInt, 8, 1}, dev);
  b.m_data = b.m_array.data();
  return b;
}

}  // namespace loom::runtime
