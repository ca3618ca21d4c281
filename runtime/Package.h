// Packaged models (.tar): kernels.so + graph.json + params.bin + metadata.json, loaded by the runtime alone.
#pragma once
#include <memory>
#include <string>

#include "runtime/GraphExecutor.h"

namespace loom::runtime {

/// The package format this runtime reads and `loom compile` writes ("format_version" in
/// metadata.json; a package without the field is version 1).
inline constexpr int kPackageFormatVersion = 1;

/// The checksum of a package member as metadata.json records it ("members": {"kernels.so":
/// {"bytes": N, "crc32": "1a2b3c4d"}, ...}): CRC-32 (zlib's, so `zlib.crc32` agrees) as 8 lowercase
/// hex digits.
std::string packageChecksum(const std::string& bytes);

/// A loaded package: the executor (params bound) and the metadata text (JSON: format version,
/// target, inputs and outputs with names, shapes and dtypes, Loom version).
struct Package {
  std::unique_ptr<GraphExecutor> executor;
  std::string metadata;
};

/// Untars `path`, checks metadata.json (valid JSON, a format version this runtime reads, and the
/// size and checksum of every member it lists, so a damaged kernels.so is refused, not run), loads
/// kernels.so (written to a private temporary file and dlopen'ed), builds the executor from
/// graph.json (every kernel it calls must be in kernels.so) and binds params.bin.
/// RuntimeFailure names the package and what is missing or malformed: an empty, truncated or
/// non-tar file, a missing member, an unsupported format version, a missing kernel symbol.
Package loadPackage(const std::string& path);

}  // namespace loom::runtime
