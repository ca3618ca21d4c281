// ONNX index and image ops added for coverage: ScatterElements/Scatter, ScatterND, ReverseSequence,
// GridSample, DFT, STFT, MaxUnpool, RoiAlign.
#include <cmath>
#include <numeric>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

Outs scatterElements(Context& c) {
  std::string red = c.attrString("reduction", "none");
  return {c.call("scatter_elements", {c.input(0), c.input(1), c.input(2)},
                 {{"axis", c.attrInt("axis", 0)}, {"reduction", red}})};
}

Outs scatterND(Context& c) {
  std::string red = c.attrString("reduction", "none");
  return {c.call("scatter_nd", {c.input(0), c.input(1), c.input(2)}, {{"reduction", red}})};
}

/// ReverseSequence: gather_elements along the time axis with index len[b] - 1 - t where t < len[b]
/// (else t), built from graph ops so the lengths may be data.
Outs reverseSequence(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> xs = c.staticShape(x);
  int64_t timeAxis = c.attrInt("time_axis", 0), batchAxis = c.attrInt("batch_axis", 1);
  if (xs.size() < 2 || timeAxis + batchAxis != 1 || timeAxis < 0 || batchAxis < 0)
    c.fail("time_axis and batch_axis must be 0 and 1 (in either order) of a rank >= 2 input");
  int64_t T = xs[size_t(timeAxis)], B = xs[size_t(batchAxis)];
  // t as [T, 1] (time first) or [1, T]; lengths as [1, B] or [B, 1].
  runtime::NDArray steps = runtime::NDArray::empty({timeAxis == 0 ? T : 1, timeAxis == 0 ? 1 : T},
                                                   runtime::DType{runtime::DType::Int, 64, 1});
  for (int64_t t = 0; t < T; ++t) steps.as<int64_t>()[t] = t;
  Expr t = graph::makeConstant(steps);
  Expr lens = c.call("cast", {c.input(1)}, {{"dtype", DataType::Int(64)}});
  lens = c.call("reshape", {lens}, {{"newshape", timeAxis == 0 ? std::vector<int64_t>{1, B} : std::vector<int64_t>{B, 1}}});
  Expr rev = c.call("subtract", {c.call("subtract", {lens, graph::makeScalar(1.0, DataType::Int(64))}), t});
  Expr idx = c.call("where", {c.call("less", {t, lens}), rev, t});
  std::vector<int64_t> withRest = {xs[0], xs[1]};
  withRest.resize(xs.size(), 1);
  idx = c.call("reshape", {c.call("broadcast_to", {idx}, {{"shape", std::vector<int64_t>{xs[0], xs[1]}}})},
               {{"newshape", withRest}});
  idx = c.call("broadcast_to", {idx}, {{"shape", xs}});
  return {c.call("gather_elements", {x, idx}, {{"axis", timeAxis}})};
}

Outs gridSample(Context& c) {
  std::string mode = c.attrString("mode", "bilinear");
  if (mode == "linear") mode = "bilinear";  // opset 20 names
  if (mode == "cubic") mode = "bicubic";
  return {c.call("image.grid_sample", {c.input(0), c.input(1)},
                 {{"mode", mode},
                  {"padding_mode", c.attrString("padding_mode", "zeros")},
                  {"align_corners", c.attrInt("align_corners", 0)}})};
}

/// DFT (opset 17): the transform along `axis` as matmuls with constant cos/sin matrices (real
/// and imaginary parts apart), optionally inverse (scaled by 1/L) and one-sided.
Expr dftOf(Context& c, Expr x, int64_t axis, int64_t L, bool inverse, bool onesided) {
  std::vector<int64_t> xs = c.staticShape(x);
  const int64_t r = int64_t(xs.size());
  if (r < 2 || (xs.back() != 1 && xs.back() != 2)) c.fail("input must end in a dim of 1 (real) or 2 (complex)");
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r - 1) c.fail("axis " + std::to_string(axis) + " must name a signal dim");
  const int64_t N = xs[size_t(axis)];
  if (L <= 0) L = N;
  const int64_t K = onesided ? L / 2 + 1 : L;
  DataType f = c.tensorType(x).dtype;
  // Part p (0 real, 1 imaginary) with the signal axis last: [..., N].
  std::vector<int64_t> perm;
  for (int64_t d = 0; d < r - 1; ++d)
    if (d != axis) perm.push_back(d);
  perm.push_back(axis);
  std::vector<int64_t> signal(xs.begin(), xs.end() - 1);
  auto part = [&](int64_t p) {
    Expr s = c.call("strided_slice", {x},
                    {{"begin", std::vector<int64_t>{p}}, {"end", std::vector<int64_t>{p + 1}},
                     {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{r - 1}}});
    s = c.call("transpose", {c.call("reshape", {s}, {{"newshape", signal}})}, {{"axes", perm}});
    if (L < N) {
      s = c.call("strided_slice", {s},
                 {{"begin", std::vector<int64_t>{0}}, {"end", std::vector<int64_t>{L}},
                  {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{r - 2}}});
    } else if (L > N) {
      std::vector<int64_t> pw(size_t(2 * (r - 1)), 0);
      pw[size_t(2 * (r - 2) + 1)] = L - N;
      s = c.call("nn.pad", {s}, {{"pad_width", pw}});
    }
    return s;
  };
  runtime::NDArray cosM = runtime::NDArray::empty({L, K}, graph::toDType(f));
  runtime::NDArray sinM = runtime::NDArray::empty({L, K}, graph::toDType(f));
  const double scale = inverse ? 1.0 / double(L) : 1.0;
  for (int64_t n = 0; n < L; ++n)
    for (int64_t k = 0; k < K; ++k) {
      double th = 2 * M_PI * double((n * k) % L) / double(L);
      cosM.as<float>()[n * K + k] = float(std::cos(th) * scale);
      sinM.as<float>()[n * K + k] = float(std::sin(th) * scale);
    }
  if (f != DataType::Float(32)) c.fail("only float32 is supported");
  Expr C = graph::makeConstant(cosM), S = graph::makeConstant(sinM);
  Expr xr = part(0);
  Expr yr = c.call("nn.matmul", {xr, C}), yi = c.call("negative", {c.call("nn.matmul", {xr, S})});
  if (inverse) yi = c.call("nn.matmul", {xr, S});
  if (xs.back() == 2) {
    Expr xi = part(1);
    Expr xiS = c.call("nn.matmul", {xi, S}), xiC = c.call("nn.matmul", {xi, C});
    yr = inverse ? c.call("subtract", {yr, xiS}) : c.call("add", {yr, xiS});
    yi = c.call("add", {yi, xiC});
  }
  std::vector<int64_t> ys = c.staticShape(yr);
  ys.push_back(1);
  Expr y = c.call("concatenate", {c.call("reshape", {yr}, {{"newshape", ys}}), c.call("reshape", {yi}, {{"newshape", ys}})},
                  {{"axis", r - 1}});
  std::vector<int64_t> back(static_cast<size_t>(r), 0);
  for (int64_t d = 0; d < r - 1; ++d) back[size_t(perm[size_t(d)])] = d;
  back[size_t(r - 1)] = r - 1;
  return c.call("transpose", {y}, {{"axes", back}});
}

Outs dft(Context& c) {
  int64_t L = c.hasInput(1) ? c.constInts(1).at(0) : 0;
  if (c.hasInput(1) && L < 1) c.fail("dft_length must be positive");
  int64_t axis = c.attrInt("axis", 1);
  if (c.opset() >= 20) {  // opset 20: the axis is input 2 (default -2), negative from the back
    axis = c.hasInput(2) ? c.constInts(2).at(0) : -2;
    if (axis < 0) axis += int64_t(c.staticShape(c.input(0)).size());
  }
  return {dftOf(c, c.input(0), axis, L, c.attrInt("inverse", 0) != 0, c.attrInt("onesided", 0) != 0)};
}

/// STFT (opset 17): frames gathered by a constant index, windowed, then DFT along the frame.
Outs stft(Context& c) {
  Expr x = c.input(0);
  std::vector<int64_t> xs = c.staticShape(x);
  if (xs.size() != 3) c.fail("signal must be [batch, length, 1 or 2]");
  const int64_t step = c.constInts(1).at(0);
  int64_t frameLen = c.hasInput(3) ? c.constInts(3).at(0) : (c.hasInput(2) ? c.staticShape(c.input(2)).at(0) : 0);
  if (step < 1 || frameLen < 1 || frameLen > xs[1]) c.fail("needs frame_step >= 1 and a frame length within the signal");
  const int64_t frames = (xs[1] - frameLen) / step + 1;
  runtime::NDArray idx = runtime::NDArray::empty({frames, frameLen}, runtime::DType{runtime::DType::Int, 64, 1});
  for (int64_t f = 0; f < frames; ++f)
    for (int64_t j = 0; j < frameLen; ++j) idx.as<int64_t>()[f * frameLen + j] = f * step + j;
  Expr fr = c.call("take", {x, graph::makeConstant(idx)}, {{"axis", int64_t(1)}});  // [B, frames, len, c]
  if (c.hasInput(2)) {
    Expr w = c.call("reshape", {c.input(2)}, {{"newshape", std::vector<int64_t>{frameLen, 1}}});
    fr = c.call("multiply", {fr, w});
  }
  return {dftOf(c, fr, 2, frameLen, false, c.attrInt("onesided", 1) != 0)};
}

/// MaxUnpool: zeros with X written at its flat indices I (MaxPool's Indices), as scatter_elements
/// on the flattened output.
Outs maxUnpool(Context& c) {
  Expr x = c.input(0), ind = c.input(1);
  std::vector<int64_t> xs = c.staticShape(x);
  std::vector<int64_t> out, given;
  if (c.hasInput(2)) given = c.constInts(2);
  {
    std::vector<int64_t> k = c.attrInts("kernel_shape");
    size_t n = xs.size() - 2;
    std::vector<int64_t> st = c.attrInts("strides", std::vector<int64_t>(n, 1)),
                         pd = c.attrInts("pads", std::vector<int64_t>(2 * n, 0));
    if (k.size() != n || st.size() != n || pd.size() != 2 * n) c.fail("kernel_shape, strides and pads must fit the rank");
    out = {xs[0], xs[1]};
    for (size_t i = 0; i < n; ++i) out.push_back((xs[2 + i] - 1) * st[i] - pd[i] - pd[i + n] + k[i]);
  }
  int64_t total = 1, count = 1;
  for (int64_t d : out) total *= d;
  for (int64_t d : xs) count *= d;
  DataType f = c.tensorType(x).dtype;
  Expr zeros = c.call("broadcast_to", {graph::makeScalar(0.0, f)}, {{"shape", std::vector<int64_t>{total}}});
  Expr y = c.call("scatter_elements",
                  {zeros, c.call("reshape", {ind}, {{"newshape", std::vector<int64_t>{count}}}),
                   c.call("reshape", {x}, {{"newshape", std::vector<int64_t>{count}}})},
                  {{"axis", int64_t(0)}, {"reduction", std::string("none")}});
  y = c.call("reshape", {y}, {{"newshape", out}});
  if (given.empty() || given == out) return {y};
  // A larger output_shape: the indices keep their coordinates in the default shape, the rest is zeros.
  if (given.size() != out.size()) c.fail("output_shape must have the rank of X");
  std::vector<int64_t> pw;
  for (size_t i = 0; i < out.size(); ++i) {
    if (given[i] < out[i]) c.fail("output_shape is smaller than the unpooled shape");
    pw.push_back(0);
    pw.push_back(given[i] - out[i]);
  }
  return {c.call("nn.pad", {y}, {{"pad_width", pw}})};
}

Outs roiAlign(Context& c) {
  int64_t ratio = c.attrInt("sampling_ratio", 0);
  if (ratio < 1)
    c.fail("sampling_ratio 0 (adaptive: a sample count that depends on the rois' data) is not supported");
  std::string ctm = c.opset() < 16 ? "output_half_pixel" : c.attrString("coordinate_transformation_mode", "half_pixel");
  return {c.call("image.roi_align", {c.input(0), c.input(1), c.input(2)},
                 {{"mode", c.attrString("mode", "avg")},
                  {"output_height", c.attrInt("output_height", 1)},
                  {"output_width", c.attrInt("output_width", 1)},
                  {"sampling_ratio", ratio},
                  {"spatial_scale", c.attrFloat("spatial_scale", 1.0)},
                  {"coordinate_transformation_mode", ctm}})};
}

}  // namespace

const std::unordered_map<std::string, Converter>& indexImageConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"ScatterElements", scatterElements},
      {"Scatter", scatterElements},
      {"ScatterND", scatterND},
      {"ReverseSequence", reverseSequence},
      {"GridSample", gridSample},
      {"DFT", dft},
      {"STFT", stft},
      {"MaxUnpool", maxUnpool},
      {"RoiAlign", roiAlign},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
