// ONNX index and image ops added for coverage: ScatterElements/Scatter, ScatterND.
#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

Outs scatterElements(Context& c) {
  std::string red = c.attrString("reduction", "none");
  return {c.call("scatter_elements", {c.input(0), c.input(1), c.input(2)},
                 {{"axis", c.attrInt("axis", 0)}, {"reduction", red}})};
}

Outs scatterND(Context& c) {
  std::string red = c.attrString("reduction", "none");
  return {c.call("scatter_nd", {c.input(0), c.input(1), c.input(2)}, {{"reduction", red}})};
}

}  // namespace

const std::unordered_map<std::string, Converter>& indexImageConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"ScatterElements", scatterElements},
      {"Scatter", scatterElements},
      {"ScatterND", scatterND},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
