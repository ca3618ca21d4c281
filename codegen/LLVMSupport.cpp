// Process-wide LLVM setup shared by the code generators.
#include "codegen/LLVMSupport.h"

#include <llvm/Support/TargetSelect.h>

#include <mutex>

namespace loom::codegen {

void initializeLLVM() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeAllTargetInfos();
    llvm::InitializeAllTargets();
    llvm::InitializeAllTargetMCs();
    llvm::InitializeAllAsmPrinters();
    llvm::InitializeAllAsmParsers();
  });
}

}  // namespace loom::codegen
