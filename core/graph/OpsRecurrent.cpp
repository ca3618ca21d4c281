// nn.recurrence: the time loop of an LSTM, GRU or RNN layer (ONNX semantics), after the input
// projection. Its lowering (topi/nn/Recurrent.cpp) is one kernel with a serial loop over time.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/graph/OpsInternal.h"

namespace loom::graph {

namespace {

/// Gates per cell kind: LSTM i,o,f,c; GRU z,r,h; RNN one.
int64_t gatesOf(const std::string& cell) { return cell == "lstm" ? 4 : cell == "gru" ? 3 : 1; }

std::vector<std::string> splitNames(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// Inputs: XP [T, B, D, G*H] (x W^T + Wb for every step; with xp_panels = 16 the input GEMM's
// panels as it writes them, [D*G*H/16, T*B, 16]), RT (R transposed: [D, H, G*H], or packed
// in panels of P columns, [D, G*H/P, H, P] with RT[d, c / P, k, c % P] = R[d, c, k], so the step's
// matmul reads each panel once, contiguously), RB [D, G*H], H0 [D, B, H], C0 [D, B, H], P [D, 3H],
// L [B] (int32 sequence lengths).
Type recurrenceRel(const CallNode& call, const std::vector<Type>& args) {
  const std::string& cell = call.attrs.getString("cell");
  if (cell != "lstm" && cell != "gru" && cell != "rnn")
    LOOM_TYPE_FAIL(call) << "cell must be lstm, gru or rnn, not '" << cell << "'";
  const TensorTypeNode& xp = argTensor(call, args, 0);
  const TensorTypeNode& rt = argTensor(call, args, 1);
  const int64_t xpPanels = call.attrs.getInt("xp_panels");
  if (xpPanels != 0 && xpPanels != 16) LOOM_TYPE_FAIL(call) << "xp_panels must be 0 or 16, not " << xpPanels;
  const TensorTypeNode& h0 = argTensor(call, args, 3);
  if (xp.ndim() != (xpPanels ? 3u : 4u) || (rt.ndim() != 3 && rt.ndim() != 4) || !xp.isStatic() || !rt.isStatic() ||
      h0.ndim() != 3 || !h0.isStatic())
    LOOM_TYPE_FAIL(call) << "needs static XP " << (xpPanels ? "[D*G*H/16, T*B, 16] (xp_panels = 16)" : "[T, B, D, G*H]")
                         << ", RT [D, H, G*H] or [D, G*H/P, H, P] and H0 [D, B, H], got " << typeStr(Type(args[0]))
                         << ", " << typeStr(Type(args[1])) << " and " << typeStr(Type(args[3]));
  std::vector<int64_t> s = xp.staticShape(), r = rt.staticShape();
  const bool packed = r.size() == 4;
  // xp_panels = 16: XP is the input GEMM's panels [D * G*H / 16, T * B, 16] (B from H0).
  int64_t D = r[0], H = packed ? r[2] : r[1], G = gatesOf(cell);
  int64_t GH = packed ? r[1] * r[3] : r[2];
  int64_t B = xpPanels ? h0.staticShape()[1] : s[1], T = xpPanels ? (B > 0 ? s[1] / B : 0) : s[0];
  const bool xpFits = xpPanels ? s[0] * 16 == D * GH && s[2] == 16 && T * B == s[1] : s[2] == D && s[3] == G * H;
  if (GH != G * H || !xpFits)
    LOOM_TYPE_FAIL(call) << "XP " << typeStr(Type(args[0])) << " and RT " << typeStr(Type(args[1]))
                         << " disagree on directions or hidden size (" << G << " gates)";
  if (xp.dtype != DataType::Float(32) || rt.dtype != DataType::Float(32))
    LOOM_TYPE_FAIL(call) << "only float32 is supported";
  auto expect = [&](size_t i, std::vector<int64_t> want, DataType t) {
    const TensorTypeNode& a = argTensor(call, args, i);
    if (!a.isStatic() || a.staticShape() != want || a.dtype != t)
      LOOM_TYPE_FAIL(call) << "argument " << i << " is " << typeStr(Type(args[i])) << ", expected "
                           << typeStr(tensorType(want, t));
  };
  expect(2, {D, G * H}, xp.dtype);
  expect(3, {D, B, H}, xp.dtype);
  expect(4, {D, B, H}, xp.dtype);
  expect(5, {D, 3 * H}, xp.dtype);
  expect(6, {B}, DataType::Int(32));
  std::string dir = call.attrs.getString("direction");
  if ((dir == "bidirectional") != (D == 2) || (dir != "forward" && dir != "reverse" && dir != "bidirectional"))
    LOOM_TYPE_FAIL(call) << "direction '" << dir << "' does not fit " << D << " direction(s)";
  size_t perDir = cell == "lstm" ? 3 : cell == "gru" ? 2 : 1;
  if (splitNames(call.attrs.getString("activations")).size() != perDir * size_t(D) ||
      call.attrs.getFloats("activation_params").size() != 2 * perDir * size_t(D))
    LOOM_TYPE_FAIL(call) << "needs " << perDir * size_t(D) << " activations with 2 parameters each";
  return tupleType({tensorType(std::vector<int64_t>{T, D, B, H}, xp.dtype),
                    tensorType(std::vector<int64_t>{D, B, H}, xp.dtype),
                    tensorType(std::vector<int64_t>{D, B, H}, xp.dtype)});
}

double softplus(double x) { return x > 30 ? x : std::log1p(std::exp(x)); }

} // namespace

double recurrenceActivation(const std::string& name, double a, double b, double x) {
  if (name == "Sigmoid") return 1.0 / (1.0 + std::exp(-x));
  if (name == "Tanh") return std::tanh(x);
  if (name == "Relu") return std::max(x, 0.0);
  if (name == "Affine") return a * x + b;
  if (name == "LeakyRelu") return x < 0 ? a * x : x;
  if (name == "ThresholdedRelu") return x > a ? x : 0.0;
  if (name == "ScaledTanh") return a * std::tanh(b * x);
  if (name == "HardSigmoid") return std::clamp(a * x + b, 0.0, 1.0);
  if (name == "Elu") return x < 0 ? a * (std::exp(x) - 1) : x;
  if (name == "Softsign") return x / (1 + std::fabs(x));
  if (name == "Softplus") return softplus(x);
  LOOM_THROW(ValueError) << "unknown recurrent activation '" << name << "'";
}

namespace {

std::vector<runtime::NDArray> recurrenceKernel(const CallNode& call, const std::vector<runtime::NDArray>& inputs,
                                               const Type& outType) {
  std::vector<HostTensor> in;
  for (const auto& a : inputs) in.push_back(fromNDArray(a));
  const HostTensor &xp = in[0], &rt = in[1], &rb = in[2], &h0 = in[3], &c0 = in[4], &p = in[5], &len = in[6];
  const std::string cell = call.attrs.getString("cell"), dir = call.attrs.getString("direction");
  std::vector<std::string> acts = splitNames(call.attrs.getString("activations"));
  const std::vector<double>& ap = call.attrs.getFloats("activation_params");
  double clip = call.attrs.getFloat("clip");
  bool lbr = call.attrs.getInt("linear_before_reset") != 0, coupled = call.attrs.getInt("input_forget") != 0;
  const bool packed = rt.shape.size() == 4;
  const bool xpPanels = call.attrs.getInt("xp_panels") != 0;
  int64_t B = xpPanels ? h0.shape[1] : xp.shape[1], T = xpPanels ? (B > 0 ? xp.shape[1] / B : 0) : xp.shape[0];
  int64_t D = rt.shape[0];
  int64_t H = packed ? rt.shape[2] : rt.shape[1];
  int64_t GH = packed ? rt.shape[1] * rt.shape[3] : rt.shape[2], P = packed ? rt.shape[3] : 1;
  // R[d, q, k]: RT[d, k, q], or RT[d, q / P, k, q % P] when packed.
  auto rAt = [&](int64_t d, int64_t k, int64_t q) {
    return packed ? rt.v[size_t(((d * (GH / P) + q / P) * H + k) * P + q % P)] : rt.v[size_t((d * H + k) * GH + q)];
  };
  size_t perDir = acts.size() / size_t(D);
  (void)outType;
  DataType f = xp.dtype;
  HostTensor y({T, D, B, H}, f), yh({D, B, H}, f), yc({D, B, H}, f);
  auto cl = [&](double x) { return clip > 0 ? std::clamp(x, -clip, clip) : x; };
  for (int64_t d = 0; d < D; ++d) {
    bool rev = dir == "reverse" || (dir == "bidirectional" && d == 1);
    auto act = [&](size_t k, double x) {
      size_t i = size_t(d) * perDir + k;
      return recurrenceActivation(acts[i], ap[2 * i], ap[2 * i + 1], x);
    };
    for (int64_t b = 0; b < B; ++b) {
      std::vector<double> h(static_cast<size_t>(H)), c(static_cast<size_t>(H)), g(static_cast<size_t>(GH)),
          hh(static_cast<size_t>(H));
      for (int64_t j = 0; j < H; ++j) {
        h[size_t(j)] = h0.v[size_t((d * B + b) * H + j)];
        c[size_t(j)] = c0.v[size_t((d * B + b) * H + j)];
      }
      int64_t n = std::min<int64_t>(int64_t(len.v[size_t(b)]), T);
      for (int64_t s = 0; s < n; ++s) {
        int64_t t = rev ? n - 1 - s : s;
        // g = x W^T + Wb + h R^T + Rb (GRU's h gate: its recurrent part apart, in hh).
        for (int64_t q = 0; q < GH; ++q) {
          double acc = rb.v[size_t(d * GH + q)];
          bool hGate = cell == "gru" && q >= 2 * H;
          for (int64_t k = 0; k < H; ++k) {
            double src = h[size_t(k)];
            if (hGate && !lbr) src *= act(0, cl(g[size_t(H + k)]));  // r (.) h
            acc += src * rAt(d, k, q);
          }
          int64_t c = d * GH + q;
          double x = xpPanels ? xp.v[size_t(((c / 16 * T + t) * B + b) * 16 + c % 16)]
                              : xp.v[size_t(((t * B + b) * D + d) * GH + q)];
          if (hGate) hh[size_t(q - 2 * H)] = acc, g[size_t(q)] = x;
          else g[size_t(q)] = x + acc;
        }
        for (int64_t j = 0; j < H; ++j) {
          size_t J = size_t(j);
          if (cell == "lstm") {
            double pi = p.v[size_t(d * 3 * H + j)], po = p.v[size_t(d * 3 * H + H + j)], pf = p.v[size_t(d * 3 * H + 2 * H + j)];
            double it = act(0, cl(g[J] + pi * c[J]));
            double ft = coupled ? 1 - it : act(0, cl(g[size_t(2 * H + j)] + pf * c[J]));
            double ct = act(1, cl(g[size_t(3 * H + j)]));
            c[J] = ft * c[J] + it * ct;
            double ot = act(0, cl(g[size_t(H + j)] + po * c[J]));
            hh[J] = ot * act(2, c[J]);
          } else if (cell == "gru") {
            double z = act(0, cl(g[J])), r = act(0, cl(g[size_t(H + j)]));
            double cand = act(1, cl(g[size_t(2 * H + j)] + (lbr ? r * hh[J] : hh[J])));
            hh[J] = (1 - z) * cand + z * h[J];
          } else {
            hh[J] = act(0, cl(g[J]));
          }
        }
        for (int64_t j = 0; j < H; ++j) {
          h[size_t(j)] = hh[size_t(j)];
          y.v[size_t(((t * D + d) * B + b) * H + j)] = h[size_t(j)];
        }
      }
      for (int64_t j = 0; j < H; ++j) {
        yh.v[size_t((d * B + b) * H + j)] = h[size_t(j)];
        yc.v[size_t((d * B + b) * H + j)] = c[size_t(j)];
      }
    }
  }
  return {toNDArray(y), toNDArray(yh), toNDArray(yc)};
}

} // namespace

void registerRecurrentOps() {
  OpDef op;
  op.name = "nn.recurrence";
  op.numInputs = 7;
  op.pattern = OpPattern::Opaque;
  op.attrs = {attrString("cell"),
              attrString("direction", std::string("forward")),
              attrString("activations"),
              {"activation_params", AttrKind::Floats, std::nullopt},
              attrFloat("clip", 0.0),
              attrInt("linear_before_reset", 0),
              attrInt("input_forget", 0),
              attrInt("xp_panels", 0)};
  op.typeRel = recurrenceRel;
  op.hostKernel = recurrenceKernel;
  op.doc = "the time loop of an LSTM/GRU/RNN layer (ONNX gate order and activations): inputs XP [T, B, D, "
           "G*H] (input projection with Wb; with xp_panels = 16 the GEMM's panels [D*G*H/16, T*B, 16]), RT [D, H, G*H] or packed [D, G*H/P, H, P], RB [D, G*H], H0, C0 [D, B, H], P [D, 3H], "
           "lengths [B] int32; outputs Y [T, D, B, H], Y_h, Y_c [D, B, H]";
  registerOp(std::move(op));
}

} // namespace loom::graph
