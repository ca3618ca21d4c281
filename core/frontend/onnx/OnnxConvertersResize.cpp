// Resize with antialias (opset 18), and tf_crop_and_resize, for linear and cubic modes. With static shapes a separable
// resize is two matrix products, Y = A_h X A_w^T, whose interpolation matrices are computed at
// import following the ONNX reference (onnx/reference/ops/op_resize.py): when an axis shrinks,
// the filter (triangle or cubic) widens by 1/scale, so every output pixel averages all the
// input pixels under it instead of sampling a few. The products are nn.dense calls (scheduled
// and fused like any GEMM); the matrices are constants.
#include <algorithm>
#include <cmath>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;

std::vector<double> linearCoeffs(double ratio, double scale) {
  scale = std::min(scale, 1.0);
  const int64_t start = int64_t(std::floor(-1.0 / scale) + 1);
  const int64_t footprint = 2 - 2 * start;
  std::vector<double> w;
  double sum = 0;
  for (int64_t i = start; i < start + footprint; ++i) {
    double v = std::clamp(1.0 - std::fabs((double(i) - ratio) * scale), 0.0, 1.0);
    w.push_back(v);
    sum += v;
  }
  for (double& v : w) v /= sum;
  return w;
}

std::vector<double> cubicCoeffs(double ratio, double scale, double A) {
  scale = std::min(scale, 1.0);
  auto coeff = [A](double x) {
    x = std::fabs(x);
    double x2 = x * x, x3 = x * x2;
    if (x <= 1) return (A + 2) * x3 - (A + 3) * x2 + 1;
    if (x < 2) return A * x3 - 5 * A * x2 + 8 * A * x - 4 * A;
    return 0.0;
  };
  const int64_t start = int64_t(std::floor(-2.0 / scale) + 1), end = 2 - start;
  std::vector<double> w;
  double sum = 0;
  for (int64_t i = start; i < end; ++i) {
    w.push_back(coeff(scale * (double(i) - ratio)));
    sum += w.back();
  }
  for (double& v : w) v /= sum;
  return w;
}

/// The [outLen, inLen] matrix of one axis: row o holds the weights of output o over the inputs.
/// Without antialias the filters keep their width (scale 1 in the coefficient functions). For
/// tf_crop_and_resize, `roi` is the axis's (start, end) and inside[o] says whether output o
/// falls inside the input (else it takes the extrapolation value).
runtime::NDArray axisMatrix(Context& c, int64_t inLen, int64_t outLen, double scale, const std::string& mode,
                            const std::string& ctm, double cubicA, bool excludeOutside, bool antialias,
                            std::pair<double, double> roi, std::vector<bool>& inside) {
  inside.assign(size_t(outLen), true);
  runtime::NDArray m = runtime::NDArray::empty({outLen, inLen}, runtime::DType{runtime::DType::Float, 32, 1});
  float* a = m.as<float>();
  std::fill(a, a + outLen * inLen, 0.0f);
  const double outWidth = scale * double(inLen);
  for (int64_t o = 0; o < outLen; ++o) {
    const double x = double(o);
    double xo;
    // align_corners is left out: ONNX Runtime's antialiased align_corners disagrees with this
    // port of the reference, and no test data settles which one is meant.
    if (ctm == "tf_crop_and_resize") {
      xo = outWidth == 1 ? (roi.second - roi.first) * double(inLen - 1) / 2
                         : x * (roi.second - roi.first) * double(inLen - 1) / (outWidth - 1);
      xo += roi.first * double(inLen - 1);
      if (xo < 0 || xo > double(inLen - 1)) {
        inside[size_t(o)] = false;
        continue;
      }
    } else if (ctm == "asymmetric") xo = x / scale;
    else if (ctm == "pytorch_half_pixel") xo = outWidth > 1 ? (x + 0.5) / scale - 0.5 : 0;
    else if (ctm == "half_pixel") xo = (x + 0.5) / scale - 0.5;
    else c.fail("coordinate_transformation_mode " + ctm + " is not supported with antialias");
    const double fl = std::floor(xo);
    const double ratio = xo == fl ? 1.0 : xo - fl;
    const double filterScale = antialias ? scale : 1.0;
    std::vector<double> w = mode == "linear" ? linearCoeffs(ratio, filterScale) : cubicCoeffs(ratio, filterScale, cubicA);
    const int64_t n = int64_t(w.size());
    // The n indices of the edge-padded input nearest to xo (ties to the lower one), ascending.
    const int64_t pad = (n + 1) / 2, limit = inLen + 2 * pad;
    const double xp = xo + double(pad);
    std::vector<int64_t> idx(static_cast<size_t>(limit));
    for (int64_t i = 0; i < limit; ++i) idx[size_t(i)] = i;
    std::stable_sort(idx.begin(), idx.end(), [&](int64_t p, int64_t q) {
      double dp = std::fabs(xp - double(p)), dq = std::fabs(xp - double(q));
      return dp < dq || (dp == dq && p < q);
    });
    idx.resize(size_t(n));
    std::sort(idx.begin(), idx.end());
    if (excludeOutside) {
      double sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        int64_t src = idx[size_t(i)] - pad;
        if (src < 0 || src >= inLen) w[size_t(i)] = 0;
        sum += w[size_t(i)];
      }
      for (double& v : w) v = sum != 0 ? v / sum : 0;
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t src = std::clamp<int64_t>(idx[size_t(i)] - pad, 0, inLen - 1);
      a[o * inLen + src] += float(w[size_t(i)]);
    }
  }
  return m;
}

}  // namespace

Expr resizeByMatrices(Context& c, const Expr& x, const std::vector<int64_t>& out, const std::vector<double>& scales,
                      const std::string& mode, const std::string& ctm, bool antialias, const std::vector<double>& roi) {
  std::vector<int64_t> s = c.staticShape(x);
  if (c.tensorType(x).dtype != DataType::Float(32)) c.fail("antialiased Resize supports float32 only");
  const double A = c.attrFloat("cubic_coeff_a", -0.75);
  const bool exclude = c.attrInt("exclude_outside", 0) != 0;
  auto scaleOf = [&](size_t i) { return scales.empty() ? double(out[i]) / double(s[i]) : scales[i]; };
  if (ctm == "tf_crop_and_resize" && roi.size() != 8) c.fail("roi must have 8 entries (start and end of 4 axes)");
  auto roiOf = [&](size_t i) { return roi.empty() ? std::pair<double, double>{0, 1} : std::pair<double, double>{roi[i], roi[i + 4]}; };
  std::vector<bool> inH, inW;
  runtime::NDArray ah = axisMatrix(c, s[2], out[2], scaleOf(2), mode, ctm, A, exclude, antialias, roiOf(2), inH);
  runtime::NDArray aw = axisMatrix(c, s[3], out[3], scaleOf(3), mode, ctm, A, exclude, antialias, roiOf(3), inW);
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3], oH = out[2], oW = out[3];
  auto reshape = [&](const Expr& e, std::vector<int64_t> shape) { return c.call("reshape", {e}, {{"newshape", shape}}); };
  auto swapHW = [&](const Expr& e) { return c.call("transpose", {e}, {{"axes", std::vector<int64_t>{0, 1, 3, 2}}}); };
  Expr y = c.call("nn.dense", {reshape(x, {N * C * H, W}), graph::makeConstant(aw)});        // [N*C*H, oW]
  y = reshape(swapHW(reshape(y, {N, C, H, oW})), {N * C * oW, H});
  y = c.call("nn.dense", {y, graph::makeConstant(ah)});                                        // [N*C*oW, oH]
  y = swapHW(reshape(y, {N, C, oW, oH}));
  // tf_crop_and_resize: outputs outside the input take extrapolation_value.
  bool any = false;
  runtime::NDArray fill = runtime::NDArray::empty({oH, oW}, runtime::DType{runtime::DType::Float, 32, 1});
  const float extrap = float(c.attrFloat("extrapolation_value", 0.0));
  for (int64_t i = 0; i < oH; ++i)
    for (int64_t j = 0; j < oW; ++j) {
      bool out = !inH[size_t(i)] || !inW[size_t(j)];
      fill.as<float>()[i * oW + j] = out ? extrap : 0.0f;
      any |= out && extrap != 0;
    }
  return any ? c.call("add", {y, graph::makeConstant(fill)}) : y;
}

}  // namespace loom::frontend::onnxi
