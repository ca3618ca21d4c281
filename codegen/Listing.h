// The lowered TIR text beside its assembly, line-mapped: what `loom lower --emit asm` and the Studio show.
#pragma once
#include <string>
#include <vector>

#include "codegen/CodeGenCUDA.h"
#include "codegen/CodeGenLLVM.h"

namespace loom::codegen {

struct Listing {
  std::string tir;                ///< the lowered function as printed (before make-packed-api)
  std::vector<AsmLine> asmLines;  ///< tirLine: a line of `tir` (a loop's), or 0
  std::string llvmIR;             ///< filled when asked for
  double codegenMs = 0;           ///< make-packed-api + LLVM + assembly printing
};

/// Prints `lowered` with its line map, makes its packed entry, generates code for `target`, and
/// returns the text with the assembly mapped to the printed loops.
Listing makeListing(const tir::PrimFunc& lowered, const Target& target, bool withLLVMIR = false);

/// The same for a lowered GPU function (pipeline with gpu=true): its kernels' CUDA C or OpenCL C
/// (emitGPUSource's text) as `asmLines`, each line mapped by the GPU backend's line map to the
/// printed loop it was emitted in (the innermost For around the statement that wrote it; 0 for
/// the prelude, signatures and thread indices). Throws as splitHostDevice / emitGPUSource.
Listing makeGPUListing(const tir::PrimFunc& lowered, GPUDialect dialect);

}  // namespace loom::codegen
