// Process-wide LLVM setup shared by the code generators (no LLVM types in this header).
#pragma once

namespace loom::codegen {

/// Registers every LLVM target, MC layer and asm printer once per process (thread-safe).
void initializeLLVM();

}  // namespace loom::codegen
