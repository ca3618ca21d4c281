// LLVM IR edits for test_vnni_emulated (see VnniEmulation.h).
#include "VnniEmulation.h"

#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Instructions.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Support/raw_ostream.h>

namespace loom::testing {

namespace {

/// Replaces every llvm.x86.avx512.vpdpbusd.* call of `m` by Intel's definition of the
/// instruction in generic IR; returns how many there were.
int expandVpdpbusd(llvm::Module& m) {
  std::vector<llvm::CallInst*> calls;
  for (llvm::Function& f : m)
    for (llvm::BasicBlock& bb : f)
      for (llvm::Instruction& i : bb)
        if (auto* c = llvm::dyn_cast<llvm::CallInst>(&i))
          if (llvm::Function* callee = c->getCalledFunction();
              callee && callee->getName().starts_with("llvm.x86.avx512.vpdpbusd."))
            calls.push_back(c);
  for (llvm::CallInst* c : calls) {
    llvm::IRBuilder<> b(c);
    auto* vt = llvm::cast<llvm::FixedVectorType>(c->getType());
    const unsigned lanes = vt->getNumElements();
    llvm::Type* bytes = llvm::FixedVectorType::get(b.getInt8Ty(), 4 * lanes);
    llvm::Type* wide = llvm::FixedVectorType::get(b.getInt32Ty(), 4 * lanes);
    llvm::Value* prod = b.CreateMul(b.CreateZExt(b.CreateBitCast(c->getArgOperand(1), bytes), wide),
                                    b.CreateSExt(b.CreateBitCast(c->getArgOperand(2), bytes), wide));
    llvm::Value* sum = b.CreateBitCast(c->getArgOperand(0), vt);
    for (unsigned k = 0; k < 4; ++k) {
      llvm::SmallVector<int, 64> idx;
      for (unsigned l = 0; l < lanes; ++l) idx.push_back(int(4 * l + k));
      sum = b.CreateAdd(sum, b.CreateShuffleVector(prod, idx));
    }
    c->replaceAllUsesWith(sum);
    c->eraseFromParent();
  }
  return int(calls.size());
}

}  // namespace

std::string vnniForThisHost(codegen::LLVMModule& run) {
  llvm::Module& m = *run.module();
  if (expandVpdpbusd(m) == 0) return "no vpdpbusd call in the module";
  const codegen::Target host = codegen::Target::host();
  for (llvm::Function& fn : m) {
    if (fn.isDeclaration()) continue;
    fn.removeFnAttr("target-cpu");
    fn.removeFnAttr("target-features");
    fn.addFnAttr("target-cpu", host.cpu);
    if (!host.attrs.empty()) fn.addFnAttr("target-features", host.featureString());
  }
  std::string err;
  llvm::raw_string_ostream es(err);
  if (llvm::verifyModule(m, &es)) return "the edited module does not verify: " + es.str();
  return "";
}

}  // namespace loom::testing
