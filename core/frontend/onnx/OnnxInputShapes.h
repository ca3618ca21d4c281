// Importing an ONNX model with symbolic input shapes given on the command line.
#pragma once
#include <map>
#include <string>

#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Type.h"

namespace loom::frontend {

/// Imports the model at `path` with the graph inputs of `shapes` retyped: a static dim is that
/// extent, a symbolic dim (Dim::symbol) that symbol (two inputs naming one symbol share it), and
/// Dim::any() an anonymous symbolic dim: the model's own symbol there, else a fresh one named
/// after the input and axis (`x_3`). `options` applies as in importOnnx (its inputShapes may
/// hold other, static inputs). ImportError naming the file, input and dim when a shape does not
/// fit the model (another rank, a dim the model fixes to another extent, an unknown input).
graph::Module importOnnxWithShapes(const std::string& path, const std::map<std::string, graph::Shape>& shapes,
                                   const ImportOptions& options = {});

}  // namespace loom::frontend
