// The ONNX importer: an .onnx model (opsets 6-21) to a typed graph::Module.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph/Expr.h"
#include "core/support/Error.h"
#include "runtime/NDArray.h"

namespace loom::frontend {

/// A model that cannot be imported: unreadable or malformed file (the message names the file),
/// unsupported ops (one error listing every one with node name and opset), or a node whose
/// inputs do not fit (names the node).
LOOM_DECLARE_ERROR(ImportError, Error);

struct ImportOptions {
  /// Static shapes for graph inputs by name; they replace the model's (possibly symbolic) shapes,
  /// so that Shape -> Gather -> Concat -> Reshape chains fold away.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Graph inputs bound to constant values (they are no longer parameters of main); used when
  /// shape-like inputs (a Reshape target, Slice bounds) are fed as graph inputs.
  std::map<std::string, runtime::NDArray> constantInputs;
  /// Run onnx::checker on the model; its finding leads the error message when the import fails
  /// (a model the checker rejects but that converts cleanly is accepted).
  bool check = true;
};

/// Imports the model at `path`. Initializers become constants (named after the initializer);
/// graph inputs that are not initializers become the parameters of "main"; several graph
/// outputs make main return a tuple.
graph::Module importOnnx(const std::string& path, const ImportOptions& options = {});
/// The same from serialized ModelProto bytes; `name` is used in messages.
graph::Module importOnnxBytes(const std::string& bytes, const std::string& name,
                              const ImportOptions& options = {});

/// Parses "data:[1,3,224,224],mask:[1,128]" (ValueError on malformed text).
std::map<std::string, std::vector<int64_t>> parseInputShapes(const std::string& spec);

/// Loads a serialized onnx TensorProto (the test_data_set_N/input_K.pb layout).
runtime::NDArray loadTensorProto(const std::string& path);

/// The ONNX op types the importer converts, sorted.
std::vector<std::string> supportedOnnxOps();

/// The opset range the importer accepts.
constexpr int kMinOpset = 6;
constexpr int kMaxOpset = 21;

} // namespace loom::frontend
