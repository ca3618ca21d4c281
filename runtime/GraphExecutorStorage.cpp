// The executor's storage blocks: on the CPU, large ones are anonymous mappings whose pages the
// kernel maps (zeroed) on first touch; a plan sized for the symbols' bounds then costs resident
// memory only for the bytes a run at its shape writes (docs/dynamic-shapes.md, "Memory").
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
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw RuntimeFailure("cpu: out of memory mapping " + std::to_string(bytes) + " bytes of storage");
    b.m_pages = std::shared_ptr<void>(p, [bytes](void* q) { ::munmap(q, bytes); });
    b.m_data = p;
    return b;
  }
  b.m_array = NDArray::empty({int64_t(bytes)}, DType{DType::UInt, 8, 1}, dev);
  b.m_data = b.m_array.data();
  return b;
}

}  // namespace loom::runtime
