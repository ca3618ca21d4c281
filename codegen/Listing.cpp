// The lowered TIR text beside its assembly, line-mapped.
#include "codegen/Listing.h"

#include <chrono>

#include "core/tir/Printer.h"
#include "core/transform/GPUKernels.h"
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

Listing makeGPUListing(const tir::PrimFunc& lowered, GPUDialect dialect) {
  Listing out;
  tir::PrintResult printed = tir::printWithMap(lowered);
  out.tir = printed.text;
  auto t0 = std::chrono::steady_clock::now();
  std::unordered_map<const tir::StmtNode*, int> loopLines = loopLineMap(printed);
  GPUSource src = emitGPUSourceWithMap({transform::splitHostDevice(lowered)}, dialect);
  size_t start = 0;
  for (const GPUSourceLine& owner : src.lines) {
    size_t end = src.text.find('\n', start);
    AsmLine line;
    line.text = src.text.substr(start, end - start);
    if (owner.loop)
      if (auto it = loopLines.find(owner.loop); it != loopLines.end()) line.tirLine = it->second;
    out.asmLines.push_back(std::move(line));
    start = end + 1;
  }
  out.codegenMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

}  // namespace loom::codegen
