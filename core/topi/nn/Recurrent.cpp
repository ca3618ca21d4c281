// nn.recurrence as one kernel: a serial loop over time whose step is the recurrent matmul
// (vectorized along the columns of R^T, summed in an unrolled register accumulator) followed by
// the fused gate update. Written as TVMScript text and parsed, since TE has no serial loop that
// carries state. The step is not parallel: at batch 1 a per-step thread-pool launch cost more
// than it saved (85 ms vs 16 ms for 100 steps of hidden 256 on the loaded 2-core machine).
#include "core/topi/nn/Recurrent.h"

#include <cstdio>
#include <map>
#include <sstream>

#include "core/graph/Op.h"
#include "core/tir/Parser.h"

namespace loom::topi::nn {

namespace {

std::string num(double v) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.9g", v);
  return std::string("T.float32(") + buf + ")";
}

std::vector<std::string> splitNames(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

/// The activation `name` (ONNX recurrent activations) applied to the text `x`.
std::string activation(const std::string& name, double a, double b, const std::string& x) {
  const std::string zero = num(0);
  if (name == "Sigmoid") return "T.sigmoid(" + x + ")";
  if (name == "Tanh") return "T.tanh(" + x + ")";
  if (name == "Relu") return "T.max(" + x + ", " + zero + ")";
  if (name == "Affine") return num(a) + " * " + x + " + " + num(b);
  if (name == "LeakyRelu") return "T.Select(" + x + " < " + zero + ", " + num(a) + " * " + x + ", " + x + ")";
  if (name == "ThresholdedRelu") return "T.Select(" + num(a) + " < " + x + ", " + x + ", " + zero + ")";
  if (name == "ScaledTanh") return num(a) + " * T.tanh(" + num(b) + " * " + x + ")";
  if (name == "HardSigmoid") return "T.max(T.min(" + num(a) + " * " + x + " + " + num(b) + ", " + num(1) + "), " + zero + ")";
  if (name == "Elu") return "T.Select(" + x + " < " + zero + ", " + num(a) + " * (T.exp(" + x + ") - " + num(1) + "), " + x + ")";
  if (name == "Softsign") return x + " / (" + num(1) + " + T.fabs(" + x + "))";
  if (name == "Softplus") return "T.log(" + num(1) + " + T.exp(" + x + "))";
  LOOM_THROW(UnsupportedError) << "nn.recurrence: activation '" << name << "' is not supported";
}

struct Writer {
  std::ostringstream out;
  int depth = 0;
  void line(const std::string& s) { out << std::string(size_t(4 * depth), ' ') << s << "\n"; }
};

/// The widest vector (16, 8, 4, 2 or 1 lanes) that divides n.
int64_t lanesFor(int64_t n) {
  for (int64_t l : {16, 8, 4, 2})
    if (n % l == 0) return l;
  return 1;
}

} // namespace

std::string recurrenceScript(const graph::CallNode& call, const std::string& name) {
  auto shapeOf = [&](size_t i) { return call.args[i].type().as<graph::TensorTypeNode>()->staticShape(); };
  std::vector<int64_t> xs = shapeOf(0), rs = shapeOf(1);
  const int64_t T = xs[0], B = xs[1], D = xs[2], H = rs[1], GH = rs[2];
  const std::string cell = call.attrs.getString("cell"), dir = call.attrs.getString("direction");
  std::vector<std::string> acts = splitNames(call.attrs.getString("activations"));
  const std::vector<double>& ap = call.attrs.getFloats("activation_params");
  const double clip = call.attrs.getFloat("clip");
  const bool lbr = call.attrs.getInt("linear_before_reset") != 0, coupled = call.attrs.getInt("input_forget") != 0;
  const size_t perDir = acts.size() / size_t(D);
  auto buf = [](const std::string& n, std::vector<int64_t> s, const char* t = "float32") {
    std::string r = n + ": T.Buffer((";
    for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
    return r + (s.size() == 1 ? ",), \"" : "), \"") + t + "\")";
  };
  auto S = [](int64_t v) { return std::to_string(v); };
  auto cl = [&](const std::string& x) {
    return clip > 0 ? "T.max(T.min(" + x + ", " + num(clip) + "), " + num(-clip) + ")" : x;
  };
  Writer w;
  w.line("@T.prim_func");
  w.line("def " + name + "(" + buf("XP", {T, B, D, GH}) + ", " + buf("RT", {D, H, GH}) + ", " + buf("RB", {D, GH}) +
         ", " + buf("H0", {D, B, H}) + ", " + buf("C0", {D, B, H}) + ", " + buf("P", {D, 3 * H}) + ", " +
         buf("L", {B}, "int32") + ", " + buf("Y", {T, D, B, H}) + ", " + buf("YH", {D, B, H}) + ", " +
         buf("YC", {D, B, H}) + "):");
  w.depth = 1;
  w.line("T.func_attr({\"global_symbol\": \"" + name + "\", \"tir.noalias\": T.bool(True)})");
  w.line("with T.block(\"root\"):");
  w.depth = 2;
  w.line("G = T.alloc_buffer((" + S(B) + ", " + S(GH) + "), \"float32\")");
  w.line("ACC = T.alloc_buffer((128,), \"float32\", scope=\"local\")");
  if (cell == "gru") w.line("HG = T.alloc_buffer((" + S(B) + ", " + S(H) + "), \"float32\")");
  w.line("for t, d, b, j in T.grid(" + S(T) + ", " + S(D) + ", " + S(B) + ", " + S(H) + "):");
  w.line("    Y[t, d, b, j] = " + num(0));
  w.line("for d, b, j in T.grid(" + S(D) + ", " + S(B) + ", " + S(H) + "):");
  w.line("    YH[d, b, j] = H0[d, b, j]");
  w.line("    YC[d, b, j] = C0[d, b, j]");
  // dst[b, col0 + q] = init(q) + sum_k src(b, k) * RT[d, k, col0 + q] for q < n.
  // dst[b, col0 + q] = init(q) + sum_k src(b, k) * RT[d, k, col0 + q] for q < n: per batch row
  // and block of `vecs` vectors of `lanes` columns, the sums stay in a register accumulator (ACC,
  // unrolled) across k, so the step is FMA-bound rather than bound by store-to-load latency.
  auto matmul = [&](const std::string& dst, int64_t dstCol0, int64_t rtCol0, int64_t n, const std::string& src,
                    const std::function<std::string(const std::string&)>& init) {
    int64_t lanes = lanesFor(n), vecs = 1;
    while (vecs < 8 && (n / lanes) % (2 * vecs) == 0) vecs *= 2;
    std::string q = "qo * " + S(lanes * vecs) + " + u * " + S(lanes) + " + qi";
    std::string a = "ACC[u * " + S(lanes) + " + qi]";
    std::string inner = lanes > 1 ? "T.vectorized(" + S(lanes) + ")" : "range(1)";
    w.line("for qo in range(" + S(n / (lanes * vecs)) + "):");
    w.line("    for b in range(" + S(B) + "):");
    w.line("        for u in T.unroll(" + S(vecs) + "):");
    w.line("            for qi in " + inner + ":");
    w.line("                " + a + " = " + init(q));
    w.line("        for k in range(" + S(H) + "):");
    w.line("            for u in T.unroll(" + S(vecs) + "):");
    w.line("                for qi in " + inner + ":");
    w.line("                    " + a + " = " + a + " + " + src + " * RT[d_, k, " + S(rtCol0) + " + " + q + "]");
    w.line("        for u in T.unroll(" + S(vecs) + "):");
    w.line("            for qi in " + inner + ":");
    w.line("                " + dst + "[b, " + S(dstCol0) + " + " + q + "] = " + a);
  };
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = dir == "reverse" || (dir == "bidirectional" && d == 1);
    auto act = [&](size_t k, const std::string& x) {
      size_t i = size_t(d) * perDir + k;
      return activation(acts.at(i), ap.at(2 * i), ap.at(2 * i + 1), x);
    };
    // The time step of batch entry b at step s (reverse: from its own length down).
    const std::string tb = rev ? "T.min(T.max(L[b] - 1 - s, 0), " + S(T - 1) + ")" : "s";
    w.depth = 2;
    w.line("for s in range(" + S(T) + "):");
    w.depth = 3;
    w.line("d_: T.int32 = " + S(d));
    auto xp = [&](const std::string& col) { return "XP[" + tb + ", b, d_, " + col + "]"; };
    if (cell == "gru") {
      // z and r: x + h R^T + Rb; then the h gate's recurrent part apart (HG).
      matmul("G", 0, 0, 2 * H, "YH[d_, b, k]",
             [&](const std::string& q) { return xp(q) + " + RB[d_, " + q + "]"; });
      std::string src = lbr ? "YH[d_, b, k]"
                            : "YH[d_, b, k] * " + act(0, cl("G[b, " + S(H) + " + k]"));
      matmul("HG", 0, 2 * H, H, src, [&](const std::string& q) { return "RB[d_, " + S(2 * H) + " + " + q + "]"; });
    } else {
      matmul("G", 0, 0, GH, "YH[d_, b, k]",
             [&](const std::string& q) { return xp(q) + " + RB[d_, " + q + "]"; });
    }
    w.line("for b, j in T.grid(" + S(B) + ", " + S(H) + "):");
    w.depth = 4;
    w.line("if s < L[b]:");
    w.depth = 5;
    auto g = [&](int64_t gate) { return "G[b, " + S(gate * H) + " + j]"; };
    if (cell == "lstm") {
      w.line("c_prev: T.float32 = YC[d_, b, j]");
      w.line("i_t: T.float32 = " + act(0, cl(g(0) + " + P[d_, j] * c_prev")));
      w.line("f_t: T.float32 = " + (coupled ? num(1) + " - i_t" : act(0, cl(g(2) + " + P[d_, " + S(2 * H) + " + j] * c_prev"))));
      w.line("c_t: T.float32 = f_t * c_prev + i_t * " + act(1, cl(g(3))));
      w.line("o_t: T.float32 = " + act(0, cl(g(1) + " + P[d_, " + S(H) + " + j] * c_t")));
      w.line("h_t: T.float32 = o_t * " + act(2, "c_t"));
      w.line("YC[d_, b, j] = c_t");
    } else if (cell == "gru") {
      w.line("z_t: T.float32 = " + act(0, cl(g(0))));
      w.line("r_t: T.float32 = " + act(0, cl(g(1))));
      w.line("n_t: T.float32 = " + act(1, cl(xp(S(2 * H) + " + j") + " + " + (lbr ? "r_t * HG[b, j]" : "HG[b, j]"))));
      w.line("h_t: T.float32 = (" + num(1) + " - z_t) * n_t + z_t * YH[d_, b, j]");
    } else {
      w.line("h_t: T.float32 = " + act(0, cl(g(0))));
    }
    w.line("Y[" + tb + ", d_, b, j] = h_t");
    // The new state is written after every gate has read the old one: G (and HG) hold all the
    // step's reads of YH, so the update may write YH in place.
    w.line("YH[d_, b, j] = h_t");
  }
  return "# from tvm.script import tir as T\n\n" + w.out.str();
}

const LoopKernel* findLoopKernel(const std::string& op) {
  static const std::map<std::string, LoopKernel> kernels{
      {"nn.recurrence",
       [](const graph::CallNode& call, const std::string& name) {
         return tir::parseFunc(recurrenceScript(call, name), "<" + name + ">");
       }},
  };
  auto it = kernels.find(op);
  return it == kernels.end() ? nullptr : &it->second;
}

}  // namespace loom::topi::nn
