// The float islands of a quantized model computed as ONNX Runtime's CPU kernels compute them.
//
// quantize_dynamic leaves LayerNormalization, Softmax and Gelu in float32 between the integer
// matmuls, and every activation that enters a matmul is requantized by DynamicQuantizeLinear,
// whose scale is the tensor's max - min: one ulp of difference in one element can move the
// scale of a whole tensor and every value a step. So these ops must round as ORT's do, not just
// be accurate. The arithmetic below was read off ORT 1.32's outputs on random inputs (its mean
// and inv_std_dev outputs too) and MLAS's source (SoftmaxKernel / TransKernelFma3, erf.cpp):
// - LayerNormalization: the mean as float32(sum in float64 / N); the variance two-pass, the
//   squares of (x - mean) accumulated by fused multiply-adds in 8 lanes (lane j gets elements
//   j, j+8, ...), the lanes summed as halves ((0+4)+(2+6)) + ((1+5)+(3+7)); inv = 1 / sqrt(var / N
//   + eps); y = fma((x - mean) * inv, gamma, beta). (N a multiple of 8.)
// - SkipLayerNormalization (ORT fuses Add -> LayerNormalization into it when the sum has no other
//   use): Welford's running mean and M2 in float32 over v = a + b (delta = v - m; m += delta /
//   (h + 1); M2 += delta * (v - m), each rounded), y = (v - m) / sqrt(M2 / N + eps) * gamma + beta.
// - Softmax: MLAS's sum-exp kernel: its exp polynomial, the exps accumulated in 8 lanes, the
//   lanes summed as vhaddps does ((4+5)+(6+7)) + ((0+1)+(2+3)), then each exp times 1 / sum.
// - A float multiply whose result an add or subtract uses is rounded first (float_fence): ORT runs
//   them as two kernels, LLVM would contract them into one fused multiply-add.
// - Gelu: x * float32(1/sqrt(2)) into erf (ORT's fused Gelu multiplies where the model divides);
//   erf itself is MLAS's for every float32 erf (codegen/FastMath.cpp).
// The ops carry host kernels that compute the same arithmetic (the evaluator's reference); the
// compiled kernels are loop kernels (core/topi/nn/OrtFloatKernels.cpp), serial in the row.
#include <cmath>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/OpsInternal.h"
#include "core/graph/qnn/Qnn.h"
#include "core/graph/qnn/QnnUtil.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph::qnn {

namespace {

const CallNode* asCall(const Expr& e, const char* name) {
  auto* c = e.as<CallNode>();
  return c && c->op && c->op->name == name ? c : nullptr;
}

/// Rows and row length of a float32 tensor normalized along its last axis.
std::pair<int64_t, int64_t> rowsOf(const std::vector<int64_t>& shape) {
  int64_t n = shape.empty() ? 1 : shape.back();
  int64_t r = 1;
  for (size_t i = 0; i + 1 < shape.size(); ++i) r *= shape[i];
  return {r, n};
}

Type sameAsFirstRel(const CallNode& call, const std::vector<Type>& args, size_t vecs) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  if (x.dtype != DataType::Float(32)) LOOM_TYPE_FAIL(call) << "expects float32 data, got " << typeStr(args[0]);
  if (x.ndim() == 0 || !x.isStatic()) LOOM_TYPE_FAIL(call) << "expects data of a static shape with an axis, got " << typeStr(args[0]);
  for (size_t i = 1; i < args.size(); ++i) {
    const TensorTypeNode& t = argTensor(call, args, i);
    bool vec = i + vecs >= args.size();
    bool ok = t.dtype == x.dtype && (vec ? (t.ndim() == 1 && t.shape[0].isStatic() && t.shape[0].value == x.shape.back().value)
                                         : t.isStatic() && t.staticShape() == x.staticShape());
    if (!ok) LOOM_TYPE_FAIL(call) << "argument " << i << " has type " << typeStr(args[i]) << ", which does not match the data "
                                  << typeStr(args[0]);
  }
  return tensorType(x.shape, x.dtype);
}

HostTensor layerNormKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(o.staticShape(), o.dtype);
  auto [rows, n] = rowsOf(r.shape);
  const float eps = float(call.attrs.getFloat("epsilon"));
  for (int64_t i = 0; i < rows; ++i) {
    const double* x = &in[0].v[size_t(i * n)];
    double s = 0;
    for (int64_t h = 0; h < n; ++h) s += double(float(x[h]));
    const float mean = float(s / double(n));
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t h = 0; h < n; ++h) {
      float d = float(x[h]) - mean;
      acc[h % 8] = std::fmaf(d, d, acc[h % 8]);
    }
    float var = ((acc[0] + acc[4]) + (acc[2] + acc[6])) + ((acc[1] + acc[5]) + (acc[3] + acc[7]));
    float std = std::sqrt(var / float(n) + eps);
    float inv = 1.0f / std;
    for (int64_t h = 0; h < n; ++h) {
      float d = float(x[h]) - mean;
      float t = d * inv;
      r.v[size_t(i * n + h)] = std::fmaf(t, float(in[1].v[size_t(h)]), float(in[2].v[size_t(h)]));
    }
  }
  return r;
}

HostTensor skipLayerNormKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(o.staticShape(), o.dtype);
  auto [rows, n] = rowsOf(r.shape);
  const float eps = float(call.attrs.getFloat("epsilon"));
  for (int64_t i = 0; i < rows; ++i) {
    auto v = [&](int64_t h) { return float(in[0].v[size_t(i * n + h)]) + float(in[1].v[size_t(i * n + h)]); };
    volatile float m = 0, m2 = 0;  // volatile: no contraction of the Welford update
    for (int64_t h = 0; h < n; ++h) {
      float x = v(h);
      float delta = x - m;
      m = m + delta / float(h + 1);
      volatile float p = delta * (x - m);
      m2 = m2 + p;
    }
    float std = std::sqrt(m2 / float(n) + eps);
    for (int64_t h = 0; h < n; ++h) {
      volatile float t = (v(h) - m) / std * float(in[2].v[size_t(h)]);
      r.v[size_t(i * n + h)] = t + float(in[3].v[size_t(h)]);
    }
  }
  return r;
}

}  // namespace

/// MLAS's exp of its sum-exp kernel for x <= 0 (x = input - max).
float mlasSumExp(float x) {
  const float bias = 12582912.0f;
  float v = std::max(-88.3762626647949f, x);
  float biased = std::fmaf(v, 1.44269504088896341f, bias);
  float m = biased - bias;
  v = std::fmaf(m, -6.93145752e-1f, v);
  v = std::fmaf(m, -1.42860677e-6f, v);
  float p = 0x1.694000p-10f;
  for (float c : {0x1.125edcp-7f, 0x1.555b5ap-5f, 0x1.555450p-3f, 0x1.fffff6p-2f, 1.0f, 1.0f}) p = std::fmaf(p, v, c);
  float normal = m < -126.5f ? 0.0f : std::ldexp(1.0f, int(m));
  return p * normal;
}

namespace {

HostTensor softmaxKernel(const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(o.staticShape(), o.dtype);
  auto [rows, n] = rowsOf(r.shape);
  std::vector<float> e(static_cast<size_t>(n));
  for (int64_t i = 0; i < rows; ++i) {
    const double* x = &in[0].v[size_t(i * n)];
    float mx = float(x[0]);
    for (int64_t h = 1; h < n; ++h) mx = std::max(mx, float(x[h]));
    float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t h = 0; h < n; ++h) {
      e[size_t(h)] = mlasSumExp(float(x[h]) - mx);
      acc[h % 8] += e[size_t(h)];
    }
    float sum = ((acc[4] + acc[5]) + (acc[6] + acc[7])) + ((acc[0] + acc[1]) + (acc[2] + acc[3]));
    float scale = 1.0f / sum;
    for (int64_t h = 0; h < n; ++h) r.v[size_t(i * n + h)] = e[size_t(h)] * scale;
  }
  return r;
}

bool isFloatScalarNear(const Expr& e, double v) {
  auto* c = e.as<ConstantNode>();
  if (!c || c->data.numel() != 1) return false;
  DataType t = toDataType(c->data.dtype());
  if (t != DataType::Float(32)) return false;
  return std::fabs(double(c->data.as<float>()[0]) - v) < 1e-6;
}

class OrtFloat : public ExprMutator {
public:
  explicit OrtFloat(std::unordered_map<const ExprNode*, int> uses) : m_uses(std::move(uses)) {}

private:
  std::unordered_map<const ExprNode*, int> m_uses;

  bool singleUse(const Expr& original) const {
    auto it = m_uses.find(original.get());
    return it != m_uses.end() && it->second == 1;
  }

  static bool lastAxis(const CallNode& c, const Expr& x) {
    const TensorTypeNode& t = tensorTypeOf(x);
    int64_t axis = c.attrs.getInt("axis");
    int64_t nd = int64_t(t.ndim());
    return nd > 0 && (axis == -1 || axis == nd - 1) && t.dtype == DataType::Float(32) && t.isStatic();
  }

  Expr rewrite(const Expr& original, const Expr& e) override {
    auto* c = e.as<CallNode>();
    if (!c || !c->op) return e;
    const std::string& op = c->op->name;
    if (op == "nn.layer_norm" && lastAxis(*c, c->args[0])) {
      const TensorTypeNode& t = tensorTypeOf(c->args[0]);
      int64_t n = t.shape.back().value;
      Attrs a{{"epsilon", c->attrs.getFloat("epsilon")}};
      const auto* origAdd = asCall(original.as<CallNode>()->args[0], "add");
      if (const auto* add = asCall(c->args[0], "add"); add && origAdd && singleUse(original.as<CallNode>()->args[0]) &&
                                                       t.ndim() == 3) {
        const TensorTypeNode& ta = tensorTypeOf(add->args[0]);
        const TensorTypeNode& tb = tensorTypeOf(add->args[1]);
        if (ta.isStatic() && tb.isStatic() && ta.staticShape() == t.staticShape() && tb.staticShape() == t.staticShape() &&
            ta.dtype == t.dtype && tb.dtype == t.dtype)
          return makeCall("nn.ort_skip_layer_norm", {add->args[0], add->args[1], c->args[1], c->args[2]}, a);
      }
      if (n % 8 == 0) return makeCall("nn.ort_layer_norm", {c->args[0], c->args[1], c->args[2]}, a);
      return e;
    }
    if (op == "nn.softmax" && lastAxis(*c, c->args[0])) return makeCall("nn.ort_softmax", {c->args[0]});
    if ((op == "add" || op == "subtract") && tensorTypeOf(original).dtype == DataType::Float(32)) {
      // ORT's Mul and Add are two kernels, two roundings; LLVM would contract them into one FMA.
      bool changed = false;
      std::vector<Expr> args = c->args;
      for (Expr& a : args)
        if (asCall(a, "multiply")) {
          a = makeCall("float_fence", {a});
          changed = true;
        }
      if (changed) return makeCall(op, args, c->attrs);
    }
    if (op == "multiply") {
      // ORT's Gelu fusion: x * (Erf(x / sqrt(2)) + 1) [* 0.5] becomes com.microsoft.Gelu, which
      // computes x * float32(M_SQRT1_2) into MLAS's erf.
      for (size_t k = 0; k < 2; ++k) {
        const Expr& x = c->args[1 - k];
        const auto* plus = asCall(c->args[k], "add");
        const auto* erf = plus ? asCall(plus->args[0], "erf") : nullptr;
        const auto* div = erf ? asCall(erf->args[0], "divide") : nullptr;
        if (!div || div->args[0].get() != x.get() || !isFloatScalarNear(div->args[1], std::sqrt(2.0)) ||
            !isFloatScalarNear(plus->args[1], 1.0))
          continue;
        Expr scaled = makeCall("multiply", {x, makeScalar(float(M_SQRT1_2), DataType::Float(32))});
        Expr one = makeCall("add", {makeCall("erf", {scaled}), plus->args[1]});
        return makeCall("multiply", k == 0 ? std::vector<Expr>{one, x} : std::vector<Expr>{x, one});
      }
    }
    return e;
  }
};

class FindQnn : public ExprMutator {
public:
  bool found = false;

private:
  Expr rewrite(const Expr&, const Expr& e) override {
    if (auto* c = e.as<CallNode>(); c && c->op && c->op->name.rfind("qnn.", 0) == 0) found = true;
    return e;
  }
};

bool hasQuantizedOps(const Expr& body) {
  FindQnn f;
  f.mutate(body);
  return f.found;
}

}  // namespace

void registerOrtFloatOps() {
  defineOp("nn.ort_layer_norm", 3, OpPattern::Opaque, {attrFloat("epsilon", 1e-5)},
           [](const CallNode& c, const std::vector<Type>& a) { return sameAsFirstRel(c, a, 2); }, layerNormKernel,
           "layer normalization over the last axis as ONNX Runtime's CPU LayerNormalization rounds it (mean from a "
           "float64 sum, two-pass variance in 8 fused-multiply-add lanes, fma((x - mean) * inv, gamma, beta)); "
           "the float islands of a quantized model");
  defineOp("nn.ort_skip_layer_norm", 4, OpPattern::Opaque, {attrFloat("epsilon", 1e-5)},
           [](const CallNode& c, const std::vector<Type>& a) { return sameAsFirstRel(c, a, 2); }, skipLayerNormKernel,
           "layer normalization of a + b over the last axis as ONNX Runtime's SkipLayerNormalization rounds it "
           "(Welford's running mean and M2 in float32)");
  defineOp("nn.ort_softmax", 1, OpPattern::Opaque, {},
           [](const CallNode& c, const std::vector<Type>& a) { return sameAsFirstRel(c, a, 0); }, softmaxKernel,
           "softmax over the last axis as MLAS computes it (its exp polynomial, 8-lane sum, times 1 / sum)");
}

Module ortFloatIslands(const Module& m) {
  return mapFunctions(m, [](const Expr& body) {
    if (!hasQuantizedOps(body)) return body;
    inferType(body);
    return OrtFloat(useCounts(body)).mutate(body);
  });
}

}  // namespace loom::graph::qnn
