// fake-quantization-to-integer: QDQ patterns (dequantize -> float op -> quantize) as integer ops.
#include <algorithm>
#include <cmath>
#include <sstream>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/OpsInternal.h"
#include "core/graph/qnn/Qnn.h"
#include "core/graph/qnn/QnnUtil.h"

namespace loom::graph::qnn {

namespace {

const CallNode* asOp(const Expr& e, const char* name) {
  auto* c = e.as<CallNode>();
  return c && c->op && c->op->name == name ? c : nullptr;
}

/// A dequantize whose scale and zero point are constants, along `axis` (-1: per tensor only).
struct Dq {
  Expr q, scale, zp;
  std::vector<double> scales, zps;
  int64_t axis = 0;
};

std::optional<Dq> matchDq(const Expr& e) {
  auto* c = asOp(e, "qnn.dequantize");
  if (!c) return std::nullopt;
  Dq d{c->args[0], c->args[1], c->args[2], constantValues(c->args[1]), constantValues(c->args[2]), 0};
  if (d.scales.empty() || d.zps.empty()) return std::nullopt;
  d.axis = normAxis(c->attrs.getInt("axis"), int64_t(tensorTypeOf(d.q).ndim()));
  return d;
}

bool perTensor(const Dq& d) { return d.scales.size() == 1 && d.zps.size() == 1; }

Constant floatVector(const std::vector<double>& v) {
  runtime::NDArray a = runtime::NDArray::empty({int64_t(v.size())}, toDType(DataType::Float(32)));
  for (size_t i = 0; i < v.size(); ++i)
    a.as<float>()[i] = float(v[i]);
  return makeConstant(a);
}

Constant intVector(const std::vector<double>& v) {
  runtime::NDArray a = runtime::NDArray::empty({int64_t(v.size())}, toDType(DataType::Int(32)));
  for (size_t i = 0; i < v.size(); ++i)
    a.as<int32_t>()[i] = int32_t(v[i]);
  return makeConstant(a);
}

/// MLAS's logistic (MlasComputeLogistic: Eigen's rational polynomial, clamped to [-18, 18], with
/// fused multiply-adds as its FMA3 kernel), which ONNX Runtime's QLinearSigmoid table uses.
float mlasLogistic(float v) {
  v = std::min(std::max(v, -18.0f), 18.0f);
  const float v2 = v * v;
  float p = std::fmaf(v2, 4.37031012579801e-11f, 1.15627324459942e-07f);
  p = std::fmaf(p, v2, 6.08574864600143e-05f);
  p = std::fmaf(p, v2, 8.51377133304701e-03f);
  p = std::fmaf(p, v2, 2.48287947061529e-01f);
  p = p * v;
  float q = std::fmaf(v2, 6.10247389755681e-13f, 5.76102136993427e-09f);
  q = std::fmaf(q, v2, 6.29106785017040e-06f);
  q = std::fmaf(q, v2, 1.70198817374094e-03f);
  q = std::fmaf(q, v2, 1.16817656904453e-01f);
  q = std::fmaf(q, v2, 9.93151921023180e-01f);
  return std::clamp(p / q + 0.5f, 0.0f, 1.0f);
}

/// x_scale * w_scale per output channel, in float32 as ONNX Runtime computes it.
std::vector<double> productScales(const Dq& x, const Dq& w, int64_t channels) {
  std::vector<double> s(static_cast<size_t>(channels));
  for (int64_t i = 0; i < channels; ++i)
    s[size_t(i)] = double(float(x.scales[0]) * float(w.scales[w.scales.size() == 1 ? 0 : size_t(i)]));
  return s;
}

/// The int32 bias of a float bias `b` (a dequantize of an int32 tensor at the accumulator's
/// scale, or a float constant rounded to it); null when it is neither.
Expr integerBias(const Expr& b, const std::vector<double>& accScale) {
  if (auto d = matchDq(b)) {
    if (tensorTypeOf(d->q).dtype != DataType::Int(32) || !isConstantZero(d->zp)) return Expr();
    bool same = true;
    for (size_t i = 0; i < accScale.size(); ++i) {
      double s = d->scales[d->scales.size() == 1 ? 0 : i];
      same &= std::fabs(s - accScale[i]) <= 1e-6 * std::fabs(accScale[i]);
    }
    if (same && tensorTypeOf(d->q).ndim() == 1) return d->q;
    std::vector<double> q = constantValues(d->q);
    if (q.size() != accScale.size()) return Expr();
    for (size_t i = 0; i < q.size(); ++i)
      q[i] = std::nearbyint(q[i] * d->scales[d->scales.size() == 1 ? 0 : i] / accScale[i]);
    return intVector(q);
  }
  std::vector<double> v = constantValues(b);
  if (v.size() != accScale.size() || !tensorTypeOf(b).dtype.isFloat()) return Expr();
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = std::nearbyint(v[i] / accScale[i]);
  return intVector(v);
}

class FakeQuantToInteger : public ExprMutator {
  Expr rewrite(const Expr&, const Expr& e) override {
    auto* q = asOp(e, "qnn.quantize");
    if (!q) return e;
    std::vector<double> qs = constantValues(q->args[1]), qz = constantValues(q->args[2]);
    if (qs.size() != 1 || qz.size() != 1) return e;
    DataType outT = q->attrs.getDType("out_dtype");
    Expr y = q->args[0];
    bool relu = false;
    if (auto* r = asOp(y, "nn.relu")) {
      relu = true;
      y = r->args[0];
    }
    // quantize(dequantize(x)) with the same parameters; through data movement.
    if (!relu) {
      if (Expr moved = throughDataMovement(y, qs[0], qz[0], outT); moved.defined()) return moved;
    }
    if (!relu) {
      if (Expr r = integerLookup(y, *q, qs[0], qz[0], outT); r.defined()) return r;
    }
    if (Expr r = integerMulOrAvgPool(y, *q, qs[0], qz[0], outT); r.defined())
      return relu ? makeCall("maximum", {r, makeScalar(qz[0], outT)}) : r;
    if (Expr r = integerPoolOrAdd(y, *q, outT); r.defined())
      return relu ? makeCall("maximum", {r, makeScalar(qz[0], outT)}) : r;
    if (!relu) {
      if (Expr r = integerConcat(y, *q, qs[0], qz[0], outT); r.defined()) return r;
    }
    Expr acc;
    std::vector<double> accScale;
    if (!integerProduct(y, acc, accScale)) return e;
    int64_t channels = int64_t(accScale.size());
    int64_t rank = int64_t(tensorTypeOf(acc).ndim());
    int64_t axis = asOp(acc, "qnn.conv2d") || asOp(acc, "nn.bias_add") ? 1 : rank - 1;
    Expr r = makeCall("qnn.requantize", {acc, channels == 1 ? Expr(makeScalar(accScale[0], DataType::Float(32))) : Expr(floatVector(accScale)), q->args[1], q->args[2]},
                      {{"axis", axis}, {"out_dtype", outT}}, q->name);
    if (relu) r = makeCall("maximum", {r, makeScalar(qz[0], outT)});
    return r;
  }

  /// quantize(global_avg_pool2d(dequantize(x))) as requantize(global_sum_pool2d(x) - H * W *
  /// x_zp; x_scale / (H * W)) (an int32 sum that ConvertLayout blocks like the float pool); quantize(add(dequantize(a),
  /// dequantize(b))) as qnn.add (ONNX Runtime's QLinearAdd: a residual add of a QDQ model, or a
  /// broadcasting one, stays integer in, integer out). Per-tensor
  /// parameters only; null when `y` is neither.
  Expr integerPoolOrAdd(const Expr& y, const CallNode& q, DataType outT) {
    if (auto* p = asOp(y, "nn.global_avg_pool2d"); p && p->attrs.getString("layout") == "NCHW") {
      auto x = matchDq(p->args[0]);
      if (!x || !perTensor(*x)) return Expr();
      const TensorTypeNode& t = tensorTypeOf(x->q);
      if (!t.isStatic() || t.ndim() != 4) return Expr();
      const int64_t n = t.shape[2].value * t.shape[3].value;
      Expr acc = makeCall("qnn.global_sum_pool2d", {x->q}, {{"layout", std::string("NCHW")}}, p->name);
      if (x->zps[0] != 0) acc = makeCall("subtract", {acc, makeScalar(double(n) * x->zps[0], DataType::Int(32))});
      return makeCall("qnn.requantize", {acc, makeScalar(x->scales[0] / double(n), DataType::Float(32)), q.args[1], q.args[2]},
                      {{"axis", int64_t(1)}, {"out_dtype", outT}}, q.name);
    }
    if (auto* a = asOp(y, "add")) {
      auto l = matchDq(a->args[0]), r = matchDq(a->args[1]);
      if (!l || !r || !perTensor(*l) || !perTensor(*r)) return Expr();
      return makeCall("qnn.add", {l->q, r->q, l->scale, l->zp, r->scale, r->zp, q.args[1], q.args[2]},
                      {{"out_dtype", outT}}, q.name);
    }
    return Expr();
  }

  /// quantize(sigmoid(dequantize(x))) and quantize(leaky_relu(dequantize(x))) of 8-bit x (per-tensor
  /// parameters) as qnn.lookup(x, table): the 256 outputs computed at compile time as ONNX Runtime
  /// builds its QLinearSigmoid / QLinearLeakyRelu table (dequantize in float32, the function in
  /// float32, MLAS's logistic for the sigmoid, quantize), so the results are ORT's exactly.
  Expr integerLookup(const Expr& y, const CallNode& q, double qs, double qz, DataType outT) {
    auto* f = y.as<CallNode>();
    if (!f || !f->op || (f->op->name != "sigmoid" && f->op->name != "nn.leaky_relu")) return Expr();
    auto x = matchDq(f->args[0]);
    if (!x || !perTensor(*x) || tensorTypeOf(y).dtype != DataType::Float(32)) return Expr();
    const DataType xt = tensorTypeOf(x->q).dtype;
    if ((xt != DataType::UInt(8) && xt != DataType::Int(8)) || outT.bits() > 16) return Expr();
    const bool sigmoid = f->op->name == "sigmoid";
    const float alpha = sigmoid ? 0.0f : float(f->attrs.getFloat("alpha"));
    const float xs = float(x->scales[0]), ys = float(qs);
    const int xz = int(x->zps[0]);
    const int lowest = xt.isUInt() ? 0 : -128;
    auto [lo, hi] = saturationRange(outT);
    HostTensor t({256}, outT);
    for (int i = 0; i < 256; ++i) {
      const float v = xs * float(lowest + i - xz);
      const float fv = sigmoid ? mlasLogistic(v) : (v >= 0 ? v : v * alpha);
      t.v[size_t(i)] = std::clamp(double(std::nearbyint(fv / ys)) + qz, lo, hi);
    }
    std::ostringstream what;
    what << (sigmoid ? "sigmoid" : "leaky_relu") << " of the dequantized input";
    if (!sigmoid) what << " (alpha " << alpha << ")";
    return makeCall("qnn.lookup", {x->q, makeConstant(toNDArray(t))}, {{"function", what.str()}}, q.name);
  }

  /// quantize(multiply(dequantize(a), dequantize(b))) (broadcasting, per-tensor parameters) as
  /// requantize((a - a_zp) * (b - b_zp), a_scale * b_scale): the int32 product (exact: at most
  /// 255 * 255), scaled by float32(a_scale * b_scale) / y_scale as ONNX Runtime's QLinearMul.
  /// quantize(avg_pool2d(dequantize(x))) (NCHW, ceil mode too, no dilation) as ONNX Runtime's
  /// QLinearAveragePool: 8-bit in and out, the float32 sum of the dequantized window (a float
  /// depthwise conv of ones), divided by the count (the kernel's area with count_include_pad,
  /// else the window's elements inside the image), then nearbyint(. / y_scale + y_zp), saturated.
  Expr integerMulOrAvgPool(const Expr& y, const CallNode& q, double qs, double qz, DataType outT) {
    if (auto* m = asOp(y, "multiply")) {
      auto l = matchDq(m->args[0]), r = matchDq(m->args[1]);
      if (!l || !r || !perTensor(*l) || !perTensor(*r)) return Expr();
      // 8-bit operands: the centered product (at most 255 * 255 in magnitude) is exact in int32
      // and in the float32 requantize.
      if (tensorTypeOf(l->q).dtype.bits() > 8 || tensorTypeOf(r->q).dtype.bits() > 8) return Expr();
      auto centeredInt = [](const Dq& d) {
        Expr c = makeCall("cast", {d.q}, {{"dtype", DataType::Int(32)}});
        if (d.zps[0] != 0) c = makeCall("subtract", {c, makeScalar(d.zps[0], DataType::Int(32))});
        return c;
      };
      Expr acc = makeCall("multiply", {centeredInt(*l), centeredInt(*r)}, {}, m->name);
      const float scale = float(l->scales[0]) * float(r->scales[0]);
      return makeCall("qnn.requantize", {acc, makeScalar(scale, DataType::Float(32)), q.args[1], q.args[2]},
                      {{"axis", int64_t(0)}, {"out_dtype", outT}}, q.name);
    }
    auto* p = asOp(y, "nn.avg_pool2d");
    if (!p || p->attrs.getString("layout") != "NCHW") return Expr();
    auto x = matchDq(p->args[0]);
    if (!x || !perTensor(*x)) return Expr();
    const TensorTypeNode& t = tensorTypeOf(x->q);
    const TensorTypeNode& o = tensorTypeOf(y);
    if (!t.isStatic() || t.ndim() != 4 || !o.isStatic() || t.dtype.bits() != 8) return Expr();
    const std::vector<int64_t> k = p->attrs.getInts("pool_size"), st = p->attrs.getInts("strides"),
                               dil = p->attrs.getInts("dilation");
    std::vector<int64_t> pad = p->attrs.getInts("padding");
    const int64_t C = t.shape[1].value, H = t.shape[2].value, W = t.shape[3].value;
    const int64_t OH = o.shape[2].value, OW = o.shape[3].value;
    if (pad.size() != 4) return Expr();
    // ceil_mode: the last windows reach past the padded end; the sum's conv pads the end further
    // (with x_zp: nothing added) so that it has the pool's output size.
    pad[2] = std::max(pad[2], (OH - 1) * st[0] + (k[0] - 1) * dil[0] + 1 - H - pad[0]);
    pad[3] = std::max(pad[3], (OW - 1) * st[1] + (k[1] - 1) * dil[1] + 1 - W - pad[1]);
    if (std::any_of(dil.begin(), dil.end(), [](int64_t d) { return d != 1; })) return Expr();
    // ONNX Runtime's QLinearAveragePool (which its optimizer also makes of a QDQ average pool):
    // each input dequantized in float32 (x_scale * (x - x_zp)), the window summed in float32 row
    // by row, divided by the count, then nearbyint(sum / count / y_scale + y_zp), saturated. An
    // exact integer window sum rounds differently where the average is a .5 tie (the edge windows
    // of a pool whose output parameters are its input's: counts 6 and 4), so the sum is a float
    // depthwise conv of ones over the dequantized values (reduction in the window's row order;
    // the padding adds +0).
    const DataType f32 = DataType::Float(32), i32 = DataType::Int(32);
    Expr xi = makeCall("cast", {x->q}, {{"dtype", i32}});
    if (x->zps[0] != 0) xi = makeCall("subtract", {xi, makeScalar(x->zps[0], i32)});
    Expr d = makeCall("float_fence",
                      {makeCall("multiply", {makeCall("cast", {xi}, {{"dtype", f32}}), makeScalar(x->scales[0], f32)})});
    runtime::NDArray ones = runtime::NDArray::empty({C, 1, k[0], k[1]}, runtime::DType{runtime::DType::Float, 32, 1});
    std::fill(ones.as<float>(), ones.as<float>() + C * k[0] * k[1], 1.0f);
    Attrs conv;
    conv.set("strides", st);
    conv.set("padding", pad);
    conv.set("dilation", dil);
    conv.set("groups", C);
    conv.set("data_layout", std::string("NCHW"));
    conv.set("kernel_layout", std::string("OIHW"));
    Expr sum = makeCall("nn.conv2d", {d, makeConstant(ones)}, conv, p->name);
    // The count per output position (one for all when every window counts the same). With
    // count_include_pad it is the kernel's area even for a ceil_mode window that reaches past the
    // padded end, as ONNX Runtime's QLinearAveragePool divides.
    const bool includePad = p->attrs.getInt("count_include_pad") != 0;
    std::vector<double> count(size_t(OH * OW));
    for (int64_t oh = 0; oh < OH; ++oh)
      for (int64_t ow = 0; ow < OW; ++ow) {
        int64_t n = k[0] * k[1];
        if (!includePad) {
          const int64_t h0 = oh * st[0] - pad[0], w0 = ow * st[1] - pad[1];
          n = (std::min(h0 + k[0], H) - std::max(h0, int64_t(0))) * (std::min(w0 + k[1], W) - std::max(w0, int64_t(0)));
        }
        count[size_t(oh * OW + ow)] = double(n);
      }
    const bool uniform = std::all_of(count.begin(), count.end(), [&](double v) { return v == count[0]; });
    Expr n = uniform ? Expr(makeScalar(count[0], f32))
                     : Expr(makeCall("reshape", {floatVector(count)}, {{"newshape", std::vector<int64_t>{OH, OW}}}));
    Expr v = makeCall("divide", {makeCall("divide", {sum, n}), makeScalar(qs, f32)});
    v = makeCall("round", {makeCall("add", {v, makeScalar(qz, f32)})});
    auto [lo, hi] = saturationRange(outT);
    v = makeCall("clip", {v}, {{"a_min", lo}, {"a_max", hi}});
    return makeCall("cast", {v}, {{"dtype", outT}}, q.name);
  }

  /// quantize(concatenate(dequantize(x_i)...)) with per-tensor parameters: each x_i whose
  /// parameters and type are the output's as it is, the others requantized to the output's
  /// scale and zero point (ONNX Runtime's QLinearConcat); then concatenate on the integers.
  Expr integerConcat(const Expr& y, const CallNode& q, double qs, double qz, DataType outT) {
    auto* c = asOp(y, "concatenate");
    if (!c) return Expr();
    std::vector<Expr> parts;
    for (const Expr& in : c->args) {
      auto d = matchDq(in);
      if (!d || !perTensor(*d)) return Expr();
      if (float(d->scales[0]) == float(qs) && d->zps[0] == qz && tensorTypeOf(d->q).dtype == outT) {
        parts.push_back(d->q);
        continue;
      }
      Expr acc = makeCall("cast", {d->q}, {{"dtype", DataType::Int(32)}});
      if (d->zps[0] != 0) acc = makeCall("subtract", {acc, makeScalar(d->zps[0], DataType::Int(32))});
      parts.push_back(makeCall("qnn.requantize", {acc, d->scale, q.args[1], q.args[2]},
                               {{"axis", int64_t(1)}, {"out_dtype", outT}}));
    }
    return makeCall("concatenate", parts, c->attrs, q.name);
  }

  /// `y` = op(dequantize(x), dequantize(w)) [+ bias] as an int32 accumulator and its scale per
  /// output channel.
  bool integerProduct(const Expr& y, Expr& acc, std::vector<double>& accScale) {
    Expr core = y, bias;
    if (auto* b = asOp(y, "nn.bias_add"); b && b->attrs.getInt("axis") == 1) {
      core = b->args[0];
      bias = b->args[1];
    } else if (auto* a = asOp(y, "add")) {
      core = a->args[0];
      bias = a->args[1];
      if (!asOp(core, "nn.dense") && !asOp(core, "nn.matmul")) return false;
      if (tensorTypeOf(bias).ndim() != 1) return false;
    }
    if (auto* c = asOp(core, "nn.conv2d")) {
      if (c->attrs.getString("data_layout") != "NCHW" || c->attrs.getString("kernel_layout") != "OIHW") return false;
      auto x = matchDq(c->args[0]), w = matchDq(c->args[1]);
      if (!x || !w || !perTensor(*x) || (w->scales.size() > 1 && w->axis != 0)) return false;
      int64_t O = tensorTypeOf(w->q).shape[0].value;
      accScale = productScales(*x, *w, O);
      acc = makeCall("qnn.conv2d", {x->q, w->q, x->zp, w->zp}, c->attrs, c->name);
      if (bias.defined()) {
        Expr b = integerBias(bias, accScale);
        if (!b.defined()) return false;
        acc = makeCall("nn.bias_add", {acc, b}, {{"axis", int64_t(1)}});
      }
      return true;
    }
    if (auto* d = asOp(core, "nn.dense")) {
      auto x = matchDq(d->args[0]);
      if (!x || !perTensor(*x)) return false;
      Expr wq, wzp;
      std::optional<Dq> w = matchDq(d->args[1]);
      int64_t wAxis = 0;
      if (w) {
        wq = w->q;
        wAxis = w->axis;
      } else if (auto* t = asOp(d->args[1], "transpose"); t && (w = matchDq(t->args[0]))) {
        wq = makeCall("transpose", {w->q}, t->attrs);
        wAxis = 1 - w->axis;
      } else {
        return false;
      }
      if (w->scales.size() > 1 && wAxis != 0) return false;
      int64_t N = tensorTypeOf(wq).shape[0].value;
      accScale = productScales(*x, *w, N);
      acc = makeCall("qnn.dense", {x->q, wq, x->zp, w->zp}, {}, d->name);
      if (bias.defined()) {
        Expr b = integerBias(bias, accScale);
        if (!b.defined()) return false;
        acc = makeCall("add", {acc, b});
      }
      return true;
    }
    return false;
  }

  /// quantize(f(dequantize(x))) for data movement f with q's parameters equal to the
  /// dequantize's: f(x) on the integers.
  Expr throughDataMovement(const Expr& y, double qs, double qz, DataType outT) {
    std::vector<const CallNode*> chain;
    Expr cur = y;
    while (true) {
      if (auto d = matchDq(cur)) {
        if (!perTensor(*d) || float(d->scales[0]) != float(qs) || d->zps[0] != qz ||
            tensorTypeOf(d->q).dtype != outT)
          return Expr();
        Expr r = d->q;
        for (auto it = chain.rbegin(); it != chain.rend(); ++it)
          r = withArgs(**it, {r});
        return r;
      }
      auto* c = cur.as<CallNode>();
      if (!c || !c->op || c->args.size() != 1) return Expr();
      const std::string& op = c->op->name;
      if (op != "reshape" && op != "transpose" && op != "nn.max_pool2d" && op != "squeeze" &&
          op != "expand_dims")
        return Expr();
      chain.push_back(c);
      cur = c->args[0];
    }
  }
};

}  // namespace

Module fakeQuantizationToInteger(const Module& m) {
  // The fences first: only the model's own Cast -> Mul of an integer result (not the ones below).
  // Then the float islands of a quantized model as ONNX Runtime rounds them (OrtFloat.cpp).
  return ortFloatIslands(
      mapFunctions(fenceIntegerScaling(m), [](const Expr& body) { return FakeQuantToInteger().mutate(body); }));
}

}  // namespace loom::graph::qnn
