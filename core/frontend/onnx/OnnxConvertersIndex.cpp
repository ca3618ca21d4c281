// ONNX index and image ops added for coverage: ScatterElements/Scatter, ScatterND, ReverseSequence,
// GridSample.
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

/// ReverseSequence: gather_elements along the time axis with index len[b] - 1 - t where t < len[b]
/// (else t), built from graph ops so the lengths may be data.
Outs reverseSequence(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> xs = c.staticShape(x);
  int64_t timeAxis = c.attrInt("time_axis", 0), batchAxis = c.attrInt("batch_axis", 1);
  if (xs.size() < 2 || timeAxis + batchAxis != 1 || timeAxis < 0 || batchAxis < 0)
    c.fail("time_axis and batch_axis must be 0 and 1 (in either order) of a rank >= 2 input");
  int64_t T = xs[size_t(timeAxis)], B = xs[size_t(batchAxis)];
  // t as [T, 1] (time first) or [1, T]; lengths as [1, B] or [B, 1].
  runtime::NDArray steps = runtime::NDArray::empty({timeAxis == 0 ? T : 1, timeAxis == 0 ? 1 : T},
                                                   runtime::DType{runtime::DType::Int, 64, 1});
  for (int64_t t = 0; t < T; ++t) steps.as<int64_t>()[t] = t;
  Expr t = graph::makeConstant(steps);
  Expr lens = c.call("cast", {c.input(1)}, {{"dtype", DataType::Int(64)}});
  lens = c.call("reshape", {lens}, {{"newshape", timeAxis == 0 ? std::vector<int64_t>{1, B} : std::vector<int64_t>{B, 1}}});
  Expr rev = c.call("subtract", {c.call("subtract", {lens, graph::makeScalar(1.0, DataType::Int(64))}), t});
  Expr idx = c.call("where", {c.call("less", {t, lens}), rev, t});
  std::vector<int64_t> withRest = {xs[0], xs[1]};
  withRest.resize(xs.size(), 1);
  idx = c.call("reshape", {c.call("broadcast_to", {idx}, {{"shape", std::vector<int64_t>{xs[0], xs[1]}}})},
               {{"newshape", withRest}});
  idx = c.call("broadcast_to", {idx}, {{"shape", xs}});
  return {c.call("gather_elements", {x, idx}, {{"axis", timeAxis}})};
}

Outs gridSample(Context& c) {
  std::string mode = c.attrString("mode", "bilinear");
  if (mode == "linear") mode = "bilinear";  // opset 20 names
  if (mode == "cubic") mode = "bicubic";
  return {c.call("image.grid_sample", {c.input(0), c.input(1)},
                 {{"mode", mode},
                  {"padding_mode", c.attrString("padding_mode", "zeros")},
                  {"align_corners", c.attrInt("align_corners", 0)}})};
}

}  // namespace

const std::unordered_map<std::string, Converter>& indexImageConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"ScatterElements", scatterElements},
      {"Scatter", scatterElements},
      {"ScatterND", scatterND},
      {"ReverseSequence", reverseSequence},
      {"GridSample", gridSample},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
