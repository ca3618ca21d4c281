// The quantized (qnn.*) graph ops: quantize, dequantize, requantize and the integer conv2d /
// dense / matmul with zero points; type relations and exact host kernels.
#include <cmath>

#include "core/graph/OpsInternal.h"
#include "core/graph/qnn/Qnn.h"
#include "core/graph/qnn/QnnUtil.h"

namespace loom::graph::qnn {

namespace {

/// Checks that argument `i` (a scale or zero point) is 0-d, one element, or a vector as long
/// as dim `axis` of `data`; returns the element count.
int64_t requireParam(const CallNode& call, const std::vector<Type>& args, size_t i, const TensorTypeNode& data,
                     int64_t axis, const char* what, bool isFloat) {
  const TensorTypeNode& t = argTensor(call, args, i);
  if (isFloat ? !t.dtype.isFloat() : t.dtype.isFloat())
    LOOM_TYPE_FAIL(call) << what << " must be " << (isFloat ? "a float" : "an integer") << " tensor, got "
                         << typeStr(args[i]);
  if (!t.isStatic() || t.ndim() > 1)
    LOOM_TYPE_FAIL(call) << what << " must be a scalar or a vector, got " << typeStr(args[i]);
  int64_t n = t.ndim() == 0 ? 1 : t.shape[0].value;
  if (n == 1) return 1;
  if (axis < 0 || axis >= int64_t(data.ndim()) || !data.shape[size_t(axis)].isStatic() ||
      data.shape[size_t(axis)].value != n)
    LOOM_TYPE_FAIL(call) << what << " " << typeStr(args[i]) << " does not match axis " << axis << " of "
                         << typeStr(TensorType(&data));
  return n;
}

int64_t axisOf(const CallNode& call, const TensorTypeNode& d) {
  int64_t a = call.attrs.getInt("axis");
  return a < 0 ? a + int64_t(d.ndim()) : a;
}

void requireIntDtype(const CallNode& call, DataType t, const char* what) {
  if (!(t.isInt() || t.isUInt()) || t.bits() > 32)
    LOOM_TYPE_FAIL(call) << what << " must be an integer type of at most 32 bits, got " << t.str();
}

/// The channel of flat index `i` of a tensor of `shape` along `axis` (0 when `n` is 1).
struct Channel {
  int64_t inner = 1, n = 1;
  Channel(const std::vector<int64_t>& shape, int64_t axis, int64_t count) : n(count) {
    for (size_t d = size_t(axis) + 1; d < shape.size(); ++d)
      inner *= shape[d];
  }
  int64_t operator()(int64_t i) const { return n == 1 ? 0 : (i / inner) % n; }
};

int64_t normalizedAxis(const CallNode& call, size_t ndim) {
  int64_t a = call.attrs.getInt("axis");
  return a < 0 ? a + int64_t(ndim) : a;
}

Type quantizeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  if (!x.dtype.isFloat()) LOOM_TYPE_FAIL(call) << "input must be float, got " << typeStr(args[0]);
  DataType out = call.attrs.getDType("out_dtype");
  requireIntDtype(call, out, "out_dtype");
  requireParam(call, args, 1, x, axisOf(call, x), "scale", true);
  requireParam(call, args, 2, x, axisOf(call, x), "zero point", false);
  return tensorType(x.shape, out);
}

HostTensor quantizeKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(in[0].shape, o.dtype);
  int64_t axis = normalizedAxis(call, in[0].shape.size());
  Channel cs(in[0].shape, axis, in[1].numel()), cz(in[0].shape, axis, in[2].numel());
  bool f32 = in[0].dtype == DataType::Float(32);
  auto [lo, hi] = saturationRange(o.dtype);
  for (int64_t i = 0; i < r.numel(); ++i) {
    double q = f32 ? double(std::nearbyint(float(in[0].v[i]) / float(in[1].v[cs(i)])))
                   : std::nearbyint(in[0].v[i] / in[1].v[cs(i)]);
    r.v[i] = std::clamp(q + in[2].v[cz(i)], lo, hi);
  }
  return r;
}

Type dequantizeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  requireIntDtype(call, x.dtype, "input");
  requireParam(call, args, 1, x, axisOf(call, x), "scale", true);
  requireParam(call, args, 2, x, axisOf(call, x), "zero point", false);
  return tensorType(x.shape, argTensor(call, args, 1).dtype);
}

HostTensor dequantizeKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(in[0].shape, o.dtype);
  int64_t axis = normalizedAxis(call, in[0].shape.size());
  Channel cs(in[0].shape, axis, in[1].numel()), cz(in[0].shape, axis, in[2].numel());
  bool f32 = o.dtype == DataType::Float(32);
  for (int64_t i = 0; i < r.numel(); ++i) {
    double d = in[0].v[i] - in[2].v[cz(i)];
    r.v[i] = f32 ? double(float(d) * float(in[1].v[cs(i)])) : d * in[1].v[cs(i)];
  }
  return r;
}

Type requantizeRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  requireIntDtype(call, x.dtype, "input");
  DataType out = call.attrs.getDType("out_dtype");
  requireIntDtype(call, out, "out_dtype");
  requireParam(call, args, 1, x, axisOf(call, x), "input scale", true);
  requireParam(call, args, 2, x, axisOf(call, x), "output scale", true);
  requireParam(call, args, 3, x, axisOf(call, x), "output zero point", false);
  return tensorType(x.shape, out);
}

HostTensor requantizeKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(in[0].shape, o.dtype);
  int64_t axis = normalizedAxis(call, in[0].shape.size());
  Channel c1(in[0].shape, axis, in[1].numel()), c2(in[0].shape, axis, in[2].numel()),
      c3(in[0].shape, axis, in[3].numel());
  auto [lo, hi] = saturationRange(o.dtype);
  for (int64_t i = 0; i < r.numel(); ++i) {
    float m = float(in[1].v[c1(i)]) / float(in[2].v[c2(i)]);
    double q = double(std::nearbyint(float(in[0].v[i]) * m));
    r.v[i] = std::clamp(q + in[3].v[c3(i)], lo, hi);
  }
  return r;
}

/// qnn.add(a, b, a_scale, a_zp, b_scale, b_zp, y_scale, y_zp): a and b integer tensors whose
/// shapes broadcast (numpy rules: a residual add, or [N, C, H, W] + [1, C, 1, 1]), the six
/// parameters scalars.
Type addRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& a = argTensor(call, args, 0);
  const TensorTypeNode& b = argTensor(call, args, 1);
  requireIntDtype(call, a.dtype, "a");
  requireIntDtype(call, b.dtype, "b");
  Shape shape = broadcastShapes(call, a.shape, b.shape);
  const char* names[] = {"a scale", "a zero point", "b scale", "b zero point", "output scale", "output zero point"};
  for (size_t i = 2; i < 8; ++i)
    if (requireParam(call, args, i, a, -1, names[i - 2], i % 2 == 0) != 1)
      LOOM_TYPE_FAIL(call) << names[i - 2] << " must be one value";
  DataType out = call.attrs.getDType("out_dtype");
  requireIntDtype(call, out, "out_dtype");
  return tensorType(shape, out);
}

/// ONNX Runtime's QLinearAdd (MLAS's AVX2 kernel), a and b broadcast: r_a = a_scale / y_scale,
/// r_b = b_scale / y_scale, F = y_zp - fma(r_a, a_zp, r_b * b_zp) in float32, then
/// saturate(round_half_even(fma(a, r_a, fma(b, r_b, F)))); with a constant along the innermost
/// axis (a scalar per span of ORT's broadcast) a and b trade places.
HostTensor addKernel(const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(o.staticShape(), o.dtype);
  auto [lo, hi] = saturationRange(o.dtype);
  const QLinearAddConstants k = qlinearAddConstants(float(in[2].v[0]), float(in[3].v[0]), float(in[4].v[0]),
                                                    float(in[5].v[0]), float(in[6].v[0]), float(in[7].v[0]),
                                                    scalarAlongInnermost(in[0].shape, r.shape));
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, r.shape, idx);
    float a = float(in[0].v[broadcastIndex(idx, in[0].shape)]), b = float(in[1].v[broadcastIndex(idx, in[1].shape)]);
    if (k.swapped) std::swap(a, b);
    r.v[i] = std::clamp(double(std::nearbyint(std::fmaf(a, k.first, std::fmaf(b, k.second, k.fixed)))), lo, hi);
  }
  return r;
}

/// qnn.fma_add(a, b; a_ratio, b_ratio, fixed): fma(a, a_ratio, fma(b, b_ratio, fixed)) in float32,
/// broadcasting: the float part of ONNX Runtime's QLinearAdd.
Type fmaAddRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& a = argTensor(call, args, 0);
  const TensorTypeNode& b = argTensor(call, args, 1);
  if (a.dtype != DataType::Float(32) || b.dtype != DataType::Float(32))
    LOOM_TYPE_FAIL(call) << "expects float32 operands, got " << typeStr(args[0]) << " and " << typeStr(args[1]);
  return tensorType(broadcastShapes(call, a.shape, b.shape), a.dtype);
}

HostTensor fmaAddKernel(const CallNode& call, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(o.staticShape(), o.dtype);
  const float ra = float(call.attrs.getFloat("a_ratio")), rb = float(call.attrs.getFloat("b_ratio"));
  const float f = float(call.attrs.getFloat("fixed"));
  std::vector<int64_t> idx;
  for (int64_t i = 0; i < r.numel(); ++i) {
    unravel(i, r.shape, idx);
    const float a = float(in[0].v[broadcastIndex(idx, in[0].shape)]), b = float(in[1].v[broadcastIndex(idx, in[1].shape)]);
    r.v[i] = std::fmaf(a, ra, std::fmaf(b, rb, f));
  }
  return r;
}

/// qnn.lookup(x, table): 8-bit integer x, table of 256 entries indexed by x - lowest(x's type)
/// (uint8: x, int8: x + 128) -> x's shape in the table's type.
Type lookupRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  const TensorTypeNode& t = argTensor(call, args, 1);
  if (!(x.dtype == DataType::UInt(8) || x.dtype == DataType::Int(8)))
    LOOM_TYPE_FAIL(call) << "data must be uint8 or int8, got " << typeStr(args[0]);
  if (t.ndim() != 1 || !t.shape[0].isStatic() || t.shape[0].value != 256)
    LOOM_TYPE_FAIL(call) << "table must have 256 entries, got " << typeStr(args[1]);
  return tensorType(x.shape, t.dtype);
}

HostTensor lookupKernel(const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  HostTensor r(in[0].shape, o.dtype);
  const double offset = in[0].dtype.isUInt() ? 0 : 128;
  for (int64_t i = 0; i < r.numel(); ++i) r.v[i] = in[1].v[int64_t(in[0].v[i] + offset)];
  return r;
}

/// qnn.global_sum_pool2d: integer data NCHW (rank 4) or NCHW{k}c (rank 5; ConvertLayout sets the
/// layout as for the float pools) -> int32 with H and W of extent 1.
Type globalSumPoolRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  requireIntDtype(call, x.dtype, "data");
  const std::string layout = call.attrs.getString("layout");
  const size_t rank = layout == "NCHW" ? 4 : 5;
  if (x.ndim() != rank || (rank == 5 && (layout.rfind("NCHW", 0) != 0 || layout.back() != 'c')))
    LOOM_TYPE_FAIL(call) << "data " << typeStr(args[0]) << " does not match layout " << layout;
  Shape out = x.shape;
  out[2] = Dim(1);
  out[3] = Dim(1);
  return tensorType(out, DataType::Int(32));
}

HostTensor globalSumPoolKernel(const CallNode&, const std::vector<HostTensor>& in, const TensorTypeNode& o) {
  const HostTensor& x = in[0];
  HostTensor r(o.staticShape(), o.dtype);
  const int64_t outer = x.shape[0] * x.shape[1], hw = x.shape[2] * x.shape[3];
  const int64_t inner = x.shape.size() == 5 ? x.shape[4] : 1;
  for (int64_t a = 0; a < outer; ++a)
    for (int64_t k = 0; k < inner; ++k) {
      double s = 0;
      for (int64_t i = 0; i < hw; ++i) s += x.v[(a * hw + i) * inner + k];
      r.v[a * inner + k] = s;
    }
  return r;
}

/// The integer ops' inputs as int32 tensors of `(v - zp)`, zp broadcast along `axis` of v (or
/// one value), for the float op's relation and host kernel.
runtime::NDArray centered(const HostTensor& v, const HostTensor& zp, int64_t axis) {
  HostTensor c(v.shape, DataType::Int(32));
  Channel ch(v.shape, axis, zp.numel());
  for (int64_t i = 0; i < c.numel(); ++i)
    c.v[i] = v.v[i] - zp.v[ch(i)];
  return toNDArray(c);
}

/// qnn.conv2d / dense / matmul: relation and kernel of `floatOp` over the centered int32 inputs.
TypeRelation integerRel(std::string floatOp, int weightAxis) {
  return [floatOp, weightAxis](const CallNode& call, const std::vector<Type>& args) -> Type {
    const TensorTypeNode& a = argTensor(call, args, 0);
    const TensorTypeNode& b = argTensor(call, args, 1);
    requireIntDtype(call, a.dtype, "data");
    requireIntDtype(call, b.dtype, "weight");
    if (a.dtype.bits() > 16 || b.dtype.bits() > 16)
      LOOM_TYPE_FAIL(call) << "operands must be 8- or 16-bit integers, got " << a.dtype.str() << " and "
                           << b.dtype.str();
    requireParam(call, args, 2, a, -1, "data zero point", false);
    int64_t wa = weightAxis < 0 ? int64_t(b.ndim()) + weightAxis : weightAxis;
    requireParam(call, args, 3, b, wa, "weight zero point", false);
    DataType i32 = DataType::Int(32);
    return getOp(floatOp).typeRel(call, {tensorType(a.shape, i32), tensorType(b.shape, i32)});
  };
}

HostKernel integerKernel(std::string floatOp, int weightAxis) {
  return [floatOp, weightAxis](const CallNode& call, const std::vector<runtime::NDArray>& in,
                               const Type& outType) {
    HostTensor a = fromNDArray(in[0]), b = fromNDArray(in[1]);
    int64_t wa = weightAxis < 0 ? int64_t(b.shape.size()) + weightAxis : weightAxis;
    return getOp(floatOp).hostKernel(call, {centered(a, fromNDArray(in[2]), 0), centered(b, fromNDArray(in[3]), wa)},
                                     outType);
  };
}

void defineIntegerOp(const std::string& name, const std::string& floatOp, int weightAxis, std::vector<AttrSpec> attrs,
                     std::string doc) {
  OpDef d;
  d.name = name;
  d.numInputs = 4;
  d.pattern = OpPattern::OutEWiseFusable;
  d.attrs = std::move(attrs);
  d.typeRel = integerRel(floatOp, weightAxis);
  d.hostKernel = integerKernel(floatOp, weightAxis);
  d.doc = std::move(doc);
  registerOp(std::move(d));
}

}  // namespace

std::pair<double, double> saturationRange(DataType t) {
  if (t.isUInt()) return {0.0, std::ldexp(1.0, t.bits()) - 1};
  return {-std::ldexp(1.0, t.bits() - 1), std::ldexp(1.0, t.bits() - 1) - 1};
}

void registerQnnPackedOps();  // QnnPacked.cpp
void registerOrtFloatOps();   // OrtFloat.cpp

void registerQnnOps() {
  registerQnnPackedOps();
  registerOrtFloatOps();
  defineOp("qnn.quantize", 3, OpPattern::ElemWise, {attrInt("axis", 1), attrDType("out_dtype")}, quantizeRel,
           quantizeKernel,
           "saturate(round_half_even(x / scale) + zero_point) in out_dtype; scale and zero point are "
           "scalars or vectors along axis (ONNX QuantizeLinear)");
  defineOp("qnn.dequantize", 3, OpPattern::ElemWise, {attrInt("axis", 1)}, dequantizeRel, dequantizeKernel,
           "(x - zero_point) * scale in the scale's float type (ONNX DequantizeLinear)");
  defineOp("qnn.requantize", 4, OpPattern::ElemWise, {attrInt("axis", 1), attrDType("out_dtype")}, requantizeRel,
           requantizeKernel,
           "saturate(round_half_even(float32(x) * (input_scale / output_scale)) + output_zero_point): an "
           "int32 accumulator to 8 bits, as ONNX Runtime's QLinearConv/QLinearMatMul requantize");
  defineOp("qnn.add", 8, OpPattern::ElemWise, {attrDType("out_dtype")}, addRel, addKernel,
           "saturate(round_half_even(a * a_scale / y_scale + b * b_scale / y_scale + y_zp - ...)) as ONNX "
           "Runtime's QLinearAdd computes it in float32 (two fused multiply-adds, see qnn.fma_add), a and b "
           "broadcast, the parameters scalars (a residual add of a QDQ model)");
  defineOp("qnn.fma_add", 2, OpPattern::Broadcast, {attrFloat("a_ratio"), attrFloat("b_ratio"), attrFloat("fixed")},
           fmaAddRel, fmaAddKernel,
           "fma(a, a_ratio, fma(b, b_ratio, fixed)) in float32, a and b broadcast: ONNX Runtime's QLinearAdd "
           "before its rounding (qnn.add's lowering)");
  defineOp("qnn.lookup", 2, OpPattern::Injective, {attrString("function", "")}, lookupRel, lookupKernel,
           "table[x - lowest(x)] for 8-bit x and a 256-entry table: a quantized unary op (ONNX Runtime's "
           "QLinearSigmoid / QLinearLeakyRelu) evaluated at compile time for every input value; `function` names "
           "it (shown to the user, not used); lowered to a gather (topi)");
  defineOp("qnn.global_sum_pool2d", 1, OpPattern::OutEWiseFusable, {attrString("layout", "NCHW")},
           globalSumPoolRel, globalSumPoolKernel,
           "int32 sum over H and W of integer NCHW (or NCHW{k}c) data: the accumulator of a quantized "
           "global average pool (ONNX Runtime's QLinearGlobalAveragePool)");
  auto convAttrs = std::vector<AttrSpec>{attrInts("strides", std::vector<int64_t>{1, 1}),
                                         attrInts("padding", std::vector<int64_t>{0, 0, 0, 0}),
                                         attrInts("dilation", std::vector<int64_t>{1, 1}),
                                         attrInt("groups", 1),
                                         attrString("data_layout", "NCHW"),
                                         attrString("kernel_layout", "OIHW")};
  defineIntegerOp("qnn.conv2d", "nn.conv2d", 0, convAttrs,
                  "int32 sum of (x - x_zero_point) * (w - w_zero_point) as nn.conv2d (NCHW/OIHW); the weight "
                  "zero point is a scalar or one per output channel; padding reads x_zero_point");
  defineIntegerOp("qnn.dense", "nn.dense", 0, {},
                  "int32 (x - x_zero_point) * (w - w_zero_point)^T: data (..., K), weight (N, K); weight zero "
                  "point scalar or one per output row");
  defineIntegerOp("qnn.matmul", "nn.matmul", -1, {},
                  "int32 numpy matmul of (a - a_zero_point) and (b - b_zero_point); b's zero point scalar or "
                  "one per column (ONNX MatMulInteger)");
}

}  // namespace loom::graph::qnn
