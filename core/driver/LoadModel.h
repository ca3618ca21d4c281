// One entry for opening a model file, whatever its format: ONNX or TorchScript (.pt).
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/graph/Expr.h"

namespace loom::driver {

struct LoadedModel {
  graph::Module module;
  std::string format;                   ///< "onnx" or "torchscript"
  /// Names of main's results: "output_0", "output_1", ... for TorchScript; empty for ONNX (the
  /// caller may read the graph's output names).
  std::vector<std::string> outputNames;
  /// The upper bound of each symbol that --input-shapes bounds ("W<=2048"; an anonymous "?<=64"
  /// under the name the dim got). compileModel's result records them with applySymbolBounds.
  std::map<std::string, int64_t> symbolBounds;
};

/// Imports the model at `path`, picking the importer from the file's contents (a zip archive is
/// TorchScript, anything else ONNX). `inputShapes` is the --input-shapes text
/// (core/driver/InputShapes.h): "x:[1,3,224,224],ids:[1,64]:int64" (a dtype may follow a shape;
/// for ONNX it must match the model's); for ONNX a dim may be a symbol ("x:[1,3,48,W]"), "?"
/// or bounded ("W<=2048"). Inputs it does not name keep the model's (possibly symbolic) shapes.
/// ImportError / ValueError on bad input, naming the file.
LoadedModel loadModel(const std::string& path, const std::string& inputShapes = {});

/// The file-dialog filter of the formats loadModel reads ("Models (*.onnx *.pt *.pth)").
std::string modelFileFilter();

} // namespace loom::driver
