// loadModel: dispatches a model file to the ONNX or the TorchScript importer.
#include "core/driver/LoadModel.h"

#include "core/frontend/onnx/OnnxImporter.h"
#include "core/frontend/torch/TorchImporter.h"

namespace loom::driver {

LoadedModel loadModel(const std::string& path, const std::string& inputShapes) {
  std::map<std::string, frontend::InputSpec> specs;
  if (!inputShapes.empty()) specs = frontend::parseInputSpecs(inputShapes);
  LoadedModel out;
  auto endsWith = [&](const char* ext) {
    std::string e(ext);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (frontend::looksLikeTorchScript(path) || endsWith(".pt") || endsWith(".pth")) {
    out.format = "torchscript";
    frontend::TorchImportOptions o;
    o.inputs = specs;
    out.module = frontend::importTorchScript(path, o);
    graph::Type t = out.module.main()->body.type();
    size_t n = 1;
    if (auto* tt = t.as<graph::TupleTypeNode>()) n = tt->fields.size();
    for (size_t i = 0; i < n; ++i) out.outputNames.push_back("output_" + std::to_string(i));
    return out;
  }
  out.format = "onnx";
  frontend::ImportOptions o;
  for (const auto& [name, s] : specs) o.inputShapes[name] = s.shape;
  out.module = frontend::importOnnx(path, o);
  for (const graph::Var& p : out.module.main()->params) {
    auto it = specs.find(p->name);
    if (it == specs.end() || !it->second.dtypeGiven) continue;
    auto* tt = p->annotation.as<graph::TensorTypeNode>();
    if (tt && tt->dtype != it->second.dtype)
      throw frontend::ImportError(path + ": --input-shapes gives '" + p->name + "' dtype " + it->second.dtype.str() +
                                  " but the model declares " + tt->dtype.str());
  }
  return out;
}

std::string modelFileFilter() { return "Models (*.onnx *.pt *.pth);;ONNX models (*.onnx);;TorchScript (*.pt *.pth)"; }

} // namespace loom::driver
