// The params blob: named tensors (name, dtype, shape, raw bytes) in one binary string.
#pragma once
#include <map>
#include <string>

#include "runtime/NDArray.h"

namespace loom::runtime {

/// Serializes `params`: "LOOMPRM1", u64 count, then per tensor u32 name length, name, u8 code,
/// u8 bits, u16 lanes, u32 ndim, i64 dims[ndim], u64 byte count, bytes (little-endian).
std::string saveParams(const std::map<std::string, NDArray>& params);
/// Reads a blob written by saveParams; RuntimeFailure on a malformed blob.
std::map<std::string, NDArray> loadParams(const std::string& blob);

}  // namespace loom::runtime
