// The ONNX op converters: one entry per op type, each building graph ops (Relay-style names).
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

#include "core/frontend/onnx/OnnxContext.h"
#include "core/graph/Op.h"
#include "core/arith/Analyzer.h"
#include "core/arith/ExprText.h"
#include "core/graph/SymDim.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"

namespace loom::frontend::onnxi {

using namespace graph;

namespace {

using Outs = std::vector<Expr>;

Expr scalarLike(const Context& ctx, double v, const Expr& like) {
  return makeScalar(v, ctx.tensorType(like).dtype);
}

Expr reshapeTo(const Context& ctx, const Expr& x, const std::vector<int64_t>& shape) {
  return ctx.call("reshape", {x}, {{"newshape", shape}});
}

/// A reshape to dims that may be symbolic (newshape holds -1 where they are).
Expr reshapeToDims(const Context& ctx, const Expr& x, const Shape& dims) {
  std::vector<int64_t> ns;
  bool symbolic = false;
  for (const Dim& d : dims) {
    ns.push_back(d.isStatic() ? d.value : -1);
    symbolic |= !d.isStatic();
  }
  if (!symbolic) return reshapeTo(ctx, x, ns);
  return ctx.call("reshape", {x}, {{"newshape", ns}, {"symbolic_shape", dimsText(dims)}});
}

/// broadcast_to dims that may be symbolic (shape holds 1 where they are, symbolic_shape all).
Expr broadcastToDims(const Context& ctx, const Expr& x, const Shape& dims) {
  std::vector<int64_t> ns;
  for (const Dim& d : dims) ns.push_back(d.isStatic() ? d.value : 1);
  return ctx.call("broadcast_to", {x}, {{"shape", ns}, {"symbolic_shape", dimsText(dims)}});
}

/// A shape value (an int64 expression over the symbols) as a dim; fails when it is negative.
Dim dimOfValue(const Context& ctx, const tir::Expr& v) {
  Dim d = dimOf(v);
  if (!d.isStatic() && d.name.empty()) ctx.fail("shape entry " + arith::exprText(v) + " is negative or unknown");
  return d;
}

int64_t normAxis(const Context& ctx, int64_t axis, int64_t ndim) {
  int64_t a = axis < 0 ? axis + ndim : axis;
  if (a < 0 || a >= ndim)
    ctx.fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(ndim));
  return a;
}

Converter unary(const std::string& op) {
  return [op](Context& c) { return Outs{c.call(op, {c.input(0)})}; };
}

/// Before opset 7, binary ops broadcast only with broadcast=1, aligning B at `axis` of A (by
/// default at the trailing dims): B is reshaped so numpy broadcasting does the same.
Expr legacyBroadcast(Context& c, const Expr& a, const Expr& b) {
  if (c.opset() >= 7 || c.attrInt("broadcast", 0) == 0) return b;
  int64_t na = int64_t(c.tensorType(a).ndim());
  std::vector<int64_t> sb = c.staticShape(b);
  int64_t axis = c.attrInt("axis", na - int64_t(sb.size()));
  if (axis < 0) axis += na;
  if (axis < 0 || axis + int64_t(sb.size()) > na)
    c.fail("broadcast axis " + std::to_string(axis) + " out of range");
  for (int64_t i = axis + int64_t(sb.size()); i < na; ++i)
    sb.push_back(1);
  return reshapeTo(c, b, sb);
}

Converter binary(const std::string& op) {
  return [op](Context& c) {
    Expr a = c.input(0);
    return Outs{c.call(op, {a, legacyBroadcast(c, a, c.input(1))})};
  };
}

/// Min/Max/Sum/Mean: a left fold of the binary op over every input.
Converter variadic(const std::string& op, bool mean) {
  return [op, mean](Context& c) {
    Expr acc = c.input(0);
    for (int i = 1; i < c.numInputs(); ++i)
      acc = c.call(op, {acc, c.input(i)});
    if (mean) acc = c.call("divide", {acc, scalarLike(c, double(c.numInputs()), acc)});
    return Outs{acc};
  };
}

/// The spatial extents of a rank-n NC... tensor (-1 where symbolic).
std::vector<int64_t> spatialDims(const Context& c, const Expr& x) {
  std::vector<int64_t> out;
  const TensorTypeNode& t = c.tensorType(x);
  for (size_t i = 2; i < t.ndim(); ++i)
    out.push_back(t.shape[i].isStatic() ? t.shape[i].value : -1);
  return out;
}

/// Spatial padding for auto_pad (SAME_UPPER / SAME_LOWER / VALID) or explicit pads, as
/// (begin..., end...) for `spatial` dims.
std::vector<int64_t> convPads(const Context& c, const std::vector<int64_t>& inSpatial,
                              const std::vector<int64_t>& kernel,
                              const std::vector<int64_t>& strides,
                              const std::vector<int64_t>& dilations) {
  size_t n = kernel.size();
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  if (autoPad == "NOTSET") {
    std::vector<int64_t> pads = c.attrInts("pads", std::vector<int64_t>(2 * n, 0));
    if (pads.size() != 2 * n) c.fail("pads must have " + std::to_string(2 * n) + " entries");
    return pads;
  }
  std::vector<int64_t> pads(2 * n, 0);
  if (autoPad == "VALID") return pads;
  if (autoPad != "SAME_UPPER" && autoPad != "SAME_LOWER")
    c.fail("unknown auto_pad '" + autoPad + "'");
  for (size_t i = 0; i < n; ++i) {
    if (inSpatial[i] < 0)
      c.fail("auto_pad " + autoPad + " needs static spatial dims; give --input-shapes");
    int64_t out = (inSpatial[i] + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>(
        (out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - inSpatial[i], 0);
    int64_t small = total / 2, big = total - small;
    pads[i] = autoPad == "SAME_UPPER" ? small : big;
    pads[i + n] = autoPad == "SAME_UPPER" ? big : small;
  }
  return pads;
}

Expr convOf(Context& c, Expr x, Expr w, const Expr& bias);

Outs conv(Context& c) { return {convOf(c, c.input(0), c.input(1), c.hasInput(2) ? c.input(2) : Expr())}; }

Expr convOf(Context& c, Expr x, Expr w, const Expr& bias) {
  size_t rank = c.tensorType(x).ndim();
  std::vector<int64_t> ws = c.staticShape(w);
  if (rank != 3 && rank != 4 && rank != 5)
    c.fail("only 1-D, 2-D and 3-D convolutions are supported (data rank " + std::to_string(rank) + ")");
  if (ws.size() != rank)
    c.fail("the weight has rank " + std::to_string(ws.size()) + ", the data rank " + std::to_string(rank) +
           " (they must be equal)");
  bool oneD = rank == 3;
  size_t n = rank - 2;
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  std::vector<int64_t> strides = c.attrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.attrInts("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = convPads(c, spatialDims(c, x), kernel, strides, dil);
  if (rank == 5) return conv3dOf(c, x, w, bias, strides, dil, pads, c.attrInt("group", 1));
  if (oneD) {
    std::vector<int64_t> xs = c.staticShape(x);
    x = reshapeTo(c, x, {xs[0], xs[1], 1, xs[2]});
    w = reshapeTo(c, w, {ws[0], ws[1], 1, ws[2]});
    strides.insert(strides.begin(), 1);
    dil.insert(dil.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  Expr y = c.call("nn.conv2d", {x, w},
                  {{"strides", strides},
                   {"padding", pads},
                   {"dilation", dil},
                   {"groups", c.attrInt("group", 1)}});
  if (bias.defined()) y = c.call("nn.bias_add", {y, bias}, {{"axis", int64_t(1)}});
  if (oneD) {
    std::vector<int64_t> ys = c.staticShape(y);
    y = reshapeTo(c, y, {ys[0], ys[1], ys[3]});
  }
  return y;
}

Outs convTranspose(Context& c) {
  Expr x = c.input(0), w = c.input(1);
  std::vector<int64_t> xs = c.staticShape(x), ws = c.staticShape(w);
  if (xs.size() == 5) return convTranspose3d(c);
  if (xs.size() != 4 && xs.size() != 3) c.fail("only 1-D, 2-D and 3-D transposed convolutions are supported");
  if (ws.size() != xs.size())
    c.fail("the weight has rank " + std::to_string(ws.size()) + ", the data rank " + std::to_string(xs.size()) +
           " (they must be equal)");
  // 1-D: as 2-D over a height of 1.
  const bool oneD = xs.size() == 3;
  auto attr2 = [&](const char* name, std::vector<int64_t> def, int64_t fill) {
    std::vector<int64_t> v = c.attrInts(name, oneD ? std::vector<int64_t>(def.begin(), def.begin() + long(def.size() / 2)) : def);
    if (!oneD || v.empty()) return v;
    if (v.size() == 2 && def.size() == 4) return std::vector<int64_t>{0, v[0], 0, v[1]};
    v.insert(v.begin(), fill);
    return v;
  };
  if (oneD) {
    x = reshapeTo(c, x, {xs[0], xs[1], 1, xs[2]});
    w = reshapeTo(c, w, {ws[0], ws[1], 1, ws[2]});
    xs = {xs[0], xs[1], 1, xs[2]};
    ws = {ws[0], ws[1], 1, ws[2]};
  }
  std::vector<int64_t> kernel(ws.begin() + 2, ws.end());
  std::vector<int64_t> strides = attr2("strides", {1, 1}, 1), dil = attr2("dilations", {1, 1}, 1);
  std::vector<int64_t> outPad = attr2("output_padding", {0, 0}, 0);
  std::vector<int64_t> pads = attr2("pads", {0, 0, 0, 0}, 0);
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  std::vector<int64_t> outShape = attr2("output_shape", {}, 1);
  if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (outShape.size() > 2) outShape.erase(outShape.begin(), outShape.end() - 2);
    for (int i = 0; i < 2; ++i) {
      int64_t target = outShape.empty() ? xs[2 + i] * strides[i] : outShape[i];
      int64_t total =
          strides[i] * (xs[2 + i] - 1) + outPad[i] + (kernel[i] - 1) * dil[i] + 1 - target;
      if (total < 0) { // the requested shape is larger than the full output: extend at the end
        outPad[i] -= total;
        total = 0;
      }
      if (autoPad == "SAME_UPPER") {
        pads[i] = total / 2;
        pads[i + 2] = total - total / 2;
      } else {
        pads[i] = total - total / 2;
        pads[i + 2] = total / 2;
      }
    }
  } else if (autoPad == "VALID") {
    pads = {0, 0, 0, 0};
  }
  Expr y = c.call("nn.conv2d_transpose", {x, w},
                  {{"strides", strides},
                   {"padding", pads},
                   {"dilation", dil},
                   {"groups", c.attrInt("group", 1)},
                   {"output_padding", outPad}});
  if (c.hasInput(2)) y = c.call("nn.bias_add", {y, c.input(2)}, {{"axis", int64_t(1)}});
  if (oneD) {
    std::vector<int64_t> ys = c.staticShape(y);
    y = reshapeTo(c, y, {ys[0], ys[1], ys[3]});
  }
  return {y};
}

Outs gemm(Context& c) {
  Expr a = c.input(0), b = c.input(1);
  if (c.attrInt("transA", 0)) a = c.call("transpose", {a}, {{"axes", std::vector<int64_t>{1, 0}}});
  if (!c.attrInt("transB", 0)) b = c.call("transpose", {b}, {{"axes", std::vector<int64_t>{1, 0}}});
  Expr y = c.call("nn.dense", {a, b});
  double alpha = c.attrFloat("alpha", 1.0), beta = c.attrFloat("beta", 1.0);
  if (alpha != 1.0) y = c.call("multiply", {y, scalarLike(c, alpha, y)});
  if (c.hasInput(2)) {
    Expr bias = c.input(2);
    if (beta != 1.0) bias = c.call("multiply", {bias, scalarLike(c, beta, bias)});
    y = c.call("add", {y, bias});
  }
  return {y};
}

Outs matmul(Context& c) {
  Expr a = c.input(0), b = c.input(1);
  const TensorTypeNode& bt = c.tensorType(b);
  const TensorTypeNode& at = c.tensorType(a);
  // (..., K) x (K, N): a dense layer (TVM does the same), which fuses with what follows.
  if (bt.ndim() == 2 && at.ndim() >= 2)
    return {
        c.call("nn.dense", {a, c.call("transpose", {b}, {{"axes", std::vector<int64_t>{1, 0}}})})};
  return {c.call("nn.matmul", {a, b})};
}

Outs batchNorm(Context& c) {
  return {c.call("nn.batch_norm", {c.input(0), c.input(1), c.input(2), c.input(3), c.input(4)},
                 {{"epsilon", c.attrFloat("epsilon", 1e-5)}})};
}

Outs layerNorm(Context& c) {
  Expr x = c.input(0);
  int64_t axis = c.attrInt("axis", -1);
  Expr bias;
  if (c.hasInput(2))
    bias = c.input(2);
  else {
    const TensorTypeNode& st = c.tensorType(c.input(1));
    runtime::NDArray z = runtime::NDArray::empty(st.staticShape(), toDType(st.dtype));
    bias = makeConstant(z);
  }
  double eps = c.attrFloat("epsilon", 1e-5);
  Outs outs{c.call("nn.layer_norm", {x, c.input(1), bias}, {{"axis", axis}, {"epsilon", eps}})};
  bool wantStats = c.node->output_size() > 1;
  if (!wantStats) return outs;
  // The optional Mean and InvStdDev outputs, over the normalized axes (kept as size 1).
  const TensorTypeNode& t = c.tensorType(x);
  int64_t nd = int64_t(t.ndim()), a = normAxis(c, axis, nd);
  std::vector<int64_t> axes;
  for (int64_t i = a; i < nd; ++i)
    axes.push_back(i);
  Attrs reduce{{"axis", axes}, {"keepdims", int64_t(1)}};
  Expr mean = c.call("mean", {x}, reduce);
  Expr d = c.call("subtract", {x, mean});
  Expr var = c.call("mean", {c.call("multiply", {d, d})}, reduce);
  outs.push_back(mean);
  outs.push_back(c.call("rsqrt", {c.call("add", {var, scalarLike(c, eps, x)})}));
  return outs;
}

Outs prelu(Context& c) {
  Expr x = c.input(0), slope = c.input(1);
  if (c.opset() < 7) {
    // Opset 6 broadcasts a (C,) slope along the channel axis.
    const TensorTypeNode& xt = c.tensorType(x);
    std::vector<int64_t> ss = c.staticShape(slope);
    if (ss.size() == 1 && ss[0] > 1 && xt.ndim() > 2) {
      std::vector<int64_t> shape{ss[0]};
      for (size_t i = 2; i < xt.ndim(); ++i)
        shape.push_back(1);
      slope = reshapeTo(c, slope, shape);
    }
  }
  Expr neg = c.call("less", {x, scalarLike(c, 0, x)});
  return {c.call("where", {neg, c.call("multiply", {x, slope}), x})};
}

Outs elu(Context& c) {
  Expr x = c.input(0);
  double alpha = c.attrFloat("alpha", 1.0);
  // expm1, not exp(x) - 1: near 0 the subtraction leaves float32's absolute error of exp
  // (graph seed 34087: Elu(x) - x lost two digits).
  Expr neg = c.call("multiply", {c.call("expm1", {x}), scalarLike(c, alpha, x)});
  return {c.call("where", {c.call("less", {x, scalarLike(c, 0, x)}), neg, x})};
}

Outs selu(Context& c) {
  Expr x = c.input(0);
  double alpha = c.attrFloat("alpha", 1.67326319217681884765625),
         gamma = c.attrFloat("gamma", 1.05070102214813232421875);
  Expr neg = c.call("multiply", {c.call("expm1", {x}), scalarLike(c, alpha, x)});
  Expr y = c.call("where", {c.call("less_equal", {x, scalarLike(c, 0, x)}), neg, x});
  return {c.call("multiply", {y, scalarLike(c, gamma, x)})};
}

Outs hardSigmoid(Context& c) {
  Expr x = c.input(0);
  Expr y = c.call("add", {c.call("multiply", {x, scalarLike(c, c.attrFloat("alpha", 0.2), x)}),
                          scalarLike(c, c.attrFloat("beta", 0.5), x)});
  return {c.call("clip", {y}, {{"a_min", 0.0}, {"a_max", 1.0}})};
}

Outs hardSwish(Context& c) {
  Expr x = c.input(0);
  Expr y =
      c.call("add", {c.call("multiply", {x, scalarLike(c, 1.0 / 6.0, x)}), scalarLike(c, 0.5, x)});
  return {c.call("multiply", {x, c.call("clip", {y}, {{"a_min", 0.0}, {"a_max", 1.0}})})};
}

Outs softplus(Context& c) {
  Expr x = c.input(0);
  // max(x, 0) + log1p(exp(-|x|)), not log(exp(x) + 1): exp overflows float32 above 88
  // (Softplus(100) was inf) and 1 + exp(x) loses exp(x) below -17 (Softplus(-20) was 0).
  Expr tail = c.call("log1p", {c.call("exp", {c.call("negative", {c.call("abs", {x})})})});
  return {c.call("add", {c.call("maximum", {x, scalarLike(c, 0, x)}), tail})};
}

Outs clip(Context& c) {
  double lo = -std::numeric_limits<double>::infinity(),
         hi = std::numeric_limits<double>::infinity();
  if (c.opset() < 11) {
    lo = c.attrFloat("min", lo);
    hi = c.attrFloat("max", hi);
  } else {
    if (c.hasInput(1)) lo = c.constFloats(1).at(0);
    if (c.hasInput(2)) hi = c.constFloats(2).at(0);
  }
  return {c.call("clip", {c.input(0)}, {{"a_min", lo}, {"a_max", hi}})};
}

Outs reciprocal(Context& c) {
  Expr x = c.input(0);
  return {c.call("divide", {scalarLike(c, 1, x), x})};
}

Outs pow(Context& c) {
  Expr x = c.input(0), y = c.input(1);
  DataType xt = c.tensorType(x).dtype;
  if (c.tensorType(y).dtype != xt) y = c.call("cast", {y}, {{"dtype", xt}});
  return {c.call("power", {x, y})};
}

Expr poolOf(Context& c, Expr x, bool isMax, bool includePad);

/// LpPool: (sum over the window of |x|^p)^(1/p), the sum as an average pool counting the zero
/// padding times the window size.
Outs lpPool(Context& c) {
  Expr x = c.input(0);
  if (c.attr("kernel_shape") == nullptr) c.fail("kernel_shape is required");
  if (c.attrInt("ceil_mode", 0) != 0) c.fail("ceil_mode=1 is not supported");
  for (int64_t d : c.attrInts("dilations")) if (d != 1) c.fail("dilations other than 1 are not supported");
  double p = double(c.attrInt("p", 2));
  if (p <= 0) c.fail("p must be positive");
  Expr a = c.call("abs", {x});
  Expr powed = p == 1 ? a : p == 2 ? c.call("multiply", {x, x}) : c.call("power", {a, scalarLike(c, p, x)});
  int64_t window = 1;
  for (int64_t k : c.attrInts("kernel_shape")) window *= k;
  Expr y = poolOf(c, powed, false, true);
  Expr sum = c.call("multiply", {y, scalarLike(c, double(window), y)});
  if (p == 1) return {sum};
  if (p == 2) return {c.call("sqrt", {sum})};
  return {c.call("power", {sum, scalarLike(c, 1.0 / p, sum)})};
}

Outs pool(Context& c, bool isMax) {
  Expr x = c.input(0);
  Expr y = poolOf(c, x, isMax, false);
  if (!isMax || c.node->output_size() < 2 || c.node->output(1).empty()) return {y};
  // MaxPool's Indices (poolOf checked: 2-D, no ceil_mode).
  std::vector<int64_t> kernel = c.attrInts("kernel_shape"), strides = c.attrInts("strides", {1, 1}),
                       dil = c.attrInts("dilations", {1, 1});
  std::vector<int64_t> pads = convPads(c, spatialDims(c, x), kernel, strides, dil);
  return {y, c.call("nn.max_pool2d_indices", {x},
                    {{"pool_size", kernel},
                     {"strides", strides},
                     {"padding", pads},
                     {"dilation", dil},
                     {"storage_order", c.attrInt("storage_order", 0)}})};
}

Expr poolOf(Context& c, Expr x, bool isMax, bool includePad) {
  size_t rank = c.tensorType(x).ndim();
  if (rank != 4 && rank != 3 && rank != 5) c.fail("only 1-D, 2-D and 3-D pooling is supported");
  const bool indices = c.node->output_size() > 1 && !c.node->output(1).empty();
  if (indices && (rank != 4 || !isMax || c.attrInt("ceil_mode", 0) != 0))
    c.fail("the Indices output is supported for 2-D max pooling without ceil_mode");
  bool oneD = rank == 3;
  std::vector<int64_t> kernel = c.attrInts("kernel_shape");
  size_t n = rank - 2;
  if (kernel.size() != n) c.fail("kernel_shape must have " + std::to_string(n) + " entries");
  std::vector<int64_t> strides = c.attrInts("strides", std::vector<int64_t>(n, 1));
  std::vector<int64_t> dil = c.attrInts("dilations", std::vector<int64_t>(n, 1));
  std::vector<int64_t> pads = convPads(c, spatialDims(c, x), kernel, strides, dil);
  if (oneD) {
    std::vector<int64_t> xs = c.staticShape(x);
    x = reshapeTo(c, x, {xs[0], xs[1], 1, xs[2]});
    kernel.insert(kernel.begin(), 1);
    strides.insert(strides.begin(), 1);
    dil.insert(dil.begin(), 1);
    pads = {0, pads[0], 0, pads[1]};
  }
  auto pool2d = [&](Expr in, std::vector<int64_t> k, std::vector<int64_t> st, std::vector<int64_t> pd,
                    std::vector<int64_t> dl) {
    Attrs a{{"pool_size", k}, {"strides", st}, {"padding", pd}, {"dilation", dl}, {"ceil_mode", c.attrInt("ceil_mode", 0)}};
    if (!isMax) a.set("count_include_pad", includePad ? int64_t(1) : c.attrInt("count_include_pad", 0));
    return c.call(isMax ? "nn.max_pool2d" : "nn.avg_pool2d", {in}, a);
  };
  if (rank == 5) {
    // 3-D pooling is separable (max of maxes; averages with per-axis counts, with or without
    // the padding): over (H, W) on [N, C*D, H, W], then over D on [N, C, D, Ho*Wo].
    std::vector<int64_t> xs = c.staticShape(x);
    Expr hw = pool2d(reshapeTo(c, x, {xs[0], xs[1] * xs[2], xs[3], xs[4]}), {kernel[1], kernel[2]},
                     {strides[1], strides[2]}, {pads[1], pads[2], pads[4], pads[5]}, {dil[1], dil[2]});
    std::vector<int64_t> hs = c.staticShape(hw);
    Expr d = pool2d(reshapeTo(c, hw, {xs[0], xs[1], xs[2], hs[2] * hs[3]}), {kernel[0], 1}, {strides[0], 1},
                    {pads[0], 0, pads[3], 0}, {dil[0], 1});
    std::vector<int64_t> ds = c.staticShape(d);
    return reshapeTo(c, d, {xs[0], xs[1], ds[2], hs[2], hs[3]});
  }
  Expr y = pool2d(x, kernel, strides, pads, dil);
  if (oneD) {
    std::vector<int64_t> ys = c.staticShape(y);
    y = reshapeTo(c, y, {ys[0], ys[1], ys[3]});
  }
  return y;
}

Outs globalPool(Context& c, bool isMax) {
  Expr x = c.input(0);
  const TensorTypeNode& t = c.tensorType(x);
  if (t.ndim() == 4) return {c.call(isMax ? "nn.global_max_pool2d" : "nn.global_avg_pool2d", {x})};
  std::vector<int64_t> axes;
  for (size_t i = 2; i < t.ndim(); ++i)
    axes.push_back(int64_t(i));
  return {c.call(isMax ? "max" : "mean", {x}, {{"axis", axes}, {"keepdims", int64_t(1)}})};
}

Outs flatten(Context& c) {
  Expr x = c.input(0);
  Shape s = c.dims(x);
  int64_t axis = c.attrInt("axis", 1);
  if (axis < 0) axis += int64_t(s.size());
  if (axis < 0 || axis > int64_t(s.size())) c.fail("axis out of range");
  Dim outer(1), inner(1);
  for (int64_t i = 0; i < int64_t(s.size()); ++i)
    (i < axis ? outer : inner) = dimMul(i < axis ? outer : inner, s[size_t(i)]);
  return {reshapeToDims(c, x, Shape{outer, inner})};
}

/// Reshape to a target that is a shape computation over symbolic dims (0 copies, -1 infers).
Outs reshapeSymbolic(Context& c, const Expr& x, const std::vector<tir::Expr>& target) {
  Shape in = c.dims(x);
  bool allowZero = c.attrInt("allowzero", 0) != 0;
  Shape out(target.size());
  int64_t infer = -1;
  Dim known(1);
  for (size_t i = 0; i < target.size(); ++i) {
    const int64_t* k = tir::asConstInt(target[i]);
    if (k && *k == 0 && !allowZero) {
      if (i >= in.size()) c.fail("shape entry 0 at position " + std::to_string(i) + " has no input dimension to copy");
      out[i] = in[i];
    } else if (k && *k == -1) {
      if (infer >= 0) c.fail("shape has more than one -1");
      infer = int64_t(i);
      continue;
    } else {
      out[i] = dimOfValue(c, target[i]);
    }
    known = dimMul(known, out[i]);
  }
  if (infer >= 0) {
    std::optional<Dim> d = dimDivExact(dimProduct(in), known);
    if (!d || !dimsProvablyEqual(dimMul(*d, known), dimProduct(in)))
      c.fail("cannot infer the -1 dimension of the target shape: " + shapeStr(in) + " over " + known.str());
    out[size_t(infer)] = *d;
  }
  return {reshapeToDims(c, x, out)};
}

Outs reshape(Context& c) {
  Expr x = c.input(0);
  if (!c.tensorType(x).isStatic()) {
    std::vector<tir::Expr> target;
    if (c.opset() < 5)
      for (int64_t v : c.attrInts("shape")) target.push_back(tir::intImm(DataType::Int(64), v));
    else
      target = c.shapeInput(1);
    return reshapeSymbolic(c, x, target);
  }
  std::vector<int64_t> in = c.staticShape(x);
  std::vector<int64_t> target = c.opset() < 5 ? c.attrInts("shape") : c.constInts(1);
  bool allowZero = c.attrInt("allowzero", 0) != 0;
  int64_t known = 1, infer = -1;
  for (size_t i = 0; i < target.size(); ++i) {
    if (target[i] == 0 && !allowZero) {
      if (i >= in.size())
        c.fail("shape entry 0 at position " + std::to_string(i) +
               " has no input dimension to copy");
      target[i] = in[i];
    }
    if (target[i] == -1) {
      if (infer >= 0) c.fail("shape has more than one -1");
      infer = int64_t(i);
    } else if (target[i] < 0) {
      c.fail("invalid shape entry " + std::to_string(target[i]));
    } else {
      known *= target[i];
    }
  }
  int64_t total = std::accumulate(in.begin(), in.end(), int64_t(1), std::multiplies<int64_t>());
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      c.fail("cannot infer the -1 dimension of the target shape");
    target[infer] = total / known;
  }
  return {reshapeTo(c, x, target)};
}

Outs transpose(Context& c) {
  return {c.call("transpose", {c.input(0)}, {{"axes", c.attrInts("perm")}})};
}

Outs concat(Context& c) {
  std::vector<Expr> args;
  for (int i = 0; i < c.numInputs(); ++i)
    if (c.hasInput(i)) args.push_back(c.input(i));
  return {c.call("concatenate", args, {{"axis", c.attrInt("axis", 0)}})};
}

Outs split(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> s = c.staticShape(x);
  int64_t axis = normAxis(c, c.attrInt("axis", 0), int64_t(s.size()));
  std::vector<int64_t> sizes;
  if (c.opset() >= 13 && c.hasInput(1))
    sizes = c.constInts(1);
  else if (c.opset() < 13)
    sizes = c.attrInts("split");
  if (sizes.empty() && c.opset() >= 18 && c.attr("num_outputs")) {
    int64_t n = c.attrInt("num_outputs", 1);
    if (n < 1 || n != c.node->output_size())
      c.fail("num_outputs " + std::to_string(n) + " does not match the node's " +
             std::to_string(c.node->output_size()) + " outputs");
    int64_t chunk = (s[axis] + n - 1) / n;
    for (int64_t at = 0; at < s[axis]; at += chunk) sizes.push_back(std::min(chunk, s[axis] - at));
    if (int64_t(sizes.size()) != n)
      c.fail("dimension " + std::to_string(s[axis]) + " does not split into " + std::to_string(n) +
             " chunks of " + std::to_string(chunk));
  }
  if (sizes.empty()) {
    int64_t n = c.node->output_size();
    if (s[axis] % n != 0)
      c.fail("dimension " + std::to_string(s[axis]) + " does not split evenly into " +
             std::to_string(n));
    sizes.assign(size_t(n), s[axis] / n);
  }
  Expr t = c.call("split", {x}, {{"sections", sizes}, {"axis", axis}});
  Outs outs;
  for (size_t i = 0; i < sizes.size(); ++i)
    outs.push_back(makeTupleGetItem(t, int(i)));
  return outs;
}

/// True when the shape value `e` is at least 0 for every value of its symbols (each symbol a
/// count or a dim: at least 0).
bool provablyNonNegative(const tir::Expr& e) {
  arith::Analyzer an;
  tir::postOrderVisit(e, [&](const tir::IRNode* n) {
    if (n->nodeKind == tir::NodeKind::Var) an.bind(graph::symbolVar(static_cast<const tir::VarNode*>(n)->name), 0, int64_t(1) << 40);
  });
  return an.canProveGreaterEqual(e, 0);
}

/// Slice whose starts or ends are shape values over data-dependent or symbolic dims
/// (Slice(x, 0, n) or Slice(x, n, end) with n from Shape(NonZero(...))): each such axis becomes
/// take(x, arange(start, count)), the count (min(max(end, 0), dim) - min(start, dim)) over steps
/// as a symbolic dim; the other axes slice as usual. A symbolic start or end is an index from
/// the front: it must be provably non-negative (a count, not -count); steps must be positive
/// constants.
Outs sliceToSymbolic(Context& c, Expr x, const std::vector<tir::Expr>& starts, const std::vector<tir::Expr>& ends,
                     std::vector<int64_t> axes, std::vector<int64_t> steps) {
  const int64_t rank = int64_t(c.tensorType(x).ndim());
  if (starts.size() != ends.size()) c.fail("starts and ends differ in length");
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(int64_t(i));
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) c.fail("starts, ends, axes and steps differ in length");
  const DataType i64 = DataType::Int(64);
  auto imm = [&](int64_t v) { return tir::intImm(i64, v); };
  auto clampSentinel = [](int64_t v) { return std::clamp<int64_t>(v, -(int64_t(1) << 40), int64_t(1) << 40); };
  std::vector<int64_t> sBegin, sEnd, sAxes, sSteps;
  std::vector<size_t> symbolicAxes;
  for (size_t i = 0; i < starts.size(); ++i) {
    axes[i] = normAxis(c, axes[i], rank);
    const int64_t* b = tir::asConstInt(starts[i]);
    const int64_t* e = tir::asConstInt(ends[i]);
    if (b && e) {
      sBegin.push_back(clampSentinel(*b));
      sEnd.push_back(clampSentinel(*e));
      sAxes.push_back(axes[i]);
      sSteps.push_back(steps[i]);
    } else {
      symbolicAxes.push_back(i);
    }
  }
  if (!sAxes.empty())
    x = c.call("strided_slice", {x}, {{"begin", sBegin}, {"end", sEnd}, {"strides", sSteps}, {"axes", sAxes}});
  // Entry i of Slice input `input` as an int64 scalar tensor.
  auto entry = [&](int input, size_t i) {
    Expr v = c.input(input);
    if (c.tensorType(v).dtype != i64) v = c.call("cast", {v}, {{"dtype", i64}});
    return c.call("take", {v, makeScalar(double(i), i64)}, {{"axis", int64_t(0)}});
  };
  for (size_t i : symbolicAxes) {
    const int64_t step = steps[i];
    if (step <= 0) c.fail("a Slice whose start or end depends on the data needs a positive constant step");
    const Dim d = c.dims(x).at(size_t(axes[i]));
    tir::Expr dim = graph::dimExpr(d);
    if (!dim.defined()) c.fail("dimension " + std::to_string(axes[i]) + " of the input is unknown");
    // The start: a constant (negative: from the back of a static dim) or a count.
    tir::Expr startE;
    Expr startT;
    if (const int64_t* b = tir::asConstInt(starts[i])) {
      int64_t start = *b;
      if (start < 0) {
        if (!d.isStatic()) c.fail("a Slice whose end depends on the data needs a non-negative start on a symbolic dim");
        start = std::max<int64_t>(start + d.value, 0);
      }
      if (d.isStatic()) start = std::min(start, d.value);
      startE = imm(start);
      startT = makeScalar(double(start), i64);
    } else {
      if (!provablyNonNegative(starts[i]))
        c.fail("start " + arith::exprText(starts[i]) + " on axis " + std::to_string(axes[i]) +
               " depends on the data and may be negative; a data-dependent start must be an index from the "
               "front (a count)");
      startE = tir::min(starts[i], dim);
      // The arange reads the start tensor itself (this keeps the op that binds its count).
      startT = entry(1, i);
    }
    tir::Expr endE;
    if (const int64_t* e = tir::asConstInt(ends[i])) {
      int64_t end = clampSentinel(*e);
      if (end < 0) {
        if (!d.isStatic()) c.fail("a Slice whose start depends on the data needs a non-negative end on a symbolic dim");
        end += d.value;
      }
      endE = imm(end);
    } else {
      if (!provablyNonNegative(ends[i]))
        c.fail("end " + arith::exprText(ends[i]) + " on axis " + std::to_string(axes[i]) +
               " depends on the data and may be negative; a data-dependent end must be an index from the front "
               "(a count), not counted from the back");
      endE = ends[i];
    }
    endE = tir::min(tir::max(endE, imm(0)), dim);
    Dim n = dimOf(tir::floordiv(tir::max(endE - startE, imm(0)) + imm(step - 1), imm(step)));
    if (!n.isStatic() && n.name.empty()) c.fail("the data-dependent start or end of Slice has no usable value");
    Expr idx = c.call("arange", {startT},
                      {{"step", double(step)}, {"length", n.isStatic() ? n.value : int64_t(-1)},
                       {"symbolic_length", n.isStatic() ? std::string() : n.str()}});
    // The index never exceeds the end; taking the minimum with the end tensor makes the
    // kernel read it, which keeps the op that binds the count (NonZero) in the graph: the
    // symbolic dims alone would not, and dead-code elimination would drop it.
    if (!tir::asConstInt(ends[i])) idx = c.call("minimum", {idx, entry(2, i)});
    x = c.call("take", {x, idx}, {{"axis", axes[i]}});
  }
  return {x};
}

Outs slice(Context& c) {
  Expr x = c.input(0);
  const TensorTypeNode& t = c.tensorType(x);
  std::vector<int64_t> starts, ends, axes, steps;
  if (c.opset() < 10) {
    starts = c.attrInts("starts");
    ends = c.attrInts("ends");
    axes = c.attrInts("axes");
  } else {
    if (c.hasInput(3)) axes = c.constInts(3);
    if (c.hasInput(4)) steps = c.constInts(4);
    std::vector<tir::Expr> startValues = c.shapeInput(1), endValues = c.shapeInput(2);
    bool symbolic = false;
    for (const auto* v : {&startValues, &endValues})
      for (const tir::Expr& e : *v) symbolic = symbolic || !tir::asConstInt(e);
    if (symbolic) return sliceToSymbolic(c, x, startValues, endValues, axes, steps);
    starts = c.constInts(1);
    ends = c.constInts(2);
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(int64_t(i));
  for (int64_t& a : axes)
    a = normAxis(c, a, int64_t(t.ndim()));
  if (steps.empty()) steps.assign(starts.size(), 1);
  // Clamp int64 sentinels so the attribute values stay readable.
  for (auto* v : {&starts, &ends})
    for (int64_t& e : *v)
      e = std::clamp<int64_t>(e, -(int64_t(1) << 40), int64_t(1) << 40);
  return {c.call("strided_slice", {x},
                 {{"begin", starts}, {"end", ends}, {"strides", steps}, {"axes", axes}})};
}

Outs gather(Context& c) {
  return {c.call("take", {c.input(0), c.input(1)}, {{"axis", c.attrInt("axis", 0)}})};
}

Outs squeeze(Context& c) {
  Expr x = c.input(0);
  Shape s = c.dims(x);
  std::vector<int64_t> axes = c.opset() < 13
                                  ? c.attrInts("axes")
                                  : (c.hasInput(1) ? c.constInts(1) : std::vector<int64_t>{});
  std::vector<bool> drop(s.size(), false);
  if (axes.empty())
    for (size_t i = 0; i < s.size(); ++i)
      drop[i] = s[i] == Dim(1);
  for (int64_t a : axes) {
    int64_t n = normAxis(c, a, int64_t(s.size()));
    if (s[size_t(n)] != Dim(1))
      c.fail("cannot squeeze dimension " + std::to_string(n) + " of size " + s[size_t(n)].str());
    drop[size_t(n)] = true;
  }
  Shape out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!drop[i]) out.push_back(s[i]);
  return {reshapeToDims(c, x, out)};
}

Outs unsqueeze(Context& c) {
  Expr x = c.input(0);
  Shape s = c.dims(x);
  std::vector<int64_t> axes = c.opset() < 13 ? c.attrInts("axes") : c.constInts(1);
  int64_t rank = int64_t(s.size() + axes.size());
  std::vector<bool> isNew(size_t(rank), false);
  for (int64_t a : axes)
    isNew[size_t(normAxis(c, a, rank))] = true;
  Shape out;
  size_t k = 0;
  for (int64_t i = 0; i < rank; ++i)
    out.push_back(isNew[size_t(i)] ? Dim(1) : s.at(k++));
  return {reshapeToDims(c, x, out)};
}

Outs pad(Context& c) {
  Expr x = c.input(0);
  const TensorTypeNode& t = c.tensorType(x);
  std::vector<int64_t> pads;
  double value = 0;
  if (c.opset() < 11) {
    pads = c.attrInts("pads");
    value = c.attrFloat("value", 0.0);
  } else {
    pads = c.constInts(1);
    if (c.hasInput(2)) value = c.constFloats(2).at(0);
  }
  size_t n = t.ndim();
  if (c.opset() >= 18 && c.hasInput(3)) {
    std::vector<int64_t> axes = c.constInts(3);
    if (pads.size() != 2 * axes.size())
      c.fail("pads must have " + std::to_string(2 * axes.size()) + " entries for " + std::to_string(axes.size()) + " axes");
    std::vector<int64_t> all(2 * n, 0);
    for (size_t i = 0; i < axes.size(); ++i) {
      size_t a = size_t(normAxis(c, axes[i], int64_t(n)));
      all[a] = pads[i];
      all[a + n] = pads[i + axes.size()];
    }
    pads = all;
  }
  if (pads.size() != 2 * n) c.fail("pads must have " + std::to_string(2 * n) + " entries");
  std::vector<int64_t> pw;
  for (size_t i = 0; i < n; ++i) {
    if (pads[i] < 0 || pads[i + n] < 0) c.fail("negative pads are not supported");
    pw.push_back(pads[i]);
    pw.push_back(pads[i + n]);
  }
  std::string mode = c.attrString("mode", "constant");
  if (mode == "wrap") {  // opset 19: the far end's elements wrap around, as slices concatenated
    std::vector<int64_t> s = c.staticShape(x);
    for (size_t i = 0; i < n; ++i) {
      int64_t b = pw[2 * i], e = pw[2 * i + 1], d = s[i];
      if (b == 0 && e == 0) continue;
      if (b > d || e > d) c.fail("wrap padding larger than the dimension (" + std::to_string(d) + ") is not supported");
      auto part = [&](int64_t from, int64_t to) {
        return c.call("strided_slice", {x},
                      {{"begin", std::vector<int64_t>{from}},
                       {"end", std::vector<int64_t>{to}},
                       {"strides", std::vector<int64_t>{1}},
                       {"axes", std::vector<int64_t>{int64_t(i)}}});
      };
      std::vector<Expr> parts;
      if (b > 0) parts.push_back(part(d - b, d));
      parts.push_back(x);
      if (e > 0) parts.push_back(part(0, e));
      x = c.call("concatenate", parts, {{"axis", int64_t(i)}});
    }
    return {x};
  }
  return {c.call("nn.pad", {x}, {{"pad_width", pw}, {"pad_value", value}, {"pad_mode", mode}})};
}

/// Resize of data with symbolic spatial dims: by scales (integer, or 1 / integer) or to sizes.
Outs resizeSymbolic(Context& c, const Expr& x) {
  Shape s = c.dims(x);
  if (s.size() != 4) c.fail("only 4-D (NCHW) Resize is supported");
  int scalesInput = c.opset() < 11 ? 1 : 2;
  Shape out;
  std::vector<double> scales;
  if (c.opset() >= 11 && c.hasInput(3)) {
    for (const tir::Expr& v : c.shapeInput(3)) out.push_back(dimOfValue(c, v));
  } else if (c.hasInput(scalesInput)) {
    scales = c.constFloats(scalesInput);
    if (scales.size() != 4) c.fail("scales must have 4 entries");
    for (size_t i = 0; i < 4; ++i) {
      double f = scales[i];
      if (s[i].isStatic())
        out.push_back(Dim(int64_t(std::floor(double(s[i].value) * f))));
      else if (f >= 1 && f == std::floor(f))
        out.push_back(dimMul(s[i], Dim(int64_t(f))));
      else if (f > 0 && f < 1 && 1 / f == std::floor(1 / f))
        out.push_back(dimFloorDiv(s[i], int64_t(1 / f)));
      else
        c.fail("scale " + std::to_string(f) + " of symbolic dimension " + s[i].str() +
               " is not supported (an integer or 1 / integer; or give static input shapes)");
    }
  }
  if (out.size() != 4) c.fail("needs 4 output sizes or scales");
  if (!dimsProvablyEqual(out[0], s[0]) || !dimsProvablyEqual(out[1], s[1]))
    c.fail("resizing the batch or channel dims is not supported");
  std::string mode = c.attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear")
    c.fail("mode '" + mode + "' with symbolic dims is not supported (nearest, linear)");
  std::string ctm = c.opset() < 11 ? "asymmetric" : c.attrString("coordinate_transformation_mode", "half_pixel");
  if (ctm == "tf_crop_and_resize") c.fail("coordinate_transformation_mode tf_crop_and_resize is not supported");
  std::string rounding = mode == "nearest" ? (c.opset() < 11 ? "floor" : c.attrString("nearest_mode", "round_prefer_floor"))
                                           : "round_prefer_floor";
  std::vector<int64_t> size = {out[2].isStatic() ? out[2].value : -1, out[3].isStatic() ? out[3].value : -1};
  return {c.call("image.resize2d", {x},
                 {{"size", size},
                  {"symbolic_size", dimsText(Shape{out[2], out[3]})},
                  {"method", std::string(mode == "nearest" ? "nearest_neighbor" : "linear")},
                  {"coordinate_transformation_mode", ctm},
                  {"rounding_method", rounding},
                  {"scales", scales.empty() ? std::vector<double>{} : std::vector<double>{scales[2], scales[3]}}})};
}

Outs resize(Context& c) {
  Expr x = c.input(0);
  if (!c.tensorType(x).isStatic()) return resizeSymbolic(c, x);
  std::vector<int64_t> s = c.staticShape(x);
  if (s.size() != 4) c.fail("only 4-D (NCHW) Resize is supported");
  std::vector<int64_t> out;
  std::vector<double> scales;
  int scalesInput = c.opset() < 11 ? 1 : 2;
  if (c.opset() >= 11 && c.hasInput(3)) {
    out = c.constInts(3);
  } else if (c.hasInput(scalesInput)) {
    scales = c.constFloats(scalesInput);
    if (scales.size() != 4) c.fail("scales must have 4 entries");
    for (size_t i = 0; i < 4; ++i)
      out.push_back(int64_t(std::floor(double(s[i]) * scales[i])));
  }
  if (out.size() != 4) c.fail("needs 4 output sizes or scales");
  if (out[0] != s[0] || out[1] != s[1])
    c.fail("resizing the batch or channel dims is not supported");
  std::string mode = c.attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && mode != "cubic")
    c.fail("mode '" + mode + "' is not supported (nearest, linear, cubic)");
  std::string ctm =
      c.opset() < 11 ? "asymmetric" : c.attrString("coordinate_transformation_mode", "half_pixel");
  if (ctm == "half_pixel_symmetric") c.fail("coordinate_transformation_mode " + ctm + " is not supported");
  if (ctm == "tf_crop_and_resize") {
    if (mode == "nearest") c.fail("coordinate_transformation_mode tf_crop_and_resize with mode nearest is not supported");
    if (c.opset() >= 18 && c.attr("axes")) c.fail("the axes attribute of Resize is not supported");
    if (!c.hasInput(1)) c.fail("tf_crop_and_resize needs the roi input");
    return {resizeByMatrices(c, x, out, scales, mode, ctm, c.opset() >= 18 && c.attrInt("antialias", 0) != 0,
                             c.constFloats(1))};
  }
  if (c.opset() >= 18) {
    if (c.attr("axes")) c.fail("the axes attribute of Resize is not supported");
    if (c.attrString("keep_aspect_ratio_policy", "stretch") != "stretch")
      c.fail("keep_aspect_ratio_policy '" + c.attrString("keep_aspect_ratio_policy", "") + "' is not supported");
    if (c.attrInt("antialias", 0) != 0 && mode != "nearest") {
      bool down = out[2] < s[2] || out[3] < s[3];
      if (down) return {resizeByMatrices(c, x, out, scales, mode, ctm, true, {})};
    }
  }
  if (mode == "cubic")
    return {c.call("image.resize2d_cubic", {x},
                   {{"size", std::vector<int64_t>{out[2], out[3]}},
                    {"coordinate_transformation_mode", ctm},
                    {"scales", scales.empty() ? std::vector<double>{} : std::vector<double>{scales[2], scales[3]}},
                    {"cubic_coeff_a", c.attrFloat("cubic_coeff_a", -0.75)},
                    {"exclude_outside", c.attrInt("exclude_outside", 0)}})};
  std::string rounding =
      mode == "nearest"
          ? (c.opset() < 11 ? "floor" : c.attrString("nearest_mode", "round_prefer_floor"))
          : "round_prefer_floor";
  return {c.call("image.resize2d", {x},
                 {{"size", std::vector<int64_t>{out[2], out[3]}},
                  {"method", std::string(mode == "nearest" ? "nearest_neighbor" : "linear")},
                  {"coordinate_transformation_mode", ctm},
                  {"rounding_method", rounding},
                  {"scales", scales.empty() ? std::vector<double>{}
                                            : std::vector<double>{scales[2], scales[3]}}})};
}

Outs softmax(Context& c, bool log) {
  Expr x = c.input(0);
  const TensorTypeNode& t = c.tensorType(x);
  int64_t nd = int64_t(t.ndim());
  const char* op = log ? "nn.log_softmax" : "nn.softmax";
  if (c.opset() >= 13) return {c.call(op, {x}, {{"axis", c.attrInt("axis", -1)}})};
  // Before opset 13 the input is coerced to 2-D at axis (default 1).
  int64_t axis = normAxis(c, c.attrInt("axis", 1), nd);
  if (axis == nd - 1) return {c.call(op, {x}, {{"axis", int64_t(-1)}})};
  std::vector<int64_t> s = c.staticShape(x);
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < nd; ++i)
    (i < axis ? outer : inner) *= s[i];
  Expr y = c.call(op, {reshapeTo(c, x, {outer, inner})}, {{"axis", int64_t(-1)}});
  return {reshapeTo(c, y, s)};
}

Converter reduce(const std::string& op) {
  return [op](Context& c) {
    Expr x = c.input(0);
    std::vector<int64_t> axes = c.attrInts("axes");
    bool axesAsInput = (op == "sum" && c.opset() >= 13) || c.opset() >= 18;
    if (axesAsInput && c.hasInput(1)) axes = c.constInts(1);
    if (axesAsInput && axes.empty() && c.attrInt("noop_with_empty_axes", 0)) return Outs{x};
    return Outs{c.call(op, {x}, {{"axis", axes}, {"keepdims", c.attrInt("keepdims", 1)}})};
  };
}

Converter argReduce(const std::string& op) {
  return [op](Context& c) {
    return Outs{c.call(op, {c.input(0)},
                       {{"axis", c.attrInt("axis", 0)},
                        {"keepdims", c.attrInt("keepdims", 1)},
                        {"select_last_index", c.attrInt("select_last_index", 0)}})};
  };
}

Outs shape(Context& c) {
  Expr s = c.call("shape_of", {c.input(0)});
  if (!c.tensorType(c.input(0)).isStatic()) {
    // The dims it keeps may all be static even where others are symbolic: then a constant.
    const TensorTypeNode& t = c.tensorType(c.input(0));
    int64_t rank = int64_t(t.ndim());
    int64_t start = c.attrInt("start", 0), end = c.attrInt("end", rank);
    if (start < 0) start += rank;
    if (end < 0) end += rank;
    start = std::clamp<int64_t>(start, 0, rank);
    end = std::clamp<int64_t>(end, start, rank);
    bool allStatic = true;
    for (int64_t k = start; k < end; ++k) allStatic &= t.shape[size_t(k)].isStatic();
    if (allStatic) {
      runtime::NDArray a = runtime::NDArray::empty({end - start}, runtime::DType{runtime::DType::Int, 64, 1});
      for (int64_t k = start; k < end; ++k) a.as<int64_t>()[k - start] = t.shape[size_t(k)].value;
      return {makeConstant(a)};
    }
  }
  int64_t rank = int64_t(c.tensorType(c.input(0)).ndim());
  int64_t start = c.attrInt("start", 0), end = c.attrInt("end", rank);
  if (start != 0 || end != rank)
    s = c.call("strided_slice", {s},
               {{"begin", std::vector<int64_t>{start}}, {"end", std::vector<int64_t>{end}}});
  return {s};
}

/// True when `d` uses a symbol that a data-dependent op binds (the names freshSymbol in
/// OnnxConvertersDataDep.cpp gives: nonzero_3, topk_0, ...), not a dim of a graph input.
bool usesDataSymbol(const Dim& d) {
  for (const std::string& n : graph::dimSymbols(d)) {
    size_t u = n.rfind('_');
    if (u == std::string::npos || u + 1 == n.size() || n.find_first_not_of("0123456789", u + 1) != std::string::npos)
      continue;
    const std::string op = n.substr(0, u);
    if (op == "nonzero" || op == "topk" || op == "nms" || op == "unique" || op == "compress") return true;
  }
  return false;
}

/// `y` (a fill or broadcast to the shape in input `shapeInput`, its last entries aligned with
/// y's last axes) made to read every entry that is a data-dependent count: along such an axis,
/// take(y, minimum(arange(0, dim), entry)), the identity. Without a read, the op that binds the
/// count (NonZero) is dead code once only its Shape is used, and compiling fails with "symbol
/// 'nonzero_0' ... is not a dim of any input" (Slice and Range read their count the same way).
Expr readCountEntries(Context& c, Expr y, int shapeInput, const Shape& dims) {
  const DataType i64 = DataType::Int(64);
  const Shape out = c.dims(y);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i].isStatic() || !usesDataSymbol(dims[i])) continue;
    const size_t axis = out.size() - dims.size() + i;
    const Dim& d = out[axis];
    if (d.isStatic()) continue;
    Expr entry = c.input(shapeInput);
    if (c.tensorType(entry).dtype != i64) entry = c.call("cast", {entry}, {{"dtype", i64}});
    entry = c.call("take", {entry, makeScalar(double(i), i64)}, {{"axis", int64_t(0)}});
    Expr idx = c.call("arange", {makeScalar(0.0, i64)}, {{"step", 1.0}, {"length", int64_t(-1)}, {"symbolic_length", d.str()}});
    y = c.call("take", {y, c.call("minimum", {idx, entry})}, {{"axis", int64_t(axis)}});
  }
  return y;
}

Outs constantOfShape(Context& c) {
  runtime::NDArray value;
  if (const auto* a = c.attr("value"))
    value = tensorFromProto(a->t(), c.file() + ": node '" + c.node->name() + "'");
  else {
    value = runtime::NDArray::empty({1}, runtime::DType::f32());
    *value.as<float>() = 0.0f;
  }
  std::vector<tir::Expr> dimsIn = c.shapeInput(0);
  bool symbolic = false;
  for (const tir::Expr& d : dimsIn) symbolic |= !tir::asConstInt(d);
  if (symbolic) {
    // A fill of a symbolic shape: the scalar broadcast to it.
    Shape dims;
    for (const tir::Expr& d : dimsIn) dims.push_back(dimOfValue(c, d));
    runtime::NDArray scalar = runtime::NDArray::empty({}, value.dtype());
    std::memcpy(scalar.data(), value.data(), value.dtype().bytes());
    return {readCountEntries(c, broadcastToDims(c, makeConstant(scalar), dims), 0, dims)};
  }
  std::vector<int64_t> shape = c.constInts(0);
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0 || (d > 0 && count > (int64_t(1) << 31) / d))
      c.fail("shape is negative or too large");
    count *= d;
  }
  runtime::NDArray out = runtime::NDArray::empty(shape, value.dtype());
  size_t eb = value.dtype().bytes();
  for (int64_t i = 0; i < out.numel(); ++i)
    std::memcpy(static_cast<char*>(out.data()) + size_t(i) * eb, value.data(), eb);
  return {makeConstant(out)};
}

Outs expand(Context& c) {
  Expr x = c.input(0);
  if (!c.tensorType(x).isStatic() || !c.input(1).as<ConstantNode>()) {
    std::vector<tir::Expr> t = c.shapeInput(1);
    bool symbolic = !c.tensorType(x).isStatic();
    for (const tir::Expr& d : t) symbolic |= !tir::asConstInt(d);
    if (symbolic) {
      Shape target;
      for (const tir::Expr& d : t) target.push_back(dimOfValue(c, d));
      return {readCountEntries(c, broadcastToDims(c, x, target), 1, target)};
    }
  }
  std::vector<int64_t> target = c.constInts(1);
  std::vector<int64_t> s = c.staticShape(x);
  size_t n = std::max(s.size(), target.size());
  std::vector<int64_t> out(n);
  for (size_t i = 0; i < n; ++i) {
    int64_t a = i < n - s.size() ? 1 : s[i - (n - s.size())];
    int64_t b = i < n - target.size() ? 1 : target[i - (n - target.size())];
    if (a != b && a != 1 && b != 1)
      c.fail("shape " + std::to_string(a) + " vs " + std::to_string(b) + " does not broadcast");
    out[i] = a == 1 ? b : a;
  }
  return {c.call("broadcast_to", {x}, {{"shape", out}})};
}

Outs tile(Context& c) {
  return {c.call("tile", {c.input(0)}, {{"reps", c.constInts(1)}})};
}

Outs dropout(Context& c) {
  double ratio =
      c.opset() >= 12 && c.hasInput(1) ? c.constFloats(1).at(0) : c.attrFloat("ratio", 0.5);
  if (c.opset() >= 12 && c.hasInput(2) && c.constInts(2).at(0) != 0 && ratio != 0)
    c.fail("training-mode Dropout (random masks) is not supported");
  Expr y = c.call("nn.dropout", {c.input(0)}, {{"rate", ratio}});
  if (c.node->output_size() < 2 || c.node->output(1).empty()) return {y};
  // Inference: nothing is dropped, the mask is all true.
  return {y, c.call("broadcast_to", {graph::makeScalar(1.0, DataType::Bool())},
                    {{"shape", c.staticShape(c.input(0))}})};
}

Outs constant(Context& c) {
  std::string what = c.file() + ": node '" + c.node->name() + "'";
  if (const auto* a = c.attr("value")) return {makeConstant(tensorFromProto(a->t(), what))};
  auto vec = [&](const std::vector<int64_t>& shape, DataType t, auto fill) {
    runtime::NDArray arr = runtime::NDArray::empty(shape, toDType(t));
    fill(arr);
    return Outs{makeConstant(arr)};
  };
  if (const auto* a = c.attr("value_float"))
    return vec({}, DataType::Float(32), [&](runtime::NDArray& r) { *r.as<float>() = a->f(); });
  if (const auto* a = c.attr("value_int"))
    return vec({}, DataType::Int(64), [&](runtime::NDArray& r) { *r.as<int64_t>() = a->i(); });
  if (const auto* a = c.attr("value_floats"))
    return vec({int64_t(a->floats_size())}, DataType::Float(32), [&](runtime::NDArray& r) {
      for (int i = 0; i < a->floats_size(); ++i)
        r.as<float>()[i] = a->floats(i);
    });
  if (const auto* a = c.attr("value_ints"))
    return vec({int64_t(a->ints_size())}, DataType::Int(64), [&](runtime::NDArray& r) {
      for (int i = 0; i < a->ints_size(); ++i)
        r.as<int64_t>()[i] = a->ints(i);
    });
  c.fail(
      "Constant without a supported value attribute (sparse and string values are not supported)");
}

Outs range(Context& c) {
  {
    // A symbolic limit (positions 0..seq-1): integer start and delta, count ceil((limit-start)/delta).
    Expr lim = c.input(1);
    bool symbolic = !lim.as<ConstantNode>();
    if (symbolic) {
      std::vector<tir::Expr> sv = c.shapeInput(1);
      symbolic = sv.size() == 1 && !tir::asConstInt(sv[0]);
      if (symbolic) {
        std::vector<int64_t> st = c.constInts(0), dl = c.constInts(2);
        if (st.size() != 1 || dl.size() != 1 || dl[0] <= 0)
          c.fail("a Range with a symbolic limit needs a constant start and a positive constant delta");
        Dim n = dimOf(tir::floordiv(tir::max(sv[0] - tir::intImm(DataType::Int(64), st[0]), tir::intImm(DataType::Int(64), 0)) +
                                        tir::intImm(DataType::Int(64), dl[0] - 1),
                                    tir::intImm(DataType::Int(64), dl[0])));
        if (!n.isStatic() && n.name.empty()) c.fail("the symbolic limit of Range has no usable value");
        DataType t = c.tensorType(c.input(0)).dtype;
        Expr r = c.call("arange", {makeScalar(double(st[0]), t)},
                        {{"step", double(dl[0])}, {"length", n.isStatic() ? n.value : int64_t(-1)},
                         {"symbolic_length", n.isStatic() ? std::string() : n.str()}});
        // Every value is below the limit; the minimum with the limit tensor reads it, which
        // keeps an op that binds a count in the limit (NonZero) in the graph (the symbolic
        // length alone would not, and dead-code elimination would drop it).
        Expr limT = c.tensorType(lim).dtype == t ? lim : c.call("cast", {lim}, {{"dtype", t}});
        return {c.call("minimum", {r, limT})};
      }
    }
  }
  double start = c.constFloats(0).at(0), limit = c.constFloats(1).at(0),
         delta = c.constFloats(2).at(0);
  if (delta == 0) c.fail("delta must not be 0");
  double steps = std::ceil((limit - start) / delta);
  if (!(steps < double(int64_t(1) << 31))) c.fail("the range has too many elements");
  int64_t n = std::max<int64_t>(int64_t(steps), 0);
  DataType t = toDataType(c.constInput(0).dtype());
  runtime::NDArray a = runtime::NDArray::empty({n}, toDType(t));
  for (int64_t i = 0; i < n; ++i) {
    double v = start + double(i) * delta;
    if (t == DataType::Float(32))
      a.as<float>()[i] = float(v);
    else if (t == DataType::Float(64))
      a.as<double>()[i] = v;
    else if (t == DataType::Int(64))
      a.as<int64_t>()[i] = int64_t(v);
    else if (t == DataType::Int(32))
      a.as<int32_t>()[i] = int32_t(v);
    else
      c.fail("Range of " + t.str() + " is not supported");
  }
  return {makeConstant(a)};
}

Outs depthToSpace(Context& c) {
  return {
      c.call("nn.depth_to_space", {c.input(0)},
             {{"block_size", c.attrInt("blocksize", 1)}, {"mode", c.attrString("mode", "DCR")}})};
}

Outs spaceToDepth(Context& c) {
  return {c.call("nn.space_to_depth", {c.input(0)}, {{"block_size", c.attrInt("blocksize", 1)}})};
}

Outs softsign(Context& c) {
  Expr x = c.input(0);
  return {c.call("divide", {x, c.call("add", {c.call("abs", {x}), scalarLike(c, 1, x)})})};
}

Outs thresholdedRelu(Context& c) {
  Expr x = c.input(0);
  Expr keep = c.call("greater", {x, scalarLike(c, c.attrFloat("alpha", 1.0), x)});
  return {c.call("where", {keep, x, scalarLike(c, 0, x)})};
}

Outs celu(Context& c) {
  Expr x = c.input(0);
  double alpha = c.attrFloat("alpha", 1.0);
  Expr em1 = c.call("expm1", {c.call("divide", {x, scalarLike(c, alpha, x)})});
  Expr neg =
      c.call("minimum", {scalarLike(c, 0, x), c.call("multiply", {em1, scalarLike(c, alpha, x)})});
  return {c.call("add", {c.call("maximum", {scalarLike(c, 0, x), x}), neg})};
}

Outs shrink(Context& c) {
  Expr x = c.input(0);
  double lambd = c.attrFloat("lambd", 0.5), bias = c.attrFloat("bias", 0.0);
  Expr lo = c.call("less", {x, scalarLike(c, -lambd, x)});
  Expr hi = c.call("greater", {x, scalarLike(c, lambd, x)});
  Expr up = c.call("add", {x, scalarLike(c, bias, x)});
  Expr down = c.call("subtract", {x, scalarLike(c, bias, x)});
  return {c.call("where", {lo, up, c.call("where", {hi, down, scalarLike(c, 0, x)})})};
}

Outs mod(Context& c) {
  return {c.call(c.attrInt("fmod", 0) ? "trunc_mod" : "floor_mod", {c.input(0), c.input(1)})};
}

/// ReduceL1/L2/LogSum/LogSumExp/SumSquare as an elementwise map, a sum, and a final map.
Converter reduceComposite(const std::string& kind) {
  return [kind](Context& c) {
    Expr x = c.input(0);
    std::vector<int64_t> axes = c.attrInts("axes");
    // Opset 18: the axes are an input; none (with noop_with_empty_axes) is the identity.
    if (c.opset() >= 18) {
      if (c.hasInput(1)) axes = c.constInts(1);
      if (axes.empty() && c.attrInt("noop_with_empty_axes", 0)) return Outs{x};
    }
    Attrs a{{"axis", axes}, {"keepdims", c.attrInt("keepdims", 1)}};
    if (kind == "L1") return Outs{c.call("sum", {c.call("abs", {x})}, a)};
    if (kind == "SumSquare") return Outs{c.call("sum", {c.call("multiply", {x, x})}, a)};
    if (kind == "L2") return Outs{c.call("sqrt", {c.call("sum", {c.call("multiply", {x, x})}, a)})};
    if (kind == "LogSum") return Outs{c.call("log", {c.call("sum", {x}, a)})};
    // LogSumExp, stabilized by the max.
    Attrs keep{{"axis", axes}, {"keepdims", int64_t(1)}};
    Expr m = c.call("max", {x}, keep);
    Expr s = c.call("sum", {c.call("exp", {c.call("subtract", {x, m})})}, keep);
    Expr r = c.call("add", {c.call("log", {s}), m});
    if (c.attrInt("keepdims", 1)) return Outs{r};
    std::vector<int64_t> shape = c.staticShape(c.call("sum", {x}, a));
    return Outs{reshapeTo(c, r, shape)};
  };
}

Outs size(Context& c) {
  std::vector<int64_t> s = c.staticShape(c.input(0));
  runtime::NDArray a = runtime::NDArray::empty({}, toDType(DataType::Int(64)));
  *a.as<int64_t>() = std::accumulate(s.begin(), s.end(), int64_t(1), std::multiplies<int64_t>());
  return {makeConstant(a)};
}

Outs trilu(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> s = c.staticShape(x);
  if (s.size() < 2) c.fail("input must have rank >= 2");
  int64_t k = c.hasInput(1) ? c.constInts(1).at(0) : 0;
  bool upper = c.attrInt("upper", 1) != 0;
  int64_t rows = s[s.size() - 2], cols = s.back();
  runtime::NDArray mask = runtime::NDArray::empty({rows, cols}, toDType(DataType::Bool()));
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      mask.as<uint8_t>()[i * cols + j] = upper ? j - i >= k : j - i <= k;
  return {c.call("where", {makeConstant(mask), x, scalarLike(c, 0, x)})};
}

Outs cumsum(Context& c) {
  return {c.call("cumsum", {c.input(0)},
                 {{"axis", c.constInts(1).at(0)},
                  {"exclusive", c.attrInt("exclusive", 0)},
                  {"reverse", c.attrInt("reverse", 0)}})};
}

Outs eyeLike(Context& c) {
  std::vector<int64_t> s = c.staticShape(c.input(0));
  if (s.size() != 2) c.fail("input must be 2-D");
  DataType t = c.tensorType(c.input(0)).dtype;
  if (const auto* a = c.attr("dtype")) {
    bool ok = false;
    t = dtypeFromOnnx(int(a->i()), &ok);
    if (!ok) c.fail("unsupported dtype");
  }
  int64_t k = c.attrInt("k", 0);
  Expr one = makeScalar(1, t), zero = makeScalar(0, t);
  // Build through where(mask, 1, 0) so any element type works.
  runtime::NDArray mask = runtime::NDArray::empty(s, toDType(DataType::Bool()));
  for (int64_t i = 0; i < s[0]; ++i)
    for (int64_t j = 0; j < s[1]; ++j)
      mask.as<uint8_t>()[i * s[1] + j] = j - i == k;
  return {
      c.call("where", {makeConstant(mask), one, c.call("broadcast_to", {zero}, {{"shape", s}})})};
}

} // namespace

const std::unordered_map<std::string, Converter>& converters() {
  static const std::unordered_map<std::string, Converter> table{
      {"Conv", conv},
      {"ConvTranspose", convTranspose},
      {"Gemm", gemm},
      {"MatMul", matmul},
      {"BatchNormalization", batchNorm},
      {"InstanceNormalization",
       [](Context& c) {
         return Outs{c.call("nn.instance_norm", {c.input(0), c.input(1), c.input(2)},
                            {{"epsilon", c.attrFloat("epsilon", 1e-5)}})};
       }},
      {"LayerNormalization", layerNorm},
      {"Relu", unary("nn.relu")},
      {"LeakyRelu",
       [](Context& c) {
         return Outs{
             c.call("nn.leaky_relu", {c.input(0)}, {{"alpha", c.attrFloat("alpha", 0.01)}})};
       }},
      {"PRelu", prelu},
      {"Elu", elu},
      {"Selu", selu},
      {"Sigmoid", unary("sigmoid")},
      {"HardSigmoid", hardSigmoid},
      {"HardSwish", hardSwish},
      {"Tanh", unary("tanh")},
      {"Softplus", softplus},
      {"Clip", clip},
      {"Erf", unary("erf")},
      {"Add", binary("add")},
      {"Sub", binary("subtract")},
      {"Mul", binary("multiply")},
      {"Div", binary("divide")},
      {"Pow", pow},
      {"Sqrt", unary("sqrt")},
      {"Reciprocal", reciprocal},
      {"Exp", unary("exp")},
      {"Log", unary("log")},
      {"Neg", unary("negative")},
      {"Abs", unary("abs")},
      {"Floor", unary("floor")},
      {"Ceil", unary("ceil")},
      {"Round", unary("round")},
      {"Sign", unary("sign")},
      {"Min", variadic("minimum", false)},
      {"Max", variadic("maximum", false)},
      {"Sum", variadic("add", false)},
      {"Mean", variadic("add", true)},
      {"MaxPool", [](Context& c) { return pool(c, true); }},
      {"AveragePool", [](Context& c) { return pool(c, false); }},
      {"LpPool", lpPool},
      {"GlobalAveragePool", [](Context& c) { return globalPool(c, false); }},
      {"GlobalMaxPool", [](Context& c) { return globalPool(c, true); }},
      {"Flatten", flatten},
      {"Reshape", reshape},
      {"Transpose", transpose},
      {"Concat", concat},
      {"Split", split},
      {"Slice", slice},
      {"Gather", gather},
      {"Squeeze", squeeze},
      {"Unsqueeze", unsqueeze},
      {"Pad", pad},
      {"Resize", resize},
      {"Upsample", resize},
      {"DepthToSpace", depthToSpace},
      {"SpaceToDepth", spaceToDepth},
      {"Softmax", [](Context& c) { return softmax(c, false); }},
      {"LogSoftmax", [](Context& c) { return softmax(c, true); }},
      {"ReduceMean", reduce("mean")},
      {"ReduceSum", reduce("sum")},
      {"ReduceMax", reduce("max")},
      {"ReduceMin", reduce("min")},
      {"ReduceProd", reduce("prod")},
      {"ArgMax", argReduce("argmax")},
      {"ArgMin", argReduce("argmin")},
      {"Shape", shape},
      {"ConstantOfShape", constantOfShape},
      {"Expand", expand},
      {"Tile", tile},
      {"Where",
       [](Context& c) {
         return Outs{c.call("where", {c.input(0), c.input(1), c.input(2)})};
       }},
      {"Equal", binary("equal")},
      {"Less", binary("less")},
      {"LessOrEqual", binary("less_equal")},
      {"Greater", binary("greater")},
      {"GreaterOrEqual", binary("greater_equal")},
      {"Not", unary("logical_not")},
      {"And", binary("logical_and")},
      {"Or", binary("logical_or")},
      {"Xor", binary("logical_xor")},
      {"Identity", [](Context& c) { return Outs{c.input(0)}; }},
      {"Dropout", dropout},
      {"Constant", constant},
      {"Range", range},
      {"Sin", unary("sin")},
      {"Cos", unary("cos")},
      {"Tan", unary("tan")},
      {"Asin", unary("asin")},
      {"Acos", unary("acos")},
      {"Atan", unary("atan")},
      {"Sinh", unary("sinh")},
      {"Cosh", unary("cosh")},
      {"Asinh", unary("asinh")},
      {"Acosh", unary("acosh")},
      {"Atanh", unary("atanh")},
      {"Softsign", softsign},
      {"ThresholdedRelu", thresholdedRelu},
      {"Celu", celu},
      {"Shrink", shrink},
      {"Mod", mod},
      {"ReduceL1", reduceComposite("L1")},
      {"ReduceL2", reduceComposite("L2")},
      {"ReduceLogSum", reduceComposite("LogSum")},
      {"ReduceLogSumExp", reduceComposite("LogSumExp")},
      {"ReduceSumSquare", reduceComposite("SumSquare")},
      {"Size", size},
      {"GatherElements",
       [](Context& c) {
         return Outs{
             c.call("gather_elements", {c.input(0), c.input(1)}, {{"axis", c.attrInt("axis", 0)}})};
       }},
      {"Trilu", trilu},
      {"CumSum", cumsum},
      {"EyeLike", eyeLike},
      {"IsNaN", unary("isnan")},
      {"IsInf",
       [](Context& c) {
         return Outs{c.call("isinf", {c.input(0)},
                            {{"detect_positive", c.attrInt("detect_positive", 1)},
                             {"detect_negative", c.attrInt("detect_negative", 1)}})};
       }},
  };
  // Plus the converters of the other files (extraConverters(), OnnxConvertersLoss.cpp).
  static const std::unordered_map<std::string, Converter> merged = [] {
    auto all = table;
    for (const auto& [name, conv] : extraConverters()) all.emplace(name, conv);
    for (const auto& [name, conv] : einsumConverters()) all.emplace(name, conv);
    for (const auto& [name, conv] : recurrentConverters()) all.emplace(name, conv);
    for (const auto& [name, conv] : indexImageConverters()) all.emplace(name, conv);
    for (const auto& [name, conv] : controlFlowConverters()) all.emplace(name, conv);
    for (const auto& [name, conv] : newerOpsetConverters()) all.emplace(name, conv);
    for (const auto& [name, conv] : quantConverters()) all[name] = conv;
    for (const auto& [name, conv] : dataDependentConverters()) all[name] = conv;
    for (const auto& [name, conv] : castConverters()) all[name] = conv;
    for (const auto& [name, conv] : numericConverters()) all[name] = conv;
    return all;
  }();
  return merged;
}

} // namespace loom::frontend::onnxi
