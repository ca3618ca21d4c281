// For test_vnni_emulated: an LLVM module compiled for an AVX-512 VNNI CPU made runnable here
// (LLVM IR edits, kept out of the Qt test file: moc cannot parse LLVM's headers).
#pragma once
#include <string>

#include "codegen/CodeGenLLVM.h"

namespace loom::testing {

/// Replaces every llvm.x86.avx512.vpdpbusd.* call of `m` by Intel's definition of the instruction
/// in generic IR (per int32 lane: src + the 4 products of zero-extended bytes of the first operand
/// and sign-extended bytes of the second, wrapping) and retargets its functions to this CPU.
/// Returns "" on success, else what is wrong (no vpdpbusd found, the module does not verify).
std::string vnniForThisHost(codegen::LLVMModule& m);

}  // namespace loom::testing
