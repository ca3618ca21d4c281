// Facts about the LLVM that Loom was built with.
#include "codegen/LLVMInfo.h"

#include <llvm/ADT/StringRef.h>
#include <llvm/Config/llvm-config.h>
#include <llvm/TargetParser/Host.h>

namespace loom::codegen {

std::string llvmVersion() { return LLVM_VERSION_STRING; }

std::string hostCpuName() { return llvm::sys::getHostCPUName().str(); }

}  // namespace loom::codegen
