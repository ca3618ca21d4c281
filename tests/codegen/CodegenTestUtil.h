// Shared helpers of the codegen tests: compile a PrimFunc to a JIT'd packed function, call it raw.
#pragma once
#include <string>
#include <vector>

#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "core/transform/MakePackedAPI.h"
#include "loom/c_runtime_api.h"
#include "runtime/PackedFunc.h"

namespace loom::codegen::testutil {

/// make-packed-api, LLVM codegen for `target`, JIT: the packed function of `f`.
inline runtime::PackedFunc jitPacked(const tir::PrimFunc& f, const std::string& target = "llvm") {
  tir::PrimFunc packed = transform::makePackedAPI(f);
  JITModule jit(buildLLVM({packed}, Target::parse(target)));
  return jit.getFunction(packed->name);
}

/// Calls `f` through the C ABI directly; returns its code and leaves the message in `error`.
inline int callRaw(const runtime::PackedFunc& f, std::vector<LoomValue> values, std::vector<int> codes,
                   std::string* error) {
  LoomValue ret{};
  int retCode = kLoomArgNull;
  loom_set_last_error("");
  int rc = f.cfunc()(values.data(), codes.data(), int(values.size()), &ret, &retCode, nullptr);
  if (error) *error = loom_get_last_error();
  return rc;
}

}  // namespace loom::codegen::testutil
