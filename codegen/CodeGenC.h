// TIR to C source: a portable backend that any C compiler turns into the same packed functions.
#pragma once
#include <string>
#include <vector>

#include "core/tir/Function.h"

namespace loom::codegen {

/// One C11 (GNU dialect: statement expressions, _Float16) translation unit defining every
/// function of `funcs` (lowered, packed or not) with external linkage and the same signatures
/// LLVM codegen gives them, plus the module metadata symbol. It includes "loom/c_runtime_api.h",
/// <math.h> and <stdio.h>. Vector expressions become per-lane loops that the C compiler
/// vectorizes; parallel loops become closures run by loom_backend_parallel_launch. Throws
/// CodeGenError for IR that is not lowered or an intrinsic without a C form.
std::string emitC(const std::vector<tir::PrimFunc>& funcs);

}  // namespace loom::codegen
