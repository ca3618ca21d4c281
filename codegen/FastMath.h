// Polynomial float32 exp, tanh, sigmoid and erf emitted as LLVM IR (scalar or vector), internal to codegen/.
#pragma once
#include <llvm/IR/IRBuilder.h>

namespace loom::codegen {

/// Each takes and returns a float or <N x float> value; relative error about 1e-7 (erf: 1e-6
/// near its zero-crossing-free range), NaN in gives NaN out.
llvm::Value* emitFastExp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emitFastTanh(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emitFastSigmoid(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emitFastErf(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace loom::codegen
