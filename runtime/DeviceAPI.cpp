// The device registry and the built-in CPU device (aligned host memory, memcpy, no queue).
#include "runtime/DeviceAPI.h"

#include <climits>
#include <cstdlib>
#include <dlfcn.h>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>
#include <vector>
#include <unistd.h>

#include "loom/c_runtime_api.h"
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
  std::recursive_mutex mutex;  // recursive: a plugin may ask while it is loaded
  CpuDeviceAPI cpu;
  std::map<DeviceType, std::unique_ptr<DeviceAPI>> others;
  std::map<DeviceType, std::string> pluginFailures;  // why no plugin was found, once per type
  // Replaced APIs stay alive: arrays they allocated still free through them.
  std::vector<std::unique_ptr<DeviceAPI>> retired;
};

Registry& registry() {
  static Registry* r = new Registry();  // never destroyed: arrays may be freed during exit
  return *r;
}

using CreateFn = DeviceAPI* (*)(int);

/// Loads the plugin of `type`; returns its API or null with `why` filled in.
std::unique_ptr<DeviceAPI> loadPlugin(DeviceType type, std::string* why) {
  std::string file = "libloom_device_" + deviceTypeName(type) + ".so";
  std::vector<std::string> candidates;
  if (const char* path = std::getenv("LOOM_DEVICE_PATH")) {
    std::string dirs = path;
    size_t start = 0;
    while (start <= dirs.size()) {
      size_t end = dirs.find(':', start);
      if (end == std::string::npos) end = dirs.size();
      if (end > start) candidates.push_back(dirs.substr(start, end - start) + "/" + file);
      start = end + 1;
    }
  }
  candidates.push_back(file);
  std::string tried;
  for (const std::string& candidate : candidates) {
    dlerror();
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle) {
      const char* err = dlerror();
      tried += (tried.empty() ? "" : "; ") + std::string(err ? err : candidate);
      continue;
    }
    auto create = reinterpret_cast<CreateFn>(dlsym(handle, "loom_device_api_create"));
    if (!create) {
      *why = candidate + " has no loom_device_api_create";
      dlclose(handle);
      return nullptr;
    }
    loom_set_last_error("");
    std::unique_ptr<DeviceAPI> api(create(int(type)));
    if (!api) {
      *why = candidate + " refused: " + loom_get_last_error();
      return nullptr;  // the library stays loaded: it may have registered things
    }
    return api;  // the library stays loaded for the life of the process
  }
  *why = "no plugin " + file + " (" + tried + ")";
  return nullptr;
}

}  // namespace

void useDevicePluginsBesideProgram() {
  if (std::getenv("LOOM_DEVICE_PATH")) return;
  char buf[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return;
  std::string exe(buf, size_t(n));
  std::string dir = exe.substr(0, exe.rfind('/'));
  std::string path = dir + "/../lib:" + dir + "/../lib/loom:" + dir;
  setenv("LOOM_DEVICE_PATH", path.c_str(), 1);
}

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
  if (it != r.others.end()) return it->second.get();
  if (r.pluginFailures.count(type)) return nullptr;
  // Marked first, so a plugin that asks the registry while it is created finds nothing.
  r.pluginFailures[type] = "its plugin is being loaded";
  std::string why;
  std::unique_ptr<DeviceAPI> api = loadPlugin(type, &why);
  if (!api) {
    r.pluginFailures[type] = why;
    return nullptr;
  }
  r.pluginFailures.erase(type);
  return (r.others[type] = std::move(api)).get();
}

DeviceAPI* DeviceAPI::get(DeviceType type) {
  if (DeviceAPI* api = find(type)) return api;
  std::string why;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    why = r.pluginFailures[type];
  }
  throw RuntimeFailure("no device API for " + deviceTypeName(type) +
                       " (only cpu is built in): " + why);
}

void DeviceAPI::registerAPI(DeviceType type, std::unique_ptr<DeviceAPI> api) {
  if (type == DeviceType::CPU) throw RuntimeFailure("the cpu device API cannot be replaced");
  if (!api) throw RuntimeFailure("registerAPI: null device API for " + deviceTypeName(type));
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  r.pluginFailures.erase(type);
  auto& slot = r.others[type];
  if (slot) r.retired.push_back(std::move(slot));
  slot = std::move(api);
}

}  // namespace loom::runtime
