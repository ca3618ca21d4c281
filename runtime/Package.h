// Packaged models (.tar): kernels.so + graph.json + params.bin + metadata.json, loaded by the runtime alone.
#pragma once
#include <memory>
#include <string>

#include "runtime/GraphExecutor.h"

namespace loom::runtime {

/// A loaded package: the executor (params bound) and the metadata text (JSON: target, inputs and
/// outputs with names, shapes and dtypes, Loom version).
struct Package {
  std::unique_ptr<GraphExecutor> executor;
  std::string metadata;
};

/// Untars `path`, loads kernels.so (written to a private temporary file and dlopen'ed), builds
/// the executor from graph.json and binds params.bin. RuntimeFailure names the package and what
/// is missing or malformed.
Package loadPackage(const std::string& path);

}  // namespace loom::runtime
