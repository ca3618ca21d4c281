// Workloads: conv2d in NCHW layout (with groups) and depthwise_conv2d, padding as a `pad_temp`
// stage like TVM's topi.
#include "core/topi/WorkloadUtil.h"

namespace loom::topi::detail {

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

/// data padded by `pad` zeros on each spatial side, or `data` itself when pad == 0.
te::Tensor padded(const te::Tensor& data, const ConvGeom& g) {
  if (g.pad == 0) return data;
  int64_t pad = g.pad;
  return te::compute(
      shapeOf({g.N, g.C, g.H + 2 * pad, g.W + 2 * pad}),
      [&](Var i0, Var i1, Var i2, Var i3) {
        Expr inside =
            i2 >= c32(pad) && i2 < c32(g.H + pad) && i3 >= c32(pad) && i3 < c32(g.W + pad);
        return tir::ifThenElse(inside, data(i0, i1, addC(i2, -pad), addC(i3, -pad)),
                               tir::floatImm(DataType::Float(32), 0));
      },
      "pad_temp", "injective,pad");
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
  int64_t cg = g.C / g.groups, kg = g.K / g.groups;
  te::Tensor data = input({g.N, g.C, g.H, g.W}, "data");
  te::Tensor weight = input({g.K, cg, g.R, g.S}, "weight");
  te::Tensor pad = padded(data, g);
  te::IterVar rc = te::reduceAxis(c32(cg), "rc"), ry = te::reduceAxis(c32(g.R), "ry"),
              rx = te::reduceAxis(c32(g.S), "rx");
  te::Tensor out =
      te::compute(shapeOf({g.N, g.K, g.P, g.Q}),
                  [&](Var nn, Var ff, Var yy, Var xx) {
                    Expr cin = g.groups == 1 ? Expr(rc) : tir::floordiv(ff, c32(kg)) * c32(cg) + rc;
                    Expr h = mulC(yy, g.stride) + mulC(ry, g.dilation);
                    Expr w = mulC(xx, g.stride) + mulC(rx, g.dilation);
                    return te::sum(pad(nn, cin, h, w) * weight(ff, rc, ry, rx), {rc, ry, rx});
                  },
                  "conv2d_nchw", g.groups == 1 ? "conv2d_nchw" : "group_conv2d_nchw", {},
                  {"nn", "ff", "yy", "xx"});
  return {data, weight, out};
}

std::vector<te::Tensor> depthwiseConv2d(const ParamMap& p) {
  ConvGeom g = geometry(p, "depthwise_conv2d", true);
  int64_t mult = g.K / g.C;
  te::Tensor data = input({g.N, g.C, g.H, g.W}, "data");
  te::Tensor weight = input({g.C, mult, g.R, g.S}, "weight");
  te::Tensor pad = padded(data, g);
  te::IterVar di = te::reduceAxis(c32(g.R), "di"), dj = te::reduceAxis(c32(g.S), "dj");
  te::Tensor out =
      te::compute(shapeOf({g.N, g.K, g.P, g.Q}),
                  [&](Var b, Var c, Var i, Var j) {
                    Expr cin = mult == 1 ? Expr(c) : tir::floordiv(c, c32(mult));
                    Expr m = mult == 1 ? c32(0) : tir::floormod(c, c32(mult));
                    Expr h = mulC(i, g.stride) + mulC(di, g.dilation);
                    Expr w = mulC(j, g.stride) + mulC(dj, g.dilation);
                    return te::sum(pad(b, cin, h, w) * weight(cin, m, di, dj), {di, dj});
                  },
                  "DepthwiseConv2d", "depthwise_conv2d_nchw", {}, {"b", "c", "i", "j"});
  return {data, weight, out};
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

} // namespace loom::topi::detail
