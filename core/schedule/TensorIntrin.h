// The registry of tensor intrinsics: a name -> (description, implementation) pair of PrimFuncs
// that tensorize matches and substitutes.
#pragma once
#include <string>
#include <vector>

#include "core/support/Error.h"
#include "core/tir/Function.h"

namespace loom::tir {

/// A tensor intrinsic. `desc` states what it computes: a loop nest over one block whose body is
/// compared with the code being tensorized. `impl` is what replaces that code: any statement over
/// buffers that correspond to desc's parameter buffers by position (vector TIR, calls the code
/// generator maps to instructions, ...). Both take the same buffers, in the same order.
struct TensorIntrin {
  std::string name;
  PrimFunc desc, impl;
  std::string doc;
};

/// Registers (or replaces) an intrinsic. Throws ValueError when desc and impl do not take the
/// same number of buffers with the same dtypes and constant shapes, or desc is not one loop nest
/// over one block.
void registerTensorIntrin(const std::string& name, PrimFunc desc, PrimFunc impl,
                          std::string doc = {});
/// The intrinsic called `name`, or nullptr.
const TensorIntrin* findTensorIntrin(const std::string& name);
/// Every registered name, sorted.
std::vector<std::string> tensorIntrinNames();

/// The built-in x86 AVX-512 rank-1 update `C[0:16] += A[k] * B[k, 0:16]` over k in [0, K),
/// fp32, registered as "x86_avx512_fma_f32x16_k<K>" for K in 1, 2, 4, 8, 16. Its implementation
/// is vector TIR, `C[ramp] = C[ramp] + broadcast(A[k]) * B[k, ramp]`, which the LLVM backend
/// (FP-op fusion on) emits as one 16-lane vfmadd per k.
PrimFunc avx512FmaDesc(int k);
PrimFunc avx512FmaImpl(int k);

} // namespace loom::tir
