// The CUDA device plugin: the CUDA driver API (libcuda.so.1) loaded at run time, the primary context of device 0.
#include <cuda.h>
#include <dlfcn.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "loom/c_runtime_api.h"
#include "runtime/GPUDeviceAPI.h"
#include "runtime/RuntimeFailure.h"

namespace loom::runtime {
namespace {

// The driver entry points, by their exported (versioned) names.
#define LOOM_CU_FUNCS(X)                                                                                  \
  X(cuInit, cuInit) X(cuDeviceGetCount, cuDeviceGetCount) X(cuDeviceGet, cuDeviceGet)                     \
  X(cuDeviceGetName, cuDeviceGetName) X(cuDeviceGetAttribute, cuDeviceGetAttribute)                      \
  X(cuDeviceTotalMem, cuDeviceTotalMem_v2) X(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)          \
  X(cuCtxSetCurrent, cuCtxSetCurrent) X(cuCtxSynchronize, cuCtxSynchronize) X(cuMemAlloc, cuMemAlloc_v2)   \
  X(cuMemFree, cuMemFree_v2) X(cuMemcpyHtoD, cuMemcpyHtoD_v2) X(cuMemcpyDtoH, cuMemcpyDtoH_v2)            \
  X(cuMemcpyDtoD, cuMemcpyDtoD_v2) X(cuModuleLoadDataEx, cuModuleLoadDataEx)                              \
  X(cuModuleUnload, cuModuleUnload) X(cuModuleGetFunction, cuModuleGetFunction)                           \
  X(cuLaunchKernel, cuLaunchKernel) X(cuGetErrorName, cuGetErrorName)

struct CU {
#define LOOM_CU_PTR(name, symbol) decltype(&::symbol) name = nullptr;
  LOOM_CU_FUNCS(LOOM_CU_PTR)
#undef LOOM_CU_PTR
};

class CUDADevice final : public GPUDeviceAPI {
public:
  /// Empty `why` on success.
  void init(std::string* why) {
    m_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m_lib) {
      *why = "no CUDA driver/device (libcuda.so.1 not found)";
      return;
    }
#define LOOM_CU_LOAD(name, symbol)                                                   \
  m_cu.name = reinterpret_cast<decltype(&::symbol)>(dlsym(m_lib, #symbol));         \
  if (!m_cu.name) {                                                                  \
    *why = "no CUDA driver/device (libcuda.so.1 has no " #symbol ")";                \
    return;                                                                          \
  }
    LOOM_CU_FUNCS(LOOM_CU_LOAD)
#undef LOOM_CU_LOAD
    CUresult r = m_cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
      *why = "no CUDA driver/device (cuInit failed: " + errorName(r) + ")";
      return;
    }
    int count = 0;
    r = m_cu.cuDeviceGetCount(&count);
    if (r != CUDA_SUCCESS || count == 0) {
      *why = "no CUDA driver/device (the driver reports no CUDA device)";
      return;
    }
    if ((r = m_cu.cuDeviceGet(&m_device, 0)) != CUDA_SUCCESS ||
        (r = m_cu.cuDevicePrimaryCtxRetain(&m_ctx, m_device)) != CUDA_SUCCESS) {
      *why = "CUDA device 0 cannot be used: " + errorName(r);
      return;
    }
  }

  // The primary context stays retained until exit (the registry destroys the API at exit, when
  // the driver may already be shutting down).

  void* allocData(Device, size_t nbytes, size_t, DType) override {
    current();
    CUdeviceptr p = 0;
    check(m_cu.cuMemAlloc(&p, std::max<size_t>(nbytes, 1)), "cuMemAlloc");
    return reinterpret_cast<void*>(p);
  }
  void freeData(Device, void* ptr) override {
    if (!ptr) return;
    current();
    m_cu.cuMemFree(reinterpret_cast<CUdeviceptr>(ptr));
  }
  void copyData(const void* from, size_t fromOffset, void* to, size_t toOffset, size_t nbytes, Device fromDev,
                Device toDev) override {
    if (nbytes == 0) return;
    current();
    bool fromGPU = fromDev.type == DeviceType::CUDA, toGPU = toDev.type == DeviceType::CUDA;
    auto dptr = [](const void* p, size_t off) { return reinterpret_cast<CUdeviceptr>(p) + off; };
    if (fromGPU && toGPU) check(m_cu.cuMemcpyDtoD(dptr(to, toOffset), dptr(from, fromOffset), nbytes), "cuMemcpyDtoD");
    else if (fromGPU)
      check(m_cu.cuMemcpyDtoH(static_cast<char*>(to) + toOffset, dptr(from, fromOffset), nbytes), "cuMemcpyDtoH");
    else
      check(m_cu.cuMemcpyHtoD(dptr(to, toOffset), static_cast<const char*>(from) + fromOffset, nbytes), "cuMemcpyHtoD");
  }
  void sync(Device) override {
    current();
    check(m_cu.cuCtxSynchronize(), "cuCtxSynchronize");
  }
  AttrValue attr(Device, DeviceAttr kind) override {
    int v = 0;
    switch (kind) {
    case DeviceAttr::Exist: return int64_t(1);
    case DeviceAttr::DeviceName: return deviceName();
    case DeviceAttr::MultiProcessorCount:
      m_cu.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, m_device);
      return int64_t(v);
    case DeviceAttr::MaxThreadsPerBlock:
      m_cu.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, m_device);
      return int64_t(v);
    case DeviceAttr::WarpSize:
      m_cu.cuDeviceGetAttribute(&v, CU_DEVICE_ATTRIBUTE_WARP_SIZE, m_device);
      return int64_t(v);
    case DeviceAttr::TotalMemory: {
      size_t bytes = 0;
      m_cu.cuDeviceTotalMem(&bytes, m_device);
      return int64_t(bytes);
    }
    }
    return {};
  }

  void* buildProgram(const std::string& ptx) override {
    current();
    std::vector<char> log(8192, '\0');
    CUjit_option opts[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
    void* vals[] = {log.data(), reinterpret_cast<void*>(log.size())};
    CUmodule m = nullptr;
    CUresult r = m_cu.cuModuleLoadDataEx(&m, ptx.c_str(), 2, opts, vals);
    if (r != CUDA_SUCCESS)
      throw RuntimeFailure("CUDA: loading the PTX failed (" + errorName(r) + "):\n" + std::string(log.data()));
    return m;
  }
  void releaseProgram(void* program) override {
    if (!program) return;
    current();
    m_cu.cuModuleUnload(static_cast<CUmodule>(program));
  }
  void launch(void* program, const std::string& name, const std::vector<KernelArg>& args, std::array<int64_t, 3> grid,
              std::array<int64_t, 3> block) override {
    current();
    CUfunction fn = nullptr;
    check(m_cu.cuModuleGetFunction(&fn, static_cast<CUmodule>(program), name.c_str()),
          ("cuModuleGetFunction(" + name + ")").c_str());
    // Argument storage: one slot per argument, kernelParams point into it.
    struct Slot {
      CUdeviceptr ptr = 0;
      int32_t i32 = 0;
      int64_t i64 = 0;
      float f32 = 0;
      double f64 = 0;
    };
    std::vector<Slot> slots(args.size());
    std::vector<void*> params(args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg& a = args[i];
      Slot& s = slots[i];
      switch (a.kind) {
      case KernelArg::Kind::Buffer: s.ptr = reinterpret_cast<CUdeviceptr>(a.buffer); params[i] = &s.ptr; break;
      case KernelArg::Kind::Int32: s.i32 = int32_t(a.i); params[i] = &s.i32; break;
      case KernelArg::Kind::Int64: s.i64 = a.i; params[i] = &s.i64; break;
      case KernelArg::Kind::Float32: s.f32 = float(a.f); params[i] = &s.f32; break;
      case KernelArg::Kind::Float64: s.f64 = a.f; params[i] = &s.f64; break;
      }
    }
    check(m_cu.cuLaunchKernel(fn, unsigned(grid[0]), unsigned(grid[1]), unsigned(grid[2]), unsigned(block[0]),
                              unsigned(block[1]), unsigned(block[2]), 0, nullptr, params.data(), nullptr),
          ("cuLaunchKernel(" + name + ")").c_str());
  }
  std::string description() override { return "CUDA: " + deviceName(); }

private:
  std::string errorName(CUresult r) {
    const char* s = nullptr;
    if (m_cu.cuGetErrorName && m_cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s) return s;
    // The driver cannot name its errors before cuInit succeeds: the usual ones by number.
    switch (r) {
    case CUDA_ERROR_STUB_LIBRARY: return "CUDA_ERROR_STUB_LIBRARY";
    case CUDA_ERROR_NO_DEVICE: return "CUDA_ERROR_NO_DEVICE";
    case CUDA_ERROR_NOT_INITIALIZED: return "CUDA_ERROR_NOT_INITIALIZED";
    default: return "CUDA error " + std::to_string(int(r));
    }
  }
  void check(CUresult r, const char* what) {
    if (r != CUDA_SUCCESS) throw RuntimeFailure(std::string("CUDA: ") + what + " failed: " + errorName(r));
  }
  /// The primary context, current in the calling thread.
  void current() { check(m_cu.cuCtxSetCurrent(m_ctx), "cuCtxSetCurrent"); }
  std::string deviceName() {
    char name[256] = {0};
    m_cu.cuDeviceGetName(name, sizeof name - 1, m_device);
    return name;
  }

  void* m_lib = nullptr;
  CU m_cu;
  CUdevice m_device = 0;
  CUcontext m_ctx = nullptr;
};

}  // namespace
}  // namespace loom::runtime

extern "C" __attribute__((visibility("default"))) loom::runtime::DeviceAPI* loom_device_api_create(int deviceType) {
  if (deviceType != int(loom::runtime::DeviceType::CUDA)) {
    loom_set_last_error("libloom_device_cuda serves only the CUDA device type");
    return nullptr;
  }
  auto* dev = new loom::runtime::CUDADevice();
  std::string why;
  dev->init(&why);
  if (!why.empty()) {
    delete dev;
    loom_set_last_error(why.c_str());
    return nullptr;
  }
  return dev;
}
