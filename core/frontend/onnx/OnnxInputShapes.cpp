// importOnnxWithShapes: rewrites the graph inputs' declared shapes, then imports as usual (the
// importer reads dim_param as a symbol, dim_value as an extent).
#include "core/frontend/onnx/OnnxInputShapes.h"

#include <cctype>
#include <fstream>
#include <set>
#include <sstream>

#include <onnx/onnx_pb.h>

namespace loom::frontend {

namespace {

std::string freshName(const std::string& input, size_t axis) {
  std::string s;
  for (char c : input) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "in_" + s;
  return s + "_" + std::to_string(axis);
}

}  // namespace

graph::Module importOnnxWithShapes(const std::string& path, const std::map<std::string, graph::Shape>& shapes,
                                   const ImportOptions& options) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ImportError(path + ": cannot open file");
  std::ostringstream ss;
  ss << in.rdbuf();
  onnx::ModelProto model;
  if (ss.str().empty() || !model.ParseFromString(ss.str()))
    throw ImportError(path + ": not an ONNX model (protobuf parse failed)");
  std::set<std::string> inits;
  for (const auto& init : model.graph().initializer()) inits.insert(init.name());
  std::set<std::string> done;
  for (auto& vi : *model.mutable_graph()->mutable_input()) {
    auto it = shapes.find(vi.name());
    if (it == shapes.end() || inits.count(vi.name())) continue;
    done.insert(vi.name());
    const graph::Shape& want = it->second;
    if (!vi.type().has_tensor_type())
      throw ImportError(path + ": graph input '" + vi.name() + "' is not a tensor (sequences and maps are not supported)");
    auto* tt = vi.mutable_type()->mutable_tensor_type();
    if (tt->has_shape() && tt->shape().dim_size() != int(want.size()))
      throw ImportError(path + ": --input-shapes gives '" + vi.name() + "' rank " + std::to_string(want.size()) +
                        " but the model declares rank " + std::to_string(tt->shape().dim_size()));
    onnx::TensorShapeProto old = tt->shape();
    auto* shape = tt->mutable_shape();
    shape->clear_dim();
    for (size_t k = 0; k < want.size(); ++k) {
      const onnx::TensorShapeProto_Dimension* was = old.dim_size() > int(k) ? &old.dim(int(k)) : nullptr;
      auto* d = shape->add_dim();
      if (was && was->has_dim_value() && !(want[k].isStatic() && want[k].value == was->dim_value()))
        throw ImportError(path + ": --input-shapes gives '" + vi.name() + "' dimension " + std::to_string(k) + " = " +
                          (want[k].isStatic() ? std::to_string(want[k].value) : want[k].name.empty() ? "?" : want[k].name) +
                          " but the model fixes it to " + std::to_string(was->dim_value()));
      if (want[k].isStatic()) d->set_dim_value(want[k].value);
      else if (!want[k].name.empty()) d->set_dim_param(want[k].name);
      else if (was && was->has_dim_param() && !was->dim_param().empty()) d->set_dim_param(was->dim_param());
      else d->set_dim_param(freshName(vi.name(), k));
    }
  }
  for (const auto& [name, s] : shapes)
    if (!done.count(name))
      throw ImportError(path + ": --input-shapes names '" + name + "', which is not a graph input");
  std::string bytes;
  model.SerializeToString(&bytes);
  return importOnnxBytes(bytes, path, options);
}

}  // namespace loom::frontend
