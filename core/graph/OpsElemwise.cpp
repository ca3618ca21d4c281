// Elementwise and broadcast ops: unary math, binary arithmetic and comparisons, where, cast, clip.
#include <cmath>

#include "core/graph/OpsInternal.h"

namespace loom::graph {

namespace {

using UnaryFn = double (*)(double, const Attrs&);

void unary(const std::string& name, UnaryFn f, std::vector<AttrSpec> attrs = {},
           bool boolOut = false, bool floatOnly = false) {
  TypeRelation rel = [boolOut, floatOnly](const CallNode& call,
                                          const std::vector<Type>& args) -> Type {
    const TensorTypeNode& t = argTensor(call, args, 0);
    if (floatOnly && !t.dtype.isFloat())
      LOOM_TYPE_FAIL(call) << "expects a floating-point tensor, got " << typeStr(args[0]);
    return tensorType(t.shape, boolOut ? DataType::Bool() : t.dtype);
  };
  defineOp(
      name, 1, OpPattern::ElemWise, std::move(attrs), rel,
      [f](const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& out) {
        HostTensor r(in[0].shape, out.dtype);
        for (size_t i = 0; i < r.v.size(); ++i)
          r.v[i] = f(in[0].v[i], call.attrs);
        return r;
      },
      "elementwise " + name);
}

using BinaryFn = double (*)(double, double, bool isInt);

void binary(const std::string& name, BinaryFn f, bool boolOut = false, bool logical = false) {
  TypeRelation rel = [boolOut, logical](const CallNode& call,
                                        const std::vector<Type>& args) -> Type {
    const TensorTypeNode& a = argTensor(call, args, 0);
    const TensorTypeNode& b = argTensor(call, args, 1);
    if (a.dtype != b.dtype)
      LOOM_TYPE_FAIL(call) << "argument types differ: " << typeStr(args[0]) << " vs "
                           << typeStr(args[1]);
    if (logical && !a.dtype.isBool())
      LOOM_TYPE_FAIL(call) << "expects bool tensors, got " << typeStr(args[0]);
    return tensorType(broadcastShapes(call, a.shape, b.shape),
                      boolOut ? DataType::Bool() : a.dtype);
  };
  defineOp(
      name, 2, OpPattern::Broadcast, {}, rel,
      [f](const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& out) {
        std::vector<int64_t> shape = broadcastStatic(in[0].shape, in[1].shape);
        HostTensor r(shape, out.dtype);
        bool isInt = in[0].dtype.isIntegral();
        std::vector<int64_t> idx;
        for (int64_t i = 0; i < r.numel(); ++i) {
          unravel(i, shape, idx);
          r.v[i] = f(in[0].v[broadcastIndex(idx, in[0].shape)],
                     in[1].v[broadcastIndex(idx, in[1].shape)], isInt);
        }
        return r;
      },
      "broadcast " + name);
}

double sigmoid(double x) {
  return 1.0 / (1.0 + std::exp(-x));
}

} // namespace

void registerElemwiseOps() {
  unary("nn.relu", [](double x, const Attrs&) { return x > 0 ? x : 0.0; });
  unary("nn.leaky_relu",
        [](double x, const Attrs& a) { return x >= 0 ? x : x * a.getFloat("alpha"); },
        {attrFloat("alpha", 0.01)});
  unary(
      "sigmoid", [](double x, const Attrs&) { return sigmoid(x); }, {}, false, true);
  unary(
      "tanh", [](double x, const Attrs&) { return std::tanh(x); }, {}, false, true);
  unary(
      "exp", [](double x, const Attrs&) { return std::exp(x); }, {}, false, true);
  // exp(x) - 1 without the cancellation near 0 (Elu, Selu, Celu): exp(x) rounded to float32 and
  // then less 1 keeps only an absolute error of half an ulp of 1.
  unary(
      "expm1", [](double x, const Attrs&) { return std::expm1(x); }, {}, false, true);
  // log(1 + x) accurate near 0 (Softplus's log(1 + exp(-|x|)) for large |x|).
  unary(
      "log1p", [](double x, const Attrs&) { return std::log1p(x); }, {}, false, true);
  unary(
      "log", [](double x, const Attrs&) { return std::log(x); }, {}, false, true);
  unary(
      "sqrt", [](double x, const Attrs&) { return std::sqrt(x); }, {}, false, true);
  unary(
      "rsqrt", [](double x, const Attrs&) { return 1.0 / std::sqrt(x); }, {}, false, true);
  unary(
      "erf", [](double x, const Attrs&) { return std::erf(x); }, {}, false, true);
  unary(
      "sin", [](double x, const Attrs&) { return std::sin(x); }, {}, false, true);
  unary(
      "cos", [](double x, const Attrs&) { return std::cos(x); }, {}, false, true);
  unary(
      "tan", [](double x, const Attrs&) { return std::tan(x); }, {}, false, true);
  unary(
      "asin", [](double x, const Attrs&) { return std::asin(x); }, {}, false, true);
  unary(
      "acos", [](double x, const Attrs&) { return std::acos(x); }, {}, false, true);
  unary(
      "atan", [](double x, const Attrs&) { return std::atan(x); }, {}, false, true);
  unary(
      "sinh", [](double x, const Attrs&) { return std::sinh(x); }, {}, false, true);
  unary(
      "cosh", [](double x, const Attrs&) { return std::cosh(x); }, {}, false, true);
  unary(
      "asinh", [](double x, const Attrs&) { return std::asinh(x); }, {}, false, true);
  unary(
      "acosh", [](double x, const Attrs&) { return std::acosh(x); }, {}, false, true);
  unary(
      "atanh", [](double x, const Attrs&) { return std::atanh(x); }, {}, false, true);
  unary("negative", [](double x, const Attrs&) { return -x; });
  unary("abs", [](double x, const Attrs&) { return std::fabs(x); });
  unary("floor", [](double x, const Attrs&) { return std::floor(x); });
  unary("ceil", [](double x, const Attrs&) { return std::ceil(x); });
  unary("round", [](double x, const Attrs&) { return std::nearbyint(x); });
  unary("sign", [](double x, const Attrs&) { return double((x > 0) - (x < 0)); });
  unary("copy", [](double x, const Attrs&) { return x; });
  // The value rounded to its type here: codegen may not fuse it into a multiply-add with its
  // consumer (an integer accumulator times its scale, then a bias: two roundings, as ONNX Runtime).
  unary("float_fence", [](double x, const Attrs&) { return x; });
  unary(
      "isnan", [](double x, const Attrs&) { return std::isnan(x) ? 1.0 : 0.0; }, {}, true);
  unary(
      "isinf",
      [](double x, const Attrs& a) {
        if (!std::isinf(x)) return 0.0;
        return (x > 0 ? a.getInt("detect_positive") : a.getInt("detect_negative")) != 0 ? 1.0 : 0.0;
      },
      {attrInt("detect_positive", 1), attrInt("detect_negative", 1)}, true);
  unary(
      "logical_not", [](double x, const Attrs&) { return x == 0 ? 1.0 : 0.0; }, {}, true);
  unary("clip",
        [](double x, const Attrs& a) {
          return std::min(std::max(x, a.getFloat("a_min")), a.getFloat("a_max"));
        },
        {attrFloat("a_min"), attrFloat("a_max")});

  defineOp(
      "cast", 1, OpPattern::ElemWise, {attrDType("dtype")},
      [](const CallNode& call, const std::vector<Type>& args) -> Type {
        return tensorType(argTensor(call, args, 0).shape, call.attrs.getDType("dtype"));
      },
      [](const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& out) {
        HostTensor r = in[0];
        r.dtype = out.dtype;
        if (out.dtype.isIntegral())
          for (double& x : r.v)
            x = std::trunc(x);
        return r;
      },
      "converts the element type");

  binary("add", [](double a, double b, bool) { return a + b; });
  binary("subtract", [](double a, double b, bool) { return a - b; });
  binary("multiply", [](double a, double b, bool) { return a * b; });
  binary("divide", [](double a, double b, bool isInt) {
    if (isInt) return b == 0 ? 0.0 : std::trunc(a / b);
    return a / b;
  });
  binary("floor_mod", [](double a, double b, bool isInt) {
    if (b == 0) return isInt ? 0.0 : std::nan("");
    double r = std::fmod(a, b);
    return r != 0 && ((r < 0) != (b < 0)) ? r + b : r;
  });
  binary("trunc_mod",
         [](double a, double b, bool isInt) { return b == 0 && isInt ? 0.0 : std::fmod(a, b); });
  binary("power", [](double a, double b, bool) { return std::pow(a, b); });
  binary("maximum", [](double a, double b, bool) { return std::max(a, b); });
  binary("minimum", [](double a, double b, bool) { return std::min(a, b); });
  binary(
      "equal", [](double a, double b, bool) { return double(a == b); }, true);
  binary(
      "not_equal", [](double a, double b, bool) { return double(a != b); }, true);
  binary(
      "less", [](double a, double b, bool) { return double(a < b); }, true);
  binary(
      "less_equal", [](double a, double b, bool) { return double(a <= b); }, true);
  binary(
      "greater", [](double a, double b, bool) { return double(a > b); }, true);
  binary(
      "greater_equal", [](double a, double b, bool) { return double(a >= b); }, true);
  binary(
      "logical_and", [](double a, double b, bool) { return double(a != 0 && b != 0); }, true, true);
  binary(
      "logical_or", [](double a, double b, bool) { return double(a != 0 || b != 0); }, true, true);
  binary(
      "logical_xor", [](double a, double b, bool) { return double((a != 0) != (b != 0)); }, true,
      true);

  defineOp(
      "where", 3, OpPattern::Broadcast, {},
      [](const CallNode& call, const std::vector<Type>& args) -> Type {
        const TensorTypeNode& c = argTensor(call, args, 0);
        const TensorTypeNode& x = argTensor(call, args, 1);
        const TensorTypeNode& y = argTensor(call, args, 2);
        if (!c.dtype.isBool())
          LOOM_TYPE_FAIL(call) << "condition must be bool, got " << typeStr(args[0]);
        if (x.dtype != y.dtype)
          LOOM_TYPE_FAIL(call) << "branch types differ: " << typeStr(args[1]) << " vs "
                               << typeStr(args[2]);
        return tensorType(broadcastShapes(call, broadcastShapes(call, c.shape, x.shape), y.shape),
                          x.dtype);
      },
      [](const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& out) {
        std::vector<int64_t> shape =
            broadcastStatic(broadcastStatic(in[0].shape, in[1].shape), in[2].shape);
        HostTensor r(shape, out.dtype);
        std::vector<int64_t> idx;
        for (int64_t i = 0; i < r.numel(); ++i) {
          unravel(i, shape, idx);
          r.v[i] = in[0].v[broadcastIndex(idx, in[0].shape)] != 0
                       ? in[1].v[broadcastIndex(idx, in[1].shape)]
                       : in[2].v[broadcastIndex(idx, in[2].shape)];
        }
        return r;
      },
      "selects x where cond else y, broadcasting all three");
}

} // namespace loom::graph
