// TIR to LLVM IR for CPUs: the LLVM module, its optimization, and its text/object outputs.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "codegen/Target.h"
#include "core/tir/Function.h"
#include "core/tir/Printer.h"

namespace llvm {
class Module;
}  // namespace llvm

namespace loom {
/// IR the code generator cannot translate (not lowered, unknown intrinsic) or an output failure.
LOOM_DECLARE_ERROR(CodeGenError, Error);
}  // namespace loom

namespace loom::codegen {

/// One line of printed assembly and the TIR line (of the printed TIR the loops' lines come
/// from) that produced it; 0 when the line belongs to no loop (labels, directives, prologue).
struct AsmLine {
  std::string text;
  int tirLine = 0;
};

struct CodeGenOptions {
  /// Emit DWARF line info: each loop's code at the loop's line of the printed TIR.
  bool debugInfo = true;
  /// The file name the debug info refers to (the printed TIR).
  std::string sourceName = "main.tir";
  /// Line of each loop (For node) in the printed TIR. When empty, loops use their spans' lines.
  std::unordered_map<const tir::StmtNode*, int> lineMap;
  /// Allocations of at most this many bytes with a constant size live on the stack; larger or
  /// dynamic ones come from loom_backend_alloc_workspace.
  int64_t maxStackBytes = 16384;
  /// Run LLVM's optimization pipeline at the target's -opt-level (off: IR exactly as emitted).
  bool optimize = true;
};

/// The loop lines of a printed function (tir::printWithMap) in the form CodeGenOptions wants:
/// each For node maps to the first line it printed on.
std::unordered_map<const tir::StmtNode*, int> loopLineMap(const tir::PrintResult& printed);

/// An LLVM module built from PrimFuncs for one target. Movable, not copyable.
class LLVMModule {
public:
  LLVMModule(LLVMModule&&) noexcept;
  LLVMModule& operator=(LLVMModule&&) noexcept;
  ~LLVMModule();

  const Target& target() const;
  /// Names of the exported functions, in build order.
  const std::vector<std::string>& functionNames() const;

  /// LLVM IR text (after optimization when enabled).
  std::string llvmIR() const;
  /// Readable assembly: instructions, labels and symbol directives (no debug sections).
  std::string assembly() const;
  /// The same assembly, line by line, each with the TIR loop line it came from.
  std::vector<AsmLine> assemblyWithLines() const;
  /// An ELF (or the target's) relocatable object.
  std::vector<uint8_t> objectCode() const;
  void writeObject(const std::string& path) const;
  /// Links the object into a shared library with the system C compiler (`cc -shared`). The
  /// library's undefined runtime symbols (loom_*) resolve against libloom_runtime or the
  /// process that loads it. Host targets only.
  void writeSharedLibrary(const std::string& path) const;

  /// The module itself (for the JIT and for tests); null after the module moved into a JIT.
  llvm::Module* module() const;

  struct Impl;  ///< defined in codegen/LLVMModuleImpl.h

private:
  explicit LLVMModule(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> m_impl;
  friend LLVMModule buildLLVM(const std::vector<tir::PrimFunc>&, const Target&, const CodeGenOptions&);
  friend std::vector<LLVMModule> buildLLVMParts(const std::vector<tir::PrimFunc>&, const Target&,
                                                const CodeGenOptions&, size_t);
  friend class JITModule;
};

/// Generates one LLVM function per PrimFunc (named by its "global_symbol" attr), returning
/// int32 (0, or -1 after loom_set_last_error). Handle params with a buffer get `noalias` and
/// the buffer's alignment. Throws CodeGenError for IR that is not lowered (blocks, thread
/// bindings) or uses an intrinsic without a lowering.
LLVMModule buildLLVM(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                     const CodeGenOptions& options = {});

/// The same functions split round robin into `parts` modules (at most one per function), built
/// and optimized on `parts` threads; only the first holds the module description (listing every
/// function, in the order given), so the parts' objects link into one library. An export uses it
/// to spread LLVM's work over the cores.
std::vector<LLVMModule> buildLLVMParts(const std::vector<tir::PrimFunc>& funcs, const Target& target,
                                       const CodeGenOptions& options, size_t parts);

/// The object code of each part, emitted on one thread per part.
std::vector<std::vector<uint8_t>> objectCodeOfParts(const std::vector<LLVMModule>& parts);

/// Assembly of `f` for `target` with each line's TIR loop line.
std::vector<AsmLine> emitAsmWithLines(const tir::PrimFunc& f, const Target& target,
                                      const CodeGenOptions& options = {});

}  // namespace loom::codegen
