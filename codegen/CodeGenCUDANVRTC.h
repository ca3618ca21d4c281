// CUDA C to PTX through NVRTC, loaded at run time (no link-time dependency on the CUDA toolkit).
#pragma once
#include <string>
#include <vector>

namespace loom::codegen {

/// True when libnvrtc can be loaded; otherwise `why` says what was tried.
bool nvrtcAvailable(std::string* why = nullptr);

/// PTX of CUDA C `source` for `arch` ("sm_80", "sm_90", ...), compiled by NVRTC. NVRTC is found
/// at run time: $LOOM_NVRTC (a library path), then libnvrtc.so / libnvrtc.so.13 / .12 where dlopen
/// looks, then /usr/local/cuda/lib64. Throws CodeGenError with NVRTC's log when the source does not
/// compile, and with a clear message when NVRTC is not installed.
std::string compileCUDAToPTX(const std::string& source, const std::string& arch);

/// A check of NVRTC's output: the loads of `ptx` through the non-coherent cache (ld.global.nc,
/// ldu.global), which is only for data no thread changes during the kernel, whose address may
/// come from a kernel parameter that the same kernel stores to (st, atom, red). Such a load need
/// not see the kernel's own stores. Addresses are followed from the parameters through every
/// instruction but loads (a register defined twice, in a loop or on two branches, gets both), so
/// the check errs on the side of "may". One entry per such load, e.g. "main_kernel0: `ld.global.nc.u32
/// %r15, [%rd16];` may read parameter 0, which the kernel stores to"; empty when there is none.
std::vector<std::string> nonCoherentLoadsOfWrittenParams(const std::string& ptx);

}  // namespace loom::codegen
