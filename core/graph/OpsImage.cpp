// image.resize2d_cubic: ONNX Resize with mode cubic (cubic_coeff_a, exclude_outside, every
// coordinate_transformation_mode but tf_crop_and_resize) on NCHW data. image.grid_sample: ONNX
// GridSample (bilinear, nearest, bicubic; zeros, border, reflection; align_corners).
#include <algorithm>
#include <cmath>

#include "core/graph/OpsInternal.h"

namespace loom::graph {

namespace {

Type resizeCubicRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& d = argTensor(call, args, 0);
  if (d.ndim() != 4 || !d.dtype.isFloat()) LOOM_TYPE_FAIL(call) << "needs float NCHW data, got " << typeStr(args[0]);
  const auto& s = call.attrs.getInts("size");
  const auto& sc = call.attrs.getFloats("scales");
  if (s.size() != 2 || (!sc.empty() && sc.size() != 2))
    LOOM_TYPE_FAIL(call) << "size must have 2 values and scales none or 2";
  return tensorType(Shape{d.shape[0], d.shape[1], Dim(s[0]), Dim(s[1])}, d.dtype);
}

/// The 4 taps' weights at fraction t (taps at floor(x) - 1 .. floor(x) + 2), ONNX's cubic kernel.
void cubicWeights(double t, double A, double w[4]) {
  auto near = [&](double d) { return ((A + 2) * d - (A + 3)) * d * d + 1; };
  auto far = [&](double d) { return ((A * d - 5 * A) * d + 8 * A) * d - 4 * A; };
  w[0] = far(1 + t);
  w[1] = near(t);
  w[2] = near(1 - t);
  w[3] = far(2 - t);
}

HostTensor resizeCubicKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  const std::string& mode = call.attrs.getString("coordinate_transformation_mode");
  const auto& sc = call.attrs.getFloats("scales");
  double A = call.attrs.getFloat("cubic_coeff_a");
  bool exclude = call.attrs.getInt("exclude_outside") != 0;
  int64_t NC = x.shape[0] * x.shape[1], IH = x.shape[2], IW = x.shape[3], OH = r.shape[2], OW = r.shape[3];
  // Per axis: the 4 source indices (clamped) and weights of output index o.
  auto taps = [&](int64_t o, int64_t inLen, int64_t outLen, double scale, int64_t idx[4], double w[4]) {
    double c = resizeInCoord(mode, o, inLen, outLen, scale);
    double f = std::floor(c);
    cubicWeights(c - f, A, w);
    double sum = 0;
    for (int j = 0; j < 4; ++j) {
      int64_t i = int64_t(f) - 1 + j;
      if (exclude && (i < 0 || i >= inLen)) w[j] = 0;
      sum += w[j];
      idx[j] = std::clamp<int64_t>(i, 0, inLen - 1);
    }
    if (exclude)
      for (int j = 0; j < 4; ++j) w[j] /= sum;
  };
  for (int64_t oh = 0; oh < OH; ++oh) {
    int64_t hi[4], wi[4];
    double hw[4], ww[4];
    taps(oh, IH, OH, sc.empty() ? 0.0 : sc[0], hi, hw);
    for (int64_t ow = 0; ow < OW; ++ow) {
      taps(ow, IW, OW, sc.empty() ? 0.0 : sc[1], wi, ww);
      for (int64_t nc = 0; nc < NC; ++nc) {
        double v = 0;
        for (int a = 0; a < 4; ++a)
          for (int b = 0; b < 4; ++b) v += hw[a] * ww[b] * x.v[size_t((nc * IH + hi[a]) * IW + wi[b])];
        r.v[size_t((nc * OH + oh) * OW + ow)] = v;
      }
    }
  }
  return r;
}

Type gridSampleRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  const TensorTypeNode& g = argTensor(call, args, 1);
  if (x.ndim() != 4 || g.ndim() != 4 || !x.isStatic() || !g.isStatic() || g.staticShape()[3] != 2 ||
      g.staticShape()[0] != x.staticShape()[0] || !x.dtype.isFloat() || g.dtype != x.dtype)
    LOOM_TYPE_FAIL(call) << "needs static float X [N, C, H, W] and grid [N, Ho, Wo, 2] of its type, got "
                         << typeStr(args[0]) << " and " << typeStr(args[1]);
  const std::string &m = call.attrs.getString("mode"), &p = call.attrs.getString("padding_mode");
  if ((m != "bilinear" && m != "nearest" && m != "bicubic") || (p != "zeros" && p != "border" && p != "reflection"))
    LOOM_TYPE_FAIL(call) << "mode '" << m << "' / padding_mode '" << p << "' not supported";
  std::vector<int64_t> xs = x.staticShape(), gs = g.staticShape();
  return tensorType(std::vector<int64_t>{xs[0], xs[1], gs[1], gs[2]}, x.dtype);
}

} // namespace

double gridSampleReflect(double x, double lo, double hi) {
  double range = hi - lo;
  if (x >= lo && x <= hi) return x;
  double dx = x < lo ? lo - x : x - hi;
  double n = std::floor(dx / range), r = dx - n * range;
  bool even = std::fmod(n, 2.0) == 0;
  return x < lo ? (even ? lo + r : hi - r) : (even ? hi - r : lo + r);
}

namespace {

HostTensor gridSampleKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const HostTensor &x = in[0], &grid = in[1];
  HostTensor r(outT.staticShape(), outT.dtype);
  const std::string &mode = call.attrs.getString("mode"), &pad = call.attrs.getString("padding_mode");
  bool ac = call.attrs.getInt("align_corners") != 0;
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], HO = r.shape[2], WO = r.shape[3];
  auto unnorm = [&](double g, int64_t n) { return ac ? (g + 1) / 2 * double(n - 1) : ((g + 1) * double(n) - 1) / 2; };
  auto lo = [&](int64_t) { return ac ? 0.0 : -0.5; };
  auto hi = [&](int64_t n) { return ac ? double(n - 1) : double(n) - 0.5; };
  auto pixel = [&](int64_t b, int64_t ch, int64_t iy, int64_t ix) {
    if (pad == "zeros") {
      if (ix < 0 || ix >= W || iy < 0 || iy >= H) return 0.0;
    } else if (pad == "reflection") {
      ix = int64_t(gridSampleReflect(double(ix), lo(W), hi(W)));
      iy = int64_t(gridSampleReflect(double(iy), lo(H), hi(H)));
    }
    ix = std::clamp<int64_t>(ix, 0, W - 1);
    iy = std::clamp<int64_t>(iy, 0, H - 1);
    return x.v[size_t(((b * C + ch) * H + iy) * W + ix)];
  };
  for (int64_t b = 0; b < N; ++b)
    for (int64_t oy = 0; oy < HO; ++oy)
      for (int64_t ox = 0; ox < WO; ++ox) {
        double fx = unnorm(grid.v[size_t(((b * HO + oy) * WO + ox) * 2)], W);
        double fy = unnorm(grid.v[size_t(((b * HO + oy) * WO + ox) * 2 + 1)], H);
        if (pad == "border") {
          fx = std::clamp(fx, 0.0, double(W - 1));
          fy = std::clamp(fy, 0.0, double(H - 1));
        } else if (pad == "reflection") {
          fx = gridSampleReflect(fx, lo(W), hi(W));
          fy = gridSampleReflect(fy, lo(H), hi(H));
        }
        for (int64_t ch = 0; ch < C; ++ch) {
          double v = 0;
          if (mode == "nearest") {
            v = pixel(b, ch, int64_t(std::nearbyint(fy)), int64_t(std::nearbyint(fx)));
          } else if (mode == "bilinear") {
            int64_t x0 = int64_t(std::floor(fx)), y0 = int64_t(std::floor(fy));
            double tx = fx - double(x0), ty = fy - double(y0);
            v = (pixel(b, ch, y0, x0) * (1 - tx) + pixel(b, ch, y0, x0 + 1) * tx) * (1 - ty) +
                (pixel(b, ch, y0 + 1, x0) * (1 - tx) + pixel(b, ch, y0 + 1, x0 + 1) * tx) * ty;
          } else {
            int64_t x0 = int64_t(std::floor(fx)), y0 = int64_t(std::floor(fy));
            double wx[4], wy[4];
            cubicWeights(fx - double(x0), -0.75, wx);
            cubicWeights(fy - double(y0), -0.75, wy);
            for (int i = 0; i < 4; ++i)
              for (int j = 0; j < 4; ++j) v += wy[i] * wx[j] * pixel(b, ch, y0 - 1 + i, x0 - 1 + j);
          }
          r.v[size_t(((b * C + ch) * HO + oy) * WO + ox)] = v;
        }
      }
  return r;
}

} // namespace

void registerImageOps() {
  defineOp("image.grid_sample", 2, OpPattern::Injective,
           {attrString("mode", std::string("bilinear")), attrString("padding_mode", std::string("zeros")),
            attrInt("align_corners", 0)},
           gridSampleRel, gridSampleKernel,
           "samples X [N, C, H, W] at the normalized points grid [N, Ho, Wo, 2] (ONNX GridSample)");
  defineOp("image.resize2d_cubic", 1, OpPattern::Injective,
           {attrInts("size"), attrString("coordinate_transformation_mode", std::string("half_pixel")),
            AttrSpec{"scales", AttrKind::Floats, AttrValue(std::vector<double>{})}, attrFloat("cubic_coeff_a", -0.75),
            attrInt("exclude_outside", 0)},
           resizeCubicRel, resizeCubicKernel,
           "bicubic resize of NCHW data (ONNX Resize mode cubic): 4x4 taps, edge-clamped or, with "
           "exclude_outside, dropped and the weights renormalized");
}

} // namespace loom::graph
