// The lowered TIR text beside its assembly, line-mapped.
#include "codegen/Listing.h"

#include <chrono>

#include "core/tir/Printer.h"
#include "core/transform/MakePackedAPI.h"

namespace loom::codegen {

Listing makeListing(const tir::PrimFunc& lowered, const Target& target, bool withLLVMIR) {
  Listing out;
  tir::PrintResult printed = tir::printWithMap(lowered);
  out.tir = printed.text;
  auto t0 = std::chrono::steady_clock::now();
  CodeGenOptions opts;
  opts.sourceName = lowered->name + ".tir";
  opts.lineMap = loopLineMap(printed);
  LLVMModule m = buildLLVM({transform::makePackedAPI(lowered)}, target, opts);
  out.asmLines = m.assemblyWithLines();
  out.codegenMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  if (withLLVMIR) out.llvmIR = m.llvmIR();
  return out;
}

}  // namespace loom::codegen
