// The inside of LLVMModule, shared by the code generator, the outputs and the JIT (codegen/ only).
#pragma once
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/Target/TargetMachine.h>

#include <memory>
#include <string>
#include <vector>

#include "codegen/CodeGenLLVM.h"

namespace loom::codegen {

struct LLVMModule::Impl {
  Target target;
  std::vector<std::string> functionNames;
  std::unique_ptr<llvm::LLVMContext> context;
  std::unique_ptr<llvm::Module> module;
  std::unique_ptr<llvm::TargetMachine> machine;
};

/// A target machine for `t` (PIC, the target's opt level). Throws TargetError.
std::unique_ptr<llvm::TargetMachine> createTargetMachine(const Target& t);

}  // namespace loom::codegen
