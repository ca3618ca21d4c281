// ONNX LSTM, GRU and RNN: the input projection of every time step and direction as one GEMM
// (nn.dense), then nn.recurrence, the time loop whose step is one fused kernel.
#include <algorithm>
#include <cctype>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

struct ActivationInfo {
  const char* name;
  bool usesAlpha, usesBeta;
  double alpha, beta;  // ONNX Runtime's defaults
};

const ActivationInfo* findActivation(const std::string& n) {
  static const ActivationInfo table[] = {
      {"Sigmoid", false, false, 0, 0},        {"Tanh", false, false, 0, 0},
      {"Relu", false, false, 0, 0},           {"Affine", true, true, 1, 0},
      {"LeakyRelu", true, false, 0.01, 0},    {"ThresholdedRelu", true, false, 1, 0},
      {"ScaledTanh", true, true, 1, 1},       {"HardSigmoid", true, true, 0.2, 0.5},
      {"Elu", true, false, 1, 0},             {"Softsign", false, false, 0, 0},
      {"Softplus", false, false, 0, 0},
  };
  auto lower = [](std::string s) {
    for (char& ch : s) ch = char(std::tolower(uint8_t(ch)));
    return s;
  };
  for (const ActivationInfo& a : table)
    if (lower(a.name) == lower(n)) return &a;
  return nullptr;
}

Expr zeros(Context& c, std::vector<int64_t> shape, DataType t) {
  return c.call("broadcast_to", {graph::makeScalar(0.0, t)}, {{"shape", shape}});
}

Outs recurrent(Context& c, const std::string& cell) {
  const int64_t G = cell == "lstm" ? 4 : cell == "gru" ? 3 : 1;
  const size_t perDir = cell == "lstm" ? 3 : cell == "gru" ? 2 : 1;
  Expr x = c.input(0), w = c.input(1), r = c.input(2);
  DataType f = c.tensorType(x).dtype;
  if (f != DataType::Float(32)) c.fail("only float32 is supported");
  const int64_t layout = c.attrInt("layout", 0);
  if (layout != 0 && layout != 1) c.fail("layout must be 0 or 1");
  if (layout == 1) x = c.call("transpose", {x}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
  std::vector<int64_t> xs = c.staticShape(x), ws = c.staticShape(w), rs = c.staticShape(r);
  if (xs.size() != 3 || ws.size() != 3 || rs.size() != 3) c.fail("X, W and R must have rank 3");
  const int64_t T = xs[0], B = xs[1], I = xs[2], D = ws[0], GH = ws[1];
  const int64_t H = c.attrInt("hidden_size", GH / G);
  if (GH != G * H || ws[2] != I || rs != std::vector<int64_t>{D, G * H, H})
    c.fail("W " + std::to_string(D) + "x" + std::to_string(GH) + "x" + std::to_string(ws[2]) +
           " and R do not fit hidden_size " + std::to_string(H) + " and input size " + std::to_string(I));
  std::string dir = c.attrString("direction", "forward");
  if ((dir == "bidirectional" ? 2 : 1) != D || (dir != "forward" && dir != "reverse" && dir != "bidirectional"))
    c.fail("direction '" + dir + "' does not fit W's " + std::to_string(D) + " direction(s)");

  // Activations with their alpha/beta (consumed in order by the activations that take them).
  std::vector<std::string> names;
  if (const auto* a = c.attr("activations"))
    for (const auto& s : a->strings()) names.push_back(s);
  if (names.empty()) {
    std::vector<std::string> def = cell == "lstm" ? std::vector<std::string>{"Sigmoid", "Tanh", "Tanh"}
                                   : cell == "gru" ? std::vector<std::string>{"Sigmoid", "Tanh"}
                                                   : std::vector<std::string>{"Tanh"};
    for (int64_t d = 0; d < D; ++d) names.insert(names.end(), def.begin(), def.end());
  } else if (names.size() == perDir && D == 2) {
    names.insert(names.end(), names.begin(), names.end());
  }
  if (names.size() != perDir * size_t(D))
    c.fail(std::to_string(names.size()) + " activations given, expected " + std::to_string(perDir * size_t(D)));
  std::vector<double> alphas = c.attrFloats("activation_alpha"), betas = c.attrFloats("activation_beta");
  size_t ai = 0, bi = 0;
  std::string acts;
  std::vector<double> params;
  for (const std::string& n : names) {
    const ActivationInfo* a = findActivation(n);
    if (!a) c.fail("activation '" + n + "' is not supported");
    acts += (acts.empty() ? "" : ",") + std::string(a->name);
    params.push_back(a->usesAlpha && ai < alphas.size() ? alphas[ai++] : a->alpha);
    params.push_back(a->usesBeta && bi < betas.size() ? betas[bi++] : a->beta);
  }

  // One GEMM for the input projection of all steps and directions: [T*B, I] x [D*G*H, I]^T.
  // With G*H a multiple of 16, W is packed in panels of 16 columns, [D*G*H/16, I, 16] (folded
  // at compile time when W is a weight), and the GEMM is a matmul of x broadcast over the panels:
  // each panel is one contiguous block (as rows of W^T, its rows would be D*G*H floats apart,
  // 4 KB at hidden 256, which the caches and the prefetcher handle badly).
  const bool packW = GH % 16 == 0;
  const int64_t NP = D * GH / 16;
  Expr xp;
  if (packW) {
    Expr wp = c.call("reshape", {w}, {{"newshape", std::vector<int64_t>{NP, 16, I}}});
    wp = c.call("transpose", {wp}, {{"axes", std::vector<int64_t>{0, 2, 1}}});
    xp = c.call("nn.matmul", {c.call("reshape", {x}, {{"newshape", std::vector<int64_t>{1, T * B, I}}}), wp});
  } else {
    xp = c.call("nn.dense", {c.call("reshape", {x}, {{"newshape", std::vector<int64_t>{T * B, I}}}),
                             c.call("reshape", {w}, {{"newshape", std::vector<int64_t>{D * GH, I}}})});
  }
  Expr rb;
  if (c.hasInput(3)) {
    Expr bias = c.input(3);
    auto slice = [&](int64_t from) {
      return c.call("strided_slice", {bias},
                    {{"begin", std::vector<int64_t>{0, from}},
                     {"end", std::vector<int64_t>{D, from + GH}},
                     {"strides", std::vector<int64_t>{1, 1}},
                     {"axes", std::vector<int64_t>{0, 1}}});
    };
    std::vector<int64_t> biasShape = packW ? std::vector<int64_t>{NP, 1, 16} : std::vector<int64_t>{D * GH};
    xp = c.call("add", {xp, c.call("reshape", {slice(0)}, {{"newshape", biasShape}})});
    rb = slice(GH);
  } else {
    rb = zeros(c, {D, GH}, f);
  }
  // Packed, nn.recurrence reads the GEMM's panels as they are ([NP, T*B, 16], xp_panels = 16):
  // no transpose back to column order, no copy.
  if (!packW) xp = c.call("reshape", {xp}, {{"newshape", std::vector<int64_t>{T, B, D, GH}}});
  // R transposed for the step's matmul h R^T. Wide layers (H a multiple of 16) get it packed in
  // panels of P columns, [D, G*H/P, H, P]: the kernel's register tile is one panel, read as one
  // contiguous block per step (unpacked, each of its H rows is a separate piece GH floats apart,
  // a 4 KB stride at H = 256 that defeats the prefetcher). P divides H/2, each team task's share
  // of a gate; with a batch of B <= 8 rows also at most 64 / B, so the kernel's register tile
  // holds every row and reads the panel once per step. Both fold at compile time when R is a weight.
  Expr rt;
  int64_t panel = 0;
  if (H % 16 == 0)
    for (int64_t cand : {64, 32, 16, 8})
      if ((H / 2) % cand == 0 && (cand == 8 || cand * B <= 64)) {
        panel = cand;
        break;
      }
  if (panel > 0) {
    Expr panels = c.call("reshape", {r}, {{"newshape", std::vector<int64_t>{D, GH / panel, panel, H}}});
    rt = c.call("transpose", {panels}, {{"axes", std::vector<int64_t>{0, 1, 3, 2}}});
  } else {
    rt = c.call("transpose", {r}, {{"axes", std::vector<int64_t>{0, 2, 1}}});
  }
  Expr lens = c.hasInput(4) ? c.call("cast", {c.input(4)}, {{"dtype", DataType::Int(32)}})
                            : c.call("broadcast_to", {graph::makeScalar(double(T), DataType::Int(32))},
                                     {{"shape", std::vector<int64_t>{B}}});
  auto state = [&](int i) {
    if (!c.hasInput(i)) return zeros(c, {D, B, H}, f);
    Expr s = c.input(i);
    return layout == 1 ? c.call("transpose", {s}, {{"axes", std::vector<int64_t>{1, 0, 2}}}) : s;
  };
  Expr h0 = state(5);
  Expr c0 = cell == "lstm" ? state(6) : zeros(c, {D, B, H}, f);
  Expr p = cell == "lstm" && c.hasInput(7) ? c.input(7) : zeros(c, {D, 3 * H}, f);
  Expr rec = c.call("nn.recurrence", {xp, rt, rb, h0, c0, p, lens},
                    {{"cell", cell},
                     {"direction", dir},
                     {"activations", acts},
                     {"activation_params", params},
                     {"clip", c.attrFloat("clip", 0.0)},
                     {"linear_before_reset", c.attrInt("linear_before_reset", 0)},
                     {"input_forget", c.attrInt("input_forget", 0)},
                     {"xp_panels", packW ? int64_t(16) : int64_t(0)}});
  Expr y = graph::makeTupleGetItem(rec, 0), yh = graph::makeTupleGetItem(rec, 1), yc = graph::makeTupleGetItem(rec, 2);
  if (layout == 1) {
    y = c.call("transpose", {y}, {{"axes", std::vector<int64_t>{2, 0, 1, 3}}});
    yh = c.call("transpose", {yh}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
    yc = c.call("transpose", {yc}, {{"axes", std::vector<int64_t>{1, 0, 2}}});
  }
  if (cell == "lstm") return {y, yh, yc};
  return {y, yh};
}

}  // namespace

const std::unordered_map<std::string, Converter>& recurrentConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"LSTM", [](Context& c) { return recurrent(c, "lstm"); }},
      {"GRU", [](Context& c) { return recurrent(c, "gru"); }},
      {"RNN", [](Context& c) { return recurrent(c, "rnn"); }},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
