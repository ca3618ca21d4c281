// Host-side NDArray helpers for tests: random fill, element access, comparison and printing.
#pragma once
#include <cstdint>
#include <string>

#include "runtime/NDArray.h"

namespace loom::tir {

/// Fills a host array deterministically from `seed`: floats uniform in [-1, 1] (rounded to the
/// element type), signed ints uniform in [-4, 4], unsigned ints in [0, 8], bools 0 or 1.
/// Throws ValueError for handle arrays and arrays not on the host.
void fillRandom(runtime::NDArray& a, uint64_t seed);

/// Element `i` (row-major flat index) as a double; `setElement` stores `v` converted to the element
/// type (floats round to nearest even, ints truncate toward zero and wrap, bools are v != 0).
/// Throws ValueError when `i` is out of range.
double getElement(const runtime::NDArray& a, int64_t i);
void setElement(runtime::NDArray& a, int64_t i, double v);

/// max_i |got_i - want_i| / max(|want_i|, 1e-3 * max_j |want_j|, 1e-6): relative error with a floor
/// scaled to the tensor's magnitude, so values near zero in a large-valued tensor do not dominate.
/// Any NaN in `got` (or a NaN/inf mismatch) gives +inf, so NaN never passes. 0 for empty arrays.
/// Throws ValueError when shapes or dtypes differ.
double maxRelError(const runtime::NDArray& got, const runtime::NDArray& want);

/// True when every |got_i - want_i| <= atol + rtol * |want_i|, no NaN in got, and shapes and dtypes
/// agree (false otherwise). With `equalNan` (numpy's `allclose(equal_nan=True)`), a NaN in got
/// matches a NaN in want at the same index: for differential tests whose reference itself computes
/// NaN (inf - inf), where the compiled code must give NaN at exactly those places.
bool allClose(const runtime::NDArray& got, const runtime::NDArray& want, double rtol = 1e-5,
              double atol = 1e-6, bool equalNan = false);

/// "float32[2, 3] [[1, 2, 3], [4, 5, 6]]"; elements after the first `maxElements` print as "...".
std::string formatArray(const runtime::NDArray& a, int64_t maxElements = 64);

/// The empty string when allClose(got, want, rtol, atol); otherwise a readable report: shapes or
/// dtypes that differ, or the count of mismatches, the first mismatching index with both values,
/// and maxRelError.
std::string mismatchReport(const runtime::NDArray& got, const runtime::NDArray& want, double rtol = 1e-5,
                           double atol = 1e-6, bool equalNan = false);

/// IEEE half and bfloat16 encodings, rounding to nearest even (NaN stays NaN, overflow gives inf).
uint16_t toHalfBits(double v);
double fromHalfBits(uint16_t bits);
uint16_t toBFloat16Bits(double v);
double fromBFloat16Bits(uint16_t bits);

}  // namespace loom::tir
