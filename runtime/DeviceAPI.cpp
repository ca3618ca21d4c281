// The device registry and the built-in CPU device (aligned host memory, memcpy, no queue).
#include "runtime/DeviceAPI.h"

#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>
#include <unistd.h>

#include "runtime/RuntimeFailure.h"

namespace loom::runtime {
namespace {

class CpuDeviceAPI final : public DeviceAPI {
public:
  void* allocData(Device, size_t nbytes, size_t alignment, DType) override {
    if (alignment < sizeof(void*) || (alignment & (alignment - 1)) != 0)
      throw RuntimeFailure("cpu: alignment " + std::to_string(alignment) +
                           " is not a power of two of at least " + std::to_string(sizeof(void*)));
    // aligned_alloc wants a multiple of the alignment, and at least one byte.
    size_t rounded = (nbytes + alignment - 1) / alignment * alignment;
    if (rounded == 0) rounded = alignment;
    if (rounded < nbytes) throw RuntimeFailure("cpu: allocation of " + std::to_string(nbytes) +
                                               " bytes overflows");
    void* p = std::aligned_alloc(alignment, rounded);
    if (!p)
      throw RuntimeFailure("cpu: out of memory allocating " + std::to_string(nbytes) + " bytes");
    return p;
  }
  void freeData(Device, void* ptr) override { std::free(ptr); }
  void copyData(const void* from, size_t fromOffset, void* to, size_t toOffset, size_t nbytes,
                Device fromDev, Device toDev) override {
    if (fromDev.type != DeviceType::CPU || toDev.type != DeviceType::CPU)
      throw RuntimeFailure("cpu: cannot copy between " + deviceTypeName(fromDev.type) + " and " +
                           deviceTypeName(toDev.type));
    if (nbytes) std::memmove(static_cast<char*>(to) + toOffset,
                             static_cast<const char*>(from) + fromOffset, nbytes);
  }
  void sync(Device) override {}
  AttrValue attr(Device dev, DeviceAttr kind) override {
    if (dev.id != 0) return kind == DeviceAttr::Exist ? AttrValue(int64_t(0)) : AttrValue();
    switch (kind) {
    case DeviceAttr::Exist: return int64_t(1);
    case DeviceAttr::DeviceName: return cpuName();
    case DeviceAttr::MultiProcessorCount: return int64_t(std::max(1u, std::thread::hardware_concurrency()));
    case DeviceAttr::MaxThreadsPerBlock: return int64_t(1);
    case DeviceAttr::WarpSize: return int64_t(1);
    case DeviceAttr::TotalMemory: {
      long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGE_SIZE);
      if (pages > 0 && size > 0) return int64_t(pages) * int64_t(size);
      return {};
    }
    }
    return {};
  }

private:
  static std::string cpuName() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line))
      if (line.rfind("model name", 0) == 0) {
        auto colon = line.find(':');
        if (colon != std::string::npos) {
          auto start = line.find_first_not_of(" \t", colon + 1);
          if (start != std::string::npos) return line.substr(start);
        }
      }
    return "cpu";
  }
};

struct Registry {
  std::mutex mutex;
  CpuDeviceAPI cpu;
  std::map<DeviceType, std::unique_ptr<DeviceAPI>> others;
  // Replaced APIs stay alive: arrays they allocated still free through them.
  std::vector<std::unique_ptr<DeviceAPI>> retired;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: arrays may be freed during exit
  return *r;
}

}  // namespace

std::string deviceTypeName(DeviceType type) {
  switch (type) {
  case DeviceType::CPU: return "cpu";
  case DeviceType::CUDA: return "cuda";
  case DeviceType::OpenCL: return "opencl";
  }
  return "device(" + std::to_string(int(type)) + ")";
}

DeviceAPI* DeviceAPI::find(DeviceType type) {
  Registry& r = registry();
  if (type == DeviceType::CPU) return &r.cpu;
  std::lock_guard lock(r.mutex);
  auto it = r.others.find(type);
  return it == r.others.end() ? nullptr : it->second.get();
}

DeviceAPI* DeviceAPI::get(DeviceType type) {
  if (DeviceAPI* api = find(type)) return api;
  throw RuntimeFailure("no device API for " + deviceTypeName(type) +
                       ": this runtime has none registered (only cpu is built in)");
}

void DeviceAPI::registerAPI(DeviceType type, std::unique_ptr<DeviceAPI> api) {
  if (type == DeviceType::CPU) throw RuntimeFailure("the cpu device API cannot be replaced");
  if (!api) throw RuntimeFailure("registerAPI: null device API for " + deviceTypeName(type));
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  auto& slot = r.others[type];
  if (slot) r.retired.push_back(std::move(slot));
  slot = std::move(api);
}

}  // namespace loom::runtime
