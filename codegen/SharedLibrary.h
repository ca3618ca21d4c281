// Making shared libraries for any target: objects holding constant data, C compilation, linking.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "codegen/CodeGenLLVM.h"
#include "codegen/Target.h"

namespace loom {
/// No linker (or C compiler) on this machine can make what was asked; the message says what to
/// install or run instead.
LOOM_DECLARE_ERROR(LinkerNotFoundError, CodeGenError);
}  // namespace loom

namespace loom::codegen {

/// A relocatable object for `target` defining, for each (symbol, bytes), an exported read-only
/// array `symbol` holding the bytes and a NUL (64-byte aligned) and an exported uint64
/// `symbol_size` holding bytes.size().
std::string dataObject(const Target& target, const std::vector<std::pair<std::string, std::string>>& symbols);
/// Adds the same arrays to `module` (after its optimization; its functions are untouched).
void embedData(LLVMModule& module, const std::vector<std::pair<std::string, std::string>>& symbols);

/// The program that links shared libraries for `target`: the system C compiler ("cc") for the
/// host; for another architecture ld.lld (ld.lld, ld.lld-19 ... on PATH). Empty when none is found.
std::string findLinker(const Target& target);

/// Links the object files into the shared library `path` for `target` (host: `cc -shared ... -lm`;
/// cross: `ld.lld -shared`, undefined runtime and libm symbols left to the process that loads it).
/// Throws LinkerNotFoundError saying what to install when findLinker finds nothing, CodeGenError
/// with the linker's output when it fails.
void linkSharedLibrary(const std::vector<std::string>& objects, const Target& target, const std::string& path);

/// The system C compiler ("cc" on PATH), or empty.
std::string findCCompiler();
/// Compiles the C file `source` (from codegen::emitC) into the object `object` with the system C
/// compiler (-std=gnu11 -O2 -fPIC -fwrapv), `includeDirs` added with -I. Throws
/// LinkerNotFoundError without a compiler, CodeGenError with the compiler's output on failure.
void compileCObject(const std::string& source, const std::string& object, const std::vector<std::string>& includeDirs);

}  // namespace loom::codegen
