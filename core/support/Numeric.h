// Conversions from double to int64_t where a plain cast is undefined behaviour for some values.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>

namespace loom {

/// double -> int64_t as x86's conversion would give it where it is defined (truncation toward
/// zero), with a value outside int64_t's range saturated and NaN as 0: a plain cast of such a value
/// is undefined behaviour. A narrower integer type then takes the int64_t and wraps, as compiled
/// code does (the graph's host tensors, the TorchScript importer's constants; fuzz_torch found both).
inline int64_t saturatingInt64(double x) {
  if (std::isnan(x)) return 0;
  if (x >= 0x1p63) return std::numeric_limits<int64_t>::max();
  if (x < -0x1p63) return std::numeric_limits<int64_t>::min();
  return int64_t(x);
}

/// `x` as an int64_t when it is a whole number in int64_t's range, else nothing (NaN, a fraction,
/// or a value whose cast would be undefined behaviour).
inline std::optional<int64_t> wholeInt64(double x) {
  if (!(x >= -0x1p63 && x < 0x1p63) || x != std::trunc(x)) return std::nullopt;
  return int64_t(x);
}

}  // namespace loom
