// The int8 dot products of tir intrinsics dot4_u8s8 / dot4_u8s8_pairs16 emitted as LLVM IR with
// the x86 instructions the target has (vpdpbusd, vpmaddubsw + vpmaddwd), internal to codegen/.
#pragma once
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Module.h>

#include "codegen/Target.h"

namespace loom::codegen {

/// How a dot4 of `lanes` lanes is emitted for `t` (reported by tests and listings).
enum class Dot4Kind { Vnni512, Vnni256, Avx2Pairs16, Generic };
Dot4Kind dot4Kind(const Target& t, int lanes, bool pairs16);

/// `a` and `w` are i32 or <lanes x i32> (a scalar is broadcast): each word holds 4 bytes, a's
/// unsigned, w's signed. Returns the <lanes x i32> (or i32) sums of the 4 byte products.
/// `pairs16`: the caller guarantees each pair sum a0*w0 + a1*w1 fits int16, so the saturating
/// AVX2 vpmaddubsw is exact; otherwise AVX2 targets use the exact generic form (widen to 32 bits).
/// `acc` (optional, <lanes x i32>) is added to the result: the accumulator operand of vpdpbusd.
llvm::Value* emitDot4(llvm::IRBuilder<>& b, llvm::Module& m, const Target& t, llvm::Value* a, llvm::Value* w,
                      int lanes, bool pairs16, llvm::Value* acc = nullptr);

}  // namespace loom::codegen
