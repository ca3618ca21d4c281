// CUDA C to PTX through NVRTC, loaded at run time (no link-time dependency on the CUDA toolkit).
#include "codegen/CodeGenCUDANVRTC.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "codegen/CodeGenLLVM.h"

namespace loom::codegen {

namespace {

using Program = void*;
using Result = int;  // nvrtcResult; 0 is NVRTC_SUCCESS

struct NVRTC {
  void* lib = nullptr;
  std::string why;
  const char* (*getErrorString)(Result) = nullptr;
  Result (*createProgram)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  Result (*compileProgram)(Program, int, const char* const*) = nullptr;
  Result (*getProgramLogSize)(Program, size_t*) = nullptr;
  Result (*getProgramLog)(Program, char*) = nullptr;
  Result (*getPTXSize)(Program, size_t*) = nullptr;
  Result (*getPTX)(Program, char*) = nullptr;
  Result (*destroyProgram)(Program*) = nullptr;
};

template <typename F>
bool load(NVRTC& n, F& fn, const char* name) {
  fn = reinterpret_cast<F>(dlsym(n.lib, name));
  if (!fn) n.why = std::string("libnvrtc has no ") + name;
  return fn != nullptr;
}

NVRTC& nvrtc() {
  static NVRTC n;
  static std::once_flag once;
  std::call_once(once, [] {
    std::vector<std::string> candidates;
    if (const char* p = std::getenv("LOOM_NVRTC")) candidates.push_back(p);
    for (const char* c : {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12", "/usr/local/cuda/lib64/libnvrtc.so"})
      candidates.push_back(c);
    std::string tried;
    for (auto& c : candidates) {
      n.lib = dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (n.lib) break;
      tried += (tried.empty() ? "" : ", ") + c;
    }
    if (!n.lib) {
      n.why = "NVRTC (the CUDA runtime compiler) is not installed: tried " + tried +
              " (install the CUDA toolkit, or set LOOM_NVRTC to libnvrtc.so)";
      return;
    }
    bool ok = load(n, n.getErrorString, "nvrtcGetErrorString") && load(n, n.createProgram, "nvrtcCreateProgram") &&
              load(n, n.compileProgram, "nvrtcCompileProgram") && load(n, n.getProgramLogSize, "nvrtcGetProgramLogSize") &&
              load(n, n.getProgramLog, "nvrtcGetProgramLog") && load(n, n.getPTXSize, "nvrtcGetPTXSize") &&
              load(n, n.getPTX, "nvrtcGetPTX") && load(n, n.destroyProgram, "nvrtcDestroyProgram");
    if (!ok) n.lib = nullptr;
  });
  return n;
}

}  // namespace

bool nvrtcAvailable(std::string* why) {
  NVRTC& n = nvrtc();
  if (!n.lib && why) *why = n.why;
  return n.lib != nullptr;
}

std::string compileCUDAToPTX(const std::string& source, const std::string& arch) {
  NVRTC& n = nvrtc();
  if (!n.lib) LOOM_THROW(CodeGenError) << "cannot compile CUDA to PTX: " << n.why;
  if (arch.rfind("sm_", 0) != 0) LOOM_THROW(CodeGenError) << "CUDA arch must look like sm_90, got '" << arch << "'";
  Program prog = nullptr;
  Result r = n.createProgram(&prog, source.c_str(), "loom_kernels.cu", 0, nullptr, nullptr);
  if (r != 0) LOOM_THROW(CodeGenError) << "nvrtcCreateProgram failed: " << n.getErrorString(r);
  std::string archOpt = "--gpu-architecture=compute_" + arch.substr(3);
  const char* opts[] = {archOpt.c_str(), "--std=c++17", "-default-device"};
  r = n.compileProgram(prog, 3, opts);
  size_t logSize = 0;
  n.getProgramLogSize(prog, &logSize);
  std::string log(logSize, '\0');
  if (logSize) n.getProgramLog(prog, log.data());
  while (!log.empty() && log.back() == '\0') log.pop_back();
  if (r != 0) {
    n.destroyProgram(&prog);
    LOOM_THROW(CodeGenError) << "NVRTC could not compile the CUDA kernels for " << arch << " (" << n.getErrorString(r)
                             << "):\n"
                             << log;
  }
  size_t ptxSize = 0;
  n.getPTXSize(prog, &ptxSize);
  std::string ptx(ptxSize, '\0');
  n.getPTX(prog, ptx.data());
  n.destroyProgram(&prog);
  while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  return ptx;
}

}  // namespace loom::codegen
