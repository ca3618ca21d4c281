// Facts about the LLVM that Loom was built with.
#include "codegen/LLVMInfo.h"

#include <algorithm>
#include <vector>

#include <llvm/ADT/StringMap.h>
#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>

namespace loom::codegen {

std::string llvmVersion() { return LLVM_VERSION_STRING; }

std::string hostCpuName() { return llvm::sys::getHostCPUName().str(); }

std::string hostCpuFeatures() {
  std::vector<std::string> on;
  for (const auto& f : llvm::sys::getHostCPUFeatures())
    if (f.second) on.push_back(f.first().str());
  std::sort(on.begin(), on.end());
  std::string s;
  for (const auto& f : on) s += (s.empty() ? "" : ",") + f;
  return s;
}

}  // namespace loom::codegen
