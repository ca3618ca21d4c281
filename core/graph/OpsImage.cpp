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

Type roiAlignRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  const TensorTypeNode& rois = argTensor(call, args, 1);
  const TensorTypeNode& bi = argTensor(call, args, 2);
  if (x.ndim() != 4 || !x.isStatic() || !rois.isStatic() || rois.ndim() != 2 || rois.staticShape()[1] != 4 ||
      !bi.isStatic() || bi.staticShape() != std::vector<int64_t>{rois.staticShape()[0]} || !bi.dtype.isIntegral() ||
      !x.dtype.isFloat() || rois.dtype != x.dtype)
    LOOM_TYPE_FAIL(call) << "needs static X [N, C, H, W], rois [R, 4] and integer batch_indices [R], got "
                         << typeStr(args[0]) << ", " << typeStr(args[1]) << ", " << typeStr(args[2]);
  if (call.attrs.getInt("sampling_ratio") < 1) LOOM_TYPE_FAIL(call) << "sampling_ratio must be positive";
  const std::string& m = call.attrs.getString("mode");
  if (m != "avg" && m != "max") LOOM_TYPE_FAIL(call) << "mode must be avg or max, not '" << m << "'";
  return tensorType(std::vector<int64_t>{rois.staticShape()[0], x.staticShape()[1], call.attrs.getInt("output_height"),
                                         call.attrs.getInt("output_width")},
                    x.dtype);
}

HostTensor roiAlignKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const HostTensor &x = in[0], &rois = in[1], &bi = in[2];
  HostTensor r(outT.staticShape(), outT.dtype);
  const int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], R = r.shape[0], OH = r.shape[2],
                OW = r.shape[3], S = call.attrs.getInt("sampling_ratio");
  const double scale = call.attrs.getFloat("spatial_scale");
  const bool half = call.attrs.getString("coordinate_transformation_mode") == "half_pixel";
  const bool isMax = call.attrs.getString("mode") == "max";
  for (int64_t q = 0; q < R; ++q) {
    int64_t b = std::clamp<int64_t>(int64_t(bi.v[size_t(q)]), 0, N - 1);
    double off = half ? 0.5 : 0.0;
    double sw = rois.v[size_t(q * 4)] * scale - off, sh = rois.v[size_t(q * 4 + 1)] * scale - off;
    double rw = rois.v[size_t(q * 4 + 2)] * scale - off - sw, rh = rois.v[size_t(q * 4 + 3)] * scale - off - sh;
    if (!half) rw = std::max(rw, 1.0), rh = std::max(rh, 1.0);
    double bw = rw / double(OW), bh = rh / double(OH);
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t ph = 0; ph < OH; ++ph)
        for (int64_t pw = 0; pw < OW; ++pw) {
          double acc = isMax ? -INFINITY : 0.0;
          for (int64_t iy = 0; iy < S; ++iy)
            for (int64_t ix = 0; ix < S; ++ix) {
              double y = sh + double(ph) * bh + (double(iy) + 0.5) * bh / double(S);
              double xx = sw + double(pw) * bw + (double(ix) + 0.5) * bw / double(S);
              double v = 0;
              if (!(y < -1.0 || y > double(H) || xx < -1.0 || xx > double(W))) {
                y = std::max(y, 0.0);
                xx = std::max(xx, 0.0);
                int64_t y0 = int64_t(y), x0 = int64_t(xx), y1, x1;
                if (y0 >= H - 1) y1 = y0 = H - 1, y = double(y0);
                else y1 = y0 + 1;
                if (x0 >= W - 1) x1 = x0 = W - 1, xx = double(x0);
                else x1 = x0 + 1;
                double ly = y - double(y0), lx = xx - double(x0), hy = 1 - ly, hx = 1 - lx;
                auto at = [&](int64_t yy, int64_t xi) { return x.v[size_t(((b * C + ch) * H + yy) * W + xi)]; };
                double t[4] = {hy * hx * at(y0, x0), hy * lx * at(y0, x1), ly * hx * at(y1, x0), ly * lx * at(y1, x1)};
                v = isMax ? std::max(std::max(t[0], t[1]), std::max(t[2], t[3])) : t[0] + t[1] + t[2] + t[3];
              }
              acc = isMax ? std::max(acc, v) : acc + v;
            }
          r.v[size_t(((q * C + ch) * OH + ph) * OW + pw)] = isMax ? acc : acc / double(S * S);
        }
  }
  return r;
}

// nn.max_pool2d_indices: the flat input index of each 2-D max-pool window's first maximum (ONNX
// MaxPool's Indices output; storage_order 1 counts h fastest within a channel).
Type poolIndicesRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  if (x.ndim() != 4 || !x.isStatic()) LOOM_TYPE_FAIL(call) << "needs static NCHW data, got " << typeStr(args[0]);
  const auto &k = call.attrs.getInts("pool_size"), &st = call.attrs.getInts("strides"), &p = call.attrs.getInts("padding"),
             &dl = call.attrs.getInts("dilation");
  if (k.size() != 2 || st.size() != 2 || p.size() != 4 || dl.size() != 2)
    LOOM_TYPE_FAIL(call) << "pool_size, strides, dilation need 2 values and padding 4";
  std::vector<int64_t> xs = x.staticShape(), out{xs[0], xs[1], 0, 0};
  for (int i = 0; i < 2; ++i) {
    size_t a = size_t(i);
    if (k[a] < 1 || st[a] < 1 || dl[a] < 1 || p[a] < 0 || p[a + 2] < 0)
      LOOM_TYPE_FAIL(call) << "pool_size, strides and dilation must be positive and padding not negative";
    int64_t span = xs[2 + a] + p[a] + p[a + 2] - dl[a] * (k[a] - 1) - 1;
    if (span < 0) LOOM_TYPE_FAIL(call) << "pool window " << attrValueStr(k) << " does not fit data " << typeStr(args[0]);
    out[2 + a] = span / st[a] + 1;
  }
  return tensorType(out, DataType::Int(64));
}

HostTensor poolIndicesKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const HostTensor& x = in[0];
  HostTensor r(outT.staticShape(), outT.dtype);
  const auto &k = call.attrs.getInts("pool_size"), &st = call.attrs.getInts("strides"), &p = call.attrs.getInts("padding"),
             &dl = call.attrs.getInts("dilation");
  bool colMajor = call.attrs.getInt("storage_order") != 0;
  int64_t N = x.shape[0], C = x.shape[1], H = x.shape[2], W = x.shape[3], OH = r.shape[2], OW = r.shape[3];
  for (int64_t n = 0; n < N * C; ++n)
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        double best = -INFINITY;
        int64_t at = 0;
        for (int64_t a = 0; a < k[0]; ++a)
          for (int64_t b = 0; b < k[1]; ++b) {
            int64_t h = oh * st[0] - p[0] + a * dl[0], w = ow * st[1] - p[1] + b * dl[1];
            if (h < 0 || h >= H || w < 0 || w >= W) continue;
            double v = x.v[size_t((n * H + h) * W + w)];
            if (v > best) best = v, at = n * H * W + (colMajor ? w * H + h : h * W + w);
          }
        r.v[size_t((n * OH + oh) * OW + ow)] = double(at);
      }
  return r;
}

} // namespace

void registerImageOps() {
  defineOp("nn.max_pool2d_indices", 1, OpPattern::Opaque,
           {attrInts("pool_size"), attrInts("strides"), attrInts("padding"), attrInts("dilation"),
            attrInt("storage_order", 0)},
           poolIndicesRel, poolIndicesKernel,
           "flat input index (int64) of the first maximum of each 2-D max-pool window (ONNX MaxPool Indices)");
  defineOp("image.roi_align", 3, OpPattern::Opaque,
           {attrString("mode", std::string("avg")), attrInt("output_height", 1), attrInt("output_width", 1),
            attrInt("sampling_ratio", 2), attrFloat("spatial_scale", 1.0),
            attrString("coordinate_transformation_mode", std::string("half_pixel"))},
           roiAlignRel, roiAlignKernel,
           "ONNX RoiAlign with a fixed sampling_ratio: bilinear samples per bin of each roi, averaged (or max)");
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
