// loadModel: dispatches a model file to the ONNX or the TorchScript importer.
#include "core/driver/LoadModel.h"

#include "core/driver/InputShapes.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/frontend/onnx/OnnxInputShapes.h"
#include "core/frontend/torch/TorchImporter.h"

namespace loom::driver {

LoadedModel loadModel(const std::string& path, const std::string& inputShapes) {
  InputShapes specs;
  if (!inputShapes.empty()) specs = parseInputShapes(inputShapes);
  LoadedModel out;
  auto endsWith = [&](const char* ext) {
    std::string e(ext);
    return path.size() >= e.size() && path.compare(path.size() - e.size(), e.size(), e) == 0;
  };
  if (frontend::looksLikeTorchScript(path) || endsWith(".pt") || endsWith(".pth")) {
    out.format = "torchscript";
    frontend::TorchImportOptions o;
    for (const InputShape& s : specs.inputs) {
      frontend::InputSpec is;
      is.shape = s.staticDims("a TorchScript model (it keeps no input shapes to make symbolic)");
      if (s.dtype) {
        is.dtype = *s.dtype;
        is.dtypeGiven = true;
      }
      o.inputs[s.name] = is;
    }
    out.module = frontend::importTorchScript(path, o);
    graph::Type t = out.module.main()->body.type();
    size_t n = 1;
    if (auto* tt = t.as<graph::TupleTypeNode>()) n = tt->fields.size();
    for (size_t i = 0; i < n; ++i) out.outputNames.push_back("output_" + std::to_string(i));
    return out;
  }
  out.format = "onnx";
  frontend::ImportOptions o;
  std::map<std::string, graph::Shape> symbolic;
  for (const InputShape& s : specs.inputs) {
    if (s.isStatic()) {
      o.inputShapes[s.name] = s.staticDims("");
      continue;
    }
    graph::Shape& shape = symbolic[s.name];
    for (const InputDim& d : s.dims)
      shape.push_back(d.isStatic() ? graph::Dim(d.value) : d.symbol.empty() ? graph::Dim::any() : graph::Dim::symbol(d.symbol));
  }
  out.module = symbolic.empty() ? frontend::importOnnx(path, o) : frontend::importOnnxWithShapes(path, symbolic, o);
  out.symbolBounds = specs.bounds;
  for (const graph::Var& p : out.module.main()->params) {
    const InputShape* s = specs.find(p->name);
    auto* tt = p->annotation.as<graph::TensorTypeNode>();
    if (!s || !tt) continue;
    if (s->dtype && tt->dtype != *s->dtype)
      throw frontend::ImportError(path + ": --input-shapes gives '" + p->name + "' dtype " + s->dtype->str() +
                                  " but the model declares " + tt->dtype.str());
    // An anonymous bounded dim ("?<=64") bounds the symbol the dim got.
    for (size_t k = 0; k < s->dims.size() && k < tt->shape.size(); ++k) {
      const InputDim& d = s->dims[k];
      if (!d.isAnonymous() || d.bound < 0 || tt->shape[k].name.empty()) continue;
      auto [it, fresh] = out.symbolBounds.emplace(tt->shape[k].name, d.bound);
      if (!fresh && it->second != d.bound)
        throw frontend::ImportError(path + ": --input-shapes bounds symbol '" + tt->shape[k].name + "' twice, by " +
                                    std::to_string(it->second) + " and " + std::to_string(d.bound));
    }
  }
  return out;
}

std::string modelFileFilter() { return "Models (*.onnx *.pt *.pth);;ONNX models (*.onnx);;TorchScript (*.pt *.pth)"; }

}  // namespace loom::driver
