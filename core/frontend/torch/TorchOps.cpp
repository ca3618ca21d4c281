// The aten:: op converters of the TorchScript importer: one entry per node kind (in-place forms
// `relu_` share their converter), each building graph ops (Relay-style names) like the ONNX ones.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/frontend/torch/TorchContext.h"
#include "core/graph/Op.h"
#include "core/support/Numeric.h"

namespace loom::frontend::tsi {

using namespace graph;

namespace {

using Table = std::unordered_map<std::string, Converter>;

int64_t product(const std::vector<int64_t>& s) {
  return std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
}

runtime::NDArray filledArray(const std::vector<int64_t>& shape, DataType t, double value) {
  runtime::NDArray a = runtime::NDArray::empty(shape, toDType(t));
  int64_t n = a.numel();
  // An integer fill goes through saturatingInt64 (fuzz_torch: a full() of 9.2e18 as int8).
  const int64_t whole = saturatingInt64(value);
  if (t == DataType::Float(32)) std::fill_n(a.as<float>(), n, float(value));
  else if (t == DataType::Float(64)) std::fill_n(a.as<double>(), n, value);
  else if (t == DataType::Int(64)) std::fill_n(a.as<int64_t>(), n, whole);
  else if (t == DataType::Int(32)) std::fill_n(a.as<int32_t>(), n, int32_t(whole));
  else if (t.isBool()) std::fill_n(a.as<uint8_t>(), n, uint8_t(value != 0));
  else if (t == DataType::UInt(8)) std::fill_n(a.as<uint8_t>(), n, uint8_t(whole));
  else if (t == DataType::Int(8)) std::fill_n(a.as<int8_t>(), n, int8_t(whole));
  else LOOM_THROW(UnsupportedError) << "a constant of " << t.str() << " is not supported";
  return a;
}

// ---- Type promotion (torch's rules: dimensioned tensors, then 0-d tensors, then Python numbers).

int category(DataType t) { return t.isBool() ? 0 : (t.isFloat() || t == DataType::BFloat16()) ? 2 : 1; }

struct Operand {
  Expr e;
  int level = 0; ///< 2: tensor with dims, 1: 0-d tensor, 0: Python number
  DataType t;
  double number = 0;
  bool isNumber = false;
};

Operand operand(const Context& c, int i) {
  Operand o;
  const TV& v = c.in(i);
  if (v.kind == TV::Kind::Tensor) {
    o.e = v.e;
    const TensorTypeNode& tt = c.tensorType(v.e);
    o.level = tt.ndim() > 0 ? 2 : 1;
    o.t = tt.dtype;
  } else {
    o.isNumber = true;
    o.number = c.real(i);
    o.t = v.kind == TV::Kind::Double ? DataType::Float(32) : v.kind == TV::Kind::Bool ? DataType::Bool() : DataType::Int(64);
  }
  return o;
}

DataType promote(const std::vector<Operand>& ops) {
  int cat = -1;
  for (const Operand& o : ops) cat = std::max(cat, category(o.t));
  int level = -1;
  for (const Operand& o : ops)
    if (category(o.t) == cat) level = std::max(level, o.level);
  DataType best;
  bool have = false;
  for (const Operand& o : ops)
    if (category(o.t) == cat && o.level == level && (!have || o.t.bits() > best.bits())) {
      best = o.t;
      have = true;
    }
  return best;
}

Expr asType(const Context& c, const Operand& o, DataType t) {
  if (o.isNumber) return c.scalar(o.number, t);
  return c.cast(o.e, t);
}

/// Both operands of a binary op in their promoted type (at least `minCategory`: 2 for true division).
std::pair<Expr, Expr> promoted(const Context& c, int a, int b, int minCategory = 0) {
  Operand x = operand(c, a), y = operand(c, b);
  DataType t = promote({x, y});
  if (category(t) < minCategory) t = DataType::Float(32);
  return {asType(c, x, t), asType(c, y, t)};
}

Converter binary(const std::string& op, int minCategory = 0) {
  return [op, minCategory](Context& c) {
    auto [a, b] = promoted(c, 0, 1, minCategory);
    return Outs{TV::tensor(c.call(op, {a, b}))};
  };
}

Converter comparison(const std::string& op) {
  return [op](Context& c) {
    auto [a, b] = promoted(c, 0, 1);
    return Outs{TV::tensor(c.call(op, {a, b}))};
  };
}

/// add/sub with alpha: a + alpha * b.
Converter addSub(const std::string& op, bool reverse) {
  return [op, reverse](Context& c) {
    auto [a, b] = promoted(c, 0, 1);
    if (reverse) std::swap(a, b);
    if (c.numInputs() > 2 && !c.isNone(2)) {
      double alpha = c.real(2);
      Expr& scaled = reverse ? a : b;
      if (alpha != 1) scaled = c.call("multiply", {scaled, c.scalar(alpha, c.dtypeOf(scaled))});
    }
    return Outs{TV::tensor(c.call(op, {a, b}))};
  };
}

Outs divide(Context& c) {
  std::string mode = c.numInputs() > 2 && !c.isNone(2) ? c.string(2) : "";
  auto [a, b] = promoted(c, 0, 1, mode.empty() ? 2 : 0);
  DataType t = c.dtypeOf(a);
  if (mode.empty()) return {TV::tensor(c.call("divide", {a, b}))};
  if (category(t) == 2) {
    Expr q = c.call("divide", {a, b});
    if (mode == "floor") return {TV::tensor(c.call("floor", {q}))};
    Expr mag = c.call("floor", {c.call("abs", {q})});
    return {TV::tensor(c.call("multiply", {c.call("sign", {q}), mag}))};
  }
  if (mode == "trunc") return {TV::tensor(c.call("divide", {a, b}))};
  // Integer floor division: (a - floor_mod(a, b)) / b is exact.
  Expr r = c.call("floor_mod", {a, b});
  return {TV::tensor(c.call("divide", {c.call("subtract", {a, r}), b}))};
}

Converter unary(const std::string& op) {
  return [op](Context& c) { return Outs{TV::tensor(c.call(op, {c.tensor(0)}))}; };
}

Expr floatTensor(const Context& c, int i) {
  Expr x = c.tensor(i);
  if (category(c.dtypeOf(x)) != 2) x = c.cast(x, DataType::Float(32));
  return x;
}

Converter floatUnary(const std::string& op) {
  return [op](Context& c) { return Outs{TV::tensor(c.call(op, {floatTensor(c, 0)}))}; };
}

Expr clip(const Context& c, const Expr& x, double lo, double hi) {
  return c.call("clip", {x}, {{"a_min", lo}, {"a_max", hi}});
}

Outs clamp(Context& c) {
  double inf = std::numeric_limits<double>::infinity();
  double lo = c.isNone(1) ? -inf : c.real(1), hi = c.numInputs() < 3 || c.isNone(2) ? inf : c.real(2);
  return {TV::tensor(clip(c, c.tensor(0), lo, hi))};
}

Expr hardSigmoidOf(const Context& c, const Expr& x) {
  DataType t = c.dtypeOf(x);
  Expr y = c.call("add", {c.call("multiply", {x, c.scalar(1.0 / 6.0, t)}), c.scalar(0.5, t)});
  return clip(c, y, 0, 1);
}

/// x * (erf(x / sqrt(2)) + 1) * 0.5, in the order torch.onnx exports it (so both fuse alike).
Expr erfGelu(const Context& c, const Expr& x) {
  DataType t = c.dtypeOf(x);
  Expr e = c.call("add", {c.call("erf", {c.call("divide", {x, c.scalar(M_SQRT2, t)})}), c.scalar(1, t)});
  return c.call("multiply", {c.call("multiply", {x, e}), c.scalar(0.5, t)});
}

Outs gelu(Context& c) {
  Expr x = floatTensor(c, 0);
  DataType t = c.dtypeOf(x);
  std::string approx = c.numInputs() > 1 ? c.string(1) : "none";
  if (approx != "tanh") return {TV::tensor(erfGelu(c, x))};
  Expr half = c.call("multiply", {x, c.scalar(0.5, t)});
  Expr inner;
  if (approx == "tanh") {
    Expr x3 = c.call("multiply", {c.call("multiply", {x, x}), x});
    Expr s = c.call("add", {x, c.call("multiply", {x3, c.scalar(0.044715, t)})});
    inner = c.call("tanh", {c.call("multiply", {s, c.scalar(std::sqrt(2.0 / M_PI), t)})});
  } else {
    inner = c.call("erf", {c.call("multiply", {x, c.scalar(M_SQRT1_2, t)})});
  }
  return {TV::tensor(c.call("multiply", {half, c.call("add", {inner, c.scalar(1, t)})}))};
}

// ---- Convolution, linear algebra, normalization.

Outs convolution(Context& c, const Expr& x0, const Expr& w0, int biasIdx, std::vector<int64_t> stride,
                 std::vector<int64_t> pad, std::vector<int64_t> dil, bool transposed,
                 std::vector<int64_t> outPad, int64_t groups) {
  Expr x = x0, w = w0;
  std::vector<int64_t> xs = c.shapeOf(x), ws = c.shapeOf(w);
  if (xs.size() != 3 && xs.size() != 4)
    c.fail("only 1-D and 2-D convolutions are supported (input rank " + std::to_string(xs.size()) + ")");
  if (ws.size() != xs.size())
    c.fail("the weight has rank " + std::to_string(ws.size()) + ", the input rank " + std::to_string(xs.size()));
  bool oneD = xs.size() == 3;
  size_t n = xs.size() - 2;
  auto fit = [&](std::vector<int64_t> v, int64_t def) {
    if (v.empty()) v.assign(n, def);
    if (v.size() == 1 && n > 1) v.assign(n, v[0]);
    if (v.size() != n) c.fail("a convolution parameter has " + std::to_string(v.size()) + " entries, expected " + std::to_string(n));
    if (oneD) v.insert(v.begin(), def);
    return v;
  };
  stride = fit(stride, 1);
  pad = fit(pad, 0);
  dil = fit(dil, 1);
  outPad = fit(outPad, 0);
  if (oneD) {
    x = c.reshape(x, {xs[0], xs[1], 1, xs[2]});
    w = c.reshape(w, {ws[0], ws[1], 1, ws[2]});
  }
  Attrs a{{"strides", stride}, {"padding", std::vector<int64_t>{pad[0], pad[1], pad[0], pad[1]}}, {"dilation", dil}, {"groups", groups}};
  Expr y;
  if (transposed) {
    a.set("output_padding", outPad);
    y = c.call("nn.conv2d_transpose", {x, w}, a);
  } else {
    y = c.call("nn.conv2d", {x, w}, a);
  }
  if (!c.isNone(biasIdx)) y = c.call("nn.bias_add", {y, c.tensor(biasIdx)}, {{"axis", int64_t(1)}});
  if (oneD) {
    std::vector<int64_t> ys = c.shapeOf(y);
    y = c.reshape(y, {ys[0], ys[1], ys[3]});
  }
  return {TV::tensor(y)};
}

Outs underscoreConvolution(Context& c) {
  // (input, weight, bias, stride, padding, dilation, transposed, output_padding, groups, ...)
  return convolution(c, c.tensor(0), c.tensor(1), 2, c.ints(3), c.ints(4), c.ints(5), c.boolean(6), c.ints(7),
                     c.integer(8));
}

Outs convNd(Context& c) {
  // (input, weight, bias, stride, padding, dilation, groups); padding may be "same" / "valid".
  std::vector<int64_t> pad;
  std::vector<int64_t> stride = c.ints(3), dil = c.ints(5);
  if (c.in(4).kind == TV::Kind::String) {
    std::string mode = c.string(4);
    std::vector<int64_t> ws = c.shapeOf(c.tensor(1));
    if (ws.size() != 3 && ws.size() != 4) c.fail("padding='" + mode + "' needs a weight of rank 3 or 4, got rank " + std::to_string(ws.size()));
    size_t n = ws.size() - 2;
    if (dil.empty()) dil.assign(n, 1);
    if (dil.size() == 1) dil.assign(n, dil[0]);
    if (dil.size() != n) c.fail("dilation has " + std::to_string(dil.size()) + " entries, expected " + std::to_string(n));
    for (size_t i = 0; i < n; ++i) {
      int64_t total = mode == "same" ? dil[i] * (ws[2 + i] - 1) : 0;
      if (total % 2) c.fail("padding='same' with an even kernel pads unevenly, which is not supported");
      pad.push_back(total / 2);
    }
  } else {
    pad = c.ints(4);
  }
  return convolution(c, c.tensor(0), c.tensor(1), 2, stride, pad, dil, false, {}, c.integer(6));
}

Outs convTransposeNd(Context& c) {
  // (input, weight, bias, stride, padding, output_padding, groups, dilation)
  return convolution(c, c.tensor(0), c.tensor(1), 2, c.ints(3), c.ints(4), c.ints(7), true, c.ints(5), c.integer(6));
}

Expr transpose2(const Context& c, const Expr& w) {
  return c.call("transpose", {w}, {{"axes", std::vector<int64_t>{1, 0}}});
}

Expr matmulOf(const Context& c, const Expr& a, const Expr& b) {
  size_t ra = c.tensorType(a).ndim(), rb = c.tensorType(b).ndim();
  if (rb == 2 && ra >= 2) return c.call("nn.dense", {a, transpose2(c, b)});
  return c.call("nn.matmul", {a, b});
}

Outs linear(Context& c) {
  Expr y = c.call("nn.dense", {floatTensor(c, 0), c.tensor(1)});
  if (!c.isNone(2)) y = c.call("add", {y, c.tensor(2)});
  return {TV::tensor(y)};
}

Outs addmm(Context& c) {
  // beta * input + alpha * (m1 @ m2); also baddbmm for batches.
  Expr prod = matmulOf(c, c.tensor(1), c.tensor(2));
  DataType t = c.dtypeOf(prod);
  double beta = c.numInputs() > 3 ? c.real(3) : 1.0, alpha = c.numInputs() > 4 ? c.real(4) : 1.0;
  if (alpha != 1) prod = c.call("multiply", {prod, c.scalar(alpha, t)});
  Expr bias = c.tensor(0);
  if (beta == 0) return {TV::tensor(prod)};
  if (beta != 1) bias = c.call("multiply", {bias, c.scalar(beta, t)});
  return {TV::tensor(c.call("add", {prod, bias}))};
}

Expr onesOrTensor(const Context& c, int i, const std::vector<int64_t>& shape, DataType t, double fill) {
  if (!c.isNone(i)) return c.tensor(i);
  return makeConstant(filledArray(shape, t, fill));
}

Outs batchNorm(Context& c) {
  // (input, weight, bias, running_mean, running_var, training, momentum, eps, cudnn_enabled)
  Expr x = c.tensor(0);
  if (c.boolean(5)) c.fail("training-mode batch_norm (batch statistics) is not supported; call model.eval() before saving");
  if (c.isNone(3) || c.isNone(4)) c.fail("batch_norm without running statistics is not supported");
  std::vector<int64_t> cs = c.shapeOf(c.tensor(3));
  DataType t = c.dtypeOf(x);
  Expr y = c.call("nn.batch_norm", {x, onesOrTensor(c, 1, cs, t, 1), onesOrTensor(c, 2, cs, t, 0), c.tensor(3), c.tensor(4)},
                  {{"epsilon", c.real(7)}});
  return {TV::tensor(y)};
}

Outs layerNorm(Context& c) {
  // (input, normalized_shape, weight, bias, eps, cudnn_enable)
  Expr x = c.tensor(0);
  std::vector<int64_t> ns = c.ints(1), xs = c.shapeOf(x);
  auto str = [](const std::vector<int64_t>& v) {
    std::string out;
    for (int64_t d : v) out += (out.empty() ? "" : ", ") + std::to_string(d);
    return "[" + out + "]";
  };
  // torch's rule: normalized_shape is the input's last dims (the defaults are filled at its shape).
  if (ns.empty() || ns.size() > xs.size() || !std::equal(ns.begin(), ns.end(), xs.end() - ptrdiff_t(ns.size())))
    c.fail("normalized_shape " + str(ns) + " is not the last dims of the input's shape " + str(xs));
  DataType t = c.dtypeOf(x);
  Expr y = c.call("nn.layer_norm", {x, onesOrTensor(c, 2, ns, t, 1), onesOrTensor(c, 3, ns, t, 0)},
                  {{"axis", -int64_t(ns.size())}, {"epsilon", c.real(4)}});
  if (ns.size() != 1) {
    // nn.layer_norm normalizes from `axis` to the end; that is what normalized_shape means.
  }
  return {TV::tensor(y)};
}

Outs groupNorm(Context& c) {
  // (input, num_groups, weight, bias, eps, cudnn_enabled): normalize over (C/G, spatial) per group.
  Expr x = c.tensor(0);
  std::vector<int64_t> xs = c.shapeOf(x);
  int64_t g = c.integer(1);
  if (xs.size() < 2 || g <= 0 || xs[1] % g != 0)
    c.fail("group_norm: " + std::to_string(xs.size() > 1 ? xs[1] : 0) + " channels do not split into " + std::to_string(g) + " groups");
  DataType t = c.dtypeOf(x);
  double eps = c.real(4);
  int64_t inner = product(xs) / (xs[0] * g);
  Expr r = c.reshape(x, {xs[0], g, inner});
  Attrs keep{{"axis", std::vector<int64_t>{2}}, {"keepdims", int64_t(1)}};
  Expr mean = c.call("mean", {r}, keep);
  Expr d = c.call("subtract", {r, mean});
  Expr var = c.call("mean", {c.call("multiply", {d, d})}, keep);
  Expr norm = c.call("multiply", {d, c.call("rsqrt", {c.call("add", {var, c.scalar(eps, t)})})});
  Expr y = c.reshape(norm, xs);
  std::vector<int64_t> cshape{xs[1]};
  for (size_t i = 2; i < xs.size(); ++i) cshape.push_back(1);
  if (!c.isNone(2)) y = c.call("multiply", {y, c.reshape(c.tensor(2), cshape)});
  if (!c.isNone(3)) y = c.call("add", {y, c.reshape(c.tensor(3), cshape)});
  return {TV::tensor(y)};
}

Outs softmax(Context& c, bool log) {
  Expr x = c.tensor(0);
  if (c.numInputs() > 2 && !c.isNone(2)) x = c.cast(x, c.dtypeArg(2, DataType::Float(32)));
  else x = floatTensor(c, 0);
  return {TV::tensor(c.call(log ? "nn.log_softmax" : "nn.softmax", {x}, {{"axis", c.integer(1)}}))};
}

// ---- Pooling and resizing.

Expr to4d(const Context& c, const Expr& x, bool* oneD) {
  std::vector<int64_t> s = c.shapeOf(x);
  *oneD = s.size() == 3;
  if (s.size() != 3 && s.size() != 4) c.fail("pooling needs an (N, C, L) or (N, C, H, W) input");
  return *oneD ? c.reshape(x, {s[0], s[1], 1, s[2]}) : x;
}

Expr from4d(const Context& c, const Expr& y, bool oneD) {
  if (!oneD) return y;
  std::vector<int64_t> s = c.shapeOf(y);
  return c.reshape(y, {s[0], s[1], s[3]});
}

Outs pool(Context& c, bool isMax, size_t n) {
  // max: (x, kernel, stride, padding, dilation, ceil_mode); avg: (x, kernel, stride, padding,
  // ceil_mode, count_include_pad, divisor_override)
  bool oneD = false;
  Expr x = to4d(c, c.tensor(0), &oneD);
  auto get = [&](int i, int64_t def) {
    std::vector<int64_t> v = c.ints(i);
    if (v.empty()) return std::vector<int64_t>();
    if (v.size() == 1) v.assign(n, v[0]);
    if (v.size() != n) c.fail("pooling parameter " + std::to_string(i) + " has " + std::to_string(v.size()) + " entries");
    if (oneD) v.insert(v.begin(), def);
    return v;
  };
  if (oneD != (n == 1))
    c.fail(std::to_string(n) + "-D pooling of a rank-" + std::to_string(oneD ? 3 : 4) + " input (unbatched inputs are not supported)");
  std::vector<int64_t> k = get(1, 1), s = get(2, 1), p = get(3, 0);
  if (k.empty()) c.fail("pooling needs a kernel_size");
  if (s.empty()) s = k;
  if (p.empty()) p = {0, 0};
  std::vector<int64_t> d = isMax ? get(4, 1) : std::vector<int64_t>{1, 1};
  if (d.empty()) d = {1, 1};
  bool ceil = c.boolean(isMax ? 5 : 4);
  Attrs a{{"pool_size", k}, {"strides", s}, {"padding", std::vector<int64_t>{p[0], p[1], p[0], p[1]}}, {"dilation", d},
          {"ceil_mode", int64_t(ceil)}};
  if (!isMax) {
    a.set("count_include_pad", int64_t(c.boolean(5)));
    if (c.numInputs() > 6 && !c.isNone(6)) c.fail("avg_pool with divisor_override is not supported");
  }
  Expr y = c.call(isMax ? "nn.max_pool2d" : "nn.avg_pool2d", {x}, a);
  Outs out{TV::tensor(from4d(c, y, oneD))};
  return out;
}

Outs adaptivePool(Context& c, bool isMax) {
  bool oneD = false;
  Expr x = to4d(c, c.tensor(0), &oneD);
  std::vector<int64_t> xs = c.shapeOf(x);
  // output_size: ints, with None for "the input's size" (a list of ints and Nones).
  constexpr int64_t kInputSize = std::numeric_limits<int64_t>::min();  // a None entry
  std::vector<int64_t> out;
  if (c.in(1).kind == TV::Kind::List || c.in(1).kind == TV::Kind::Tuple) {
    std::vector<TV> items = c.list(1);
    for (size_t i = 0; i < items.size(); ++i) {
      if (items[i].kind == TV::Kind::None) out.push_back(kInputSize);
      else if (items[i].kind == TV::Kind::Int) out.push_back(items[i].i);
      else c.fail("output_size holds " + std::string(items[i].kind == TV::Kind::Tensor ? "a tensor" : "a non-int"));
    }
  } else {
    out = c.ints(1);
  }
  if (out.size() == 1 && !oneD) out.assign(2, out[0]);
  if (oneD) out.insert(out.begin(), 1);
  if (out.size() != 2)
    c.fail("output_size has " + std::to_string(out.size() - (oneD ? 1 : 0)) + " entries for a " + (oneD ? "1-D" : "2-D") + " pool");
  for (size_t i = 0; i < 2; ++i) {
    if (out[i] == kInputSize) out[i] = xs[2 + i];
    if (out[i] <= 0) c.fail("output_size " + std::to_string(out[i]) + " must be positive");
  }
  Expr y;
  if (out[0] == 1 && out[1] == 1) {
    y = c.call(isMax ? "nn.global_max_pool2d" : "nn.global_avg_pool2d", {x});
  } else {
    if (xs[2] % out[0] != 0 || xs[3] % out[1] != 0)
      c.fail("adaptive pooling from " + std::to_string(xs[2]) + "x" + std::to_string(xs[3]) + " to " + std::to_string(out[0]) +
             "x" + std::to_string(out[1]) + " has uneven windows, which is not supported");
    std::vector<int64_t> k{xs[2] / out[0], xs[3] / out[1]};
    Attrs a{{"pool_size", k}, {"strides", k}, {"padding", std::vector<int64_t>{0, 0, 0, 0}}};
    if (!isMax) a.set("count_include_pad", int64_t(0));
    y = c.call(isMax ? "nn.max_pool2d" : "nn.avg_pool2d", {x}, a);
  }
  Outs o{TV::tensor(from4d(c, y, oneD))};
  if (isMax) o.push_back(TV::none()); // the indices output; an error if used
  return o;
}

/// upsample_nearest2d / upsample_bilinear2d, both overloads (output_size + scales_h/w, or
/// output_size? + scale_factors?).
Outs upsample(Context& c, bool bilinear) {
  Expr x = c.tensor(0);
  std::vector<int64_t> xs = c.shapeOf(x);
  if (xs.size() != 4) c.fail("only 4-D (NCHW) upsampling is supported");
  bool alignCorners = bilinear && c.boolean(2);
  int scalesAt = bilinear ? 3 : 2;
  bool vec = c.numInputs() == scalesAt + 1; // the scale_factors overload
  std::vector<int64_t> size;
  std::vector<double> scales;
  if (!c.isNone(1)) size = c.ints(1);
  if (vec && !c.isNone(scalesAt)) {
    for (const TV& s : c.list(scalesAt)) scales.push_back(s.number());
  } else if (!vec && !c.isNone(scalesAt) && !c.isNone(scalesAt + 1)) {
    scales = {c.real(scalesAt), c.real(scalesAt + 1)};
  }
  if (size.empty()) {
    if (scales.size() != 2) c.fail("needs an output size or two scale factors");
    for (int i = 0; i < 2; ++i) {
      // Checked before the cast: a NaN, negative or out-of-range size is undefined behaviour as an
      // int64 (fuzz_torch: a scale of 1.8e305).
      const std::optional<int64_t> out = wholeInt64(std::floor(double(xs[2 + i]) * scales[i]));
      if (!out || *out < 0)
        c.fail("scale factor " + std::to_string(scales[i]) + " of dim " + std::to_string(2 + i) + " (size " +
               std::to_string(xs[2 + i]) + ") gives no valid output size");
      size.push_back(*out);
    }
  }
  if (size.size() != 2) c.fail("the output size must have 2 entries");
  // As PyTorch refuses it ("Input and output sizes should be greater than 0").
  if (size[0] < 1 || size[1] < 1)
    c.fail("the output size [" + std::to_string(size[0]) + ", " + std::to_string(size[1]) + "] of a " +
           std::to_string(xs[2]) + " x " + std::to_string(xs[3]) + " input is empty (sizes must be at least 1)");
  std::string ctm = bilinear ? (alignCorners ? "align_corners" : "pytorch_half_pixel") : "asymmetric";
  Expr y = c.call("image.resize2d", {x},
                  {{"size", size},
                   {"method", std::string(bilinear ? "linear" : "nearest_neighbor")},
                   {"coordinate_transformation_mode", ctm},
                   {"rounding_method", std::string(bilinear ? "round_prefer_floor" : "floor")},
                   {"scales", alignCorners ? std::vector<double>{} : scales}});
  return {TV::tensor(y)};
}

// ---- Shapes, slicing, joining.

std::vector<int64_t> resolveShape(const Context& c, std::vector<int64_t> target, int64_t total) {
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (infer >= 0) c.fail("the shape has more than one -1");
      infer = int64_t(i);
    } else if (target[i] < 0) {
      c.fail("invalid shape entry " + std::to_string(target[i]));
    } else if (__builtin_mul_overflow(known, target[i], &known)) {
      // A fuzzed view shape (fuzz_torch): its product does not fit int64.
      c.fail("the shape's element count overflows int64");
    }
  }
  if (infer >= 0) {
    if (known == 0 || total % known != 0) c.fail("cannot infer the -1 dimension");
    target[size_t(infer)] = total / known;
  }
  if (product(target) != total) c.fail("cannot view " + std::to_string(total) + " elements as the requested shape");
  return target;
}

Outs view(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  return {TV::tensor(c.reshape(x, resolveShape(c, c.ints(1), product(s))))};
}

Outs flatten(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t r = int64_t(s.size());
  if (r == 0) return {TV::tensor(c.reshape(x, {1}))};
  int64_t start = normDim(c, c.numInputs() > 1 ? c.integer(1) : 0, r), end = normDim(c, c.numInputs() > 2 ? c.integer(2) : -1, r);
  std::vector<int64_t> out(s.begin(), s.begin() + start);
  int64_t m = 1;
  for (int64_t i = start; i <= end; ++i) m *= s[size_t(i)];
  out.push_back(m);
  out.insert(out.end(), s.begin() + end + 1, s.end());
  return {TV::tensor(c.reshape(x, out))};
}

Outs unflatten(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t d = normShapeDim(c, c.integer(1), int64_t(s.size()));
  std::vector<int64_t> sizes = resolveShape(c, c.ints(2), s[size_t(d)]);
  std::vector<int64_t> out(s.begin(), s.begin() + d);
  out.insert(out.end(), sizes.begin(), sizes.end());
  out.insert(out.end(), s.begin() + d + 1, s.end());
  return {TV::tensor(c.reshape(x, out))};
}

Outs transpose(Context& c) {
  Expr x = c.tensor(0);
  int64_t r = int64_t(c.tensorType(x).ndim());
  if (r < 2) return {TV::tensor(x)};
  int64_t a = c.numInputs() > 1 ? normDim(c, c.integer(1), r) : 0, b = c.numInputs() > 2 ? normDim(c, c.integer(2), r) : 1;
  std::vector<int64_t> perm(static_cast<size_t>(r));
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[size_t(a)], perm[size_t(b)]);
  return {TV::tensor(c.call("transpose", {x}, {{"axes", perm}}))};
}

Outs permute(Context& c) {
  Expr x = c.tensor(0);
  int64_t r = int64_t(c.tensorType(x).ndim());
  std::vector<int64_t> p = c.ints(1);
  for (int64_t& d : p) d = normDim(c, d, r);
  return {TV::tensor(c.call("transpose", {x}, {{"axes", p}}))};
}

Outs unsqueeze(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t d = normDim(c, c.integer(1), int64_t(s.size()) + 1);
  s.insert(s.begin() + d, 1);
  return {TV::tensor(c.reshape(x, s))};
}

Outs squeeze(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x), out;
  if (c.numInputs() > 1) {
    int64_t d = normDim(c, c.integer(1), int64_t(s.size()));
    for (size_t i = 0; i < s.size(); ++i)
      if (int64_t(i) != d || s[i] != 1) out.push_back(s[i]);
  } else {
    for (int64_t v : s)
      if (v != 1) out.push_back(v);
  }
  return {TV::tensor(c.reshape(x, out))};
}

Outs expand(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x), target = c.ints(1);
  if (target.size() < s.size()) c.fail("expand to fewer dimensions than the tensor has");
  size_t off = target.size() - s.size();
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == -1) {
      if (i < off) c.fail("-1 in a new leading dimension of expand");
      target[i] = s[i - off];
    } else if (i >= off && s[i - off] != 1 && s[i - off] != target[i]) {
      c.fail("cannot expand dimension of size " + std::to_string(s[i - off]) + " to " + std::to_string(target[i]));
    }
  }
  return {TV::tensor(target == s ? x : c.call("broadcast_to", {x}, {{"shape", target}}))};
}

Outs repeat(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x), reps = c.ints(1);
  if (reps.size() < s.size()) c.fail("repeat needs at least as many repeats as the tensor has dimensions");
  std::vector<int64_t> padded(reps.size() - s.size(), 1);
  padded.insert(padded.end(), s.begin(), s.end());
  return {TV::tensor(c.call("tile", {c.reshape(x, padded)}, {{"reps", reps}}))};
}

constexpr int64_t kBig = int64_t(1) << 40;

Expr sliceOf(const Context& c, const Expr& x, int64_t dim, int64_t begin, int64_t end, int64_t step) {
  begin = std::clamp(begin, -kBig, kBig);
  end = std::clamp(end, -kBig, kBig);
  return c.call("strided_slice", {x},
                {{"begin", std::vector<int64_t>{begin}}, {"end", std::vector<int64_t>{end}},
                 {"strides", std::vector<int64_t>{step}}, {"axes", std::vector<int64_t>{dim}}});
}

Outs slice(Context& c) {
  // (x, dim, start?, end?, step) on tensors; (list, start?, end?, step) on lists.
  if (c.in(0).kind == TV::Kind::List) {
    std::vector<TV> v = c.list(0);
    int64_t n = int64_t(v.size());
    int64_t b = c.isNone(1) ? 0 : c.integer(1), e = c.isNone(2) ? n : c.integer(2), st = c.numInputs() > 3 ? c.integer(3) : 1;
    if (b < 0) b += n;
    if (e < 0) e += n;
    b = std::clamp<int64_t>(b, 0, n);
    e = std::clamp<int64_t>(e, 0, n);
    std::vector<TV> out;
    for (int64_t i = b; i < e; i += std::max<int64_t>(st, 1)) out.push_back(v[size_t(i)]);
    return {TV::list(std::move(out))};
  }
  Expr x = c.tensor(0);
  int64_t r = int64_t(c.tensorType(x).ndim());
  int64_t dim = normShapeDim(c, c.integer(1), r);
  int64_t b = c.isNone(2) ? 0 : c.integer(2), e = c.isNone(3) ? kBig : c.integer(3), st = c.integer(4);
  if (st <= 0) c.fail("slice step must be positive");
  if (b == 0 && e >= kBig && st == 1) return {TV::tensor(x)};
  return {TV::tensor(sliceOf(c, x, dim, b, e, st))};
}

Outs select(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t dim = normShapeDim(c, c.integer(1), int64_t(s.size()));
  int64_t i = c.integer(2);
  if (i < 0) i += s[size_t(dim)];
  if (i < 0 || i >= s[size_t(dim)]) c.fail("index " + std::to_string(c.integer(2)) + " is out of range for size " + std::to_string(s[size_t(dim)]));
  Expr y = sliceOf(c, x, dim, i, i + 1, 1);
  s.erase(s.begin() + dim);
  return {TV::tensor(c.reshape(y, s))};
}

Outs cat(Context& c) {
  std::vector<Expr> args;
  for (const TV& v : c.list(0)) {
    if (v.kind != TV::Kind::Tensor) c.fail("cat of a non-tensor");
    args.push_back(v.e);
  }
  if (args.empty()) c.fail("cat of an empty list");
  int64_t dim = c.numInputs() > 1 ? c.integer(1) : 0;
  if (args.size() == 1) return {TV::tensor(args[0])};
  return {TV::tensor(c.call("concatenate", args, {{"axis", dim}}))};
}

Outs stack(Context& c) {
  std::vector<Expr> args;
  for (const TV& v : c.list(0)) {
    if (v.kind != TV::Kind::Tensor) c.fail("stack of a non-tensor");
    std::vector<int64_t> s = c.shapeOf(v.e);
    int64_t d = normDim(c, c.numInputs() > 1 ? c.integer(1) : 0, int64_t(s.size()) + 1);
    s.insert(s.begin() + d, 1);
    args.push_back(c.reshape(v.e, s));
  }
  if (args.empty()) c.fail("stack of an empty list");
  if (args.size() == 1) return {TV::tensor(args[0])};
  return {TV::tensor(c.call("concatenate", args, {{"axis", c.integer(1)}}))};
}

Outs splitSizes(Context& c, const Expr& x, int64_t dim, const std::vector<int64_t>& sizes) {
  std::vector<TV> parts;
  if (sizes.size() == 1) {
    parts.push_back(TV::tensor(x));
  } else {
    // One strided_slice per part (as TVM's from_pytorch and torch.onnx export chunk): each part
    // fuses into its own consumer.
    int64_t at = 0;
    for (int64_t n : sizes) {
      parts.push_back(TV::tensor(sliceOf(c, x, dim, at, at + n, 1)));
      at += n;
    }
  }
  return {TV::list(std::move(parts))};
}

Outs split(Context& c) {
  // split(x, int split_size | int[] sizes, dim); split_with_sizes(x, sizes, dim)
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t dim = normShapeDim(c, c.numInputs() > 2 ? c.integer(2) : 0, int64_t(s.size()));
  std::vector<int64_t> sizes;
  if (c.in(1).kind == TV::Kind::Int) {
    int64_t each = c.integer(1), n = s[size_t(dim)];
    if (each <= 0) c.fail("split size must be positive");
    for (int64_t at = 0; at < n; at += each) sizes.push_back(std::min(each, n - at));
  } else {
    sizes = c.ints(1);
    if (std::accumulate(sizes.begin(), sizes.end(), int64_t(0)) != s[size_t(dim)]) c.fail("split sizes do not add up to the dimension");
  }
  return splitSizes(c, x, dim, sizes);
}

Outs chunk(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t chunks = c.integer(1);
  int64_t dim = normShapeDim(c, c.numInputs() > 2 ? c.integer(2) : 0, int64_t(s.size()));
  if (chunks <= 0) c.fail("chunks must be positive");
  int64_t n = s[size_t(dim)], each = n == 0 ? 1 : (n - 1) / chunks + 1;  // ceil(n / chunks), without overflow
  std::vector<int64_t> sizes;
  for (int64_t at = 0; at < n; at += each) sizes.push_back(std::min(each, n - at));
  return splitSizes(c, x, dim, sizes);
}

Outs unbind(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t dim = normShapeDim(c, c.numInputs() > 1 ? c.integer(1) : 0, int64_t(s.size()));
  Outs parts = splitSizes(c, x, dim, std::vector<int64_t>(size_t(s[size_t(dim)]), 1));
  std::vector<int64_t> sq = s;
  sq.erase(sq.begin() + dim);
  for (TV& p : *parts[0].items) p = TV::tensor(c.reshape(p.e, sq));
  return parts;
}

Outs channelShuffle(Context& c) {
  Expr x = c.tensor(0);
  std::vector<int64_t> s = c.shapeOf(x);
  int64_t g = c.integer(1);
  if (s.size() < 3 || g <= 0 || s[1] % g != 0) c.fail("channel_shuffle: channels do not split into " + std::to_string(g) + " groups");
  std::vector<int64_t> grouped{s[0], g, s[1] / g};
  grouped.insert(grouped.end(), s.begin() + 2, s.end());
  std::vector<int64_t> perm(grouped.size());
  std::iota(perm.begin(), perm.end(), 0);
  std::swap(perm[1], perm[2]);
  Expr y = c.call("transpose", {c.reshape(x, grouped)}, {{"axes", perm}});
  return {TV::tensor(c.reshape(y, s))};
}

// ---- Reductions.

std::vector<int64_t> reduceDims(const Context& c, int i, int64_t rank) {
  std::vector<int64_t> dims;
  if (c.numInputs() > i && !c.isNone(i)) dims = c.ints(i);
  if (dims.empty())
    for (int64_t d = 0; d < rank; ++d) dims.push_back(d);
  for (int64_t& d : dims) d = normDim(c, d, rank);
  return dims;
}

Converter reduce(const std::string& op) {
  // mean/sum(x, dims, keepdim, dtype) or (x, dtype); amax/amin(x, dims, keepdim)
  return [op](Context& c) {
    Expr x = c.tensor(0);
    int64_t r = int64_t(c.tensorType(x).ndim());
    bool full = c.numInputs() <= 2 || (c.in(1).kind != TV::Kind::List && c.in(1).kind != TV::Kind::Int) ||
                (c.numInputs() == 2 && c.in(1).kind == TV::Kind::Int && (op == "mean" || op == "sum"));
    std::vector<int64_t> dims = full ? reduceDims(c, 99, r) : reduceDims(c, 1, r);
    bool keep = !full && c.numInputs() > 2 && c.boolean(2);
    int dtypeAt = full ? 1 : 3;
    if ((op == "mean" || op == "sum") && c.numInputs() > dtypeAt && !c.isNone(dtypeAt))
      x = c.cast(x, c.dtypeArg(dtypeAt, c.dtypeOf(x)));
    else if (op == "mean" && category(c.dtypeOf(x)) != 2)
      c.fail("mean of an integer tensor needs a dtype");
    else if (op == "sum" && category(c.dtypeOf(x)) < 2 && c.dtypeOf(x) != DataType::Int(64))
      x = c.cast(x, DataType::Int(64));
    if (r == 0) return Outs{TV::tensor(x)};
    return Outs{TV::tensor(c.call(op, {x}, {{"axis", dims}, {"keepdims", int64_t(keep)}}))};
  };
}

/// max/min: full reduction (x), elementwise (x, other), or along a dim (x, dim, keepdim) with indices.
Converter maxMin(bool isMax) {
  return [isMax](Context& c) {
    Expr x = c.tensor(0);
    if (c.numInputs() == 1) return Outs{TV::tensor(c.call(isMax ? "max" : "min", {x}, {{"axis", std::vector<int64_t>{}}, {"keepdims", int64_t(0)}}))};
    if (c.in(1).kind == TV::Kind::Tensor) {
      auto [a, b] = promoted(c, 0, 1);
      return Outs{TV::tensor(c.call(isMax ? "maximum" : "minimum", {a, b}))};
    }
    int64_t r = int64_t(c.tensorType(x).ndim());
    int64_t d = normDim(c, c.integer(1), r);
    int64_t keep = c.numInputs() > 2 && c.boolean(2);
    Expr v = c.call(isMax ? "max" : "min", {x}, {{"axis", std::vector<int64_t>{d}}, {"keepdims", keep}});
    Expr i = c.call(isMax ? "argmax" : "argmin", {x}, {{"axis", d}, {"keepdims", keep}});
    return Outs{TV::tensor(v), TV::tensor(c.cast(i, DataType::Int(64)))};
  };
}

Converter argReduce(const std::string& op) {
  return [op](Context& c) {
    Expr x = c.tensor(0);
    bool keep = c.numInputs() > 2 && c.boolean(2);
    if (c.isNone(1)) {
      std::vector<int64_t> s = c.shapeOf(x);
      x = c.reshape(x, {product(s)});
      Expr i = c.call(op, {x}, {{"axis", int64_t(0)}, {"keepdims", int64_t(0)}});
      return Outs{TV::tensor(c.cast(i, DataType::Int(64)))};
    }
    Expr i = c.call(op, {x}, {{"axis", c.integer(1)}, {"keepdims", int64_t(keep)}});
    return Outs{TV::tensor(c.cast(i, DataType::Int(64)))};
  };
}

// ---- Creation.

Outs constantFill(Context& c, const std::vector<int64_t>& shape, DataType t, double v) {
  for (int64_t d : shape)
    if (d < 0) c.fail("negative dimension");
  if (product(shape) > (int64_t(1) << 28)) c.fail("the constant is too large");
  return {TV::tensor(makeConstant(filledArray(shape, t, v)))};
}

DataType numberType(const TV& v) { return v.kind == TV::Kind::Double ? DataType::Float(32) : v.kind == TV::Kind::Bool ? DataType::Bool() : DataType::Int(64); }

Outs arange(Context& c) {
  // arange(end, dtype, layout, device, pin) / (start, end, dtype, ...) / (start, end, step, dtype, ...)
  int n = c.numInputs();
  int numbers = n == 5 ? 1 : n == 6 ? 2 : n == 7 ? 3 : (n == 2 ? 1 : n == 3 ? 2 : 3);
  int dtypeAt = numbers;
  double start = 0, end, step = 1;
  bool anyFloat = false;
  for (int i = 0; i < numbers; ++i) anyFloat |= c.in(i).kind == TV::Kind::Double;
  if (numbers == 1) end = c.real(0);
  else {
    start = c.real(0);
    end = c.real(1);
    if (numbers == 3) step = c.real(2);
  }
  if (step == 0) c.fail("arange step must not be 0");
  DataType t = c.numInputs() > dtypeAt ? c.dtypeArg(dtypeAt, anyFloat ? DataType::Float(32) : DataType::Int(64))
                                       : (anyFloat ? DataType::Float(32) : DataType::Int(64));
  double steps = std::ceil((end - start) / step);
  if (std::isnan(steps) || steps > double(int64_t(1) << 28)) c.fail("arange is too long");
  int64_t count = steps > 0 ? int64_t(steps) : 0;
  // Integer results must fit (a double past the range converts with undefined behaviour).
  double limit = t == DataType::Int(32) ? 0x1p31 : 0x1p63;
  if (!t.isFloat() && count > 0 && (std::fabs(start) >= limit || std::fabs(start + double(count - 1) * step) >= limit))
    c.fail("arange from " + std::to_string(start) + " does not fit " + t.str());
  runtime::NDArray a = filledArray({count}, t, 0);
  for (int64_t i = 0; i < count; ++i) {
    double v = start + double(i) * step;
    if (t == DataType::Float(32)) a.as<float>()[i] = float(v);
    else if (t == DataType::Float(64)) a.as<double>()[i] = v;
    else if (t == DataType::Int(64)) a.as<int64_t>()[i] = int64_t(v);
    else if (t == DataType::Int(32)) a.as<int32_t>()[i] = int32_t(v);
    else c.fail("arange of " + t.str() + " is not supported");
  }
  return {TV::tensor(makeConstant(a))};
}

Converter filled(double value) {
  // ones/zeros(size, dtype, layout, device, pin_memory)
  return [value](Context& c) { return constantFill(c, c.ints(0), c.dtypeArg(1, DataType::Float(32)), value); };
}

Converter filledLike(double value) {
  // ones_like/zeros_like(x, dtype, layout, device, pin_memory, memory_format)
  return [value](Context& c) {
    Expr x = c.tensor(0);
    return constantFill(c, c.shapeOf(x), c.dtypeArg(1, c.dtypeOf(x)), value);
  };
}

Outs full(Context& c) {
  return constantFill(c, c.ints(0), c.dtypeArg(2, numberType(c.in(1))), c.real(1));
}

Outs fullLike(Context& c) {
  Expr x = c.tensor(0);
  return constantFill(c, c.shapeOf(x), c.dtypeArg(2, c.dtypeOf(x)), c.real(1));
}

Outs to(Context& c) {
  // to(x, dtype, non_blocking, copy, memory_format) / to(x, device, dtype, ...) / to(x, other, ...)
  Expr x = c.tensor(0);
  if (c.numInputs() < 2) return {TV::tensor(x)};
  const TV& a = c.in(1);
  if (a.kind == TV::Kind::Tensor) return {TV::tensor(c.cast(x, c.dtypeOf(a.e)))};
  if (a.kind == TV::Kind::Device || a.kind == TV::Kind::String) {
    if (a.s.rfind("cpu", 0) != 0) c.fail("moving tensors to device '" + a.s + "' is not supported; save the model on the CPU");
    return {TV::tensor(c.isNone(2) ? x : c.cast(x, c.dtypeArg(2, c.dtypeOf(x))))};
  }
  if (a.kind == TV::Kind::Int) return {TV::tensor(c.cast(x, c.dtypeArg(1, c.dtypeOf(x))))};
  return {TV::tensor(x)};
}

Outs identity(Context& c) { return {TV::tensor(c.tensor(0))}; }

Outs dropout(Context& c) {
  if (c.numInputs() > 2 && c.boolean(2)) c.fail("training-mode dropout is not supported; call model.eval() before saving");
  return {TV::tensor(c.tensor(0))};
}

Outs embedding(Context& c) {
  Expr idx = c.tensor(1);
  DataType t = c.dtypeOf(idx);
  if (category(t) != 1) c.fail("embedding indices must be integers, got " + t.str());
  return {TV::tensor(c.call("take", {c.tensor(0), idx}, {{"axis", int64_t(0)}}))};
}

Outs where(Context& c) {
  Expr cond = c.tensor(0);
  if (!c.dtypeOf(cond).isBool()) cond = c.cast(cond, DataType::Bool());
  auto [a, b] = promoted(c, 1, 2);
  return {TV::tensor(c.call("where", {cond, a, b}))};
}

Outs maskedFill(Context& c) {
  Expr x = c.tensor(0), mask = c.tensor(1);
  if (!c.dtypeOf(mask).isBool()) mask = c.cast(mask, DataType::Bool());
  Expr v = c.cast(c.tensor(2), c.dtypeOf(x));
  return {TV::tensor(c.call("where", {mask, v, x}))};
}

Outs constantPad(Context& c) {
  // constant_pad_nd(x, pad, value); pad runs from the last dim backwards: (left, right, top, bottom, ...)
  Expr x = c.tensor(0);
  std::vector<int64_t> pad = c.ints(1);
  size_t r = c.tensorType(x).ndim();
  if (pad.size() % 2 || pad.size() / 2 > r) c.fail("pad must hold (before, after) pairs for at most every dimension");
  std::vector<int64_t> pw(2 * r, 0);
  for (size_t k = 0; k < pad.size() / 2; ++k) {
    if (pad[2 * k] < 0 || pad[2 * k + 1] < 0) c.fail("negative padding is not supported");
    size_t d = r - 1 - k;
    pw[2 * d] = pad[2 * k];
    pw[2 * d + 1] = pad[2 * k + 1];
  }
  double value = c.numInputs() > 2 && !c.isNone(2) ? c.real(2) : 0.0;
  return {TV::tensor(c.call("nn.pad", {x}, {{"pad_width", pw}, {"pad_value", value}, {"pad_mode", std::string("constant")}}))};
}

Outs pow(Context& c) {
  auto [a, b] = promoted(c, 0, 1);
  return {TV::tensor(c.call("power", {a, b}))};
}

Outs leakyRelu(Context& c) {
  return {TV::tensor(c.call("nn.leaky_relu", {c.tensor(0)}, {{"alpha", c.numInputs() > 1 ? c.real(1) : 0.01}}))};
}

/// aten::_transformer_encoder_layer_fwd, the fast path nn.TransformerEncoderLayer takes in eval
/// mode: (src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias, use_gelu,
/// norm_first, eps, norm1 weight, bias, norm2 weight, bias, ffn1 weight, bias, ffn2 weight, bias,
/// mask). Written out as F.multi_head_attention_forward computes it (batch first), so it fuses
/// like the same layer exported to ONNX.
Outs transformerEncoderLayer(Context& c) {
  Expr src = floatTensor(c, 0);
  std::vector<int64_t> s = c.shapeOf(src);
  if (s.size() != 3) c.fail("the encoder layer's input must be (batch, sequence, embedding)");
  if (c.numInputs() > 18 && !c.isNone(18)) c.fail("attention masks are not supported");
  int64_t B = s[0], T = s[1], E = c.integer(1), H = c.integer(2);
  if (E != s[2] || H <= 0 || E % H) c.fail("embed_dim / num_heads do not fit the input");
  int64_t D = E / H;
  DataType t = c.dtypeOf(src);
  bool gelu = c.boolean(7), normFirst = c.boolean(8);
  double eps = c.real(9);
  auto dense = [&](const Expr& x, int w, int b) { return c.call("add", {c.call("nn.dense", {x, c.tensor(w)}), c.tensor(b)}); };
  auto norm = [&](const Expr& x, int w, int b) {
    return c.call("nn.layer_norm", {x, c.tensor(w), c.tensor(b)}, {{"axis", int64_t(-1)}, {"epsilon", eps}});
  };
  auto perm = [&](const Expr& x, std::vector<int64_t> p) { return c.call("transpose", {x}, {{"axes", p}}); };
  auto attention = [&](const Expr& x) {
    Expr q0 = perm(x, {1, 0, 2}); // (T, B, E)
    Expr qkv = dense(q0, 3, 4);
    auto head = [&](int64_t k) {
      Expr part = sliceOf(c, qkv, 2, k * E, (k + 1) * E, 1);
      return perm(c.reshape(part, {T, B * H, D}), {1, 0, 2}); // (B*H, T, D)
    };
    Expr q = c.call("divide", {head(0), c.scalar(std::sqrt(double(D)), t)});
    Expr v = head(2);
    // k transposed for q k^T in one transpose: (T, B*H, D) -> (B*H, D, T).
    Expr kT = perm(c.reshape(sliceOf(c, qkv, 2, E, 2 * E, 1), {T, B * H, D}), {1, 2, 0});
    Expr a = c.call("nn.softmax", {c.call("nn.matmul", {q, kT})}, {{"axis", int64_t(-1)}});
    Expr o = c.reshape(perm(c.call("nn.matmul", {a, v}), {1, 0, 2}), {T * B, E});
    o = c.reshape(dense(o, 5, 6), {T, B, E});
    return perm(o, {1, 0, 2});
  };
  auto ffn = [&](const Expr& x) {
    Expr h = dense(x, 14, 15);
    if (gelu) {
      h = erfGelu(c, h);
    } else {
      h = c.call("nn.relu", {h});
    }
    return dense(h, 16, 17);
  };
  Expr x = src;
  if (normFirst) {
    x = c.call("add", {x, attention(norm(x, 10, 11))});
    x = c.call("add", {x, ffn(norm(x, 12, 13))});
  } else {
    x = norm(c.call("add", {x, attention(x)}), 10, 11);
    x = norm(c.call("add", {x, ffn(x)}), 12, 13);
  }
  return {TV::tensor(x)};
}

void add(Table& t, const std::string& name, Converter f, bool inplace = false) {
  t["aten::" + name] = f;
  if (inplace) t["aten::" + name + "_"] = f;
}

} // namespace

const std::unordered_map<std::string, Converter>& atenConverters() {
  static const Table table = [] {
    Table t;
    add(t, "_convolution", underscoreConvolution);
    add(t, "conv1d", convNd);
    add(t, "conv2d", convNd);
    add(t, "conv_transpose1d", convTransposeNd);
    add(t, "conv_transpose2d", convTransposeNd);
    add(t, "batch_norm", batchNorm);
    add(t, "layer_norm", layerNorm);
    add(t, "group_norm", groupNorm);
    add(t, "linear", linear);
    add(t, "addmm", addmm);
    add(t, "baddbmm", addmm);
    add(t, "matmul", [](Context& c) { auto [a, b] = promoted(c, 0, 1); return Outs{TV::tensor(matmulOf(c, a, b))}; });
    add(t, "mm", [](Context& c) { return Outs{TV::tensor(matmulOf(c, c.tensor(0), c.tensor(1)))}; });
    add(t, "bmm", [](Context& c) { return Outs{TV::tensor(c.call("nn.matmul", {c.tensor(0), c.tensor(1)}))}; });
    add(t, "relu", unary("nn.relu"), true);
    add(t, "relu6", [](Context& c) { return Outs{TV::tensor(clip(c, c.tensor(0), 0, 6))}; }, true);
    add(t, "hardtanh", [](Context& c) {
      return Outs{TV::tensor(clip(c, c.tensor(0), c.numInputs() > 1 ? c.real(1) : -1.0, c.numInputs() > 2 ? c.real(2) : 1.0))};
    }, true);
    add(t, "hardsigmoid", [](Context& c) { return Outs{TV::tensor(hardSigmoidOf(c, floatTensor(c, 0)))}; }, true);
    add(t, "hardswish", [](Context& c) {
      Expr x = floatTensor(c, 0);
      return Outs{TV::tensor(c.call("multiply", {x, hardSigmoidOf(c, x)}))};
    }, true);
    add(t, "silu", [](Context& c) {
      Expr x = floatTensor(c, 0);
      return Outs{TV::tensor(c.call("multiply", {x, c.call("sigmoid", {x})}))};
    }, true);
    add(t, "gelu", gelu, true);
    add(t, "leaky_relu", leakyRelu, true);
    add(t, "sigmoid", floatUnary("sigmoid"), true);
    add(t, "tanh", floatUnary("tanh"), true);
    add(t, "exp", floatUnary("exp"), true);
    add(t, "log", floatUnary("log"), true);
    add(t, "sqrt", floatUnary("sqrt"), true);
    add(t, "rsqrt", floatUnary("rsqrt"), true);
    add(t, "erf", floatUnary("erf"), true);
    add(t, "sin", floatUnary("sin"), true);
    add(t, "cos", floatUnary("cos"), true);
    add(t, "abs", unary("abs"), true);
    add(t, "neg", unary("negative"), true);
    add(t, "floor", unary("floor"), true);
    add(t, "ceil", unary("ceil"), true);
    add(t, "round", unary("round"), true);
    add(t, "reciprocal", [](Context& c) {
      Expr x = floatTensor(c, 0);
      return Outs{TV::tensor(c.call("divide", {c.scalar(1, c.dtypeOf(x)), x}))};
    }, true);
    add(t, "square", [](Context& c) { Expr x = c.tensor(0); return Outs{TV::tensor(c.call("multiply", {x, x}))}; }, true);
    add(t, "softmax", [](Context& c) { return softmax(c, false); });
    add(t, "log_softmax", [](Context& c) { return softmax(c, true); });
    add(t, "max_pool1d", [](Context& c) { return pool(c, true, 1); });
    add(t, "max_pool2d", [](Context& c) { return pool(c, true, 2); });
    add(t, "avg_pool1d", [](Context& c) { return pool(c, false, 1); });
    add(t, "avg_pool2d", [](Context& c) { return pool(c, false, 2); });
    add(t, "adaptive_avg_pool1d", [](Context& c) { return adaptivePool(c, false); });
    add(t, "adaptive_avg_pool2d", [](Context& c) { return adaptivePool(c, false); });
    add(t, "adaptive_max_pool2d", [](Context& c) { return adaptivePool(c, true); });
    add(t, "upsample_nearest2d", [](Context& c) { return upsample(c, false); });
    add(t, "upsample_bilinear2d", [](Context& c) { return upsample(c, true); });
    add(t, "cat", cat);
    add(t, "concat", cat);
    add(t, "stack", stack);
    add(t, "chunk", chunk);
    add(t, "unsafe_chunk", chunk);
    add(t, "split", split);
    add(t, "split_with_sizes", split);
    add(t, "unsafe_split", split);
    add(t, "unbind", unbind);
    add(t, "slice", slice);
    add(t, "select", select);
    add(t, "index_select", [](Context& c) {
      return Outs{TV::tensor(c.call("take", {c.tensor(0), c.tensor(2)}, {{"axis", c.integer(1)}}))};
    });
    add(t, "transpose", transpose);
    add(t, "t", transpose);
    add(t, "permute", permute);
    add(t, "view", view);
    add(t, "reshape", view);
    add(t, "view_as", [](Context& c) { return Outs{TV::tensor(c.reshape(c.tensor(0), c.shapeOf(c.tensor(1))))}; });
    add(t, "reshape_as", [](Context& c) { return Outs{TV::tensor(c.reshape(c.tensor(0), c.shapeOf(c.tensor(1))))}; });
    add(t, "flatten", flatten);
    add(t, "unflatten", unflatten);
    add(t, "contiguous", identity);
    add(t, "clone", identity);
    add(t, "detach", identity);
    add(t, "expand", expand);
    add(t, "expand_as", [](Context& c) {
      Expr x = c.tensor(0);
      std::vector<int64_t> s = c.shapeOf(c.tensor(1));
      return Outs{TV::tensor(s == c.shapeOf(x) ? x : c.call("broadcast_to", {x}, {{"shape", s}}))};
    });
    add(t, "repeat", repeat);
    add(t, "unsqueeze", unsqueeze, true);
    add(t, "squeeze", squeeze, true);
    add(t, "add", addSub("add", false), true);
    add(t, "sub", addSub("subtract", false), true);
    add(t, "rsub", addSub("subtract", true));
    add(t, "mul", binary("multiply"), true);
    add(t, "div", divide, true);
    add(t, "true_divide", binary("divide", 2), true);
    add(t, "floor_divide", [](Context& c) {
      auto [a, b] = promoted(c, 0, 1);
      Expr q = c.call("divide", {a, b});
      return Outs{TV::tensor(category(c.dtypeOf(q)) == 2 ? c.call("floor", {q}) : q)};
    });
    add(t, "remainder", binary("floor_mod"), true);
    add(t, "pow", pow, true);
    add(t, "maximum", binary("maximum"));
    add(t, "minimum", binary("minimum"));
    add(t, "eq", comparison("equal"));
    add(t, "ne", comparison("not_equal"));
    add(t, "lt", comparison("less"));
    add(t, "le", comparison("less_equal"));
    add(t, "gt", comparison("greater"));
    add(t, "ge", comparison("greater_equal"));
    add(t, "logical_not", unary("logical_not"));
    add(t, "where", where);
    add(t, "masked_fill", maskedFill, true);
    add(t, "mean", reduce("mean"));
    add(t, "sum", reduce("sum"));
    add(t, "amax", reduce("max"));
    add(t, "amin", reduce("min"));
    add(t, "max", maxMin(true));
    add(t, "min", maxMin(false));
    add(t, "argmax", argReduce("argmax"));
    add(t, "argmin", argReduce("argmin"));
    add(t, "clamp", clamp, true);
    add(t, "clip", clamp, true);
    add(t, "clamp_min", [](Context& c) {
      return Outs{TV::tensor(clip(c, c.tensor(0), c.real(1), std::numeric_limits<double>::infinity()))};
    }, true);
    add(t, "clamp_max", [](Context& c) {
      return Outs{TV::tensor(clip(c, c.tensor(0), -std::numeric_limits<double>::infinity(), c.real(1)))};
    }, true);
    add(t, "dropout", dropout, true);
    add(t, "feature_dropout", dropout, true);
    add(t, "alpha_dropout", dropout, true);
    add(t, "embedding", embedding);
    add(t, "arange", arange);
    add(t, "ones", filled(1));
    add(t, "zeros", filled(0));
    add(t, "full", full);
    add(t, "ones_like", filledLike(1));
    add(t, "zeros_like", filledLike(0));
    add(t, "full_like", fullLike);
    add(t, "channel_shuffle", channelShuffle);
    add(t, "pixel_shuffle", [](Context& c) {
      return Outs{TV::tensor(c.call("nn.depth_to_space", {c.tensor(0)}, {{"block_size", c.integer(1)}, {"mode", std::string("CRD")}}))};
    });
    add(t, "to", to);
    add(t, "type_as", [](Context& c) { return Outs{TV::tensor(c.cast(c.tensor(0), c.dtypeOf(c.tensor(1))))}; });
    add(t, "constant_pad_nd", constantPad);
    add(t, "_transformer_encoder_layer_fwd", transformerEncoderLayer);
    return t;
  }();
  return table;
}

} // namespace loom::frontend::tsi
