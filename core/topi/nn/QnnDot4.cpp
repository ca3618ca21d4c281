// TE computes of the packed int8 ops qnn.conv2d_u8s8 and qnn.dense_u8s8: u8 data x s8 weights
// -> int32 through the dot4_u8s8 intrinsic (4 byte products per int32 word: x86 vpdpbusd, or
// vpmaddubsw + vpmaddwd on AVX2; codegen/Dot4.h). The weights are packed at compile time as int32
// words of 4 consecutive input channels, so the output-channel lanes read one contiguous vector
// of words and the data one broadcast word: the structure of a float NCHWc conv / matmul, which
// the default schedule register-tiles and vectorizes along the output channels.
#include "core/topi/Ops.h"
#include "core/topi/nn/ComputeUtil.h"

namespace loom::topi::nn {

namespace {

using graph::CallNode;
using graph::Type;

/// The int32 word of the 4 u8 values load(0..3) (little-endian), computed in uint32 so no
/// intermediate overflows; LLVM combines the 4 byte loads into one 32-bit load.
Expr word(const std::function<Expr(int64_t)>& load) {
  const DataType u32 = DataType::UInt(32);
  Expr w = tir::cast(u32, load(0));
  for (int64_t k = 1; k < 4; ++k)
    w = w + tir::cast(u32, load(k)) * tir::intImm(u32, int64_t(1) << (8 * k));
  return tir::cast(DataType::Int(32), w);
}

std::string dot4Name(const CallNode& call) {
  return call.attrs.getInt("pairs16") ? "dot4_u8s8_pairs16" : "dot4_u8s8";
}

/// data [N, C/ib, H, W, ib] u8, weight [O/ob, C/ib, KH, KW, ib/4, ob] int32 -> [N, O/ob, OH, OW, ob]
/// int32; padding reads `pad_value` (the data's zero point).
std::vector<te::Tensor> conv2dU8S8(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  const std::vector<int64_t> ws = extents(in[1]);
  te::Tensor data = topi::pad(in[0], {0, 0, p[0], p[1], 0}, {0, 0, p[2], p[3], 0},
                              double(call.attrs.getInt("pad_value")), "pad_temp");
  te::IterVar rco = te::reduceAxis(ci(ws[1]), "rco"), ry = te::reduceAxis(ci(ws[2]), "ry"),
              rx = te::reduceAxis(ci(ws[3]), "rx"), rcw = te::reduceAxis(ci(ws[4]), "rcw");
  const te::Tensor& W = in[1];
  const std::string fn = dot4Name(call);
  return {te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr y = Expr(i[2]) * ci(s[0]) + Expr(ry) * ci(dl[0]);
        Expr x = Expr(i[3]) * ci(s[1]) + Expr(rx) * ci(dl[1]);
        Expr a = word([&](int64_t k) { return data(i[0], rco, y, x, Expr(rcw) * ci(4) + ci(k)); });
        return te::sum(tir::call(DataType::Int(32), fn, {a, W(i[1], rco, ry, rx, rcw, i[4])}), {rco, ry, rx, rcw});
      },
      "conv2d_NCHWc_u8s8", "conv2d_NCHWc_u8s8")};
}

/// data [N, C/k, H, W, k] u8, weight [C/k, KH, KW, k] s8 -> [N, C/k, OH, OW, k] int32: each
/// product in int16 (|u8 * s8| <= 32640: exact; vpmullw on 16 lanes), summed in int32. With
/// `pairs16` (qnn-canonicalize checked |w0| + |w1| <= 128 for the tap pairs of every row) the
/// reduction runs over the kernel rows only and each row sums its taps pairwise in int16 before
/// widening: one widening (vpmovsxwd, two per 16 lanes) and one int32 add per pair, not per tap.
std::vector<te::Tensor> depthwiseU8S8(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const auto& s = call.attrs.getInts("strides");
  const auto& p = call.attrs.getInts("padding");
  const auto& dl = call.attrs.getInts("dilation");
  const std::vector<int64_t> ws = extents(in[1]);
  te::Tensor data = topi::pad(in[0], {0, 0, p[0], p[1], 0}, {0, 0, p[2], p[3], 0},
                              double(call.attrs.getInt("pad_value")), "pad_temp");
  te::IterVar ry = te::reduceAxis(ci(ws[1]), "ry"), rx = te::reduceAxis(ci(ws[2]), "rx");
  const te::Tensor& W = in[1];
  const DataType i16 = DataType::Int(16);
  if (call.attrs.getInt("pairs16")) {
    const int64_t KW = ws[2];
    return {te::compute(
        teShape(out),
        [&](const std::vector<Var>& i) -> te::ComputeBody {
          Expr y = Expr(i[2]) * ci(s[0]) + Expr(ry) * ci(dl[0]);
          auto prod = [&](int64_t kx) {
            Expr x = Expr(i[3]) * ci(s[1]) + ci(kx * dl[1]);
            return tir::cast(i16, data(i[0], i[1], y, x, i[4])) * tir::cast(i16, W(i[1], ry, ci(kx), i[4]));
          };
          Expr row;
          for (int64_t kx = 0; kx < KW; kx += 2) {
            Expr pair = kx + 1 < KW ? prod(kx) + prod(kx + 1) : prod(kx);
            Expr term = tir::cast(DataType::Int(32), pair);
            row = row.defined() ? row + term : term;
          }
          return te::sum(row, {ry});
        },
        "depthwise_conv2d_NCHWc_u8s8", "depthwise_conv2d_NCHWc_u8s8")};
  }
  return {te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr y = Expr(i[2]) * ci(s[0]) + Expr(ry) * ci(dl[0]);
        Expr x = Expr(i[3]) * ci(s[1]) + Expr(rx) * ci(dl[1]);
        Expr prod = tir::cast(i16, data(i[0], i[1], y, x, i[4])) * tir::cast(i16, W(i[1], ry, rx, i[4]));
        return te::sum(tir::cast(DataType::Int(32), prod), {ry, rx});
      },
      "depthwise_conv2d_NCHWc_u8s8", "depthwise_conv2d_NCHWc_u8s8")};
}

/// data [..., K] u8, weight [K/4, N] int32 -> [..., N] int32.
std::vector<te::Tensor> denseU8S8(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const std::vector<int64_t> ws = extents(in[1]);
  te::IterVar kw = te::reduceAxis(ci(ws[0]), "kw");
  const te::Tensor& X = in[0];
  const te::Tensor& W = in[1];
  const std::string fn = dot4Name(call);
  return {te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> xi(i.begin(), i.end());
        Expr a = word([&](int64_t k) {
          xi.back() = Expr(kw) * ci(4) + ci(k);
          return X(xi);
        });
        return te::sum(tir::call(DataType::Int(32), fn, {a, W(kw, i.back())}), {kw});
      },
      "dense_u8s8", "dense_u8s8")};
}

/// qnn.global_sum_pool2d: int32 sum over dims 2 and 3 (H, W) of NCHW or NCHW{k}c integer data.
std::vector<te::Tensor> globalSumPool(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const te::Tensor& D = in[0];
  te::IterVar ry = te::reduceAxis(D->shape[2], "ry"), rx = te::reduceAxis(D->shape[3], "rx");
  return {te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        std::vector<Expr> idx(i.begin(), i.end());
        idx[2] = ry;
        idx[3] = rx;
        return te::sum(tir::cast(DataType::Int(32), D(idx)), {ry, rx});
      },
      "global_sum_pool", "global_pool")};
}

/// qnn.lookup: table[x - lowest(x)], a gather from the 256-entry constant table (an int32 index
/// in 0..255: uint8 x as it is, int8 x + 128).
std::vector<te::Tensor> lookup(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const te::Tensor& X = in[0];
  const te::Tensor& T = in[1];
  const bool isSigned = X->dtype.isInt();
  return {te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr v = tir::cast(DataType::Int(32), X(std::vector<Expr>(i.begin(), i.end())));
        if (isSigned) v = v + ci(128);
        return T(std::vector<Expr>{v});
      },
      "T_lookup", "injective")};
}

/// qnn.fma_add: fma(a, a_ratio, fma(b, b_ratio, fixed)) with the tir `fma` intrinsic (one rounding
/// each, as ONNX Runtime's QLinearAdd kernel), broadcasting.
std::vector<te::Tensor> fmaAdd(const CallNode& call, const std::vector<te::Tensor>& in, const Type& outType) {
  const auto& out = staticTensor(outType, call);
  const DataType f = DataType::Float(32);
  const Expr ra = tir::makeConst(f, double(float(call.attrs.getFloat("a_ratio"))));
  const Expr rb = tir::makeConst(f, double(float(call.attrs.getFloat("b_ratio"))));
  const Expr fixed = tir::makeConst(f, double(float(call.attrs.getFloat("fixed"))));
  return {te::compute(
      teShape(out),
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        Expr inner = tir::call(f, "fma", {broadcastLoad(in[1], i, in), rb, fixed});
        return tir::call(f, "fma", {broadcastLoad(in[0], i, in), ra, inner});
      },
      "T_fma_add", "broadcast")};
}

}  // namespace

void registerQnnDot4Computes() {
  setCompute("qnn.fma_add", fmaAdd);
  setCompute("qnn.lookup", lookup);
  setCompute("qnn.global_sum_pool2d", globalSumPool);
  setCompute("qnn.conv2d_u8s8", conv2dU8S8);
  setCompute("qnn.dense_u8s8", denseU8S8);
  setCompute("qnn.depthwise_conv2d_u8s8", depthwiseU8S8);
}

}  // namespace loom::topi::nn
