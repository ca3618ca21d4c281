// Polynomial float32 exp, tanh, sigmoid and erf emitted as LLVM IR (scalar or vector), internal to codegen/.
#pragma once
#include <llvm/IR/IRBuilder.h>

namespace loom::codegen {

struct Target;

/// Each takes and returns a float or <N x float> value. Relative error below 4e-7 wherever the
/// result is a normal float (measured in tests/codegen/test_fast_math.cpp); results below 2^-126
/// flush to 0; NaN in gives NaN out; +-inf give the limits.
llvm::Value* emitFastExp(llvm::IRBuilder<>& b, llvm::Value* x);
llvm::Value* emitFastTanh(llvm::IRBuilder<>& b, llvm::Value* x);
/// With target `t` (optional), a sigmoid of 4, 8 or 16 lanes on AVX-512 takes VRCP14PS and a
/// Newton step instead of a division.
llvm::Value* emitFastSigmoid(llvm::IRBuilder<>& b, llvm::Value* x, const Target* t = nullptr);
llvm::Value* emitFastErf(llvm::IRBuilder<>& b, llvm::Value* x);

}  // namespace loom::codegen
