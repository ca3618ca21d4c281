// NumPy .npy/.npz files: named tensors in and out of `loom run`.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace loom {
/// A file that is not a readable .npy/.npz (the message names the file and the member).
LOOM_DECLARE_ERROR(NpzError, Error);
}  // namespace loom

namespace loom::driver {

/// The arrays of an .npz (zip of .npy; stored or deflated members), in archive order, names
/// without ".npy".
std::vector<std::pair<std::string, runtime::NDArray>> readNpz(const std::string& path);
/// Writes an .npz with stored (uncompressed) members.
void writeNpz(const std::string& path, const std::vector<std::pair<std::string, runtime::NDArray>>& arrays);

/// One .npy in memory.
runtime::NDArray parseNpy(const std::string& bytes, const std::string& name);
std::string serializeNpy(const runtime::NDArray& a);

}  // namespace loom::driver
