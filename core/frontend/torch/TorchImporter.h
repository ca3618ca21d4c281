// The TorchScript importer: a torch.jit.save'd module (traced or scripted) to a typed graph::Module.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/frontend/onnx/OnnxImporter.h" // ImportError
#include "core/frontend/torch/TorchGraph.h"
#include "core/graph/Expr.h"

namespace loom::frontend {

/// Shape and element type of one model input (TVM's input_infos entry).
struct InputSpec {
  std::vector<int64_t> shape;
  DataType dtype = DataType::Float(32);
  bool dtypeGiven = false; ///< the spec named a dtype (":int64")
};

/// Parses "x:[1,3,224,224],ids:[1,64]:int64" (dtypes: float32, float64, int32, int64, bool,
/// uint8, int8, float16; default float32). ValueError on malformed text.
std::map<std::string, InputSpec> parseInputSpecs(const std::string& spec);

struct TorchImportOptions {
  /// Every tensor argument of forward() needs one (TorchScript files keep no input shapes).
  std::map<std::string, InputSpec> inputs;
};

/// Imports the TorchScript archive at `path`: loads it through libtorch (the reader library,
/// opened on first use), freezes and inlines forward(), and converts each node. Main's
/// parameters are forward()'s tensor arguments, named after them; its result is the returned
/// tensor, or a tuple of every tensor of a returned tuple/list, flattened in order. Calls are
/// named after the TorchScript module scope they came from ("features.3.block.0").
/// ImportError: not a TorchScript archive, unsupported ops (all listed with their source lines),
/// control flow that does not fold, a missing input shape, or Loom built without libtorch.
graph::Module importTorchScript(const std::string& path, const TorchImportOptions& options = {});

/// The conversion alone, from a graph the reader produced (`file` names it in messages).
graph::Module convertTorchGraph(const ts::Graph& g, const std::string& file,
                                const TorchImportOptions& options = {});

/// Reads the archive at `path` into a ts::Graph through the libtorch reader (ImportError on failure).
ts::Graph readTorchScript(const std::string& path);

/// Whether this Loom can import TorchScript (the reader library was built and opens); `why`
/// says what is missing when not.
bool torchScriptAvailable(std::string* why = nullptr);

/// True when `path` starts like a TorchScript archive (a zip holding the archive's folders).
bool looksLikeTorchScript(const std::string& path);

/// The aten:: and prim:: node kinds the importer converts, sorted.
std::vector<std::string> supportedTorchOps();

} // namespace loom::frontend
