// Counting the floating-point operations of a tensor program from its TIR (TVM's FlopEstimator).
#pragma once
#include "core/tir/Function.h"

namespace loom::tune {

/// Floating-point operations of one call of `f`: every float-typed arithmetic operation (add, sub,
/// mul, div, min, max; a multiply-add counts 2) and every float math intrinsic call (exp, sqrt, ...)
/// in the statements, times the extents of the loops around it (lanes count for vectors). Of a
/// select or if_then_else only the costlier value counts (one of them is used). Block init
/// statements, index arithmetic and comparisons count nothing. 0 when a loop
/// enclosing an operation has a non-constant extent (unknown).
double countFlops(const tir::PrimFunc& f);

} // namespace loom::tune
