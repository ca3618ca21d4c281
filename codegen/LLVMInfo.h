// Facts about the LLVM that Loom was built with, without exposing LLVM headers.
#pragma once
#include <string>

namespace loom::codegen {

/// The LLVM version string ("19.1.7").
std::string llvmVersion();

/// The host CPU name LLVM detects ("znver5").
std::string hostCpuName();

/// The ISA extensions LLVM detects on the host, enabled ones only, sorted ("adx,aes,avx,avx2,...").
std::string hostCpuFeatures();

}  // namespace loom::codegen
