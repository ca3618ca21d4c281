// image.resize2d_cubic: ONNX Resize with mode cubic (cubic_coeff_a, exclude_outside, every
// coordinate_transformation_mode but tf_crop_and_resize) on NCHW data.
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

} // namespace

void registerImageOps() {
  defineOp("image.resize2d_cubic", 1, OpPattern::Injective,
           {attrInts("size"), attrString("coordinate_transformation_mode", std::string("half_pixel")),
            AttrSpec{"scales", AttrKind::Floats, AttrValue(std::vector<double>{})}, attrFloat("cubic_coeff_a", -0.75),
            attrInt("exclude_outside", 0)},
           resizeCubicRel, resizeCubicKernel,
           "bicubic resize of NCHW data (ONNX Resize mode cubic): 4x4 taps, edge-clamped or, with "
           "exclude_outside, dropped and the weights renormalized");
}

} // namespace loom::graph
