// 3-D (NCDHW) Conv and ConvTranspose as sums of 2-D ones over the depth taps: the graph keeps
// using nn.conv2d / nn.conv2d_transpose (their schedules, tuning and fusion), with the depth
// axis folded into the batch. Conv: for each depth tap kd, the input's depth slices that tap
// reads (strided by the depth stride) are a batch of 2-D images convolved with w[:, :, kd];
// the taps' results add up. ConvTranspose: each tap's 2-D transposed convolution of every input
// depth slice lands at output depths id * stride + kd * dilation; the taps are spread to those
// depths (zero interleave for the stride, pad for the offset), added, then cropped by the pads.
#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;

Expr reshape(const Context& c, const Expr& x, std::vector<int64_t> shape) {
  return c.call("reshape", {x}, {{"newshape", std::move(shape)}});
}

Expr transpose(const Context& c, const Expr& x, std::vector<int64_t> axes) {
  return c.call("transpose", {x}, {{"axes", std::move(axes)}});
}

Expr slice(const Context& c, const Expr& x, int64_t axis, int64_t begin, int64_t end, int64_t stride) {
  return c.call("strided_slice", {x},
                {{"begin", std::vector<int64_t>{begin}},
                 {"end", std::vector<int64_t>{end}},
                 {"strides", std::vector<int64_t>{stride}},
                 {"axes", std::vector<int64_t>{axis}}});
}

/// Zero padding of `x` along `axis` only.
Expr padAxis(const Context& c, const Expr& x, int64_t axis, int64_t before, int64_t after) {
  if (before == 0 && after == 0) return x;
  size_t n = c.staticShape(x).size();
  std::vector<int64_t> pw(2 * n, 0);
  pw[2 * size_t(axis)] = before;
  pw[2 * size_t(axis) + 1] = after;
  return c.call("nn.pad", {x}, {{"pad_width", pw}, {"pad_value", 0.0}, {"pad_mode", std::string("constant")}});
}

/// w[:, :, kd] as a 2-D kernel.
Expr depthTap(const Context& c, const Expr& w, int64_t kd) {
  std::vector<int64_t> ws = c.staticShape(w);
  return reshape(c, slice(c, w, 2, kd, kd + 1, 1), {ws[0], ws[1], ws[3], ws[4]});
}

}  // namespace

Expr conv3dOf(Context& c, Expr x, Expr w, const Expr& bias, const std::vector<int64_t>& strides,
              const std::vector<int64_t>& dil, const std::vector<int64_t>& pads, int64_t group) {
  std::vector<int64_t> xs = c.staticShape(x), ws = c.staticShape(w);
  if (xs.size() != 5 || ws.size() != 5) c.fail("a 3-D convolution needs rank-5 data and weights");
  if (strides.size() != 3 || dil.size() != 3 || pads.size() != 6) c.fail("strides, dilations and pads must cover 3 axes");
  const int64_t N = xs[0], C = xs[1], kD = ws[2];
  x = padAxis(c, x, 2, pads[0], pads[3]);
  const int64_t Dp = xs[2] + pads[0] + pads[3];
  const int64_t oD = (Dp - (kD - 1) * dil[0] - 1) / strides[0] + 1;
  if (oD < 1) c.fail("the kernel's depth extent is larger than the padded input's depth");
  Expr acc;
  for (int64_t kd = 0; kd < kD; ++kd) {
    int64_t begin = kd * dil[0];
    Expr taps = slice(c, x, 2, begin, begin + strides[0] * (oD - 1) + 1, strides[0]);  // [N, C, oD, H, W]
    Expr images = reshape(c, transpose(c, taps, {0, 2, 1, 3, 4}), {N * oD, C, xs[3], xs[4]});
    Expr y = c.call("nn.conv2d", {images, depthTap(c, w, kd)},
                    {{"strides", std::vector<int64_t>{strides[1], strides[2]}},
                     {"padding", std::vector<int64_t>{pads[1], pads[2], pads[4], pads[5]}},
                     {"dilation", std::vector<int64_t>{dil[1], dil[2]}},
                     {"groups", group}});
    acc = acc.defined() ? c.call("add", {acc, y}) : y;
  }
  std::vector<int64_t> ys = c.staticShape(acc);  // [N*oD, O, oH, oW]
  Expr y = transpose(c, reshape(c, acc, {N, oD, ys[1], ys[2], ys[3]}), {0, 2, 1, 3, 4});
  if (bias.defined()) y = c.call("nn.bias_add", {y, bias}, {{"axis", int64_t(1)}});
  return y;
}

std::vector<Expr> convTranspose3d(Context& c) {
  Expr x = c.input(0), w = c.input(1);
  std::vector<int64_t> xs = c.staticShape(x), ws = c.staticShape(w);
  if (ws.size() != 5) c.fail("a 3-D transposed convolution needs rank-5 weights");
  const int64_t N = xs[0], C = xs[1], D = xs[2], kD = ws[2];
  auto ints = [&](const char* name, std::vector<int64_t> def) {
    std::vector<int64_t> v = c.attrInts(name, def);
    if (v.size() != def.size()) c.fail(std::string(name) + " must have " + std::to_string(def.size()) + " entries");
    return v;
  };
  std::vector<int64_t> strides = ints("strides", {1, 1, 1}), dil = ints("dilations", {1, 1, 1});
  std::vector<int64_t> outPad = ints("output_padding", {0, 0, 0}), pads = ints("pads", {0, 0, 0, 0, 0, 0});
  const std::vector<int64_t> kernel{ws[2], ws[3], ws[4]};
  std::string autoPad = c.attrString("auto_pad", "NOTSET");
  std::vector<int64_t> outShape = c.attrInts("output_shape");
  if (!outShape.empty() || autoPad == "SAME_UPPER" || autoPad == "SAME_LOWER") {
    if (outShape.size() > 3) outShape.erase(outShape.begin(), outShape.end() - 3);
    if (!outShape.empty() && outShape.size() != 3) c.fail("output_shape must give the 3 spatial extents");
    for (int i = 0; i < 3; ++i) {
      int64_t target = outShape.empty() ? xs[2 + size_t(i)] * strides[size_t(i)] : outShape[size_t(i)];
      int64_t total = strides[size_t(i)] * (xs[2 + size_t(i)] - 1) + outPad[size_t(i)] +
                      (kernel[size_t(i)] - 1) * dil[size_t(i)] + 1 - target;
      if (total < 0) {  // the requested shape is larger than the full output: extend at the end
        outPad[size_t(i)] -= total;
        total = 0;
      }
      bool upper = autoPad == "SAME_UPPER";
      pads[size_t(i)] = upper ? total / 2 : total - total / 2;
      pads[size_t(i) + 3] = total - pads[size_t(i)];
    }
  } else if (autoPad == "VALID") {
    pads.assign(6, 0);
  }
  // Each depth tap: a 2-D transposed convolution of every input depth slice.
  Expr images = reshape(c, transpose(c, x, {0, 2, 1, 3, 4}), {N * D, C, xs[3], xs[4]});
  const int64_t span = (D - 1) * strides[0] + 1;                           // one tap's output depths
  const int64_t full = span + (kD - 1) * dil[0] + outPad[0];               // before cropping
  Expr acc;
  std::vector<int64_t> ys;
  for (int64_t kd = 0; kd < kD; ++kd) {
    Expr y = c.call("nn.conv2d_transpose", {images, depthTap(c, w, kd)},
                    {{"strides", std::vector<int64_t>{strides[1], strides[2]}},
                     {"padding", std::vector<int64_t>{pads[1], pads[2], pads[4], pads[5]}},
                     {"dilation", std::vector<int64_t>{dil[1], dil[2]}},
                     {"groups", c.attrInt("group", 1)},
                     {"output_padding", std::vector<int64_t>{outPad[1], outPad[2]}}});
    ys = c.staticShape(y);  // [N*D, O, oH, oW]
    const int64_t X = ys[1] * ys[2] * ys[3];
    Expr d = reshape(c, y, {N, D, 1, X});
    if (strides[0] > 1) d = reshape(c, padAxis(c, d, 2, 0, strides[0] - 1), {N, D * strides[0], X});
    else d = reshape(c, d, {N, D, X});
    d = slice(c, d, 1, 0, span, 1);
    d = padAxis(c, d, 1, kd * dil[0], full - kd * dil[0] - span);
    acc = acc.defined() ? c.call("add", {acc, d}) : d;
  }
  const int64_t oD = full - pads[0] - pads[3];
  if (oD < 1) c.fail("the pads remove the whole output depth");
  Expr y = slice(c, acc, 1, pads[0], pads[0] + oD, 1);
  y = transpose(c, reshape(c, y, {N, oD, ys[1], ys[2], ys[3]}), {0, 2, 1, 3, 4});
  if (c.hasInput(2)) y = c.call("nn.bias_add", {y, c.input(2)}, {{"axis", int64_t(1)}});
  return {y};
}

}  // namespace loom::frontend::onnxi
