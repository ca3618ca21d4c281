// Exporting a compiled model: one shared library with graph, params and metadata embedded, or a .tar package.
#pragma once
#include <string>
#include <vector>

#include "codegen/CodeGenLLVM.h"
#include "core/driver/CompileModel.h"

namespace loom::driver {

struct ExportOptions {
  /// Told about code generation ("generating code"), C compilation and linking.
  ProgressCallback progress;
  /// Fill ExportResult::llvmIR / ::assembly (LLVM targets; the kernels only, not the embedded data).
  bool keepLLVMIR = false;
  bool keepAssembly = false;
};

struct ExportResult {
  /// What the export could not do and what to do instead (e.g. no linker for a cross target:
  /// the package holds kernels.o, with the command that links it). Empty when all went well.
  std::vector<std::string> notes;
  /// The package members written (for a .tar), e.g. {"kernels.so", "graph.json", ...}.
  std::vector<std::string> members;
  std::string llvmIR, assembly;  ///< when asked, for LLVM targets
  std::string cSource;           ///< the C target's kernels.c
};

/// True for the C source target: "c" (kernels as C11 source, compiled by the system cc).
bool isCTarget(const std::string& target);

/// The target text metadata.json records: "c" for the C target, else the canonical LLVM target.
std::string canonicalTarget(const std::string& target);

/// The model's kernels as one LLVM module for its (LLVM) target, at its opt level, without debug info.
codegen::LLVMModule buildModelKernels(const CompiledModel& model);

/// Writes `model` as one shared library at `path`: the kernels (exported packed functions) plus
/// graph.json, params.bin and the metadata as exported data (runtime::kLibrary*Symbol, each with a
/// `_size`), loadable by runtime::loadPackage / loom_package_load. The metadata is
/// packageMetadata's with "container": "so" and the size and CRC-32 of the graph and params.
/// LLVM targets: the data goes into the kernels' LLVM module and one object is linked (cc for the
/// host, ld.lld across). The C target: kernels.c is compiled with cc and linked with a data object.
/// When no linker exists for a cross target, writes the object to `path` with ".o" for ".so" and
/// throws LinkerNotFoundError saying so and how to link it. Throws CodeGenError when linking fails.
ExportResult exportLibrary(const CompiledModel& model, const std::string& path, const ExportOptions& options = {});

/// Writes the .tar package (kernels.so, graph.json, params.bin, metadata.json with the member sizes
/// and checksums). Cross targets without a linker: kernels.o instead of kernels.so (a note says how
/// to link it). The C target: kernels.c, and kernels.so built from it when cc exists (a note says
/// so when not).
ExportResult exportPackage(const CompiledModel& model, const std::string& path, const ExportOptions& options = {});

/// exportLibrary for a path ending in ".so", exportPackage for ".tar"; ValueError otherwise.
ExportResult exportModel(const CompiledModel& model, const std::string& path, const ExportOptions& options = {});

}  // namespace loom::driver
