// Process-wide LLVM setup shared by the code generators (no LLVM types in this header).
#pragma once

#include <string>
#include <vector>

namespace loom::codegen {

struct Target;

/// Registers every LLVM target, MC layer and asm printer once per process (thread-safe).
void initializeLLVM();

/// The subtarget features LLVM gets for `t` (target machine, JIT, each function's
/// "target-features"): `t.attrs` plus the workarounds of LLVM backend bugs that turn a tuning
/// flag off. On x86: "-fast-variable-perlane-shuffle". With it (every AVX2 CPU's tuning: haswell,
/// znver1-5, x86-64-v3) LLVM 19.1's shuffle combining folds a narrow integer division by a
/// constant, shuffled into a multiply, to zeros: `udiv <2 x i8> x, 3`, shuffled to 4 lanes and
/// multiplied by a <4 x i8> load, compiles to a store of 0 (fuzz_difftest TIR seed 126395; the
/// vectorized tail of an int8 program). Turning the tuning flag off only changes which shuffle
/// instructions LLVM prefers.
std::vector<std::string> llvmFeatures(const Target& t);
/// llvmFeatures joined with commas (LLVM's feature string).
std::string llvmFeatureString(const Target& t);

/// Whether x86 target `t` has every feature in `features` ("+avx2,+fma"), cached per target
/// string; false for other architectures.
bool hasFeatures(const Target& t, const std::string& features);

}  // namespace loom::codegen
