// conv2d in NCHW layout (with groups) and depthwise_conv2d, padding as a `pad_temp`
// stage like TVM's topi: computes and presets.
#include "core/topi/WorkloadUtil.h"

namespace loom::topi {

using detail::addC;
using detail::c32;
using detail::mulC;
using tir::Expr;
using tir::Var;

te::Tensor pad(const te::Tensor& data, const std::vector<int64_t>& before,
               const std::vector<int64_t>& after, double value, std::string name) {
  size_t rank = data->ndim();
  if (before.size() != rank || after.size() != rank)
    LOOM_THROW(ValueError) << "pad: tensor '" << data->name << "' has rank " << rank << " but "
                           << before.size() << " / " << after.size()
                           << " padding amounts were given";
  bool any = false;
  for (size_t d = 0; d < rank; ++d) {
    if (before[d] < 0 || after[d] < 0)
      LOOM_THROW(ValueError) << "pad: negative padding of dimension " << d << " of '" << data->name
                             << "'";
    any = any || before[d] || after[d];
  }
  if (!any) return data;
  std::vector<Expr> shape;
  for (size_t d = 0; d < rank; ++d) {
    int64_t extra = before[d] + after[d];
    const int64_t* n = tir::asConstInt(data->shape[d]);
    shape.push_back(extra == 0 ? data->shape[d]
                    : n        ? c32(*n + extra)
                               : data->shape[d] + c32(extra));
  }
  Expr fill = tir::makeConst(data->dtype, value);
  return te::compute(
      shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr inside;
        std::vector<Expr> idx;
        for (size_t d = 0; d < rank; ++d) {
          idx.push_back(addC(i[d], -before[d]));
          if (before[d] == 0 && after[d] == 0) continue;
          const int64_t* n = tir::asConstInt(data->shape[d]);
          Expr upper = n ? c32(*n + before[d]) : data->shape[d] + c32(before[d]);
          Expr c = i[d] >= c32(before[d]) && i[d] < upper;
          inside = inside.defined() ? (inside && c) : c;
        }
        return tir::ifThenElse(inside, data(idx), fill);
      },
      std::move(name), "injective,pad", {},
      [&] {
        std::vector<std::string> names;
        for (size_t d = 0; d < rank; ++d)
          names.push_back("i" + std::to_string(d));
        return names;
      }());
}

namespace {
/// The output extent of a convolution; throws ValueError naming `op` when it is not positive.
int64_t convExtent(const char* op, int64_t in, int64_t kernel, int64_t stride, int64_t pad,
                   int64_t dilation) {
  if (stride < 1 || dilation < 1 || pad < 0)
    LOOM_THROW(ValueError) << op << ": stride " << stride << ", dilation " << dilation << ", pad "
                           << pad << " (stride and dilation must be >= 1, pad >= 0)";
  int64_t out = (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
  if (in + 2 * pad - dilation * (kernel - 1) < 1)
    LOOM_THROW(ValueError) << op << ": a kernel of extent " << kernel << " (dilation " << dilation
                           << ") does not fit an input of extent " << in << " padded by " << pad;
  return out;
}
} // namespace

te::Tensor conv2dNchw(const te::Tensor& data, const te::Tensor& weight, int64_t stride,
                      int64_t padding, int64_t dilation, int64_t groups, std::string name) {
  const char* op = "conv2d_nchw";
  detail::checkRank(data, 4, op);
  detail::checkRank(weight, 4, op);
  int64_t C = detail::constDim(data, 1, op), H = detail::constDim(data, 2, op),
          W = detail::constDim(data, 3, op);
  int64_t K = detail::constDim(weight, 0, op), cg = detail::constDim(weight, 1, op),
          R = detail::constDim(weight, 2, op), S = detail::constDim(weight, 3, op);
  if (groups < 1 || C % groups != 0 || K % groups != 0 || cg * groups != C)
    LOOM_THROW(ValueError) << op << ": data '" << data->name << "' " << detail::shapeStr(data)
                           << " and weight '" << weight->name << "' " << detail::shapeStr(weight)
                           << " do not fit groups=" << groups;
  int64_t P = convExtent(op, H, R, stride, padding, dilation);
  int64_t Q = convExtent(op, W, S, stride, padding, dilation);
  int64_t kg = K / groups;
  te::Tensor padded = pad(data, {0, 0, padding, padding}, {0, 0, padding, padding});
  te::IterVar rc = te::reduceAxis(c32(cg), "rc"), ry = te::reduceAxis(c32(R), "ry"),
              rx = te::reduceAxis(c32(S), "rx");
  return te::compute({data->shape[0], c32(K), c32(P), c32(Q)},
                     [&](Var nn, Var ff, Var yy, Var xx) {
                       Expr cin =
                           groups == 1 ? Expr(rc) : tir::floordiv(ff, c32(kg)) * c32(cg) + rc;
                       Expr h = mulC(yy, stride) + mulC(ry, dilation);
                       Expr w = mulC(xx, stride) + mulC(rx, dilation);
                       return te::sum(padded(nn, cin, h, w) * weight(ff, rc, ry, rx), {rc, ry, rx});
                     },
                     std::move(name), groups == 1 ? "conv2d_nchw" : "group_conv2d_nchw", {},
                     {"nn", "ff", "yy", "xx"});
}

te::Tensor depthwiseConv2dNchw(const te::Tensor& data, const te::Tensor& weight, int64_t stride,
                               int64_t padding, int64_t dilation, std::string name) {
  const char* op = "depthwise_conv2d_nchw";
  detail::checkRank(data, 4, op);
  detail::checkRank(weight, 4, op);
  int64_t C = detail::constDim(data, 1, op), H = detail::constDim(data, 2, op),
          W = detail::constDim(data, 3, op);
  int64_t mult = detail::constDim(weight, 1, op), R = detail::constDim(weight, 2, op),
          S = detail::constDim(weight, 3, op);
  if (detail::constDim(weight, 0, op) != C)
    LOOM_THROW(ValueError) << op << ": weight '" << weight->name << "' " << detail::shapeStr(weight)
                           << " must have " << C << " channels like data '" << data->name << "' "
                           << detail::shapeStr(data);
  int64_t P = convExtent(op, H, R, stride, padding, dilation);
  int64_t Q = convExtent(op, W, S, stride, padding, dilation);
  te::Tensor padded = pad(data, {0, 0, padding, padding}, {0, 0, padding, padding});
  te::IterVar di = te::reduceAxis(c32(R), "di"), dj = te::reduceAxis(c32(S), "dj");
  return te::compute({data->shape[0], c32(C * mult), c32(P), c32(Q)},
                     [&](Var b, Var c, Var i, Var j) {
                       Expr cin = mult == 1 ? Expr(c) : tir::floordiv(c, c32(mult));
                       Expr m = mult == 1 ? c32(0) : tir::floormod(c, c32(mult));
                       Expr h = mulC(i, stride) + mulC(di, dilation);
                       Expr w = mulC(j, stride) + mulC(dj, dilation);
                       return te::sum(padded(b, cin, h, w) * weight(cin, m, di, dj), {di, dj});
                     },
                     std::move(name), "depthwise_conv2d_nchw", {}, {"b", "c", "i", "j"});
}

namespace detail {

namespace {

struct ConvGeom {
  int64_t N, C, H, W, K, R, S, stride, pad, dilation, groups, P, Q;
};

int64_t outExtent(int64_t in, int64_t kernel, int64_t stride, int64_t pad, int64_t dilation) {
  return (in + 2 * pad - dilation * (kernel - 1) - 1) / stride + 1;
}

ConvGeom geometry(const ParamMap& p, const char* workload, bool depthwise) {
  ConvGeom g{};
  g.N = param(p, "N"), g.C = param(p, "C"), g.H = param(p, "H"), g.W = param(p, "W");
  g.R = param(p, "R"), g.S = param(p, "S");
  g.stride = param(p, "stride"), g.pad = param(p, "pad"), g.dilation = param(p, "dilation");
  if (depthwise) {
    g.groups = g.C;
    g.K = g.C * param(p, "multiplier");
  } else {
    g.K = param(p, "K"), g.groups = param(p, "groups");
    if (g.C % g.groups != 0 || g.K % g.groups != 0)
      LOOM_THROW(topi::WorkloadError) << "workload '" << workload << "': groups=" << g.groups
                                      << " must divide C=" << g.C << " and K=" << g.K;
  }
  g.P = outExtent(g.H, g.R, g.stride, g.pad, g.dilation);
  g.Q = outExtent(g.W, g.S, g.stride, g.pad, g.dilation);
  if (g.P <= 0 || g.Q <= 0)
    LOOM_THROW(topi::WorkloadError)
        << "workload '" << workload << "': the " << g.R << "x" << g.S << " kernel (dilation "
        << g.dilation << ") does not fit the " << g.H << "x" << g.W << " input padded by " << g.pad;
  return g;
}

/// out[n,f,y,x] = sum_{c,r,s} in[n, cin(f,c), y*stride + r*dil - pad, x*stride + s*dil - pad] *
/// w[f,c,r,s] in float64, reading zeros outside the input.
void convRef(const ConvGeom& g, const runtime::NDArray& data, const runtime::NDArray& weight,
             const runtime::NDArray& out, bool depthwise) {
  View D(data), Wt(weight), O(out);
  int64_t cg = depthwise ? 1 : g.C / g.groups, kg = g.K / g.groups;
  for (int64_t n = 0; n < g.N; ++n)
    for (int64_t f = 0; f < g.K; ++f)
      for (int64_t y = 0; y < g.P; ++y)
        for (int64_t x = 0; x < g.Q; ++x) {
          double acc = 0;
          for (int64_t c = 0; c < cg; ++c)
            for (int64_t r = 0; r < g.R; ++r)
              for (int64_t s = 0; s < g.S; ++s) {
                int64_t h = y * g.stride + r * g.dilation - g.pad;
                int64_t w = x * g.stride + s * g.dilation - g.pad;
                if (h < 0 || h >= g.H || w < 0 || w >= g.W) continue;
                int64_t cin = f / kg * cg + c;
                double wv = depthwise ? Wt({f / kg, f % kg, r, s}) : Wt({f, c, r, s});
                acc += double(D({n, cin, h, w})) * wv;
              }
          O({n, f, y, x}) = float(acc);
        }
}

std::vector<te::Tensor> conv2d(const ParamMap& p) {
  ConvGeom g = geometry(p, "conv2d", false);
  te::Tensor data = input({g.N, g.C, g.H, g.W}, "data");
  te::Tensor weight = input({g.K, g.C / g.groups, g.R, g.S}, "weight");
  return {data, weight, conv2dNchw(data, weight, g.stride, g.pad, g.dilation, g.groups)};
}

std::vector<te::Tensor> depthwiseConv2d(const ParamMap& p) {
  ConvGeom g = geometry(p, "depthwise_conv2d", true);
  te::Tensor data = input({g.N, g.C, g.H, g.W}, "data");
  te::Tensor weight = input({g.C, g.K / g.C, g.R, g.S}, "weight");
  return {data, weight, depthwiseConv2dNchw(data, weight, g.stride, g.pad, g.dilation)};
}

std::vector<WorkloadParam> spatialParams() {
  return {{"N", 1, 1, "batch"},          {"C", 16, 1, "input channels"},
          {"H", 14, 1, "input height"},  {"W", 14, 1, "input width"},
          {"R", 3, 1, "kernel height"},  {"S", 3, 1, "kernel width"},
          {"stride", 1, 1, "stride"},    {"pad", 1, 0, "zero padding on each side"},
          {"dilation", 1, 1, "dilation"}};
}

} // namespace

void addConv2dWorkloads(std::vector<Workload>& out) {
  std::vector<WorkloadParam> convParams = spatialParams();
  convParams.insert(convParams.begin() + 4, {"K", 32, 1, "output channels"});
  convParams.push_back({"groups", 1, 1, "channel groups (must divide C and K)"});
  out.push_back({"conv2d",
                 "2-D convolution, NCHW data and KCRS weights, zero padding as a pad_temp stage",
                 convParams, 2, conv2d,
                 [](const ParamMap& p) {
                   ConvGeom g = geometry(p, "conv2d", false);
                   return 2.0 * g.N * g.K * g.P * g.Q * (g.C / g.groups) * g.R * g.S;
                 },
                 [](const ParamMap& p, const std::vector<runtime::NDArray>& in,
                    const std::vector<runtime::NDArray>& o) {
                   convRef(geometry(p, "conv2d", false), in[0], in[1], o[0], false);
                 },
                 [](const ParamMap& p) {
                   return param(p, "C") / param(p, "groups") * param(p, "R") * param(p, "S");
                 }});
  std::vector<WorkloadParam> dwParams = spatialParams();
  dwParams.push_back({"multiplier", 1, 1, "output channels per input channel"});
  out.push_back({"depthwise_conv2d",
                 "depthwise 2-D convolution, NCHW data and (C, multiplier, R, S) weights", dwParams,
                 2, depthwiseConv2d,
                 [](const ParamMap& p) {
                   ConvGeom g = geometry(p, "depthwise_conv2d", true);
                   return 2.0 * g.N * g.K * g.P * g.Q * g.R * g.S;
                 },
                 [](const ParamMap& p, const std::vector<runtime::NDArray>& in,
                    const std::vector<runtime::NDArray>& o) {
                   convRef(geometry(p, "depthwise_conv2d", true), in[0], in[1], o[0], true);
                 },
                 [](const ParamMap& p) { return param(p, "R") * param(p, "S"); }});
}

} // namespace detail

} // namespace loom::topi
