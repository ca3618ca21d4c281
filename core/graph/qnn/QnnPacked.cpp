// The packed int8 ops that qnn-canonicalize emits for u8 data x s8 constant weights:
// qnn.conv2d_u8s8 (channel-blocked data, weights packed as int32 words of 4 input channels) and
// qnn.dense_u8s8; type relations and exact host kernels. Their TE computes are in
// core/topi/nn/QnnDot4.cpp.
#include "core/graph/OpsInternal.h"
#include "core/graph/qnn/Qnn.h"

namespace loom::graph::qnn {

namespace {

/// The 4 signed bytes of an int32 word (little-endian).
int64_t byteOf(double word, int k) {
  const auto w = uint32_t(int64_t(word));
  return int64_t(int8_t(uint8_t((w >> (8 * k)) & 0xffu)));
}

void requireDtype(const CallNode& call, const std::vector<Type>& args, size_t i, DataType t, size_t rank,
                  const char* what) {
  const TensorTypeNode& a = argTensor(call, args, i);
  if (a.dtype != t || a.ndim() != rank || !a.isStatic())
    LOOM_TYPE_FAIL(call) << what << " must be a static rank-" << rank << " " << t.str() << " tensor, got "
                         << typeStr(args[i]);
}

/// The output height and width of a window of kh x kw over blocked data d [N, C/b, H, W, b]
/// with the call's strides, padding and dilation.
std::pair<int64_t, int64_t> windowOutput(const CallNode& call, const std::vector<int64_t>& d, int64_t kh, int64_t kw) {
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  if (s.size() != 2 || p.size() != 4 || dl.size() != 2) LOOM_TYPE_FAIL(call) << "strides, padding, dilation";
  int64_t out[2];
  const int64_t k[2] = {kh, kw};
  for (size_t i = 0; i < 2; ++i) {
    const int64_t span = d[2 + i] + p[i] + p[i + 2] - dl[i] * (k[i] - 1) - 1;
    if (span < 0 || s[i] < 1) LOOM_TYPE_FAIL(call) << "kernel does not fit the data";
    out[i] = span / s[i] + 1;
  }
  return {out[0], out[1]};
}

Type conv2dU8S8Rel(const CallNode& call, const std::vector<Type>& args) {
  requireDtype(call, args, 0, DataType::UInt(8), 5, "data [N, C/ib, H, W, ib]");
  requireDtype(call, args, 1, DataType::Int(32), 6, "packed weight [O/ob, C/ib, KH, KW, ib/4, ob]");
  const auto d = argTensor(call, args, 0).staticShape();
  const auto w = argTensor(call, args, 1).staticShape();
  if (d[1] != w[1] || d[4] != 4 * w[4])
    LOOM_TYPE_FAIL(call) << "data " << typeStr(args[0]) << " does not match packed weight " << typeStr(args[1]);
  auto [oh, ow] = windowOutput(call, d, w[2], w[3]);
  return tensorType(std::vector<int64_t>{d[0], w[0], oh, ow, w[5]}, DataType::Int(32));
}

HostTensor conv2dU8S8Kernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  const double padValue = double(call.attrs.getInt("pad_value"));
  const auto& d = in[0].shape;
  const auto& w = in[1].shape;
  HostTensor r(outT.staticShape(), DataType::Int(32));
  const auto& o = r.shape;
  for (int64_t n = 0; n < o[0]; ++n)
    for (int64_t ob = 0; ob < o[1]; ++ob)
      for (int64_t oy = 0; oy < o[2]; ++oy)
        for (int64_t ox = 0; ox < o[3]; ++ox)
          for (int64_t oc = 0; oc < o[4]; ++oc) {
            int64_t acc = 0;
            for (int64_t cb = 0; cb < w[1]; ++cb)
              for (int64_t ky = 0; ky < w[2]; ++ky)
                for (int64_t kx = 0; kx < w[3]; ++kx) {
                  const int64_t y = oy * s[0] + ky * dl[0] - p[0], x = ox * s[1] + kx * dl[1] - p[1];
                  const bool inside = y >= 0 && y < d[2] && x >= 0 && x < d[3];
                  for (int64_t cw = 0; cw < w[4]; ++cw) {
                    const double word = in[1].v[size_t(((((ob * w[1] + cb) * w[2] + ky) * w[3] + kx) * w[4] + cw) * w[5] + oc)];
                    for (int k = 0; k < 4; ++k) {
                      const double xv =
                          inside ? in[0].v[size_t((((n * d[1] + cb) * d[2] + y) * d[3] + x) * d[4] + cw * 4 + k)] : padValue;
                      acc += int64_t(xv) * byteOf(word, k);
                    }
                  }
                }
            r.v[size_t((((n * o[1] + ob) * o[2] + oy) * o[3] + ox) * o[4] + oc)] = double(int32_t(acc));
          }
  return r;
}

Type depthwiseU8S8Rel(const CallNode& call, const std::vector<Type>& args) {
  requireDtype(call, args, 0, DataType::UInt(8), 5, "data [N, C/k, H, W, k]");
  requireDtype(call, args, 1, DataType::Int(8), 4, "weight [C/k, KH, KW, k]");
  const auto d = argTensor(call, args, 0).staticShape();
  const auto w = argTensor(call, args, 1).staticShape();
  if (d[1] != w[0] || d[4] != w[3])
    LOOM_TYPE_FAIL(call) << "data " << typeStr(args[0]) << " does not match weight " << typeStr(args[1]);
  auto [oh, ow] = windowOutput(call, d, w[1], w[2]);
  return tensorType(std::vector<int64_t>{d[0], d[1], oh, ow, d[4]}, DataType::Int(32));
}

HostTensor depthwiseU8S8Kernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  const double padValue = double(call.attrs.getInt("pad_value"));
  const auto& d = in[0].shape;
  const auto& w = in[1].shape;
  HostTensor r(outT.staticShape(), DataType::Int(32));
  const auto& o = r.shape;
  for (int64_t n = 0; n < o[0]; ++n)
    for (int64_t cb = 0; cb < o[1]; ++cb)
      for (int64_t oy = 0; oy < o[2]; ++oy)
        for (int64_t ox = 0; ox < o[3]; ++ox)
          for (int64_t l = 0; l < o[4]; ++l) {
            int64_t acc = 0;
            for (int64_t ky = 0; ky < w[1]; ++ky)
              for (int64_t kx = 0; kx < w[2]; ++kx) {
                const int64_t y = oy * s[0] + ky * dl[0] - p[0], x = ox * s[1] + kx * dl[1] - p[1];
                const bool inside = y >= 0 && y < d[2] && x >= 0 && x < d[3];
                const double xv = inside ? in[0].v[size_t((((n * d[1] + cb) * d[2] + y) * d[3] + x) * d[4] + l)] : padValue;
                acc += int64_t(xv) * int64_t(in[1].v[size_t(((cb * w[1] + ky) * w[2] + kx) * w[3] + l)]);
              }
            r.v[size_t((((n * o[1] + cb) * o[2] + oy) * o[3] + ox) * o[4] + l)] = double(acc);
          }
  return r;
}

Type denseU8S8Rel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  if (x.dtype != DataType::UInt(8) || x.ndim() < 1 || !x.isStatic())
    LOOM_TYPE_FAIL(call) << "data must be a static uint8 tensor (..., K), got " << typeStr(args[0]);
  requireDtype(call, args, 1, DataType::Int(32), 2, "packed weight [K/4, N]");
  const auto w = argTensor(call, args, 1).staticShape();
  std::vector<int64_t> out = x.staticShape();
  if (out.back() != 4 * w[0])
    LOOM_TYPE_FAIL(call) << "data " << typeStr(args[0]) << " does not match packed weight " << typeStr(args[1]);
  out.back() = w[1];
  return tensorType(out, DataType::Int(32));
}

HostTensor denseU8S8Kernel(const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& outT) {
  HostTensor r(outT.staticShape(), DataType::Int(32));
  const int64_t K4 = in[1].shape[0], N = in[1].shape[1], rows = r.numel() / N;
  for (int64_t m = 0; m < rows; ++m)
    for (int64_t j = 0; j < N; ++j) {
      int64_t acc = 0;
      for (int64_t kw = 0; kw < K4; ++kw)
        for (int k = 0; k < 4; ++k)
          acc += int64_t(in[0].v[size_t(m * K4 * 4 + kw * 4 + k)]) * byteOf(in[1].v[size_t(kw * N + j)], k);
      r.v[size_t(m * N + j)] = double(int32_t(acc));
    }
  return r;
}

}  // namespace

void registerQnnPackedOps() {
  defineOp("qnn.conv2d_u8s8", 2, OpPattern::OutEWiseFusable,
           {attrInts("strides", std::vector<int64_t>{1, 1}), attrInts("padding", std::vector<int64_t>{0, 0, 0, 0}),
            attrInts("dilation", std::vector<int64_t>{1, 1}), attrInt("pad_value", 0), attrInt("pairs16", 0)},
           conv2dU8S8Rel, conv2dU8S8Kernel,
           "int32 conv2d of uint8 NCHW{ib}c data by int8 weights packed as int32 words of 4 input channels "
           "[O/ob, C/ib, KH, KW, ib/4, ob]; padding reads pad_value; output NCHW{ob}c. pairs16: every pair "
           "sum of 2 byte products fits int16 (AVX2's vpmaddubsw is then exact)");
  defineOp("qnn.depthwise_conv2d_u8s8", 2, OpPattern::OutEWiseFusable,
           {attrInts("strides", std::vector<int64_t>{1, 1}), attrInts("padding", std::vector<int64_t>{0, 0, 0, 0}),
            attrInts("dilation", std::vector<int64_t>{1, 1}), attrInt("pad_value", 0), attrInt("pairs16", 0)},
           depthwiseU8S8Rel, depthwiseU8S8Kernel,
           "int32 depthwise conv2d of uint8 NCHW{k}c data by int8 weights [C/k, KH, KW, k] (products in int16, "
           "exact); padding reads pad_value; output NCHW{k}c. pairs16: for every channel and kernel row, "
           "|w[x]| + |w[x+1]| <= 128 for the tap pairs (0, 1), (2, 3), ... (the pair sums are then added in "
           "int16, exact)");
  defineOp("qnn.dense_u8s8", 2, OpPattern::OutEWiseFusable, {attrInt("pairs16", 0)}, denseU8S8Rel, denseU8S8Kernel,
           "int32 (..., K) x (K, N) product of uint8 data by int8 weights packed as int32 words of 4 rows "
           "[K/4, N]");
}

}  // namespace loom::graph::qnn
