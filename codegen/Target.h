// A code generation target parsed from a TVM-style string ("llvm -mcpu=skylake-avx512 ...").
#pragma once
#include <string>
#include <vector>

#include "core/support/Error.h"

namespace loom {
/// A target string or triple that cannot be used (unknown key, CPU, feature or triple).
LOOM_DECLARE_ERROR(TargetError, Error);
}  // namespace loom

namespace loom::codegen {

/// What LLVM should generate code for. Only the "llvm" kind exists so far. Fields left empty
/// mean "the host" (triple, cpu and features are filled in by `parse`).
struct Target {
  std::string kind = "llvm";
  std::string triple;             ///< "x86_64-pc-linux-gnu", "aarch64-unknown-linux-gnu", ...
  std::string cpu;                ///< "znver5", "skylake-avx512", "generic", ...
  std::vector<std::string> attrs; ///< LLVM feature flags, each "+name" or "-name"
  int optLevel = 3;               ///< 0..3
  bool fastMath = false;          ///< allow reassociation and friends on float arithmetic
  std::string arch;               ///< GPU kinds: "sm_90" for cuda (the default), empty for opencl

  /// Parses "llvm", "llvm -mcpu=X -mattr=+a,-b -mtriple=T -opt-level=N -fast-math" (also
  /// "--key=value" and "-key value"). Throws TargetError naming the bad key, value or triple.
  /// Also "cuda [-arch=sm_XX]" (default sm_90) and "opencl": GPU kinds, whose kernels are C-family
  /// source (codegen/CodeGenCUDA.h); triple, cpu and attrs stay empty for them.
  static Target parse(const std::string& text);
  /// True for the "cuda" and "opencl" kinds.
  bool isGPU() const { return kind == "cuda" || kind == "opencl"; }
  /// The host: its triple, CPU and features.
  static Target host();

  /// True when code for this target runs in this process (same architecture and OS).
  bool isHost() const;
  /// The comma-separated LLVM feature string of `attrs`.
  std::string featureString() const;
  /// Widest native vector register in bits (512 with AVX-512, 256 with AVX2, 128 for NEON/SSE).
  int nativeVectorBits() const;
  /// Canonical text form; `parse(str())` gives an equal target.
  std::string str() const;
};

}  // namespace loom::codegen
