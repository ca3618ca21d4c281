// qnn-canonicalize: qnn ops as integer and float32 core ops (TVM's QNN canonicalization).
#include <algorithm>
#include <cstdlib>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/InferType.h"
#include "core/graph/qnn/Qnn.h"
#include "core/graph/qnn/QnnUtil.h"

namespace loom::graph::qnn {

namespace {

Expr cast(const Expr& e, DataType t) {
  if (tensorTypeOf(e).dtype == t) return e;
  return makeCall("cast", {e}, {{"dtype", t}});
}

/// `v - zp` in int32 (zp broadcast along `axis` of a rank-`rank` tensor); `v` alone when zp is
/// a constant zero.
Expr centered(const Expr& v, const Expr& zp, int64_t axis, int64_t rank) {
  Expr c = cast(v, DataType::Int(32));
  if (isConstantZero(zp)) return c;
  return makeCall("subtract", {c, alongAxis(cast(zp, DataType::Int(32)), axis, rank)});
}

/// saturate(round(y) + zp) in `t`, y float32.
Expr roundAddSaturate(const Expr& y, const Expr& zp, int64_t axis, int64_t rank, DataType t) {
  DataType f = tensorTypeOf(y).dtype;
  Expr q = makeCall("round", {y});
  if (!isConstantZero(zp)) q = makeCall("add", {q, alongAxis(cast(zp, f), axis, rank)});
  auto [lo, hi] = saturationRange(t);
  q = makeCall("clip", {q}, {{"a_min", lo}, {"a_max", hi}});
  return cast(q, t);
}

int64_t roundUp(int64_t n, int64_t k) { return (n + k - 1) / k * k; }

/// The input-channel block of the packed int8 conv: 16 or 8 when it divides the channels; fewer
/// than 16 channels are one block padded to a multiple of 4 (an RGB image: 4); else 16 (padded).
int64_t inputBlock(int64_t channels) {
  for (int64_t b : {16, 8})
    if (channels % b == 0) return b;
  return channels < 16 ? roundUp(channels, 4) : 16;
}
/// The output-channel block (the vector lanes: a multiple of 8 int32 lanes): 16 or 8 when it
/// divides the channels, else 16 (padded).
int64_t outputBlock(int64_t channels) {
  for (int64_t b : {16, 8})
    if (channels % b == 0) return b;
  return 16;
}

runtime::NDArray int32Array(const std::vector<int64_t>& shape, const std::vector<int32_t>& v) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType{runtime::DType::Int, 32, 1});
  std::copy(v.begin(), v.end(), a.as<int32_t>());
  return a;
}

/// Whether every pair of weights that vpmaddubsw adds (input channels 2j, 2j+1 of one word)
/// keeps its sum of products with any u8 data inside int16: |w0| + |w1| <= 128.
bool pairsFitInt16(const std::vector<int32_t>& words) {
  for (int32_t word : words)
    for (int k = 0; k < 4; k += 2) {
      const auto u = uint32_t(word);
      const int a = int8_t(uint8_t(u >> (8 * k))), b = int8_t(uint8_t(u >> (8 * (k + 1))));
      if (std::abs(a) + std::abs(b) > 128) return false;
    }
  return true;
}

/// Packs 4 int8 values (little-endian) into one int32 word.
int32_t packWord(const int64_t (&b)[4]) {
  uint32_t w = 0;
  for (int k = 0; k < 4; ++k)
    w |= uint32_t(uint8_t(int8_t(b[k]))) << (8 * k);
  return int32_t(w);
}

/// The packed form of qnn.conv2d (u8 data, constant s8 weight with zero weight zero point,
/// constant data zero point, groups 1, NCHW/OIHW):
///   layout_transform(qnn.conv2d_u8s8(NCHW{ib}c data, packed weight; pad_value = x_zp), NCHW{ob}c
///   -> NCHW) - x_zp * sum(w[o])
/// Undefined when the conv does not qualify (it then takes the int32 path).
/// qnn.add with constant parameters as ONNX Runtime's QLinearAdd computes it (MLAS's AVX2 kernel:
/// two fused multiply-adds in float32, the output zero point inside, round half to even,
/// saturate): saturate(round(qnn.fma_add(float(a), float(b)))) with qlinearAddConstants. Null
/// when a parameter is not a constant.
Expr ortAdd(const CallNode& c) {
  const auto& a = c.args;
  std::vector<float> p;
  for (size_t i = 2; i < 8; ++i) {
    std::vector<double> v = constantValues(a[i]);
    if (v.size() != 1) return Expr();
    p.push_back(float(v[0]));
  }
  const TensorTypeNode& ta = tensorTypeOf(a[0]);
  const TensorTypeNode& tb = tensorTypeOf(a[1]);
  if (!ta.isStatic() || !tb.isStatic()) return Expr();
  // The broadcast output's shape (numpy rules; both shapes are valid, the type relation checked).
  std::vector<int64_t> sa = ta.staticShape(), sb = tb.staticShape();
  std::vector<int64_t> so(std::max(sa.size(), sb.size()), 1);
  for (size_t i = 0; i < so.size(); ++i) {
    const int64_t x = i < sa.size() ? sa[sa.size() - 1 - i] : 1, z = i < sb.size() ? sb[sb.size() - 1 - i] : 1;
    so[so.size() - 1 - i] = std::max(x, z);
  }
  const QLinearAddConstants k = qlinearAddConstants(p[0], p[1], p[2], p[3], p[4], p[5], scalarAlongInnermost(sa, so));
  const DataType f = DataType::Float(32);
  Expr x = cast(a[0], f), z = cast(a[1], f);
  if (k.swapped) std::swap(x, z);
  Expr y = makeCall("qnn.fma_add", {x, z},
                    {{"a_ratio", double(k.first)}, {"b_ratio", double(k.second)}, {"fixed", double(k.fixed)}});
  auto [lo, hi] = saturationRange(c.attrs.getDType("out_dtype"));
  y = makeCall("clip", {makeCall("round", {y})}, {{"a_min", lo}, {"a_max", hi}});
  return makeCall("cast", {y}, {{"dtype", c.attrs.getDType("out_dtype")}}, c.name);
}

Expr packedConv(const CallNode& c) {
  const auto& a = c.args;
  const TensorTypeNode& xt = tensorTypeOf(a[0]);
  const TensorTypeNode& wt = tensorTypeOf(a[1]);
  if (xt.dtype != DataType::UInt(8) || wt.dtype != DataType::Int(8) || !xt.isStatic() || !wt.isStatic() ||
      xt.ndim() != 4 || wt.ndim() != 4 || c.attrs.getInt("groups") != 1 ||
      c.attrs.getString("data_layout") != "NCHW" || c.attrs.getString("kernel_layout") != "OIHW")
    return {};
  std::vector<double> w = constantValues(a[1]), xzp = constantValues(a[2]);
  if (w.empty() || xzp.size() != 1 || !isConstantZero(a[3])) return {};
  const std::vector<int64_t> ws = wt.staticShape();
  const int64_t O = ws[0], I = ws[1], KH = ws[2], KW = ws[3];
  const int64_t ib = inputBlock(I), ob = outputBlock(O);
  const int64_t Ip = roundUp(I, ib), Op = roundUp(O, ob);
  std::vector<int32_t> packed(size_t(Op / ob * (Ip / ib) * KH * KW * (ib / 4) * ob), 0);
  std::vector<int32_t> sum(size_t(O), 0);
  for (int64_t o = 0; o < Op; ++o)
    for (int64_t cb = 0; cb < Ip / ib; ++cb)
      for (int64_t ky = 0; ky < KH; ++ky)
        for (int64_t kx = 0; kx < KW; ++kx)
          for (int64_t cw = 0; cw < ib / 4; ++cw) {
            int64_t b[4] = {0, 0, 0, 0};
            for (int k = 0; k < 4; ++k) {
              const int64_t i = cb * ib + cw * 4 + k;
              if (o < O && i < I) b[k] = int64_t(w[size_t(((o * I + i) * KH + ky) * KW + kx)]);
              if (o < O) sum[size_t(o)] += int32_t(b[k]);
            }
            packed[size_t(((((o / ob * (Ip / ib) + cb) * KH + ky) * KW + kx) * (ib / 4) + cw) * ob + o % ob)] =
                packWord(b);
          }
  Expr x = a[0];
  if (Ip != I) x = makeCall("nn.pad", {x}, {{"pad_width", std::vector<int64_t>{0, 0, 0, Ip - I, 0, 0, 0, 0}}});
  x = makeCall("layout_transform", {x}, {{"src_layout", std::string("NCHW")}, {"dst_layout", "NCHW" + std::to_string(ib) + "c"}});
  Expr wp = makeConstant(int32Array({Op / ob, Ip / ib, KH, KW, ib / 4, ob}, packed));
  const auto zp = int64_t(xzp[0]);
  Attrs attrs;
  for (const char* k : {"strides", "padding", "dilation"}) attrs.set(k, c.attrs.getInts(k));
  attrs.set("pad_value", zp);
  attrs.set("pairs16", int64_t(pairsFitInt16(packed) ? 1 : 0));
  Expr y = makeCall("qnn.conv2d_u8s8", {x, wp}, attrs, c.name);
  y = makeCall("layout_transform", {y}, {{"src_layout", "NCHW" + std::to_string(ob) + "c"}, {"dst_layout", std::string("NCHW")}});
  if (Op != O)
    y = makeCall("strided_slice", {y},
                 {{"begin", std::vector<int64_t>{0}}, {"end", std::vector<int64_t>{O}},
                  {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{1}}});
  if (zp != 0) {
    std::vector<int32_t> corr(sum.size());
    for (size_t o = 0; o < sum.size(); ++o) corr[o] = int32_t(-zp * sum[o]);
    y = makeCall("add", {y, makeConstant(int32Array({O, 1, 1}, corr))});
  }
  return y;
}

/// The depthwise form of qnn.conv2d (groups = channels = output channels, u8 data, constant s8
/// weight with zero weight zero point, constant data zero point):
///   layout_transform(qnn.depthwise_conv2d_u8s8(NCHW{k}c data, weight [C/k, KH, KW, k];
///   pad_value = x_zp), NCHW{k}c -> NCHW) - x_zp * sum(w[c]). Undefined when it does not qualify.
Expr depthwiseConv(const CallNode& c) {
  const auto& a = c.args;
  const TensorTypeNode& xt = tensorTypeOf(a[0]);
  const TensorTypeNode& wt = tensorTypeOf(a[1]);
  if (xt.dtype != DataType::UInt(8) || wt.dtype != DataType::Int(8) || !xt.isStatic() || !wt.isStatic() ||
      xt.ndim() != 4 || wt.ndim() != 4 || c.attrs.getString("data_layout") != "NCHW" ||
      c.attrs.getString("kernel_layout") != "OIHW")
    return {};
  const std::vector<int64_t> ws = wt.staticShape();
  const int64_t C = ws[0], KH = ws[2], KW = ws[3];
  if (c.attrs.getInt("groups") != C || xt.shape[1].value != C || ws[1] != 1) return {};
  std::vector<double> w = constantValues(a[1]), xzp = constantValues(a[2]);
  if (w.empty() || xzp.size() != 1 || !isConstantZero(a[3])) return {};
  const int64_t k = outputBlock(C), Cp = roundUp(C, k);
  runtime::NDArray wp = runtime::NDArray::empty({Cp / k, KH, KW, k}, runtime::DType{runtime::DType::Int, 8, 1});
  std::vector<int32_t> sum(size_t(C), 0);
  for (int64_t ch = 0; ch < Cp; ++ch)
    for (int64_t ky = 0; ky < KH; ++ky)
      for (int64_t kx = 0; kx < KW; ++kx) {
        const int64_t v = ch < C ? int64_t(w[size_t((ch * KH + ky) * KW + kx)]) : 0;
        wp.as<int8_t>()[((ch / k * KH + ky) * KW + kx) * k + ch % k] = int8_t(v);
        if (ch < C) sum[size_t(ch)] += int32_t(v);
      }
  Expr x = a[0];
  if (Cp != C) x = makeCall("nn.pad", {x}, {{"pad_width", std::vector<int64_t>{0, 0, 0, Cp - C, 0, 0, 0, 0}}});
  const std::string layout = "NCHW" + std::to_string(k) + "c";
  x = makeCall("layout_transform", {x}, {{"src_layout", std::string("NCHW")}, {"dst_layout", layout}});
  const auto zp = int64_t(xzp[0]);
  Attrs attrs;
  for (const char* key : {"strides", "padding", "dilation"}) attrs.set(key, c.attrs.getInts(key));
  attrs.set("pad_value", zp);
  // Tap pairs (0, 1), (2, 3), ... of a kernel row whose weights satisfy |w0| + |w1| <= 128 for
  // every channel: the pair's two products then sum in int16 without overflow (255 * 128 =
  // 32640), so the kernel widens one int16 value per pair instead of one per tap (ORT's 7-bit
  // reduce_range weights, |w| <= 64, always pass).
  bool pairs16 = KW > 1;
  for (int64_t ch = 0; ch < C && pairs16; ++ch)
    for (int64_t ky = 0; ky < KH && pairs16; ++ky)
      for (int64_t kx = 0; kx + 1 < KW; kx += 2) {
        const size_t i = size_t((ch * KH + ky) * KW + kx);
        if (std::abs(int64_t(w[i])) + std::abs(int64_t(w[i + 1])) > 128) pairs16 = false;
      }
  attrs.set("pairs16", int64_t(pairs16 ? 1 : 0));
  Expr y = makeCall("qnn.depthwise_conv2d_u8s8", {x, makeConstant(wp)}, attrs, c.name);
  y = makeCall("layout_transform", {y}, {{"src_layout", layout}, {"dst_layout", std::string("NCHW")}});
  if (Cp != C)
    y = makeCall("strided_slice", {y},
                 {{"begin", std::vector<int64_t>{0}}, {"end", std::vector<int64_t>{C}},
                  {"strides", std::vector<int64_t>{1}}, {"axes", std::vector<int64_t>{1}}});
  if (zp != 0) {
    std::vector<int32_t> corr(sum.size());
    for (size_t ch = 0; ch < sum.size(); ++ch) corr[ch] = int32_t(-zp * sum[ch]);
    y = makeCall("add", {y, makeConstant(int32Array({C, 1, 1}, corr))});
  }
  return y;
}

/// The packed form of qnn.dense (u8 data, constant s8 weight [N, K] with zero weight zero point,
/// a scalar data zero point, constant or computed): qnn.dense_u8s8(data, packed [K/4, N]) -
/// x_zp * sum_k w[n, k]. Undefined when it does not qualify.
Expr packedDense(const CallNode& c) {
  const auto& a = c.args;
  const TensorTypeNode& xt = tensorTypeOf(a[0]);
  const TensorTypeNode& wt = tensorTypeOf(a[1]);
  const TensorTypeNode& zt = tensorTypeOf(a[2]);
  if (xt.dtype != DataType::UInt(8) || wt.dtype != DataType::Int(8) || !xt.isStatic() || !wt.isStatic() ||
      wt.ndim() != 2 || zt.numel() != 1)
    return {};
  const int64_t N = wt.shape[0].value, K = wt.shape[1].value, K4 = roundUp(K, 4) / 4;
  std::vector<double> w = constantValues(a[1]);
  // MatMulInteger's weight arrives as transpose(constant [K, N]) (the passes run before
  // fold-constant).
  auto* tr = a[1].as<CallNode>();
  if (w.empty() && tr && tr->op && tr->op->name == "transpose" &&
      tr->attrs.getInts("axes") == std::vector<int64_t>{1, 0}) {
    std::vector<double> kn = constantValues(tr->args[0]);
    if (!kn.empty()) {
      w.resize(kn.size());
      for (int64_t n = 0; n < N; ++n)
        for (int64_t k = 0; k < K; ++k) w[size_t(n * K + k)] = kn[size_t(k * N + n)];
    }
  }
  if (w.empty() || !isConstantZero(a[3])) return {};
  std::vector<int32_t> packed(size_t(K4 * N), 0), sum(size_t(N), 0);
  for (int64_t n = 0; n < N; ++n)
    for (int64_t kw = 0; kw < K4; ++kw) {
      int64_t b[4] = {0, 0, 0, 0};
      for (int k = 0; k < 4; ++k)
        if (kw * 4 + k < K) b[k] = int64_t(w[size_t(n * K + kw * 4 + k)]), sum[size_t(n)] += int32_t(b[k]);
      packed[size_t(kw * N + n)] = packWord(b);
    }
  Expr x = a[0];
  if (K4 * 4 != K) {
    std::vector<int64_t> pw(2 * xt.ndim(), 0);
    pw.back() = K4 * 4 - K;
    x = makeCall("nn.pad", {x}, {{"pad_width", pw}});
  }
  Expr y = makeCall("qnn.dense_u8s8", {x, makeConstant(int32Array({K4, N}, packed))},
                    {{"pairs16", int64_t(pairsFitInt16(packed) ? 1 : 0)}}, c.name);
  if (!isConstantZero(a[2])) {
    Expr s = makeConstant(int32Array({N}, sum));
    Expr zp = makeCall("reshape", {cast(a[2], DataType::Int(32))}, {{"newshape", std::vector<int64_t>{}}});
    y = makeCall("subtract", {y, makeCall("multiply", {s, zp})});
  }
  return y;
}

class Canonicalizer : public ExprMutator {
  Expr rewrite(const Expr&, const Expr& e) override {
    auto* c = e.as<CallNode>();
    if (!c || !c->op || c->op->name.rfind("qnn.", 0) != 0) return e;
    const std::string& op = c->op->name;
    const auto& a = c->args;
    int64_t rank = int64_t(tensorTypeOf(a[0]).ndim());
    Expr r;
    if (op == "qnn.quantize") {
      int64_t axis = normAxis(c->attrs.getInt("axis"), rank);
      DataType f = tensorTypeOf(a[0]).dtype;
      Expr y = makeCall("divide", {a[0], alongAxis(cast(a[1], f), axis, rank)});
      r = roundAddSaturate(y, a[2], axis, rank, c->attrs.getDType("out_dtype"));
    } else if (op == "qnn.dequantize") {
      int64_t axis = normAxis(c->attrs.getInt("axis"), rank);
      DataType f = tensorTypeOf(a[1]).dtype;
      Expr x = cast(a[0], f);
      if (!isConstantZero(a[2])) x = makeCall("subtract", {x, alongAxis(cast(a[2], f), axis, rank)});
      // Rounded to the float type here (DequantizeLinear's output), not contracted into a fused
      // multiply-add with the float op that follows (QDQ fallbacks: ONNX Runtime runs
      // DequantizeLinear, then the op).
      r = makeCall("float_fence", {makeCall("multiply", {x, alongAxis(a[1], axis, rank)})});
    } else if (op == "qnn.requantize") {
      int64_t axis = normAxis(c->attrs.getInt("axis"), rank);
      DataType f = DataType::Float(32);
      Expr m = makeCall("divide", {alongAxis(cast(a[1], f), axis, rank), alongAxis(cast(a[2], f), axis, rank)});
      r = roundAddSaturate(makeCall("multiply", {cast(a[0], f), m}), a[3], axis, rank, c->attrs.getDType("out_dtype"));
    } else if (op == "qnn.add" && (r = ortAdd(*c)).defined()) {
    } else if (op == "qnn.add") {
      // Parameters computed at run time: each input centered and scaled to the output's scale in
      // float32, the sum rounded once (half to even), the output zero point added, saturated.
      DataType f = DataType::Float(32);
      Expr ys = alongAxis(cast(a[6], f), 0, rank);
      auto term = [&](const Expr& v, const Expr& scale, const Expr& zp) {
        Expr x = cast(v, f);
        if (!isConstantZero(zp)) x = makeCall("subtract", {x, alongAxis(cast(zp, f), 0, rank)});
        return makeCall("multiply", {x, makeCall("divide", {alongAxis(cast(scale, f), 0, rank), ys})});
      };
      r = roundAddSaturate(makeCall("add", {term(a[0], a[2], a[3]), term(a[1], a[4], a[5])}), a[7], 0, rank,
                           c->attrs.getDType("out_dtype"));
    } else if (op == "qnn.conv2d" && (r = packedConv(*c)).defined()) {
    } else if (op == "qnn.conv2d" && (r = depthwiseConv(*c)).defined()) {
    } else if (op == "qnn.dense" && (r = packedDense(*c)).defined()) {
    } else if (op == "qnn.conv2d") {
      r = makeCall("nn.conv2d", {centered(a[0], a[2], 0, rank), centered(a[1], a[3], 0, 4)}, c->attrs, c->name);
    } else if (op == "qnn.dense") {
      r = makeCall("nn.dense", {centered(a[0], a[2], 0, rank), centered(a[1], a[3], 0, 2)}, {}, c->name);
    } else if (op == "qnn.matmul") {
      int64_t rb = int64_t(tensorTypeOf(a[1]).ndim());
      r = makeCall("nn.matmul", {centered(a[0], a[2], 0, rank), centered(a[1], a[3], rb - 1, rb)}, {}, c->name);
    } else {
      return e;
    }
    inferType(r);
    return r;
  }
};

}  // namespace

Module canonicalizeQnn(const Module& m) {
  return mapFunctions(m, [](const Expr& body) { return Canonicalizer().mutate(body); });
}

}  // namespace loom::graph::qnn
