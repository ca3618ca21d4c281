// The reference interpreter: runs a PrimFunc on host NDArrays, the oracle other layers test against.
#pragma once
#include <cstdint>
#include <variant>
#include <vector>

#include "core/tir/Function.h"
#include "runtime/NDArray.h"

namespace loom::tir {

/// One argument of interpret(): a host NDArray for a buffer (or handle) parameter, or an integer /
/// floating-point value for a scalar parameter.
using Arg = std::variant<runtime::NDArray, int64_t, double>;

/// Runs `f` on `args`, writing results into the NDArrays in place.
///
/// At entry the argument count, and each NDArray's dtype, rank and shape against its parameter's
/// buffer are checked; symbolic shape (and stride / elem_offset) variables are bound from the
/// actual arrays. Execution is sequential and exact: every loop kind runs in order; integers wrap
/// modulo 2^bits; float32 arithmetic is done in float32, float16 / bfloat16 in float32 rounded to
/// nearest even; intrinsics are evaluated in float64 and rounded to the result type; float-to-int
/// casts truncate. Fresh memory (Allocate, block alloc_buffers) is poisoned (NaN for floats, 0xA5
/// bytes otherwise) so reads of uninitialized memory show up in results.
///
/// Every failure is a loom::RuntimeError naming what failed: a wrong argument (by parameter
/// name), an out-of-bounds access (buffer, indices, shape), a failing assert (its message),
/// integer division by zero, an unbound variable, an unknown intrinsic.
void interpret(const PrimFunc& f, const std::vector<Arg>& args);

}  // namespace loom::tir
