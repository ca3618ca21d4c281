// CUDA C to PTX through NVRTC, loaded at run time (no link-time dependency on the CUDA toolkit).
#pragma once
#include <string>

namespace loom::codegen {

/// True when libnvrtc can be loaded; otherwise `why` says what was tried.
bool nvrtcAvailable(std::string* why = nullptr);

/// PTX of CUDA C `source` for `arch` ("sm_80", "sm_90", ...), compiled by NVRTC. NVRTC is found
/// at run time: $LOOM_NVRTC (a library path), then libnvrtc.so / libnvrtc.so.13 / .12 where dlopen
/// looks, then /usr/local/cuda/lib64. Throws CodeGenError with NVRTC's log when the source does not
/// compile, and with a clear message when NVRTC is not installed.
std::string compileCUDAToPTX(const std::string& source, const std::string& arch);

}  // namespace loom::codegen
