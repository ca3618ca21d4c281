// The OpenCL device plugin: libOpenCL loaded at run time, one context and in-order queue per process.
#include <CL/cl.h>
#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <string>
#include <vector>

#include "loom/c_runtime_api.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/opencl/OpenCLAPI.h"

namespace loom::runtime {
namespace {

#define LOOM_CL_FUNCS(X)                                                                          \
  X(clGetPlatformIDs) X(clGetPlatformInfo) X(clGetDeviceIDs) X(clGetDeviceInfo) X(clCreateContext) \
  X(clCreateCommandQueue) X(clCreateBuffer) X(clReleaseMemObject) X(clEnqueueReadBuffer)           \
  X(clEnqueueWriteBuffer) X(clEnqueueCopyBuffer) X(clFinish) X(clCreateProgramWithSource)          \
  X(clBuildProgram) X(clGetProgramBuildInfo) X(clReleaseProgram) X(clCreateKernel) X(clSetKernelArg) \
  X(clEnqueueNDRangeKernel) X(clReleaseKernel) X(clReleaseCommandQueue) X(clReleaseContext)

struct CL {
#define LOOM_CL_PTR(name) decltype(&::name) name = nullptr;
  LOOM_CL_FUNCS(LOOM_CL_PTR)
#undef LOOM_CL_PTR
};

std::string errorName(cl_int e) {
  switch (e) {
  case CL_DEVICE_NOT_FOUND: return "CL_DEVICE_NOT_FOUND";
  case CL_OUT_OF_RESOURCES: return "CL_OUT_OF_RESOURCES";
  case CL_OUT_OF_HOST_MEMORY: return "CL_OUT_OF_HOST_MEMORY";
  case CL_MEM_OBJECT_ALLOCATION_FAILURE: return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
  case CL_BUILD_PROGRAM_FAILURE: return "CL_BUILD_PROGRAM_FAILURE";
  case CL_INVALID_VALUE: return "CL_INVALID_VALUE";
  case CL_INVALID_KERNEL_NAME: return "CL_INVALID_KERNEL_NAME";
  case CL_INVALID_ARG_INDEX: return "CL_INVALID_ARG_INDEX";
  case CL_INVALID_ARG_VALUE: return "CL_INVALID_ARG_VALUE";
  case CL_INVALID_ARG_SIZE: return "CL_INVALID_ARG_SIZE";
  case CL_INVALID_KERNEL_ARGS: return "CL_INVALID_KERNEL_ARGS";
  case CL_INVALID_WORK_GROUP_SIZE: return "CL_INVALID_WORK_GROUP_SIZE";
  case CL_INVALID_WORK_ITEM_SIZE: return "CL_INVALID_WORK_ITEM_SIZE";
  case CL_INVALID_BUFFER_SIZE: return "CL_INVALID_BUFFER_SIZE";
  case CL_INVALID_MEM_OBJECT: return "CL_INVALID_MEM_OBJECT";
  case -1001: return "CL_PLATFORM_NOT_FOUND_KHR (no OpenCL platform installed)";
  default: return "OpenCL error " + std::to_string(e);
  }
}

void check(cl_int e, const char* what) {
  if (e != CL_SUCCESS) throw RuntimeFailure(std::string("OpenCL: ") + what + " failed: " + errorName(e));
}

class OpenCLDevice final : public OpenCLDeviceAPI {
public:
  /// Empty `why` on success.
  void init(std::string* why) {
    m_lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!m_lib) m_lib = dlopen("libOpenCL.so", RTLD_NOW | RTLD_LOCAL);
    if (!m_lib) {
      *why = "the OpenCL ICD loader libOpenCL.so.1 is not installed (Debian: ocl-icd-libopencl1, plus a platform such as pocl-opencl-icd)";
      return;
    }
#define LOOM_CL_LOAD(name)                                                          \
  m_cl.name = reinterpret_cast<decltype(&::name)>(dlsym(m_lib, #name));             \
  if (!m_cl.name) {                                                                 \
    *why = std::string("libOpenCL has no ") + #name;                                \
    return;                                                                         \
  }
    LOOM_CL_FUNCS(LOOM_CL_LOAD)
#undef LOOM_CL_LOAD
    cl_uint n = 0;
    cl_int e = m_cl.clGetPlatformIDs(0, nullptr, &n);
    if (e != CL_SUCCESS || n == 0) {
      *why = "no OpenCL platform is installed (the ICD loader found none; Debian: pocl-opencl-icd runs OpenCL on the CPU)";
      return;
    }
    std::vector<cl_platform_id> platforms(n);
    m_cl.clGetPlatformIDs(n, platforms.data(), nullptr);
    const char* want = std::getenv("LOOM_OPENCL_PLATFORM");
    for (cl_platform_id p : platforms) {
      std::string name = platformString(p, CL_PLATFORM_NAME);
      if (want && name.find(want) == std::string::npos) continue;
      cl_device_id d = nullptr;
      cl_uint nd = 0;
      if (m_cl.clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, &nd) != CL_SUCCESS || nd == 0) continue;
      m_platform = p;
      m_device = d;
      m_platformName = name;
      break;
    }
    if (!m_device) {
      *why = want ? std::string("no OpenCL platform named like '") + want + "' has a device"
                  : std::string("no OpenCL platform has a device");
      return;
    }
    m_ctx = m_cl.clCreateContext(nullptr, 1, &m_device, nullptr, nullptr, &e);
    if (e != CL_SUCCESS) {
      *why = "clCreateContext failed: " + errorName(e);
      return;
    }
    m_queue = m_cl.clCreateCommandQueue(m_ctx, m_device, 0, &e);
    if (e != CL_SUCCESS) *why = "clCreateCommandQueue failed: " + errorName(e);
  }

  // Nothing is released at destruction: the registry destroys the API at process exit, when the
  // ICD (and the platform's threads) may already be finalizing.

  void* allocData(Device, size_t nbytes, size_t, DType) override {
    cl_int e = CL_SUCCESS;
    cl_mem m = m_cl.clCreateBuffer(m_ctx, CL_MEM_READ_WRITE, std::max<size_t>(nbytes, 1), nullptr, &e);
    check(e, "clCreateBuffer");
    return m;
  }
  void freeData(Device, void* ptr) override {
    if (ptr) m_cl.clReleaseMemObject(static_cast<cl_mem>(ptr));
  }
  void copyData(const void* from, size_t fromOffset, void* to, size_t toOffset, size_t nbytes, Device fromDev,
                Device toDev) override {
    if (nbytes == 0) return;
    bool fromCL = fromDev.type == DeviceType::OpenCL, toCL = toDev.type == DeviceType::OpenCL;
    if (fromCL && toCL) {
      check(m_cl.clEnqueueCopyBuffer(m_queue, static_cast<cl_mem>(const_cast<void*>(from)), static_cast<cl_mem>(to),
                                     fromOffset, toOffset, nbytes, 0, nullptr, nullptr),
            "clEnqueueCopyBuffer");
    } else if (fromCL) {
      check(m_cl.clEnqueueReadBuffer(m_queue, static_cast<cl_mem>(const_cast<void*>(from)), CL_TRUE, fromOffset, nbytes,
                                     static_cast<char*>(to) + toOffset, 0, nullptr, nullptr),
            "clEnqueueReadBuffer");
    } else {
      check(m_cl.clEnqueueWriteBuffer(m_queue, static_cast<cl_mem>(to), CL_TRUE, toOffset, nbytes,
                                      static_cast<const char*>(from) + fromOffset, 0, nullptr, nullptr),
            "clEnqueueWriteBuffer");
    }
  }
  void sync(Device) override { check(m_cl.clFinish(m_queue), "clFinish"); }
  AttrValue attr(Device, DeviceAttr kind) override {
    switch (kind) {
    case DeviceAttr::Exist: return int64_t(1);
    case DeviceAttr::DeviceName: return deviceString(CL_DEVICE_NAME);
    case DeviceAttr::MultiProcessorCount: return int64_t(deviceUInt(CL_DEVICE_MAX_COMPUTE_UNITS));
    case DeviceAttr::MaxThreadsPerBlock: {
      size_t v = 0;
      m_cl.clGetDeviceInfo(m_device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof v, &v, nullptr);
      return int64_t(v);
    }
    case DeviceAttr::TotalMemory: {
      cl_ulong v = 0;
      m_cl.clGetDeviceInfo(m_device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof v, &v, nullptr);
      return int64_t(v);
    }
    default: return {};
    }
  }

  void* buildProgram(const std::string& source) override {
    const char* text = source.c_str();
    size_t len = source.size();
    cl_int e = CL_SUCCESS;
    cl_program p = m_cl.clCreateProgramWithSource(m_ctx, 1, &text, &len, &e);
    check(e, "clCreateProgramWithSource");
    e = m_cl.clBuildProgram(p, 1, &m_device, "-cl-std=CL1.2", nullptr, nullptr);
    if (e != CL_SUCCESS) {
      size_t n = 0;
      m_cl.clGetProgramBuildInfo(p, m_device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &n);
      std::string log(n, '\0');
      m_cl.clGetProgramBuildInfo(p, m_device, CL_PROGRAM_BUILD_LOG, n, log.data(), nullptr);
      m_cl.clReleaseProgram(p);
      throw RuntimeFailure("OpenCL: building the kernel source failed (" + errorName(e) + "):\n" + log);
    }
    return p;
  }
  void releaseProgram(void* program) override {
    if (program) m_cl.clReleaseProgram(static_cast<cl_program>(program));
  }

  void launch(void* program, const std::string& name, const std::vector<KernelArg>& args, std::array<int64_t, 3> grid,
              std::array<int64_t, 3> block) override {
    cl_int e = CL_SUCCESS;
    cl_kernel k = m_cl.clCreateKernel(static_cast<cl_program>(program), name.c_str(), &e);
    check(e, ("clCreateKernel(" + name + ")").c_str());
    for (size_t i = 0; i < args.size(); ++i) {
      const KernelArg& a = args[i];
      cl_int i32 = cl_int(a.i);
      cl_long i64 = a.i;
      cl_float f32 = cl_float(a.f);
      cl_double f64 = a.f;
      cl_mem m = static_cast<cl_mem>(a.buffer);
      switch (a.kind) {
      case KernelArg::Kind::Buffer: e = m_cl.clSetKernelArg(k, cl_uint(i), sizeof m, &m); break;
      case KernelArg::Kind::Int32: e = m_cl.clSetKernelArg(k, cl_uint(i), sizeof i32, &i32); break;
      case KernelArg::Kind::Int64: e = m_cl.clSetKernelArg(k, cl_uint(i), sizeof i64, &i64); break;
      case KernelArg::Kind::Float32: e = m_cl.clSetKernelArg(k, cl_uint(i), sizeof f32, &f32); break;
      case KernelArg::Kind::Float64: e = m_cl.clSetKernelArg(k, cl_uint(i), sizeof f64, &f64); break;
      }
      if (e != CL_SUCCESS) {
        m_cl.clReleaseKernel(k);
        check(e, ("clSetKernelArg(" + name + ", " + std::to_string(i) + ")").c_str());
      }
    }
    size_t global[3], local[3];
    for (int d = 0; d < 3; ++d) {
      global[d] = size_t(grid[size_t(d)] * block[size_t(d)]);
      local[d] = size_t(block[size_t(d)]);
    }
    e = m_cl.clEnqueueNDRangeKernel(m_queue, k, 3, nullptr, global, local, 0, nullptr, nullptr);
    m_cl.clReleaseKernel(k);
    check(e, ("clEnqueueNDRangeKernel(" + name + ")").c_str());
  }

  std::string description() override { return m_platformName + ": " + deviceString(CL_DEVICE_NAME); }

private:
  std::string platformString(cl_platform_id p, cl_platform_info what) {
    size_t n = 0;
    m_cl.clGetPlatformInfo(p, what, 0, nullptr, &n);
    std::string s(n, '\0');
    m_cl.clGetPlatformInfo(p, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
  }
  std::string deviceString(cl_device_info what) {
    size_t n = 0;
    m_cl.clGetDeviceInfo(m_device, what, 0, nullptr, &n);
    std::string s(n, '\0');
    m_cl.clGetDeviceInfo(m_device, what, n, s.data(), nullptr);
    while (!s.empty() && s.back() == '\0') s.pop_back();
    return s;
  }
  cl_uint deviceUInt(cl_device_info what) {
    cl_uint v = 0;
    m_cl.clGetDeviceInfo(m_device, what, sizeof v, &v, nullptr);
    return v;
  }

  void* m_lib = nullptr;
  CL m_cl;
  cl_platform_id m_platform = nullptr;
  cl_device_id m_device = nullptr;
  cl_context m_ctx = nullptr;
  cl_command_queue m_queue = nullptr;
  std::string m_platformName;
};

}  // namespace
}  // namespace loom::runtime

extern "C" __attribute__((visibility("default"))) loom::runtime::DeviceAPI* loom_device_api_create(int deviceType) {
  if (deviceType != int(loom::runtime::DeviceType::OpenCL)) {
    loom_set_last_error("libloom_device_opencl serves only the OpenCL device type");
    return nullptr;
  }
  auto* dev = new loom::runtime::OpenCLDevice();
  std::string why;
  dev->init(&why);
  if (!why.empty()) {
    delete dev;
    loom_set_last_error(why.c_str());
    return nullptr;
  }
  return dev;
}
