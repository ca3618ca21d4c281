// Ops added by opsets 18-20 that compose from existing graph ops: Mish (18), GroupNormalization
// (18; scale and bias per channel from 21), CenterCropPad (18) and Gelu (20).
#include <cmath>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

Expr scalar(Context& c, double v, const Expr& like) { return graph::makeScalar(v, c.tensorType(like).dtype); }

Outs mish(Context& c) {
  Expr x = c.input(0);
  // Softplus as max(x, 0) + log1p(exp(-|x|)) (see OnnxConverters.cpp's softplus).
  Expr tail = c.call("log1p", {c.call("exp", {c.call("negative", {c.call("abs", {x})})})});
  Expr softplus = c.call("add", {c.call("maximum", {x, scalar(c, 0, x)}), tail});
  return {c.call("multiply", {x, c.call("tanh", {softplus})})};
}

Outs gelu(Context& c) {
  Expr x = c.input(0);
  std::string approx = c.attrString("approximate", "none");
  Expr inner;
  if (approx == "none") {
    inner = c.call("erf", {c.call("multiply", {x, scalar(c, 1.0 / std::sqrt(2.0), x)})});
  } else if (approx == "tanh") {
    Expr cube = c.call("multiply", {c.call("multiply", {x, x}), x});
    Expr arg = c.call("add", {x, c.call("multiply", {cube, scalar(c, 0.044715, x)})});
    inner = c.call("tanh", {c.call("multiply", {arg, scalar(c, std::sqrt(2.0 / M_PI), x)})});
  } else {
    c.fail("approximate must be 'none' or 'tanh', got '" + approx + "'");
  }
  Expr half = c.call("multiply", {x, scalar(c, 0.5, x)});
  return {c.call("multiply", {half, c.call("add", {inner, scalar(c, 1, x)})})};
}

Outs groupNorm(Context& c) {
  Expr x = c.input(0), scale = c.input(1), bias = c.input(2);
  std::vector<int64_t> s = c.staticShape(x);
  if (s.size() < 2) c.fail("the input must have rank >= 2 (N, C, ...)");
  const int64_t G = c.attrInt("num_groups", 0), N = s[0], C = s[1];
  if (G < 1 || C % G != 0) c.fail("num_groups " + std::to_string(G) + " does not divide " + std::to_string(C) + " channels");
  int64_t rest = 1;
  for (size_t i = 2; i < s.size(); ++i) rest *= s[i];
  const double eps = c.attrFloat("epsilon", 1e-5);
  Expr g = c.call("reshape", {x}, {{"newshape", std::vector<int64_t>{N, G, C / G * rest}}});
  graph::Attrs keep{{"axis", std::vector<int64_t>{2}}, {"keepdims", int64_t(1)}};
  Expr mean = c.call("mean", {g}, keep);
  Expr d = c.call("subtract", {g, mean});
  Expr var = c.call("mean", {c.call("multiply", {d, d})}, keep);
  Expr y = c.call("divide", {d, c.call("sqrt", {c.call("add", {var, scalar(c, eps, x)})})});
  const int64_t params = c.staticShape(scale).at(0);
  if (c.opset() < 21 && params == G) {
    // Opset 18: one scale and bias per group.
    auto perGroup = [&](const Expr& p) { return c.call("reshape", {p}, {{"newshape", std::vector<int64_t>{G, 1}}}); };
    y = c.call("add", {c.call("multiply", {y, perGroup(scale)}), perGroup(bias)});
    return {c.call("reshape", {y}, {{"newshape", s}})};
  }
  if (params != C) c.fail("scale has " + std::to_string(params) + " entries, expected " + std::to_string(C) + " (one per channel)");
  y = c.call("reshape", {y}, {{"newshape", s}});
  std::vector<int64_t> ps(s.size() - 1, 1);
  ps[0] = C;
  auto perChannel = [&](const Expr& p) { return c.call("reshape", {p}, {{"newshape", ps}}); };
  return {c.call("add", {c.call("multiply", {y, perChannel(scale)}), perChannel(bias)})};
}

Outs centerCropPad(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> s = c.staticShape(x), target = c.constInts(1);
  std::vector<int64_t> axes = c.attrInts("axes");
  if (axes.empty())
    for (size_t i = 0; i < s.size(); ++i) axes.push_back(int64_t(i));
  if (axes.size() != target.size())
    c.fail("shape has " + std::to_string(target.size()) + " entries for " + std::to_string(axes.size()) + " axes");
  std::vector<int64_t> pw(2 * s.size(), 0);
  bool padded = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t a = axes[k] < 0 ? axes[k] + int64_t(s.size()) : axes[k];
    if (a < 0 || a >= int64_t(s.size())) c.fail("axis " + std::to_string(axes[k]) + " is out of range");
    int64_t dim = s[size_t(a)], want = target[k];
    if (want < dim) {
      int64_t begin = (dim - want) / 2;
      x = c.call("strided_slice", {x},
                 {{"begin", std::vector<int64_t>{begin}},
                  {"end", std::vector<int64_t>{begin + want}},
                  {"strides", std::vector<int64_t>{1}},
                  {"axes", std::vector<int64_t>{a}}});
    } else if (want > dim) {
      pw[2 * size_t(a)] = (want - dim) / 2;
      pw[2 * size_t(a) + 1] = want - dim - (want - dim) / 2;
      padded = true;
    }
  }
  if (padded) x = c.call("nn.pad", {x}, {{"pad_width", pw}, {"pad_value", 0.0}, {"pad_mode", std::string("constant")}});
  return {x};
}

}  // namespace

const std::unordered_map<std::string, Converter>& newerOpsetConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"Mish", mish},
      {"Gelu", gelu},
      {"GroupNormalization", groupNorm},
      {"CenterCropPad", centerCropPad},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
