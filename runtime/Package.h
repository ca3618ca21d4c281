// Packaged models (.tar): kernels.so + graph.json + params.bin + metadata.json, loaded by the runtime alone.
#pragma once
#include <memory>
#include <string>

#include "runtime/GraphExecutor.h"

namespace loom::runtime {

/// The package format this runtime reads and `loom compile` writes ("format_version" in
/// metadata.json; a package without the field is version 1).
inline constexpr int kPackageFormatVersion = 1;

/// A loaded package: the executor (params bound) and the metadata text (JSON: format version,
/// target, inputs and outputs with names, shapes and dtypes, Loom version).
struct Package {
  std::unique_ptr<GraphExecutor> executor;
  std::string metadata;
};

/// Untars `path`, checks metadata.json (valid JSON, a format version this runtime reads), loads
/// kernels.so (written to a private temporary file and dlopen'ed), builds the executor from
/// graph.json (every kernel it calls must be in kernels.so) and binds params.bin.
/// RuntimeFailure names the package and what is missing or malformed: an empty, truncated or
/// non-tar file, a missing member, an unsupported format version, a missing kernel symbol.
Package loadPackage(const std::string& path);

}  // namespace loom::runtime
