// Loop kernels of nn.ort_layer_norm, nn.ort_skip_layer_norm and nn.ort_softmax: ONNX Runtime's
// CPU arithmetic in its order (core/graph/qnn/OrtFloat.cpp says which), one row at a time. As
// TVMScript text: a running mean (Welford) and lane accumulators in a fixed order are serial
// loops with state, which a TE compute cannot pin down. Products that ORT rounds before an add are
// fenced (float_fence), so LLVM does not contract them into fused multiply-adds.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "core/graph/Op.h"
#include "core/tir/Parser.h"
#include "core/topi/nn/Recurrent.h"

namespace loom::topi::nn {

namespace {

struct Rows {
  std::vector<int64_t> shape;
  int64_t rows = 1, n = 1;
};

Rows rowsOf(const graph::CallNode& call) {
  Rows r;
  r.shape = call.args[0].type().as<graph::TensorTypeNode>()->staticShape();
  r.n = r.shape.back();
  for (size_t i = 0; i + 1 < r.shape.size(); ++i) r.rows *= r.shape[i];
  return r;
}

std::string bufDecl(const std::string& n, const std::vector<int64_t>& s) {
  std::string r = n + ": T.Buffer((";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",), \"float32\")" : "), \"float32\")");
}

/// The index text of element `h` of row `row` (an expression) of a tensor of shape `s`.
std::string at(const std::vector<int64_t>& s, const std::string& h, const std::string& row = "r") {
  std::string idx;
  int64_t inner = 1;
  std::vector<std::string> parts(s.size());
  for (size_t i = s.size() - 1; i-- > 0;) {
    parts[i] = (inner == 1 ? "(" + row + ")" : "(" + row + ") // " + std::to_string(inner)) + " % " + std::to_string(s[i]);
    inner *= s[i];
  }
  for (size_t i = 0; i + 1 < s.size(); ++i) idx += parts[i] + ", ";
  return "[" + idx + h + "]";
}

std::string header(const std::string& name, const std::vector<std::string>& params) {
  std::string h = "# from tvm.script import tir as T\n\n@T.prim_func\ndef " + name + "(";
  for (size_t i = 0; i < params.size(); ++i) h += (i ? ", " : "") + params[i];
  h += "):\n    T.func_attr({\"global_symbol\": \"" + name + "\", \"tir.noalias\": T.bool(True)})\n";
  return h;
}

/// The per-row temporaries, allocated inside the (parallel) row loop so that each task has its own:
/// SD (float64), ST (scalars), ACC (the 8 lane accumulators), W[slot, lane] (per-lane values).
std::string temps(int depth) {
  const std::string in(size_t(4 * depth), ' ');
  std::string t;
  for (auto [n, shape, dt] : {std::tuple{"SD", "(1,)", "float64"}, {"ST", "(8,)", "float32"}, {"ACC", "(8,)", "float32"},
                              {"W", "(8, 8)", "float32"}}) {
    std::string count = std::string(n) == "W" ? "64" : std::string(n) == "SD" ? "1" : "8";
    t += in + n + "_d = T.allocate([" + count + "], \"" + dt + "\", \"local\")\n";
    t += in + n + " = T.decl_buffer(" + shape + ", \"" + dt + "\", data=" + n + "_d)\n";
  }
  return t;
}

std::string layerNormScript(const graph::CallNode& call, const std::string& name) {
  Rows r = rowsOf(call);
  const std::string N = std::to_string(r.n), eps = float32Literal(float(call.attrs.getFloat("epsilon")));
  const std::string X = "X" + at(r.shape, "h");
  std::ostringstream o;
  o << header(name, {bufDecl("X", r.shape), bufDecl("G", {r.n}), bufDecl("B", {r.n}), bufDecl("Y", r.shape)});
  o << "    for r in T.parallel(" << r.rows << "):\n" << temps(3)
    << "            SD[0] = T.float64(0)\n"
    << "            for h in range(" << N << "):\n"
    << "                SD[0] = SD[0] + T.Cast(\"float64\", " << X << ")\n"
    << "            ST[0] = T.Cast(\"float32\", SD[0] / T.float64(" << N << "))\n"
    << "            for l in range(8):\n"
    << "                ACC[l] = T.float32(0)\n"
    << "            for h in range(" << N << "):\n"
    << "                ACC[h % 8] = T.fma(" << X << " - ST[0], " << X << " - ST[0], ACC[h % 8])\n"
    << "            ST[1] = ACC[0] + ACC[4] + (ACC[2] + ACC[6]) + (ACC[1] + ACC[5] + (ACC[3] + ACC[7]))\n"
    << "            ST[2] = T.float32(1) / T.sqrt(ST[1] / T.float32(" << N << ") + " << eps << ")\n"
    << "            for h in range(" << N << "):\n"
    << "                Y" << at(r.shape, "h") << " = T.fma(T.float_fence((" << X << " - ST[0]) * ST[2]), G[h], B[h])\n";
  return o.str();
}

std::string skipLayerNormScript(const graph::CallNode& call, const std::string& name) {
  // Welford's update is a serial chain per row (with a division): 8 rows at a time run in the 8
  // lanes of a vector (each lane its own row, so each row's arithmetic is unchanged), the rows
  // left over one at a time. W: 0 running mean, 1 M2, 2 v, 3 delta, 4 std.
  Rows r = rowsOf(call);
  const std::string N = std::to_string(r.n), eps = float32Literal(float(call.attrs.getFloat("epsilon")));
  std::ostringstream o;
  o << header(name, {bufDecl("A", r.shape), bufDecl("S", r.shape), bufDecl("G", {r.n}), bufDecl("B", {r.n}),
                     bufDecl("Y", r.shape)});
  auto rows = [&](const std::string& loop, const std::string& row, const std::string& lane, const std::string& vec,
                  int d) {
    const std::string in(size_t(4 * d), ' '), V = "(A" + at(r.shape, "h", row) + " + S" + at(r.shape, "h", row) + ")";
    auto w = [&](int k) { return "W[" + std::to_string(k) + ", " + lane + "]"; };
    o << in << loop << "\n" << temps(d + 1);
    o << in << "    for " << lane << " in " << vec << ":\n"
      << in << "        " << w(0) << " = T.float32(0)\n"
      << in << "        " << w(1) << " = T.float32(0)\n"
      << in << "    for h in range(" << N << "):\n"
      << in << "        for " << lane << " in " << vec << ":\n"
      << in << "            " << w(2) << " = " << V << "\n"
      << in << "            " << w(3) << " = " << w(2) << " - " << w(0) << "\n"
      << in << "            " << w(0) << " = " << w(0) << " + " << w(3) << " / T.Cast(\"float32\", h + 1)\n"
      << in << "            " << w(1) << " = " << w(1) << " + T.float_fence(" << w(3) << " * (" << w(2) << " - " << w(0)
      << "))\n"
      << in << "    for " << lane << " in " << vec << ":\n"
      << in << "        " << w(4) << " = T.sqrt(" << w(1) << " / T.float32(" << N << ") + " << eps << ")\n"
      << in << "    for h in range(" << N << "):\n"
      << in << "        for " << lane << " in " << vec << ":\n"
      << in << "            Y" << at(r.shape, "h", row) << " = T.float_fence((" << V << " - " << w(0) << ") / " << w(4)
      << " * G[h]) + B[h]\n";
  };
  if (r.rows >= 8) rows("for g in T.parallel(" + std::to_string(r.rows / 8) + "):", "g * 8 + l", "l", "T.vectorized(8)", 1);
  if (r.rows % 8)
    rows("for r in range(" + std::to_string(r.rows / 8 * 8) + ", " + std::to_string(r.rows) + "):", "r", "l",
         "range(1)", 1);
  return o.str();
}

std::string softmaxScript(const graph::CallNode& call, const std::string& name) {
  Rows r = rowsOf(call);
  const int64_t n = r.n, full = n / 8 * 8;
  const std::string N = std::to_string(n);
  // MLAS's sum-exp (TransKernelFma3.S, constants MlasExpConstants): v = max(x - max, lower);
  // m = fma(v, 1/ln2, 1.5 * 2^23) - 1.5 * 2^23; v -= m ln2 in two parts; a degree-6 polynomial;
  // times 2^m (0 for m = -127, as its exponent bits give). Element h goes to lane h % 8, as the
  // kernel's vector accumulator takes it: the full vectors of a row run in vector lanes, the last
  // partial one lane by lane. W: 0 v, 1 m, 2 p, 3 k = -m, 4 exp.
  const std::string bias = float32Literal(12582912.0);
  std::ostringstream o;
  o << header(name, {bufDecl("X", r.shape), bufDecl("Y", r.shape)});
  auto exps = [&](const std::string& h, const std::string& lane, int d) {
    const std::string in(size_t(4 * d), ' ');
    auto w = [&](int k) { return "W[" + std::to_string(k) + ", " + lane + "]"; };
    o << in << w(0) << " = T.max(X" << at(r.shape, h) << " - ST[0], " << float32Literal(-88.3762626647949) << ")\n"
      << in << w(1) << " = T.fma(" << w(0) << ", " << float32Literal(1.44269504088896341) << ", " << bias << ") - " << bias << "\n"
      << in << w(0) << " = T.fma(" << w(1) << ", " << float32Literal(-6.93145752e-1) << ", " << w(0) << ")\n"
      << in << w(0) << " = T.fma(" << w(1) << ", " << float32Literal(-1.42860677e-6) << ", " << w(0) << ")\n"
      << in << w(2) << " = " << float32Literal(0x1.694000p-10) << "\n";
    for (double c : {0x1.125edcp-7, 0x1.555b5ap-5, 0x1.555450p-3, 0x1.fffff6p-2, 1.0, 1.0})
      o << in << w(2) << " = T.fma(" << w(2) << ", " << w(0) << ", " << float32Literal(c) << ")\n";
    // 2^m for integral m in [-127, 0]: the product of 2^-(2^i) over the set bits of k = -m.
    o << in << w(3) << " = T.float32(0) - " << w(1) << "\n";
    std::string pw = "T.float32(1)";
    for (int i = 0; i < 7; ++i) {
      const std::string bit = "T.Cast(\"int32\", " + w(3) + ") // " + std::to_string(1 << i) + " % 2 == 1";
      pw = "(" + pw + " * T.Select(" + bit + ", " + float32Literal(std::ldexp(1.0, -(1 << i))) + ", T.float32(1)))";
    }
    o << in << w(4) << " = " << w(2) << " * T.Select(" << w(3) << " > T.float32(126.5), T.float32(0), " << pw << ")\n"
      << in << "Y" << at(r.shape, h) << " = " << w(4) << "\n"
      << in << "ACC[" << lane << "] = ACC[" << lane << "] + " << w(4) << "\n";
  };
  o << "    for r in T.parallel(" << r.rows << "):\n" << temps(3)
    << "            for l in T.vectorized(8):\n"
    << "                ACC[l] = X" << at(r.shape, "0") << "\n";
  if (full) {
    o << "            for k in range(" << full / 8 << "):\n"
      << "                for l in T.vectorized(8):\n"
      << "                    ACC[l] = T.max(ACC[l], X" << at(r.shape, "k * 8 + l") << ")\n";
  }
  o << "            ST[0] = T.max(T.max(T.max(ACC[0], ACC[1]), T.max(ACC[2], ACC[3])), T.max(T.max(ACC[4], ACC[5]), "
       "T.max(ACC[6], ACC[7])))\n";
  if (n > full)
    o << "            for h in range(" << full << ", " << N << "):\n"
      << "                ST[0] = T.max(ST[0], X" << at(r.shape, "h") << ")\n";
  o << "            for l in T.vectorized(8):\n"
    << "                ACC[l] = T.float32(0)\n";
  if (full) {
    o << "            for k in range(" << full / 8 << "):\n"
      << "                for l in T.vectorized(8):\n";
    exps("k * 8 + l", "l", 5);
  }
  if (n > full) {
    o << "            for j in range(" << n - full << "):\n";
    exps(std::to_string(full) + " + j", "j", 4);
  }
  o << "            ST[5] = T.float32(1) / (ACC[4] + ACC[5] + (ACC[6] + ACC[7]) + (ACC[0] + ACC[1] + (ACC[2] + ACC[3])))\n";
  if (full)
    o << "            for k in range(" << full / 8 << "):\n"
      << "                for l in T.vectorized(8):\n"
      << "                    Y" << at(r.shape, "k * 8 + l") << " = Y" << at(r.shape, "k * 8 + l") << " * ST[5]\n";
  if (n > full)
    o << "            for h in range(" << full << ", " << N << "):\n"
      << "                Y" << at(r.shape, "h") << " = Y" << at(r.shape, "h") << " * ST[5]\n";
  return o.str();
}

}  // namespace

std::string ortFloatScript(const graph::CallNode& call, const std::string& name) {
  const std::string& op = call.op->name;
  if (op == "nn.ort_layer_norm") return layerNormScript(call, name);
  if (op == "nn.ort_skip_layer_norm") return skipLayerNormScript(call, name);
  return softmaxScript(call, name);
}

}  // namespace loom::topi::nn
