// Small ONNX models with symbolic input dims, written with the ONNX protobuf classes.
#pragma once
#include <QString>
#include <fstream>
#include <string>
#include <vector>

#include <onnx/onnx_pb.h>

namespace loom::test {

/// A graph input: a name and dims, each a number or a dim_param ("" for an unnamed dim).
struct OnnxInput {
  std::string name;
  std::vector<std::string> dims;
  int elemType = onnx::TensorProto::FLOAT;
};

/// A model of one node `op` (attributes: an "axis" when axis >= 0) over `inputs`, output "z".
inline std::string writeOnnxModel(const std::string& path, const std::vector<OnnxInput>& inputs, const std::string& op,
                                  int axis = -1) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* n = g->add_node();
  n->set_op_type(op);
  n->set_name(op + "_0");
  for (const OnnxInput& in : inputs) {
    auto* vi = g->add_input();
    vi->set_name(in.name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(in.elemType);
    for (const std::string& d : in.dims) {
      auto* dim = tt->mutable_shape()->add_dim();
      if (!d.empty() && std::isdigit(static_cast<unsigned char>(d[0]))) dim->set_dim_value(std::stoll(d));
      else if (!d.empty()) dim->set_dim_param(d);
    }
    n->add_input(in.name);
  }
  if (axis >= 0) {
    auto* a = n->add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
  }
  n->add_output("z");
  auto* out = g->add_output();
  out->set_name("z");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(inputs.at(0).elemType);
  std::ofstream f(path, std::ios::binary);
  m.SerializeToOstream(&f);
  return path;
}

}  // namespace loom::test
