// Neural-network ops: convolutions, dense/matmul, normalizations, pooling, softmax, resize.
#include <algorithm>
#include <cmath>
#include <limits>

#include "core/graph/Layout.h"
#include "core/graph/OpsInternal.h"
#include "core/graph/SymDim.h"
#include "core/graph/Winograd.h"
#include "core/tir/Op.h"

namespace loom::graph {

namespace {

using SymFn = std::function<tir::Expr(const tir::Expr&)>;

/// A dim computed from an input dim: `f` of its value when static, `g` of its expression when
/// symbolic (unknown without `g`, or when the input is unknown).
Dim derive(const Dim& in, const std::function<int64_t(int64_t)>& f, const SymFn& g = {}) {
  if (in.isStatic()) return Dim(f(in.value));
  tir::Expr e = dimExpr(in);
  return g && e.defined() ? dimOf(g(e)) : Dim::any();
}

tir::Expr i64(int64_t v) { return tir::intImm(DataType::Int(64), v); }

void requireRank(const CallNode& call, const TensorTypeNode& t, size_t rank, const char* what) {
  if (t.ndim() != rank)
    LOOM_TYPE_FAIL(call) << what << " must have rank " << rank << ", got "
                         << typeStr(TensorType(&t));
}

void requireFloat(const CallNode& call, const TensorTypeNode& t, const char* what) {
  if (!t.dtype.isFloat())
    LOOM_TYPE_FAIL(call) << what << " must be floating point, got " << t.dtype.str();
}

void requireLen(const CallNode& call, const std::string& attr, size_t n) {
  if (call.attrs.getInts(attr).size() != n)
    LOOM_TYPE_FAIL(call) << "attribute '" << attr << "' must have " << n << " values, got "
                         << attrValueStr(call.attrs.getInts(attr));
}

bool dimsMatch(const Dim& a, const Dim& b) {
  return !a.isStatic() || !b.isStatic() || a.value == b.value;
}

std::vector<AttrSpec> convAttrs(bool transpose) {
  std::vector<AttrSpec> a{attrInts("strides", std::vector<int64_t>{1, 1}),
                          attrInts("padding", std::vector<int64_t>{0, 0, 0, 0}),
                          attrInts("dilation", std::vector<int64_t>{1, 1}), attrInt("groups", 1)};
  if (transpose)
    a.push_back(attrInts("output_padding", std::vector<int64_t>{0, 0}));
  else {
    a.push_back(attrString("data_layout", "NCHW"));
    a.push_back(attrString("kernel_layout", "OIHW"));
  }
  return a;
}

void checkConvAttrs(const CallNode& call) {
  requireLen(call, "strides", 2);
  requireLen(call, "padding", 4);
  requireLen(call, "dilation", 2);
  for (int64_t s : call.attrs.getInts("strides"))
    if (s < 1) LOOM_TYPE_FAIL(call) << "strides must be positive";
  for (int64_t d : call.attrs.getInts("dilation"))
    if (d < 1) LOOM_TYPE_FAIL(call) << "dilation must be positive";
  for (int64_t p : call.attrs.getInts("padding"))
    if (p < 0) LOOM_TYPE_FAIL(call) << "padding must not be negative";
  if (call.attrs.getInt("groups") < 1) LOOM_TYPE_FAIL(call) << "groups must be positive";
}

Type conv2dPlainRel(const CallNode& call, const TensorTypeNode& d, const TensorTypeNode& w) {
  requireRank(call, d, 4, "data (NCHW)");
  requireRank(call, w, 4, "weight (OIHW)");
  checkConvAttrs(call);
  if (d.dtype != w.dtype)
    LOOM_TYPE_FAIL(call) << "data and weight types differ: " << d.dtype.str() << " vs "
                         << w.dtype.str();
  int64_t g = call.attrs.getInt("groups");
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  if (d.shape[1].isStatic() && w.shape[1].isStatic() && d.shape[1].value != w.shape[1].value * g)
    LOOM_TYPE_FAIL(call) << "data " << typeStr(TensorType(&d)) << " has " << d.shape[1].value
                         << " input channels but weight " << typeStr(TensorType(&w)) << " expects "
                         << w.shape[1].value * g << " (" << w.shape[1].value << " x groups " << g
                         << ")";
  if (w.shape[0].isStatic() && w.shape[0].value % g != 0)
    LOOM_TYPE_FAIL(call) << "output channels " << w.shape[0].value << " not divisible by groups "
                         << g;
  Shape out{d.shape[0], w.shape[0]};
  for (int i = 0; i < 2; ++i) {
    if (!w.shape[2 + i].isStatic()) LOOM_TYPE_FAIL(call) << "kernel size must be static";
    int64_t k = w.shape[2 + i].value;
    int64_t eff = dl[i] * (k - 1) + 1;
    Dim o =
        derive(
            d.shape[2 + i],
            [&](int64_t h) {
              // A kernel wider than the padded data has no output (not (-1) / 2 + 1 = 1).
              int64_t span = h + p[i] + p[i + 2] - eff;
              return span < 0 ? int64_t(0) : span / s[i] + 1;
            },
            // Symbolic: the kernel is taken to fit (the kernels check the extents at run time).
            [&](const tir::Expr& h) { return tir::floordiv(h + i64(p[i] + p[i + 2] - eff), i64(s[i])) + i64(1); });
    if (o.isStatic() && o.value < 1)
      LOOM_TYPE_FAIL(call) << "kernel " << shapeStr(w.shape) << " does not fit data "
                           << shapeStr(d.shape) << " with padding " << attrValueStr(p);
    out.push_back(o);
  }
  return tensorType(out, d.dtype);
}

/// logicalShape / physicalShape over dims: a data layout's batch and image size may be symbolic
/// (a dynamic model), its channels (the only dims that move) must be static; a kernel layout's
/// dims must all be static.
/// `f` (logicalShape or physicalShape) of a shape whose dims are all static; nullopt otherwise.
std::optional<Shape> ofStaticDims(const Shape& s,
                                  std::optional<std::vector<int64_t>> (*f)(const Layout&, const std::vector<int64_t>&),
                                  const Layout& l) {
  std::vector<int64_t> v;
  for (const Dim& d : s) {
    if (!d.isStatic()) return std::nullopt;
    v.push_back(d.value);
  }
  auto r = f(l, v);
  return r ? std::optional<Shape>(Shape(r->begin(), r->end())) : std::nullopt;
}
std::optional<Shape> logicalDims(const Layout& l, const Shape& s) {
  if (l.isPlain()) return s.size() == 4 ? std::optional<Shape>(s) : std::nullopt;
  if (l.kernel || (s.size() == 5 && std::all_of(s.begin(), s.end(), [](const Dim& d) { return d.isStatic(); })))
    return ofStaticDims(s, logicalShape, l);
  if (s.size() != 5 || !s[1].isStatic() || !s[4].isStatic() || s[4].value != l.blockA) return std::nullopt;
  return Shape{s[0], Dim(s[1].value * s[4].value), s[2], s[3]};
}
std::optional<Shape> physicalDims(const Layout& l, const Shape& s) {
  if (l.isPlain()) return s;
  if (s.size() != 4 || !s[1].isStatic()) return std::nullopt;
  if (l.kernel) return ofStaticDims(s, physicalShape, l);
  if (s[1].value % l.blockA) return std::nullopt;
  return Shape{s[0], Dim(s[1].value / l.blockA), s[2], s[3], Dim(l.blockA)};
}

/// The data and kernel layouts of a conv2d call; nullopt for plain NCHW / OIHW.
std::optional<std::pair<Layout, Layout>> convLayouts(const CallNode& call) {
  const std::string& dl = call.attrs.getString("data_layout");
  const std::string& kl = call.attrs.getString("kernel_layout");
  if (dl == "NCHW" && kl == "OIHW") return std::nullopt;
  std::optional<Layout> d = parseLayout(dl), k = parseLayout(kl);
  if (!d || d->kernel || !k || !k->kernel)
    LOOM_TYPE_FAIL(call) << "unsupported layouts data_layout=\"" << dl << "\", kernel_layout=\""
                         << kl << "\" (NCHW or NCHW{k}c with OIHW or OIHW{i}i{o}o)";
  // A depthwise conv (groups > 1, one input channel per group) has kernel layout OIHW1i{k}o.
  bool depthwise = call.attrs.getInt("groups") > 1 && k->blockA == 1 && k->blockB == d->blockA;
  if (d->blockA != k->blockA && !depthwise)
    LOOM_TYPE_FAIL(call) << "data block " << d->blockA << " of " << dl
                         << " differs from the kernel's input block " << k->blockA << " of " << kl;
  return std::make_pair(*d, *k);
}

Type conv2dRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& w = argTensor(call, args, 1);
  auto layouts = convLayouts(call);
  if (!layouts) return conv2dPlainRel(call, d, w);
  if (!w.isStatic()) LOOM_TYPE_FAIL(call) << "blocked layouts need a static weight shape";
  // The batch and image size may be symbolic; the channels are static (logicalDims).
  auto dl = logicalDims(layouts->first, d.shape);
  auto wl = logicalShape(layouts->second, w.staticShape());
  int64_t groups = call.attrs.getInt("groups");
  const int64_t dc = dl ? (*dl)[1].value : 0;
  const bool depthwise = dl && wl && groups == dc && (*wl)[0] == groups && (*wl)[1] == 1 &&
                         layouts->second.blockB == layouts->first.blockA;
  // Grouped: each group's input and output channels are whole blocks.
  const bool blockGroups = dl && wl && dc % groups == 0 && (*wl)[0] % groups == 0 &&
                           (dc / groups) % layouts->first.blockA == 0 &&
                           ((*wl)[0] / groups) % layouts->second.blockB == 0 && layouts->second.blockA == layouts->first.blockA;
  if (groups != 1 && !depthwise && !blockGroups)
    LOOM_TYPE_FAIL(call) << "blocked layouts support groups=1, depthwise convs (groups = "
                            "channels, kernel OIHW1i{k}o) and groups of whole channel blocks only";
  if (!dl)
    LOOM_TYPE_FAIL(call) << "data " << typeStr(TensorType(&d)) << " is not in layout "
                         << layouts->first.str();
  if (!wl)
    LOOM_TYPE_FAIL(call) << "weight " << typeStr(TensorType(&w)) << " is not in layout "
                         << layouts->second.str();
  Type out = conv2dPlainRel(call, *tensorType(*dl, d.dtype), *tensorType(*wl, w.dtype));
  Layout outLayout;
  outLayout.blockA = layouts->second.blockB;
  return tensorType(*physicalDims(outLayout, out.as<TensorTypeNode>()->shape), d.dtype);
}

/// Converts a host tensor between a blocked layout and its logical (NCHW / OIHW) form.
HostTensor relayout(const HostTensor& t, const Layout& from, const Layout& to) {
  std::vector<int64_t> logical = *logicalShape(from, t.shape);
  HostTensor r(*physicalShape(to, logical), t.dtype);
  for (int64_t a = 0; a < logical[0]; ++a)
    for (int64_t b = 0; b < logical[1]; ++b)
      for (int64_t h = 0; h < logical[2]; ++h)
        for (int64_t w = 0; w < logical[3]; ++w)
          r.v[physicalIndex(to, logical, a, b, h, w)] =
              t.v[physicalIndex(from, logical, a, b, h, w)];
  return r;
}

HostTensor conv2dPlainKernel(const CallNode& call, const std::vector<HostTensor>& in,
                             const std::vector<int64_t>& outShape, DataType dtype);

HostTensor conv2dKernel(const CallNode& call, const std::vector<HostTensor>& in,
                        const TensorTypeNode& outT) {
  auto layouts = convLayouts(call);
  if (!layouts) return conv2dPlainKernel(call, in, outT.staticShape(), outT.dtype);
  Layout plainData, plainKernel, outLayout;
  plainKernel.kernel = true;
  outLayout.blockA = layouts->second.blockB;
  std::vector<HostTensor> logical{relayout(in[0], layouts->first, plainData),
                                  relayout(in[1], layouts->second, plainKernel)};
  HostTensor out =
      conv2dPlainKernel(call, logical, *logicalShape(outLayout, outT.staticShape()), outT.dtype);
  return relayout(out, plainData, outLayout);
}

HostTensor conv2dPlainKernel(const CallNode& call, const std::vector<HostTensor>& in,
                             const std::vector<int64_t>& outShape, DataType dtype) {
  const HostTensor& x = in[0];
  const HostTensor& w = in[1];
  HostTensor r(outShape, dtype);
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  int64_t g = call.attrs.getInt("groups");
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t O = w.shape[0], CI = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t OH = r.shape[2], OW = r.shape[3];
  int64_t opg = O / g;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t o = 0; o < O; ++o) {
      int64_t grp = o / opg;
      for (int64_t oh = 0; oh < OH; ++oh)
        for (int64_t ow = 0; ow < OW; ++ow) {
          double acc = 0;
          for (int64_t ci = 0; ci < CI; ++ci) {
            int64_t c = grp * CI + ci;
            for (int64_t kh = 0; kh < KH; ++kh) {
              int64_t ih = oh * s[0] - p[0] + kh * dl[0];
              if (ih < 0 || ih >= H) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t iw = ow * s[1] - p[1] + kw * dl[1];
                if (iw < 0 || iw >= W) continue;
                acc +=
                    x.v[((n * C + c) * H + ih) * W + iw] * w.v[((o * CI + ci) * KH + kh) * KW + kw];
              }
            }
          }
          r.v[((n * O + o) * OH + oh) * OW + ow] = acc;
        }
    }
  return r;
}

Type conv2dTransposeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& w = argTensor(call, args, 1);
  requireRank(call, d, 4, "data (NCHW)");
  requireRank(call, w, 4, "weight (IOHW)");
  checkConvAttrs(call);
  requireLen(call, "output_padding", 2);
  int64_t g = call.attrs.getInt("groups");
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  const auto& op = call.attrs.getInts("output_padding");
  if (!dimsMatch(d.shape[1], w.shape[0]))
    LOOM_TYPE_FAIL(call) << "data " << typeStr(TensorType(&d)) << " has " << d.shape[1].value
                         << " channels but weight " << typeStr(TensorType(&w)) << " expects "
                         << w.shape[0].value;
  Shape out{d.shape[0], derive(w.shape[1], [&](int64_t c) { return c * g; })};
  for (int i = 0; i < 2; ++i) {
    if (!w.shape[2 + i].isStatic()) LOOM_TYPE_FAIL(call) << "kernel size must be static";
    int64_t k = w.shape[2 + i].value;
    out.push_back(derive(
        d.shape[2 + i],
        [&](int64_t h) { return (h - 1) * s[i] - p[i] - p[i + 2] + dl[i] * (k - 1) + op[i] + 1; },
        [&](const tir::Expr& h) { return h * i64(s[i]) + i64(-s[i] - p[i] - p[i + 2] + dl[i] * (k - 1) + op[i] + 1); }));
  }
  return tensorType(out, d.dtype);
}

HostTensor conv2dTransposeKernel(const CallNode& call, const std::vector<HostTensor>& in,
                                 const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  const HostTensor& w = in[1];
  HostTensor r(outT.staticShape(), outT.dtype);
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  int64_t g = call.attrs.getInt("groups");
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3];
  int64_t OPG = w.shape[1], KH = w.shape[2], KW = w.shape[3];
  int64_t O = r.shape[1], OH = r.shape[2], OW = r.shape[3];
  int64_t cpg = C / g;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c) {
      int64_t grp = c / cpg;
      for (int64_t h = 0; h < H; ++h)
        for (int64_t wi = 0; wi < W; ++wi) {
          double xv = x.v[((n * C + c) * H + h) * W + wi];
          for (int64_t oc = 0; oc < OPG; ++oc)
            for (int64_t kh = 0; kh < KH; ++kh) {
              int64_t oh = h * s[0] - p[0] + kh * dl[0];
              if (oh < 0 || oh >= OH) continue;
              for (int64_t kw = 0; kw < KW; ++kw) {
                int64_t ow = wi * s[1] - p[1] + kw * dl[1];
                if (ow < 0 || ow >= OW) continue;
                int64_t o = grp * OPG + oc;
                r.v[((n * O + o) * OH + oh) * OW + ow] +=
                    xv * w.v[((c * OPG + oc) * KH + kh) * KW + kw];
              }
            }
        }
    }
  return r;
}

Type denseRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& w = argTensor(call, args, 1);
  if (d.ndim() < 1) LOOM_TYPE_FAIL(call) << "data must have rank >= 1";
  requireRank(call, w, 2, "weight");
  if (!dimsMatch(d.shape.back(), w.shape[1]))
    LOOM_TYPE_FAIL(call) << "data " << typeStr(TensorType(&d)) << " and weight "
                         << typeStr(TensorType(&w)) << " disagree on the reduction dimension ("
                         << d.shape.back().str() << " vs " << w.shape[1].str() << ")";
  if (d.dtype != w.dtype) LOOM_TYPE_FAIL(call) << "data and weight types differ";
  Shape out = d.shape;
  out.back() = w.shape[0];
  return tensorType(out, d.dtype);
}

HostTensor denseKernel(const CallNode&, const std::vector<HostTensor>& in,
                       const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  const HostTensor& w = in[1];
  HostTensor r(outT.staticShape(), outT.dtype);
  int64_t K = w.shape[1], N = w.shape[0], M = x.numel() / std::max<int64_t>(K, 1);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double acc = 0;
      for (int64_t k = 0; k < K; ++k)
        acc += x.v[m * K + k] * w.v[n * K + k];
      r.v[m * N + n] = acc;
    }
  return r;
}

Type matmulRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& a = argTensor(call, args, 0);
  const TensorTypeNode& b = argTensor(call, args, 1);
  if (a.ndim() < 1 || b.ndim() < 1) LOOM_TYPE_FAIL(call) << "operands must have rank >= 1";
  if (a.dtype != b.dtype)
    LOOM_TYPE_FAIL(call) << "operand types differ: " << a.dtype.str() << " vs " << b.dtype.str();
  Shape sa = a.shape, sb = b.shape;
  bool va = sa.size() == 1, vb = sb.size() == 1;
  if (va) sa.insert(sa.begin(), Dim(1));
  if (vb) sb.push_back(Dim(1));
  if (!dimsMatch(sa.back(), sb[sb.size() - 2]))
    LOOM_TYPE_FAIL(call) << "shapes " << shapeStr(a.shape) << " and " << shapeStr(b.shape)
                         << " do not agree on the reduction dimension (" << sa.back().str()
                         << " vs " << sb[sb.size() - 2].str() << ")";
  Shape ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  Shape out = broadcastShapes(call, ba, bb);
  if (!va) out.push_back(sa[sa.size() - 2]);
  if (!vb) out.push_back(sb.back());
  return tensorType(out, a.dtype);
}

HostTensor matmulKernel(const CallNode&, const std::vector<HostTensor>& in,
                        const TensorTypeNode& outT) {
  std::vector<int64_t> sa = in[0].shape, sb = in[1].shape;
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  int64_t M = sa[sa.size() - 2], K = sa.back(), N = sb.back();
  std::vector<int64_t> ba(sa.begin(), sa.end() - 2), bb(sb.begin(), sb.end() - 2);
  std::vector<int64_t> batch = broadcastStatic(ba, bb);
  int64_t nb = HostTensor::count(batch);
  HostTensor r(outT.staticShape(), outT.dtype);
  std::vector<int64_t> idx;
  for (int64_t b = 0; b < nb; ++b) {
    unravel(b, batch, idx);
    int64_t oa = broadcastIndex(idx, ba) * M * K, ob = broadcastIndex(idx, bb) * K * N;
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += in[0].v[oa + m * K + k] * in[1].v[ob + k * N + n];
        r.v[b * M * N + m * N + n] = acc;
      }
  }
  return r;
}

/// Checks that argument `i` is a vector of length data.shape[axis].
void requireChannelVector(const CallNode& call, const std::vector<Type>& args, size_t i,
                          const Dim& channels, const char* what) {
  const TensorTypeNode& t = argTensor(call, args, i);
  if (t.ndim() != 1 || !dimsMatch(t.shape[0], channels))
    LOOM_TYPE_FAIL(call) << what << " must have shape (" << channels.str() << ",), got "
                         << typeStr(args[i]);
}

Type biasAddRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  requireChannelVector(call, args, 1, d.shape[axis], "bias");
  return tensorType(d.shape, d.dtype);
}

/// For per-channel ops: the channel of flat index i for `axis` of `shape`.
struct ChannelIndexer {
  int64_t inner = 1, channels = 1;
  ChannelIndexer(const std::vector<int64_t>& shape, int64_t axis) {
    channels = shape[axis];
    for (size_t k = axis + 1; k < shape.size(); ++k)
      inner *= shape[k];
  }
  int64_t operator()(int64_t i) const { return (i / inner) % channels; }
};

Type batchNormRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  requireFloat(call, d, "data");
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  const char* names[] = {"gamma", "beta", "moving_mean", "moving_var"};
  for (size_t i = 1; i < 5; ++i)
    requireChannelVector(call, args, i, d.shape[axis], names[i - 1]);
  return tensorType(d.shape, d.dtype);
}

HostTensor batchNormKernel(const CallNode& call, const std::vector<HostTensor>& in,
                           const TensorTypeNode& outT) {
  HostTensor r(in[0].shape, outT.dtype);
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(in[0].shape.size());
  ChannelIndexer ch(in[0].shape, axis);
  double eps = call.attrs.getFloat("epsilon");
  for (int64_t i = 0; i < r.numel(); ++i) {
    int64_t c = ch(i);
    r.v[i] = (in[0].v[i] - in[3].v[c]) / std::sqrt(in[4].v[c] + eps) * in[1].v[c] + in[2].v[c];
  }
  return r;
}

Type layerNormRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  requireFloat(call, d, "data");
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  Shape norm(d.shape.begin() + axis, d.shape.end());
  for (size_t i = 1; i < 3; ++i) {
    const TensorTypeNode& t = argTensor(call, args, i);
    // gamma/beta broadcast against the normalized dims.
    Shape b = broadcastShapes(call, norm, t.shape);
    if (b.size() != norm.size())
      LOOM_TYPE_FAIL(call) << (i == 1 ? "scale " : "bias ") << typeStr(args[i])
                           << " does not broadcast to the normalized dims " << shapeStr(norm);
  }
  return tensorType(d.shape, d.dtype);
}

HostTensor layerNormKernel(const CallNode& call, const std::vector<HostTensor>& in,
                           const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(x.shape, outT.dtype);
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(x.shape.size());
  std::vector<int64_t> norm(x.shape.begin() + axis, x.shape.end());
  int64_t inner = HostTensor::count(norm), outer = x.numel() / std::max<int64_t>(inner, 1);
  double eps = call.attrs.getFloat("epsilon");
  std::vector<int64_t> idx;
  for (int64_t o = 0; o < outer; ++o) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < inner; ++i)
      mean += x.v[o * inner + i];
    mean /= double(inner);
    for (int64_t i = 0; i < inner; ++i)
      var += (x.v[o * inner + i] - mean) * (x.v[o * inner + i] - mean);
    var /= double(inner);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t i = 0; i < inner; ++i) {
      unravel(i, norm, idx);
      r.v[o * inner + i] =
          (x.v[o * inner + i] - mean) * inv * in[1].v[broadcastIndex(idx, in[1].shape)] +
          in[2].v[broadcastIndex(idx, in[2].shape)];
    }
  }
  return r;
}

Type instanceNormRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  requireFloat(call, d, "data");
  if (d.ndim() < 3)
    LOOM_TYPE_FAIL(call) << "data must have rank >= 3 (N, C, spatial...), got "
                         << shapeStr(d.shape);
  requireChannelVector(call, args, 1, d.shape[1], "scale");
  requireChannelVector(call, args, 2, d.shape[1], "bias");
  return tensorType(d.shape, d.dtype);
}

HostTensor instanceNormKernel(const CallNode& call, const std::vector<HostTensor>& in,
                              const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(x.shape, outT.dtype);
  int64_t N = x.shape[0], C = x.shape[1], S = x.numel() / std::max<int64_t>(N * C, 1);
  double eps = call.attrs.getFloat("epsilon");
  for (int64_t nc = 0; nc < N * C; ++nc) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < S; ++i)
      mean += x.v[nc * S + i];
    mean /= double(S);
    for (int64_t i = 0; i < S; ++i)
      var += (x.v[nc * S + i] - mean) * (x.v[nc * S + i] - mean);
    var /= double(S);
    int64_t c = nc % C;
    for (int64_t i = 0; i < S; ++i)
      r.v[nc * S + i] = (x.v[nc * S + i] - mean) / std::sqrt(var + eps) * in[1].v[c] + in[2].v[c];
  }
  return r;
}

int64_t poolOut(int64_t h, int64_t k, int64_t s, int64_t pb, int64_t pa, int64_t dil, bool ceil) {
  int64_t eff = dil * (k - 1) + 1;
  int64_t num = h + pb + pa - eff;
  if (num < 0) return 0;  // the window does not fit (not (-1) / 2 + 1 = 1)
  int64_t o = (ceil ? (num + s - 1) / s : num / s) + 1;
  if (ceil && (o - 1) * s >= h + pb)
    --o; // the last window must start inside the data or the leading padding
  return o;
}

std::vector<AttrSpec> poolAttrs(bool avg) {
  std::vector<AttrSpec> a{attrInts("pool_size"), attrInts("strides", std::vector<int64_t>{1, 1}),
                          attrInts("padding", std::vector<int64_t>{0, 0, 0, 0}),
                          attrInts("dilation", std::vector<int64_t>{1, 1}),
                          attrInt("ceil_mode", 0)};
  if (avg) a.push_back(attrInt("count_include_pad", 0));
  a.push_back(attrString("layout", "NCHW"));
  return a;
}

Type poolRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  requireRank(call, d, 4, "data (NCHW)");
  requireLen(call, "pool_size", 2);
  requireLen(call, "strides", 2);
  requireLen(call, "padding", 4);
  requireLen(call, "dilation", 2);
  const auto& k = call.attrs.getInts("pool_size");
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  bool ceil = call.attrs.getInt("ceil_mode") != 0;
  for (int i = 0; i < 2; ++i)
    if (k[i] < 1 || s[i] < 1 || dl[i] < 1)
      LOOM_TYPE_FAIL(call) << "pool_size, strides and dilation must be positive, got pool_size "
                           << attrValueStr(k) << ", strides " << attrValueStr(s) << ", dilation " << attrValueStr(dl);
  for (int64_t x : p)
    if (x < 0) LOOM_TYPE_FAIL(call) << "padding must not be negative, got " << attrValueStr(p);
  // The window's extent dilation * (pool_size - 1) + 1 and the padded size must fit int64 (a
  // fuzzed TorchScript max_pool with dilation 2^62 overflowed them: fuzz_torch, rel12).
  constexpr int64_t kMaxPoolAttr = (int64_t(1) << 31) - 1;
  for (const std::vector<int64_t>* v : {&k, &s, &p, &dl})
    for (int64_t x : *v)
      if (x > kMaxPoolAttr)
        LOOM_TYPE_FAIL(call) << "pool_size, strides, padding and dilation must be below 2^31, got pool_size "
                             << attrValueStr(k) << ", strides " << attrValueStr(s) << ", padding " << attrValueStr(p)
                             << ", dilation " << attrValueStr(dl);
  Shape out{d.shape[0], d.shape[1]};
  for (int i = 0; i < 2; ++i) {
    Dim o = derive(
        d.shape[2 + i], [&](int64_t h) { return poolOut(h, k[i], s[i], p[i], p[i + 2], dl[i], ceil); },
        [&](const tir::Expr& h) -> tir::Expr {
          int64_t eff = dl[i] * (k[i] - 1) + 1;
          tir::Expr num = h + i64(p[i] + p[i + 2] - eff);
          if (!ceil) return tir::floordiv(num, i64(s[i])) + i64(1);
          // ceil mode: the last window must start inside the data or the leading padding.
          tir::Expr o = tir::floordiv(num + i64(s[i] - 1), i64(s[i])) + i64(1);
          return tir::min(o, tir::floordiv(h + i64(p[i] - 1), i64(s[i])) + i64(1));
        });
    if (o.isStatic() && o.value < 1)
      LOOM_TYPE_FAIL(call) << "pool window " << attrValueStr(k) << " does not fit data "
                           << shapeStr(d.shape);
    out.push_back(o);
  }
  return tensorType(out, d.dtype);
}

HostTensor poolKernel(const CallNode& call, const std::vector<HostTensor>& in,
                      const TensorTypeNode& outT, bool isMax) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  const auto& k = call.attrs.getInts("pool_size");
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  bool includePad = !isMax && call.attrs.getInt("count_include_pad") != 0;
  int64_t NC = x.shape[0] * x.shape[1], H = x.shape[2], W = x.shape[3], OH = r.shape[2],
          OW = r.shape[3];
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
        int64_t cnt = 0, padCnt = 0;
        for (int64_t kh = 0; kh < k[0]; ++kh)
          for (int64_t kw = 0; kw < k[1]; ++kw) {
            int64_t ih = oh * s[0] - p[0] + kh * dl[0], iw = ow * s[1] - p[1] + kw * dl[1];
            bool inPad = ih >= -p[0] && ih < H + p[2] && iw >= -p[1] && iw < W + p[3];
            if (ih < 0 || ih >= H || iw < 0 || iw >= W) {
              if (inPad) ++padCnt;
              continue;
            }
            double v = x.v[(nc * H + ih) * W + iw];
            acc = isMax ? std::max(acc, v) : acc + v;
            ++cnt;
          }
        if (!isMax) acc /= double(std::max<int64_t>(includePad ? cnt + padCnt : cnt, 1));
        r.v[(nc * OH + oh) * OW + ow] = acc;
      }
  return r;
}

/// The "layout" attribute of a pool: nullopt for NCHW, else the blocked data layout.
std::optional<Layout> poolLayout(const CallNode& call) {
  const std::string& l = call.attrs.getString("layout");
  if (l == "NCHW") return std::nullopt;
  std::optional<Layout> p = parseLayout(l);
  if (!p || p->kernel)
    LOOM_TYPE_FAIL(call) << "unsupported layout \"" << l << "\" (NCHW or NCHW{k}c)";
  return p;
}

/// A single-input NCHW relation extended to NCHW{k}c data (the "layout" attribute).
TypeRelation blockedRel(TypeRelation plain) {
  return [plain](const CallNode& call, const std::vector<Type>& args) -> Type {
    std::optional<Layout> l = poolLayout(call);
    if (!l) return plain(call, args);
    const TensorTypeNode& d = argTensor(call, args, 0);
    auto logical = logicalDims(*l, d.shape);
    if (!logical)
      LOOM_TYPE_FAIL(call) << "data " << typeStr(args[0]) << " is not in layout " << l->str()
                           << " with static channels";
    Type out = plain(call, {tensorType(*logical, d.dtype)});
    auto phys = physicalDims(*l, out.as<TensorTypeNode>()->shape);
    if (!phys) LOOM_TYPE_FAIL(call) << "the output " << typeStr(out) << " does not divide into layout " << l->str();
    return tensorType(*phys, d.dtype);
  };
}

/// A single-input NCHW kernel extended to NCHW{k}c data.
SimpleKernel blockedKernel(SimpleKernel plain) {
  return
      [plain](const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
        std::optional<Layout> l = poolLayout(call);
        if (!l) return plain(call, in, outT);
        Layout nchw;
        TensorType logicalOut = tensorType(*logicalShape(*l, outT.staticShape()), outT.dtype);
        HostTensor out = plain(call, {relayout(in[0], *l, nchw)}, *logicalOut);
        return relayout(out, nchw, *l);
      };
}

Type globalPoolRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  if (d.ndim() < 3)
    LOOM_TYPE_FAIL(call) << "data must have rank >= 3 (N, C, spatial...), got "
                         << shapeStr(d.shape);
  Shape out{d.shape[0], d.shape[1]};
  for (size_t i = 2; i < d.ndim(); ++i)
    out.push_back(Dim(1));
  return tensorType(out, d.dtype);
}

HostTensor globalPoolKernel(const std::vector<HostTensor>& in, const TensorTypeNode& outT,
                            bool isMax) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  int64_t NC = x.shape[0] * x.shape[1], S = x.numel() / std::max<int64_t>(NC, 1);
  for (int64_t nc = 0; nc < NC; ++nc) {
    double acc = isMax ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t i = 0; i < S; ++i)
      acc = isMax ? std::max(acc, x.v[nc * S + i]) : acc + x.v[nc * S + i];
    r.v[nc] = isMax ? acc : acc / double(S);
  }
  return r;
}

Type softmaxRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  requireFloat(call, d, "data");
  normAxis(call, call.attrs.getInt("axis"), int64_t(d.ndim()));
  return tensorType(d.shape, d.dtype);
}

HostTensor softmaxKernel(const CallNode& call, const std::vector<HostTensor>& in,
                         const TensorTypeNode& outT, bool log) {
  const HostTensor& x = in[0];
  HostTensor r(x.shape, outT.dtype);
  int64_t axis = call.attrs.getInt("axis");
  if (axis < 0) axis += int64_t(x.shape.size());
  int64_t n = x.shape[axis], inner = 1;
  for (size_t k = axis + 1; k < x.shape.size(); ++k)
    inner *= x.shape[k];
  int64_t outer = x.numel() / std::max<int64_t>(n * inner, 1);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t i = 0; i < inner; ++i) {
      auto at = [&](int64_t j) { return (o * n + j) * inner + i; };
      double m = -std::numeric_limits<double>::infinity(), sum = 0;
      for (int64_t j = 0; j < n; ++j)
        m = std::max(m, x.v[at(j)]);
      for (int64_t j = 0; j < n; ++j)
        sum += std::exp(x.v[at(j)] - m);
      for (int64_t j = 0; j < n; ++j)
        r.v[at(j)] = log ? x.v[at(j)] - m - std::log(sum) : std::exp(x.v[at(j)] - m) / sum;
    }
  return r;
}

Type depthToSpaceRel(const CallNode& call, const std::vector<Type>& args, bool toSpace) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  requireRank(call, d, 4, "data (NCHW)");
  int64_t b = call.attrs.getInt("block_size");
  if (b < 1) LOOM_TYPE_FAIL(call) << "block_size must be positive";
  if (toSpace) {
    if (d.shape[1].isStatic() && d.shape[1].value % (b * b) != 0)
      LOOM_TYPE_FAIL(call) << "channels " << d.shape[1].value
                           << " not divisible by block_size^2 = " << b * b;
    return tensorType(Shape{d.shape[0], derive(d.shape[1], [&](int64_t c) { return c / (b * b); }),
                            dimMul(d.shape[2], Dim(b)), dimMul(d.shape[3], Dim(b))},
                      d.dtype);
  }
  for (int i = 2; i < 4; ++i)
    if (d.shape[i].isStatic() && d.shape[i].value % b != 0)
      LOOM_TYPE_FAIL(call) << "spatial dims " << shapeStr(d.shape)
                           << " not divisible by block_size " << b;
  return tensorType(Shape{d.shape[0], derive(d.shape[1], [&](int64_t c) { return c * b * b; }),
                          dimFloorDiv(d.shape[2], b), dimFloorDiv(d.shape[3], b)},
                    d.dtype);
}

HostTensor depthToSpaceKernel(const CallNode& call, const std::vector<HostTensor>& in,
                              const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  int64_t b = call.attrs.getInt("block_size");
  bool crd = call.attrs.getString("mode") == "CRD";
  int64_t N = r.shape[0], C = r.shape[1], H = r.shape[2], W = r.shape[3];
  int64_t IC = x.shape[1], IH = x.shape[2], IW = x.shape[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          int64_t bh = h % b, bw = w % b;
          int64_t ic = crd ? c * b * b + bh * b + bw : (bh * b + bw) * C + c;
          r.v[((n * C + c) * H + h) * W + w] = x.v[((n * IC + ic) * IH + h / b) * IW + w / b];
        }
  return r;
}

HostTensor spaceToDepthKernel(const CallNode& call, const std::vector<HostTensor>& in,
                              const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  int64_t b = call.attrs.getInt("block_size");
  int64_t N = r.shape[0], C = r.shape[1], H = r.shape[2], W = r.shape[3];
  int64_t IC = x.shape[1], IH = x.shape[2], IW = x.shape[3];
  for (int64_t n = 0; n < N; ++n)
    for (int64_t c = 0; c < C; ++c)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          int64_t blk = c / IC, ic = c % IC;
          int64_t ih = h * b + blk / b, iw = w * b + blk % b;
          r.v[((n * C + c) * H + h) * W + w] = x.v[((n * IC + ic) * IH + ih) * IW + iw];
        }
  return r;
}

Type resizeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  requireRank(call, d, 4, "data (NCHW)");
  requireLen(call, "size", 2);
  if (!call.attrs.getFloats("scales").empty() && call.attrs.getFloats("scales").size() != 2)
    LOOM_TYPE_FAIL(call) << "attribute 'scales' must be empty or have 2 values";
  const std::string& m = call.attrs.getString("method");
  if (m != "nearest_neighbor" && m != "linear")
    LOOM_TYPE_FAIL(call) << "method must be \"nearest_neighbor\" or \"linear\", got \"" << m
                         << "\"";
  const auto& s = call.attrs.getInts("size");
  const std::string& sym = call.attrs.getString("symbolic_size");
  if (!sym.empty()) {
    Shape hw = parseDimsText(sym);
    if (hw.size() != 2) LOOM_TYPE_FAIL(call) << "symbolic_size \"" << sym << "\" must have 2 dims";
    return tensorType(Shape{d.shape[0], d.shape[1], hw[0], hw[1]}, d.dtype);
  }
  return tensorType(Shape{d.shape[0], d.shape[1], Dim(s[0]), Dim(s[1])}, d.dtype);
}

/// The input coordinate of output coordinate `o` (ONNX Resize's coordinate_transformation_mode).
double inCoord(const std::string& mode, int64_t o, int64_t inLen, int64_t outLen,
               double givenScale) {
  double scale = givenScale > 0 ? givenScale : double(outLen) / double(inLen);
  // ONNX uses the unrounded resized length (in * scale) where a length enters the transform.
  double resized = givenScale > 0 ? double(inLen) * givenScale : double(outLen);
  if (mode == "align_corners")
    return resized == 1 ? 0.0 : double(o) * double(inLen - 1) / (resized - 1);
  if (mode == "asymmetric") return double(o) / scale;
  if (mode == "pytorch_half_pixel") return resized > 1 ? (double(o) + 0.5) / scale - 0.5 : 0.0;
  if (mode == "tf_half_pixel_for_nn") return (double(o) + 0.5) / scale;
  return (double(o) + 0.5) / scale - 0.5; // half_pixel
}

int64_t roundNearest(const std::string& rounding, double x) {
  if (rounding == "floor") return int64_t(std::floor(x));
  if (rounding == "ceil") return int64_t(std::ceil(x));
  if (rounding == "round_prefer_ceil") return int64_t(std::floor(x + 0.5));
  // round_prefer_floor
  return x == std::floor(x) + 0.5 ? int64_t(std::floor(x)) : int64_t(std::round(x));
}

HostTensor resizeKernel(const CallNode& call, const std::vector<HostTensor>& in,
                        const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  const std::string& mode = call.attrs.getString("coordinate_transformation_mode");
  const std::string& rounding = call.attrs.getString("rounding_method");
  bool nearest = call.attrs.getString("method") == "nearest_neighbor";
  const auto& scales = call.attrs.getFloats("scales");
  int64_t NC = x.shape[0] * x.shape[1], IH = x.shape[2], IW = x.shape[3], OH = r.shape[2],
          OW = r.shape[3];
  for (int64_t nc = 0; nc < NC; ++nc)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double ih = inCoord(mode, oh, IH, OH, scales.empty() ? 0.0 : scales[0]);
        double iw = inCoord(mode, ow, IW, OW, scales.empty() ? 0.0 : scales[1]);
        double v;
        if (nearest) {
          int64_t h = std::clamp<int64_t>(roundNearest(rounding, ih), 0, IH - 1);
          int64_t w = std::clamp<int64_t>(roundNearest(rounding, iw), 0, IW - 1);
          v = x.v[(nc * IH + h) * IW + w];
        } else {
          ih = std::clamp(ih, 0.0, double(IH - 1));
          iw = std::clamp(iw, 0.0, double(IW - 1));
          int64_t h0 = int64_t(std::floor(ih)), w0 = int64_t(std::floor(iw));
          int64_t h1 = std::min(h0 + 1, IH - 1), w1 = std::min(w0 + 1, IW - 1);
          double fh = ih - double(h0), fw = iw - double(w0);
          auto at = [&](int64_t h, int64_t w) { return x.v[(nc * IH + h) * IW + w]; };
          v = (at(h0, w0) * (1 - fw) + at(h0, w1) * fw) * (1 - fh) +
              (at(h1, w0) * (1 - fw) + at(h1, w1) * fw) * fh;
        }
        r.v[(nc * OH + oh) * OW + ow] = v;
      }
  return r;
}

/// nn.winograd_weight_transform: a blocked 3x3 kernel [O/ob, C/ib, 3, 3, ib, ob] to the
/// Winograd domain [alpha, alpha, O/ob, C/ib, ib, ob] (U = G g G^T per channel pair).
Type winogradWeightRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& w = argTensor(call, args, 0);
  const int64_t m = call.attrs.getInt("tile_size");
  if (!winogradTileSupported(m)) LOOM_TYPE_FAIL(call) << "tile_size must be 2 or 4, got " << m;
  requireRank(call, w, 6, "the weight (layout OIHW{i}i{o}o)");
  requireFloat(call, w, "the weight");
  if (!w.isStatic()) LOOM_TYPE_FAIL(call) << "the weight needs a static shape, got " << typeStr(args[0]);
  std::vector<int64_t> s = w.staticShape();
  if (s[2] != 3 || s[3] != 3)
    LOOM_TYPE_FAIL(call) << "Winograd F(m, 3x3) needs a 3x3 kernel, got " << s[2] << "x" << s[3];
  const int64_t a = m + 2;
  return tensorType(std::vector<int64_t>{a, a, s[0], s[1], s[4], s[5]}, w.dtype);
}

HostTensor winogradWeightKernel(const CallNode& call, const std::vector<HostTensor>& in,
                                const TensorTypeNode& outT) {
  const WinogradMatrices& wm = winogradMatrices(call.attrs.getInt("tile_size"));
  const HostTensor& g = in[0];
  HostTensor u(outT.staticShape(), outT.dtype);
  const int64_t OB = g.shape[0], CB = g.shape[1], IB = g.shape[4], OBk = g.shape[5], a = wm.alpha;
  const int64_t inner = IB * OBk;  // one (ci, co) lane pair per element of the last two dims
  for (int64_t ob = 0; ob < OB; ++ob)
    for (int64_t cb = 0; cb < CB; ++cb)
      for (int64_t l = 0; l < inner; ++l) {
        auto gv = [&](int64_t kh, int64_t kw) { return g.v[size_t((((ob * CB + cb) * 3 + kh) * 3 + kw) * inner + l)]; };
        for (int64_t e = 0; e < a; ++e)
          for (int64_t n = 0; n < a; ++n) {
            double acc = 0;
            for (int64_t kh = 0; kh < 3; ++kh)
              for (int64_t kw = 0; kw < 3; ++kw) acc += wm.G[size_t(e)][size_t(kh)] * gv(kh, kw) * wm.G[size_t(n)][size_t(kw)];
            u.v[size_t((((e * a + n) * OB + ob) * CB + cb) * inner + l)] = acc;
          }
      }
  return u;
}

/// nn.conv2d_winograd: a 3x3, stride-1 conv of NCHW{ib}c data with a kernel already in the
/// Winograd domain (nn.winograd_weight_transform), to NCHW{ob}c; each output dim must be a
/// multiple of the tile size.
Type conv2dWinogradRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  const TensorTypeNode& u = argTensor(call, args, 1);
  requireLen(call, "padding", 4);
  const int64_t m = call.attrs.getInt("tile_size");
  if (!winogradTileSupported(m)) LOOM_TYPE_FAIL(call) << "tile_size must be 2 or 4, got " << m;
  requireRank(call, d, 5, "the data (layout NCHW{k}c)");
  requireRank(call, u, 6, "the transformed weight [alpha, alpha, O/ob, C/ib, ib, ob]");
  requireFloat(call, d, "the data");
  if (!u.isStatic()) LOOM_TYPE_FAIL(call) << "needs a static transformed weight";
  // The batch and image size may be symbolic (a dynamic model: the last row and column of tiles
  // may then be partial); the channels are static.
  if (!d.shape[1].isStatic() || !d.shape[4].isStatic()) LOOM_TYPE_FAIL(call) << "needs static channels";
  std::vector<int64_t> ds{0, d.shape[1].value, 0, 0, d.shape[4].value}, us = u.staticShape();
  if (us[0] != m + 2 || us[1] != m + 2)
    LOOM_TYPE_FAIL(call) << "the transformed weight's tile is " << us[0] << "x" << us[1] << ", F(" << m
                         << ", 3x3) needs " << m + 2 << "x" << m + 2;
  if (ds[1] != us[3] || ds[4] != us[4])
    LOOM_TYPE_FAIL(call) << "data " << typeStr(args[0]) << " does not match the transformed weight "
                         << typeStr(args[1]) << " (input-channel blocks)";
  const auto& p = call.attrs.getInts("padding");
  for (int64_t v : p)
    if (v < 0) LOOM_TYPE_FAIL(call) << "padding must not be negative";
  if (d.shape[2].isStatic() && d.shape[3].isStatic()) {
    const int64_t oh = d.shape[2].value + p[0] + p[2] - 2, ow = d.shape[3].value + p[1] + p[3] - 2;
    if (oh < 1 || ow < 1 || oh % m != 0 || ow % m != 0)
      LOOM_TYPE_FAIL(call) << "output " << oh << "x" << ow << " is not a whole number of " << m << "x" << m << " tiles";
  }
  Dim oh = derive(d.shape[2], [&](int64_t h) { return h + p[0] + p[2] - 2; }, [&](const tir::Expr& h) { return h + i64(p[0] + p[2] - 2); });
  Dim ow = derive(d.shape[3], [&](int64_t w) { return w + p[1] + p[3] - 2; }, [&](const tir::Expr& w) { return w + i64(p[1] + p[3] - 2); });
  return tensorType(Shape{d.shape[0], Dim(us[2]), oh, ow, Dim(us[5])}, d.dtype);
}

HostTensor conv2dWinogradKernel(const CallNode& call, const std::vector<HostTensor>& in,
                                const TensorTypeNode& outT) {
  const WinogradMatrices& wm = winogradMatrices(call.attrs.getInt("tile_size"));
  const HostTensor& x = in[0];
  const HostTensor& u = in[1];
  HostTensor r(outT.staticShape(), outT.dtype);
  const auto& p = call.attrs.getInts("padding");
  const int64_t N = x.shape[0], CB = x.shape[1], H = x.shape[2], W = x.shape[3], IB = x.shape[4];
  const int64_t OB = u.shape[2], OBk = u.shape[5], OH = r.shape[2], OW = r.shape[3];
  const int64_t m = wm.m, a = wm.alpha;
  std::vector<double> V(size_t(a * a)), M(size_t(a * a));
  auto in_ = [&](int64_t n, int64_t c, int64_t h, int64_t w) {
    const int64_t ih = h - p[0], iw = w - p[1];
    if (ih < 0 || ih >= H || iw < 0 || iw >= W) return 0.0;
    return x.v[size_t((((n * CB + c / IB) * H + ih) * W + iw) * IB + c % IB)];
  };
  // A symbolic image size may leave a partial last row and column of tiles.
  for (int64_t n = 0; n < N; ++n)
    for (int64_t th = 0; th < (OH + m - 1) / m; ++th)
      for (int64_t tw = 0; tw < (OW + m - 1) / m; ++tw)
        for (int64_t o = 0; o < OB * OBk; ++o) {
          std::fill(M.begin(), M.end(), 0.0);
          for (int64_t c = 0; c < CB * IB; ++c) {
            for (int64_t e = 0; e < a; ++e)
              for (int64_t f = 0; f < a; ++f) {
                double acc = 0;
                for (int64_t i = 0; i < a; ++i)
                  for (int64_t j = 0; j < a; ++j)
                    acc += wm.BT[size_t(e)][size_t(i)] * in_(n, c, th * m + i, tw * m + j) * wm.BT[size_t(f)][size_t(j)];
                V[size_t(e * a + f)] = acc;
              }
            for (int64_t e = 0; e < a * a; ++e)
              M[size_t(e)] += V[size_t(e)] *
                              u.v[size_t(((((e * OB + o / OBk) * CB + c / IB) * IB + c % IB) * OBk) + o % OBk)];
          }
          for (int64_t i = 0; i < m && th * m + i < OH; ++i)
            for (int64_t j = 0; j < m && tw * m + j < OW; ++j) {
              double acc = 0;
              for (int64_t e = 0; e < a; ++e)
                for (int64_t f = 0; f < a; ++f)
                  acc += wm.AT[size_t(i)][size_t(e)] * M[size_t(e * a + f)] * wm.AT[size_t(j)][size_t(f)];
              r.v[size_t((((n * OB + o / OBk) * OH + th * m + i) * OW + tw * m + j) * OBk + o % OBk)] = acc;
            }
        }
  return r;
}

} // namespace

double resizeInCoord(const std::string& mode, int64_t o, int64_t inLen, int64_t outLen, double givenScale) {
  return inCoord(mode, o, inLen, outLen, givenScale);
}

void registerNNOps() {
  defineOp("nn.conv2d", 2, OpPattern::OutEWiseFusable, convAttrs(false), conv2dRel, conv2dKernel,
           "2-D convolution, data NCHW, weight OIHW; padding is (top, left, bottom, right); with "
           "data_layout "
           "NCHW{k}c and kernel_layout OIHW{k}i{o}o (groups 1) the output is NCHW{o}c");
  defineOp(
      "layout_transform", 1, OpPattern::Injective,
      {attrString("src_layout"), attrString("dst_layout")},
      [](const CallNode& call, const std::vector<Type>& args) -> Type {
        const TensorTypeNode& d = argTensor(call, args, 0);
        const std::string& sl = call.attrs.getString("src_layout");
        const std::string& dl = call.attrs.getString("dst_layout");
        std::optional<Layout> from = parseLayout(sl), to = parseLayout(dl);
        if (!from || !to || from->kernel != to->kernel)
          LOOM_TYPE_FAIL(call) << "cannot transform layout \"" << sl << "\" to \"" << dl << "\"";
        if (!d.isStatic()) {
          // A symbolic batch or image size (a dynamic model): the channels must be static.
          auto logical = logicalDims(*from, d.shape);
          if (!logical) LOOM_TYPE_FAIL(call) << typeStr(args[0]) << " is not in layout " << sl << " with static channels";
          auto out = physicalDims(*to, *logical);
          if (!out) LOOM_TYPE_FAIL(call) << "logical shape " << shapeStr(*logical) << " does not divide into layout " << dl;
          return tensorType(*out, d.dtype);
        }
        auto logical = logicalShape(*from, d.staticShape());
        if (!logical) LOOM_TYPE_FAIL(call) << typeStr(args[0]) << " is not in layout " << sl;
        auto out = physicalShape(*to, *logical);
        if (!out)
          LOOM_TYPE_FAIL(call) << "logical shape "
                               << shapeStr(Shape(logical->begin(), logical->end()))
                               << " does not divide into layout " << dl;
        return tensorType(*out, d.dtype);
      },
      [](const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode&) {
        return relayout(in[0], *parseLayout(call.attrs.getString("src_layout")),
                        *parseLayout(call.attrs.getString("dst_layout")));
      },
      "converts between NCHW and NCHW{k}c (or OIHW and OIHW{i}i{o}o) layouts");
  defineOp("nn.winograd_weight_transform", 1, OpPattern::Opaque, {attrInt("tile_size")},
           winogradWeightRel, winogradWeightKernel,
           "a blocked 3x3 conv kernel OIHW{i}i{o}o to the Winograd F(m, 3x3) domain "
           "[m+2, m+2, O/o, I/i, i, o] (folded into a constant at compile time)");
  defineOp("nn.conv2d_winograd", 2, OpPattern::OutEWiseFusable,
           {attrInt("tile_size"), attrInts("padding", std::vector<int64_t>{0, 0, 0, 0})}, conv2dWinogradRel,
           conv2dWinogradKernel,
           "3x3 stride-1 conv2d of NCHW{k}c data by Winograd F(m x m, 3x3) with a transformed kernel "
           "(nn.winograd_weight_transform); padding is (top, left, bottom, right); output NCHW{o}c");
  defineOp("nn.conv2d_transpose", 2, OpPattern::OutEWiseFusable, convAttrs(true),
           conv2dTransposeRel, conv2dTransposeKernel,
           "2-D transposed convolution, data NCHW, weight IOHW");
  defineOp("nn.dense", 2, OpPattern::OutEWiseFusable, {}, denseRel, denseKernel,
           "y = x * W^T: data (..., K), weight (N, K)");
  defineOp("nn.matmul", 2, OpPattern::OutEWiseFusable, {}, matmulRel, matmulKernel,
           "numpy matmul with broadcast batch dimensions");
  defineOp(
      "nn.bias_add", 2, OpPattern::Broadcast, {attrInt("axis", 1)}, biasAddRel,
      [](const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
        HostTensor r(in[0].shape, outT.dtype);
        int64_t axis = call.attrs.getInt("axis");
        if (axis < 0) axis += int64_t(in[0].shape.size());
        ChannelIndexer ch(in[0].shape, axis);
        for (int64_t i = 0; i < r.numel(); ++i)
          r.v[i] = in[0].v[i] + in[1].v[ch(i)];
        return r;
      },
      "adds a per-channel bias along axis");
  defineOp("nn.batch_norm", 5, OpPattern::Opaque, {attrInt("axis", 1), attrFloat("epsilon", 1e-5)},
           batchNormRel, batchNormKernel,
           "inference batch normalization (data, gamma, beta, moving_mean, moving_var)");
  defineOp("nn.layer_norm", 3, OpPattern::Opaque, {attrInt("axis", -1), attrFloat("epsilon", 1e-5)},
           layerNormRel, layerNormKernel,
           "normalizes over the dims from axis to the end (ONNX LayerNormalization)");
  defineOp("nn.instance_norm", 3, OpPattern::Opaque, {attrFloat("epsilon", 1e-5)}, instanceNormRel,
           instanceNormKernel, "normalizes each (n, c) over the spatial dims");
  defineOp("nn.max_pool2d", 1, OpPattern::OutEWiseFusable, poolAttrs(false), blockedRel(poolRel),
           blockedKernel([](const CallNode& c, const std::vector<HostTensor>& in,
                            const TensorTypeNode& o) { return poolKernel(c, in, o, true); }),
           "2-D max pooling, NCHW or NCHW{k}c (layout)");
  defineOp("nn.avg_pool2d", 1, OpPattern::OutEWiseFusable, poolAttrs(true), blockedRel(poolRel),
           blockedKernel([](const CallNode& c, const std::vector<HostTensor>& in,
                            const TensorTypeNode& o) { return poolKernel(c, in, o, false); }),
           "2-D average pooling, NCHW or NCHW{k}c (layout)");
  defineOp("nn.global_avg_pool2d", 1, OpPattern::OutEWiseFusable, {attrString("layout", "NCHW")},
           blockedRel(globalPoolRel),
           blockedKernel([](const CallNode&, const std::vector<HostTensor>& in,
                            const TensorTypeNode& o) { return globalPoolKernel(in, o, false); }),
           "mean over the spatial dims (NCHW or NCHW{k}c)");
  defineOp("nn.global_max_pool2d", 1, OpPattern::OutEWiseFusable, {attrString("layout", "NCHW")},
           blockedRel(globalPoolRel),
           blockedKernel([](const CallNode&, const std::vector<HostTensor>& in,
                            const TensorTypeNode& o) { return globalPoolKernel(in, o, true); }),
           "max over the spatial dims (NCHW or NCHW{k}c)");
  defineOp(
      "nn.softmax", 1, OpPattern::Opaque, {attrInt("axis", -1)}, softmaxRel,
      [](const CallNode& c, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
        return softmaxKernel(c, in, o, false);
      },
      "softmax along axis");
  defineOp(
      "nn.log_softmax", 1, OpPattern::Opaque, {attrInt("axis", -1)}, softmaxRel,
      [](const CallNode& c, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
        return softmaxKernel(c, in, o, true);
      },
      "log of softmax along axis");
  defineOp(
      "nn.dropout", 1, OpPattern::ElemWise, {attrFloat("rate", 0.5)},
      [](const CallNode& call, const std::vector<Type>& args) -> Type {
        const TensorTypeNode& t = argTensor(call, args, 0);
        return tensorType(t.shape, t.dtype);
      },
      [](const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode&) {
        return in[0];
      },
      "dropout (the identity at inference; SimplifyInference removes it)");
  defineOp(
      "nn.depth_to_space", 1, OpPattern::Injective,
      {attrInt("block_size"), attrString("mode", "DCR"), attrString("layout", "NCHW")},
      blockedRel([](const CallNode& c, const std::vector<Type>& a) { return depthToSpaceRel(c, a, true); }),
      blockedKernel(depthToSpaceKernel),
      "moves channel blocks into spatial blocks (modes DCR, CRD), NCHW or NCHW{k}c data");
  defineOp(
      "nn.space_to_depth", 1, OpPattern::Injective, {attrInt("block_size")},
      [](const CallNode& c, const std::vector<Type>& a) { return depthToSpaceRel(c, a, false); },
      spaceToDepthKernel, "moves spatial blocks into channels");
  defineOp("image.resize2d", 1, OpPattern::Injective,
           {attrInts("size"), attrString("method", "linear"),
            attrString("coordinate_transformation_mode", "half_pixel"),
            attrString("rounding_method", "round_prefer_floor"),
            AttrSpec{"scales", AttrKind::Floats, AttrValue(std::vector<double>{})}, attrString("layout", "NCHW"),
            attrString("symbolic_size", "")},
           blockedRel(resizeRel), blockedKernel(resizeKernel),
           "resizes the spatial dims of NCHW or NCHW{k}c data (nearest or bilinear); scales (h, w), "
           "when given, drive the coordinate transform as in ONNX");
}

} // namespace loom::graph
