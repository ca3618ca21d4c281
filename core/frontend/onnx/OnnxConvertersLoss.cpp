// ONNX ops built as graph op chains: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (reductions none/sum/mean, class weights, ignore_index), Hardmax, OneHot, BitShift, the window
// functions, QuantizeLinear/DequantizeLinear/DynamicQuantizeLinear, Compress, LRN,
// MeanVarianceNormalization, GatherND and TopK.
#include <cmath>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;

/// -input[n, target[n, d...], d...] * weight[target], reduced as `reduction`; targets equal to
/// `ignoreIndex` (when given) count neither in the loss nor in the mean's divisor.
Expr nllLoss(Context& c, Expr input, Expr target, Expr weight) {
  std::vector<int64_t> ts = c.staticShape(target);
  DataType dt = c.tensorType(input).dtype;
  DataType it = c.tensorType(target).dtype;
  std::string reduction = c.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    c.fail("reduction must be none, sum or mean, got \"" + reduction + "\"");
  bool hasIgnore = c.attr("ignore_index") != nullptr;
  Expr safe = target, mask;
  if (hasIgnore) {
    Expr ii = graph::makeScalar(double(c.attrInt("ignore_index", 0)), it);
    Expr ignored = c.call("equal", {target, ii});
    safe = c.call("where", {ignored, graph::makeScalar(0.0, it), target});
    mask = c.call("cast", {c.call("logical_not", {ignored})}, {{"dtype", dt}});
  }
  std::vector<int64_t> withClass = ts;
  withClass.insert(withClass.begin() + 1, 1);
  Expr picked = c.call("gather_elements", {input, c.call("reshape", {safe}, {{"newshape", withClass}})}, {{"axis", int64_t(1)}});
  Expr loss = c.call("negative", {c.call("reshape", {picked}, {{"newshape", ts}})});
  Expr w;
  if (weight.defined()) w = c.call("take", {weight, safe}, {{"axis", int64_t(0)}});
  if (mask.defined()) w = w.defined() ? c.call("multiply", {w, mask}) : mask;
  if (w.defined()) loss = c.call("multiply", {loss, w});
  graph::Attrs all{{"axis", std::vector<int64_t>{}}, {"keepdims", int64_t(0)}};
  if (reduction == "none") return loss;
  if (reduction == "sum") return c.call("sum", {loss}, all);
  if (!w.defined()) return c.call("mean", {loss}, all);
  return c.call("divide", {c.call("sum", {loss}, all), c.call("sum", {w}, all)});
}

/// An int64 constant 0, 1, ..., n-1 laid along dimension `axis` of a rank-`rank` shape of ones.
Expr iota(int64_t n, size_t axis, size_t rank) {
  std::vector<int64_t> shape(rank, 1);
  shape[axis] = n;
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType{runtime::DType::Int, 64, 1});
  for (int64_t i = 0; i < n; ++i) a.as<int64_t>()[i] = i;
  return graph::makeConstant(a);
}

std::vector<Expr> hardmax(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> s = c.staticShape(x);
  int64_t rank = int64_t(s.size());
  int64_t axis = c.attrInt("axis", c.opset() >= 13 ? -1 : 1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) c.fail("axis out of range");
  DataType dt = c.tensorType(x).dtype;
  if (c.opset() < 13) {
    // Before opset 13 the input is seen as 2-D: [prod(dims < axis), prod(dims >= axis)].
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) (d < axis ? outer : inner) *= s[size_t(d)];
    Expr flat = c.call("reshape", {x}, {{"newshape", std::vector<int64_t>{outer, inner}}});
    Expr best = c.call("argmax", {flat}, {{"axis", int64_t(1)}, {"keepdims", int64_t(1)}});
    Expr hot = c.call("cast", {c.call("equal", {best, iota(inner, 1, 2)})}, {{"dtype", dt}});
    return {c.call("reshape", {hot}, {{"newshape", s}})};
  }
  Expr best = c.call("argmax", {x}, {{"axis", axis}, {"keepdims", int64_t(1)}});
  return {c.call("cast", {c.call("equal", {best, iota(s[size_t(axis)], size_t(axis), size_t(rank))})}, {{"dtype", dt}})};
}

std::vector<Expr> oneHot(Context& c) {
  Expr idx = c.input(0);
  std::vector<int64_t> s = c.staticShape(idx);
  std::vector<int64_t> dv = c.constInts(1);
  if (dv.size() != 1 || dv[0] <= 0) c.fail("depth must be one positive value");
  int64_t depth = dv[0];
  int64_t rank = int64_t(s.size()) + 1;
  int64_t axis = c.attrInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) c.fail("axis out of range");
  DataType i64 = DataType::Int(64);
  Expr ix = c.tensorType(idx).dtype == i64 ? idx : c.call("cast", {idx}, {{"dtype", i64}});
  ix = c.call("where", {c.call("less", {ix, graph::makeScalar(0, i64)}),
                        c.call("add", {ix, graph::makeScalar(double(depth), i64)}), ix});
  std::vector<int64_t> expanded = s;
  expanded.insert(expanded.begin() + axis, 1);
  ix = c.call("reshape", {ix}, {{"newshape", expanded}});
  Expr values = c.input(2);
  Expr zero = graph::makeScalar(0, i64), one = graph::makeScalar(1, i64);
  Expr off = c.call("take", {values, zero}, {{"axis", int64_t(0)}});
  Expr on = c.call("take", {values, one}, {{"axis", int64_t(0)}});
  Expr hit = c.call("equal", {ix, iota(depth, size_t(axis), size_t(rank))});
  return {c.call("where", {hit, on, off})};
}

std::vector<Expr> bitShift(Context& c) {
  Expr x = c.input(0), y = c.input(1);
  DataType t = c.tensorType(x).dtype;
  if (!t.isUInt()) c.fail("BitShift takes unsigned integers");
  // x << y = x * 2^y (wrapping), x >> y = x / 2^y (truncating), for shifts below the bit width.
  Expr p = c.call("power", {graph::makeScalar(2, t), y});
  std::string dir = c.attrString("direction", "");
  if (dir == "LEFT") return {c.call("multiply", {x, p})};
  if (dir == "RIGHT") return {c.call("divide", {x, p})};
  c.fail("direction must be LEFT or RIGHT, got \"" + dir + "\"");
}

/// Hann, Hamming and Blackman windows: cosine sums a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N).
Converter window(double a0, double a1, double a2) {
  return [a0, a1, a2](Context& c) {
    std::vector<int64_t> sz = c.constInts(0);
    if (sz.size() != 1 || sz[0] < 0) c.fail("size must be one non-negative value");
    int64_t n = sz[0];
    bool periodic = c.attrInt("periodic", 1) != 0;
    bool ok = true;
    DataType t = dtypeFromOnnx(int(c.attrInt("output_datatype", 1)), &ok);
    if (!ok) c.fail("unsupported output_datatype");
    double denom = periodic ? double(n) : double(n - 1);
    runtime::NDArray a = runtime::NDArray::empty({n}, runtime::DType::f32());
    for (int64_t i = 0; i < n; ++i) {
      double k = denom > 0 ? 2 * M_PI * double(i) / denom : 0.0;
      a.as<float>()[i] = float(a0 - a1 * std::cos(k) + a2 * std::cos(2 * k));
    }
    Expr w = graph::makeConstant(a);
    if (t != DataType::Float(32)) w = c.call("cast", {w}, {{"dtype", t}});
    return std::vector<Expr>{w};
  };
}

std::vector<Expr> compress(Context& c) {
  Expr x = c.input(0);
  runtime::NDArray cond = c.constInput(1);
  std::vector<int64_t> s = c.staticShape(x);
  bool hasAxis = c.attr("axis") != nullptr;
  int64_t axis = hasAxis ? c.attrInt("axis", 0) : 0;
  if (!hasAxis) {
    int64_t total = 1;
    for (int64_t d : s) total *= d;
    x = c.call("reshape", {x}, {{"newshape", std::vector<int64_t>{total}}});
    s = {total};
  }
  if (axis < 0) axis += int64_t(s.size());
  std::vector<int64_t> keep;
  for (int64_t i = 0; i < cond.numel() && i < s[size_t(axis)]; ++i)
    if (static_cast<const uint8_t*>(cond.data())[i * int64_t(cond.dtype().bytes())] != 0) keep.push_back(i);
  runtime::NDArray idx = runtime::NDArray::empty({int64_t(keep.size())}, runtime::DType{runtime::DType::Int, 64, 1});
  for (size_t i = 0; i < keep.size(); ++i) idx.as<int64_t>()[i] = keep[i];
  return {c.call("take", {x, graph::makeConstant(idx)}, {{"axis", axis}})};
}

std::vector<Expr> dynamicQuantize(Context& c) {
  Expr x = c.input(0);
  DataType f = c.tensorType(x).dtype;
  graph::Attrs all{{"axis", std::vector<int64_t>{}}, {"keepdims", int64_t(0)}};
  Expr zero = graph::makeScalar(0, f);
  Expr hi = c.call("maximum", {c.call("max", {x}, all), zero});
  Expr lo = c.call("minimum", {c.call("min", {x}, all), zero});
  Expr scale = c.call("divide", {c.call("subtract", {hi, lo}), graph::makeScalar(255, f)});
  graph::Attrs sat{{"a_min", 0.0}, {"a_max", 255.0}};
  Expr zpf = c.call("clip", {c.call("round", {c.call("divide", {c.call("negative", {lo}), scale})})}, sat);
  Expr y = c.call("clip", {c.call("add", {c.call("round", {c.call("divide", {x, scale})}), zpf})}, sat);
  graph::Attrs u8{{"dtype", DataType::UInt(8)}};
  return {c.call("cast", {y}, u8), scale, c.call("cast", {zpf}, u8)};
}

std::vector<Expr> lrn(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> s = c.staticShape(x);
  if (s.size() < 3) c.fail("LRN needs an input of rank >= 3");
  int64_t size = c.attrInt("size", 0);
  if (size <= 0) c.fail("size must be positive");
  double alpha = c.attrFloat("alpha", 1e-4), beta = c.attrFloat("beta", 0.75), bias = c.attrFloat("bias", 1.0);
  DataType f = c.tensorType(x).dtype;
  int64_t inner = 1;
  for (size_t d = 2; d < s.size(); ++d) inner *= s[d];
  // The channel window sum as an average pool over a (1, C, inner) view, padding counted.
  Expr sq = c.call("reshape", {c.call("multiply", {x, x})}, {{"newshape", std::vector<int64_t>{s[0], 1, s[1], inner}}});
  int64_t before = (size - 1) / 2, after = size - 1 - before;
  Expr avg = c.call("nn.avg_pool2d", {sq},
                    {{"pool_size", std::vector<int64_t>{size, 1}},
                     {"padding", std::vector<int64_t>{before, 0, after, 0}},
                     {"count_include_pad", int64_t(1)}});
  Expr sum = c.call("reshape", {avg}, {{"newshape", s}});
  Expr base = c.call("add", {graph::makeScalar(bias, f), c.call("multiply", {sum, graph::makeScalar(alpha, f)})});
  return {c.call("divide", {x, c.call("power", {base, graph::makeScalar(beta, f)})})};
}

std::vector<Expr> meanVarianceNormalization(Context& c) {
  Expr x = c.input(0);
  graph::Attrs keep{{"axis", c.attrInts("axes", {0, 2, 3})}, {"keepdims", int64_t(1)}};
  Expr centered = c.call("subtract", {x, c.call("mean", {x}, keep)});
  Expr var = c.call("mean", {c.call("multiply", {centered, centered})}, keep);
  return {c.call("divide", {centered, c.call("sqrt", {var})})};
}

std::vector<Expr> gatherND(Context& c) {
  const int64_t b = c.attrInt("batch_dims", 0);
  Expr data = c.input(0), idx = c.input(1);
  std::vector<int64_t> ds = c.staticShape(data), is;
  // The indices may have data-dependent leading dims (NonZero's count, boolean-mask indexing as
  // PyTorch exports it) when batch_dims is 0; the last dim (the index depth) must be static.
  graph::Shape idims = c.dims(idx);
  if (idims.empty()) c.fail("indices must have rank >= 1");
  if (!idims.back().isStatic()) c.fail("the last dimension of indices (the index depth) must be static");
  if (b > 0) is = c.staticShape(idx);
  else
    for (const graph::Dim& d : idims) is.push_back(d.isStatic() ? d.value : 1);
  int64_t k = idims.back().value;
  if (b < 0 || b >= int64_t(is.size()) || b + k > int64_t(ds.size()) || k < 1)
    c.fail("batch_dims and the last indices dimension must fit the ranks of data and indices");
  for (int64_t j = 0; j < b; ++j)
    if (ds[size_t(j)] != is[size_t(j)]) c.fail("data and indices disagree on batch dim " + std::to_string(j));
  // Flat index into the first b + k dims: the batch position's offset plus
  // sum_j normalize(idx[..., j]) * stride_j over dims b .. b+k-1.
  DataType i64 = DataType::Int(64);
  runtime::NDArray dims = runtime::NDArray::empty({k}, runtime::DType{runtime::DType::Int, 64, 1});
  runtime::NDArray strides = runtime::NDArray::empty({k}, runtime::DType{runtime::DType::Int, 64, 1});
  int64_t stride = 1;
  for (int64_t j = k; j-- > 0;) {
    dims.as<int64_t>()[j] = ds[size_t(b + j)];
    strides.as<int64_t>()[j] = stride;
    stride *= ds[size_t(b + j)];
  }
  Expr ix = c.tensorType(idx).dtype == i64 ? idx : c.call("cast", {idx}, {{"dtype", i64}});
  Expr dimsC = graph::makeConstant(dims);
  ix = c.call("where", {c.call("less", {ix, graph::makeScalar(0, i64)}), c.call("add", {ix, dimsC}), ix});
  Expr flat = c.call("sum", {c.call("multiply", {ix, graph::makeConstant(strides)})},
                     {{"axis", std::vector<int64_t>{-1}}, {"keepdims", int64_t(0)}});
  int64_t batches = 1;
  for (int64_t j = 0; j < b; ++j) batches *= ds[size_t(j)];
  if (b > 0) {
    std::vector<int64_t> lead(is.begin(), is.end() - 1), offShape(lead.size(), 1);
    for (int64_t j = 0; j < b; ++j) offShape[size_t(j)] = is[size_t(j)];
    runtime::NDArray off = runtime::NDArray::empty(offShape, runtime::DType{runtime::DType::Int, 64, 1});
    for (int64_t q = 0; q < batches; ++q) off.as<int64_t>()[q] = q * stride;
    flat = c.call("add", {flat, graph::makeConstant(off)});
  }
  std::vector<int64_t> view{batches * stride};
  view.insert(view.end(), ds.begin() + b + k, ds.end());
  return {c.call("take", {c.call("reshape", {data}, {{"newshape", view}}), flat}, {{"axis", int64_t(0)}})};
}

/// TopK as K rounds of argmax (argmin for largest=0) that mask each winner: values and int64
/// indices along `axis`, sorted, ties to the lower index.
std::vector<Expr> topK(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> s = c.staticShape(x);
  std::vector<int64_t> kv = c.constInts(1);
  if (kv.size() != 1 || kv[0] < 1) c.fail("K must be one positive value");
  int64_t k = kv[0];
  int64_t rank = int64_t(s.size());
  int64_t axis = c.attrInt("axis", -1);
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank || k > s[size_t(axis)]) c.fail("axis or K out of range");
  if (k > 64) c.fail("K above 64 is not supported");
  DataType t = c.tensorType(x).dtype;
  if (!t.isFloat()) c.fail("TopK of non-float tensors is not supported");
  bool largest = c.attrInt("largest", 1) != 0;
  Expr pos = iota(s[size_t(axis)], size_t(axis), size_t(rank));
  Expr masked = x;
  Expr fill = graph::makeScalar(largest ? -INFINITY : INFINITY, t);
  std::vector<Expr> values, indices;
  for (int64_t i = 0; i < k; ++i) {
    Expr best = c.call(largest ? "argmax" : "argmin", {masked}, {{"axis", axis}, {"keepdims", int64_t(1)}});
    values.push_back(c.call("gather_elements", {x, best}, {{"axis", axis}}));
    indices.push_back(best);
    if (i + 1 < k) masked = c.call("where", {c.call("equal", {pos, best}), fill, masked});
  }
  if (k == 1) return {values[0], indices[0]};
  return {c.call("concatenate", values, {{"axis", axis}}), c.call("concatenate", indices, {{"axis", axis}})};
}

}  // namespace

const std::unordered_map<std::string, Converter>& extraConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"Hardmax", hardmax},
      {"TopK", topK},
      {"DynamicQuantizeLinear", dynamicQuantize},
      {"LRN", lrn},
      {"MeanVarianceNormalization", meanVarianceNormalization},
      {"GatherND", gatherND},
      {"BitShift", bitShift},
      {"HannWindow", window(0.5, 0.5, 0.0)},
      {"HammingWindow", window(25.0 / 46.0, 21.0 / 46.0, 0.0)},
      {"BlackmanWindow", window(0.42, 0.5, 0.08)},
      {"Compress", compress},
      {"OneHot", oneHot},
      {"NegativeLogLikelihoodLoss",
       [](Context& c) {
         Expr weight = c.hasInput(2) ? c.input(2) : Expr();
         return std::vector<Expr>{nllLoss(c, c.input(0), c.input(1), weight)};
       }},
      {"SoftmaxCrossEntropyLoss",
       [](Context& c) {
         Expr logProb = c.call("nn.log_softmax", {c.input(0)}, {{"axis", int64_t(1)}});
         Expr weight = c.hasInput(2) ? c.input(2) : Expr();
         return std::vector<Expr>{nllLoss(c, logProb, c.input(1), weight), logProb};
       }},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
