// The end-to-end meaning check of lowering (for the tests that link the LLVM backend): the
// lowered, packed, JIT-compiled function against the interpreter on the unlowered one.
#pragma once
#include <string>
#include <vector>

#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "core/transform/MakePackedAPI.h"
#include "core/transform/Pipeline.h"
#include "runtime/PackedFunc.h"
#include "tests/transform/Meaning.h"

namespace loom::transform::testing {

/// Empty when the JIT-compiled lowering of `f` computes what the interpreter computes on `f`;
/// otherwise the first mismatching parameter and the lowered function.
inline std::string compiledDiff(const tir::PrimFunc& f) {
  PassContext ctx;
  tir::PrimFunc g = lower(f, ctx);
  tir::PrimFunc packed = makePackedAPI(g);
  codegen::JITModule jit(codegen::buildLLVM({packed}, codegen::Target::parse("llvm")));
  runtime::PackedFunc fn = jit.getFunction(packed->name);
  auto want = randomArgs(f, 11), got = randomArgs(f, 11);
  interpret(f, asArgs(want));
  std::vector<runtime::PackedArg> args(got.begin(), got.end());
  fn.call(args);
  for (size_t i = 0; i < got.size(); ++i) {
    std::string m = tir::mismatchReport(got[i], want[i], 1e-5, 1e-6);
    if (!m.empty()) return "param " + std::to_string(i) + ": " + m + "\n" + tir::printFunc(g);
  }
  return {};
}

}  // namespace loom::transform::testing
