// ONNX quantized ops as qnn.* graph ops: QuantizeLinear/DequantizeLinear, ConvInteger,
// MatMulInteger, QLinearConv/QLinearMatMul, and ONNX Runtime's com.microsoft QOperator ops
// (QLinearAdd/Mul/Concat/Sigmoid/LeakyRelu/AveragePool/GlobalAveragePool, QGemm). A QLinear op
// becomes quantize(op(dequantize(...))), the same form a QDQ model has, so one pass
// (fake-quantization-to-integer) turns both formats into integer kernels.
#include "core/frontend/onnx/OnnxContext.h"

#include <onnx/onnx_pb.h>

#include "core/graph/Op.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

/// Input `i`, or a zero scalar of `t` when the optional input is absent.
Expr zeroPointOr(Context& c, int i, DataType t) {
  return c.hasInput(i) ? c.input(i) : Expr(graph::makeScalar(0, t));
}

/// The axis of a per-axis scale (checked by the qnn op's type relation when the scale is a vector).
int64_t quantAxis(Context& c, const Expr&) { return c.attrInt("axis", 1); }

void refuseBlocks(Context& c) {
  if (c.attrInt("block_size", 0) != 0) c.fail("blocked quantization (block_size) is not supported");
}

Expr dequantize(Context& c, Expr x, Expr scale, Expr zp, int64_t axis = 1) {
  return c.call("qnn.dequantize", {std::move(x), std::move(scale), std::move(zp)}, {{"axis", axis}});
}

Expr quantize(Context& c, Expr x, Expr scale, Expr zp, int64_t axis = 1) {
  DataType t = c.tensorType(zp).dtype;
  return c.call("qnn.quantize", {std::move(x), std::move(scale), std::move(zp)}, {{"axis", axis}, {"out_dtype", t}});
}

Outs quantizeLinear(Context& c) {
  refuseBlocks(c);
  Expr x = c.input(0);
  DataType t = DataType::UInt(8);
  if (c.hasInput(2)) {
    t = c.tensorType(c.input(2)).dtype;
  } else if (int64_t code = c.attrInt("output_dtype", 0); code != 0) {
    bool ok = false;
    t = dtypeFromOnnx(int(code), &ok);
    if (!ok) c.fail("unsupported output_dtype " + std::to_string(code));
  }
  if (!(t.isInt() || t.isUInt()) || t.bits() > 32) c.fail("quantization to " + t.str() + " is not supported");
  return {quantize(c, x, c.input(1), zeroPointOr(c, 2, t), quantAxis(c, x))};
}

Outs dequantizeLinear(Context& c) {
  refuseBlocks(c);
  Expr x = c.input(0);
  DataType t = c.tensorType(x).dtype;
  if (!(t.isInt() || t.isUInt()) || t.bits() > 32) c.fail("dequantization of " + t.str() + " is not supported");
  return {dequantize(c, x, c.input(1), zeroPointOr(c, 2, t), quantAxis(c, x))};
}

/// The float converter of `opType` applied to `ins`, with the current node's attributes.
Expr viaFloat(Context& c, const std::string& opType, const std::vector<Expr>& ins) {
  onnx::NodeProto n = *c.node;
  n.set_op_type(opType);
  n.clear_domain();
  n.clear_input();
  std::vector<std::string> names;
  for (size_t i = 0; i < ins.size(); ++i) {
    names.push_back("__loom_qnn_" + std::to_string(i) + "_" + c.node->name() + "_" + c.node->output(0));
    n.add_input(names.back());
    c.values()[names.back()] = ins[i];
  }
  const onnx::NodeProto* saved = c.node;
  c.node = &n;
  auto restore = [&] {
    c.node = saved;
    for (const std::string& s : names)
      c.values().erase(s);
  };
  Outs r;
  try {
    r = converters().at(opType)(c);
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return r.at(0);
}

/// x_scale * w_scale (a float32 constant when both are constants, as ONNX Runtime computes it).
Expr scaleProduct(Context& c, const Expr& a, const Expr& b) {
  auto* ca = a.as<graph::ConstantNode>();
  auto* cb = b.as<graph::ConstantNode>();
  if (ca && cb && ca->data.numel() == 1 && c.tensorType(a).dtype == DataType::Float(32) &&
      c.tensorType(b).dtype == DataType::Float(32)) {
    int64_t n = cb->data.numel();
    runtime::NDArray r = runtime::NDArray::empty(n == 1 ? std::vector<int64_t>{} : std::vector<int64_t>{n},
                                                 runtime::DType{runtime::DType::Float, 32, 1});
    for (int64_t i = 0; i < n; ++i)
      r.as<float>()[i] = ca->data.as<float>()[0] * cb->data.as<float>()[i];
    return graph::makeConstant(r);
  }
  return c.call("multiply", {a, b});
}

/// QLinearConv: x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, [B int32 at x_scale*w_scale].
Outs qlinearConv(Context& c) {
  std::vector<Expr> ins{dequantize(c, c.input(0), c.input(1), c.input(2)),
                        dequantize(c, c.input(3), c.input(4), c.input(5), 0)};
  if (c.hasInput(8))
    ins.push_back(dequantize(c, c.input(8), scaleProduct(c, c.input(1), c.input(4)),
                             graph::makeScalar(0, DataType::Int(32)), 0));
  return {quantize(c, viaFloat(c, "Conv", ins), c.input(6), c.input(7))};
}

/// QLinearMatMul: a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp (b's per-column scale).
Outs qlinearMatmul(Context& c) {
  Expr a = dequantize(c, c.input(0), c.input(1), c.input(2));
  Expr b = dequantize(c, c.input(3), c.input(4), c.input(5), -1);
  return {quantize(c, viaFloat(c, "MatMul", {a, b}), c.input(6), c.input(7))};
}

/// ConvInteger: x, w, [x_zp], [w_zp] -> int32 (2-D convolutions).
Outs convInteger(Context& c) {
  Expr x = c.input(0), w = c.input(1);
  if (c.staticShape(x).size() != 4) c.fail("only 2-D ConvInteger is supported");
  DataType f = DataType::Float(32);
  Expr y = viaFloat(c, "Conv", {c.call("cast", {x}, {{"dtype", f}}), c.call("cast", {w}, {{"dtype", f}})});
  auto* conv = y.as<graph::CallNode>();
  if (!conv || !conv->op || conv->op->name != "nn.conv2d") c.fail("unexpected convolution form");
  return {c.call("qnn.conv2d",
                 {x, w, zeroPointOr(c, 2, c.tensorType(x).dtype), zeroPointOr(c, 3, c.tensorType(w).dtype)},
                 conv->attrs)};
}

/// MatMulInteger: a, b, [a_zp], [b_zp] -> int32; a 2-D weight b is a dense layer.
Outs matmulInteger(Context& c) {
  Expr a = c.input(0), b = c.input(1);
  Expr az = zeroPointOr(c, 2, c.tensorType(a).dtype), bz = zeroPointOr(c, 3, c.tensorType(b).dtype);
  if (c.staticShape(az).size() > 0 && c.staticShape(az)[0] != 1)
    c.fail("a per-row a_zero_point is not supported");
  if (c.staticShape(b).size() == 2 && c.staticShape(a).size() >= 2)
    return {c.call("qnn.dense", {a, c.call("transpose", {b}, {{"axes", std::vector<int64_t>{1, 0}}}), az, bz})};
  return {c.call("qnn.matmul", {a, b, az, bz})};
}

/// A com.microsoft QLinear op with inputs (x, x_scale, x_zp) and outputs at (y_scale, y_zp):
/// quantize(op(dequantize(x))).
Converter unaryQLinear(const char* opType, int yScaleInput) {
  return [opType, yScaleInput](Context& c) {
    Expr x = dequantize(c, c.input(0), c.input(1), zeroPointOr(c, 2, c.tensorType(c.input(0)).dtype));
    Expr y = viaFloat(c, opType, {x});
    return Outs{quantize(c, y, c.input(yScaleInput), zeroPointOr(c, yScaleInput + 1, c.tensorType(c.input(0)).dtype))};
  };
}

/// QLinearAdd / QLinearMul: a, a_scale, a_zp, b, b_scale, b_zp, c_scale, c_zp.
Converter binaryQLinear(const char* opType) {
  return [opType](Context& c) {
    DataType t = c.tensorType(c.input(0)).dtype;
    Expr a = dequantize(c, c.input(0), c.input(1), zeroPointOr(c, 2, t));
    Expr b = dequantize(c, c.input(3), c.input(4), zeroPointOr(c, 5, c.tensorType(c.input(3)).dtype));
    return Outs{quantize(c, viaFloat(c, opType, {a, b}), c.input(6), zeroPointOr(c, 7, t))};
  };
}

/// QLinearConcat: y_scale, y_zp, then (x, x_scale, x_zp) per input.
Outs qlinearConcat(Context& c) {
  if (c.numInputs() < 5 || (c.numInputs() - 2) % 3 != 0) c.fail("expects y_scale, y_zero_point and triples of inputs");
  std::vector<Expr> xs;
  for (int i = 2; i < c.numInputs(); i += 3)
    xs.push_back(dequantize(c, c.input(i), c.input(i + 1), c.input(i + 2)));
  return {quantize(c, viaFloat(c, "Concat", xs), c.input(0), c.input(1))};
}

/// A QLinear pool with channels_last = 1 (NHWC data): the 8-bit input transposed to NCHW, the
/// NCHW pool's quantize(pool(dequantize(x))), the 8-bit result transposed back to NHWC. The
/// transposes move integers, so fake-quantization-to-integer still finds the integer pool.
Outs channelsLastQLinearPool(Context& c, const char* opType) {
  Expr xq = c.input(0);
  if (c.staticShape(xq).size() != 4) c.fail("channels_last is supported for 4-D (NHWC) data only");
  DataType t = c.tensorType(xq).dtype;
  Expr nchw = c.call("transpose", {xq}, {{"axes", std::vector<int64_t>{0, 3, 1, 2}}});
  Expr x = dequantize(c, nchw, c.input(1), zeroPointOr(c, 2, t));
  Expr y = quantize(c, viaFloat(c, opType, {x}), c.input(3), zeroPointOr(c, 4, t));
  return {c.call("transpose", {y}, {{"axes", std::vector<int64_t>{0, 2, 3, 1}}})};
}

Outs qlinearGlobalAveragePool(Context& c) {
  if (c.attrInt("channels_last", 0) != 0) return channelsLastQLinearPool(c, "GlobalAveragePool");
  return unaryQLinear("GlobalAveragePool", 3)(c);
}

Outs qlinearAveragePool(Context& c) {
  if (c.attrInt("channels_last", 0) != 0) return channelsLastQLinearPool(c, "AveragePool");
  return unaryQLinear("AveragePool", 3)(c);
}

/// QGemm: A, a_scale, a_zp, B, b_scale, b_zp, [C int32 at a_scale*b_scale], [y_scale, y_zp];
/// float output without y_scale.
Outs qgemm(Context& c) {
  if (c.attrInt("transA", 0) != 0) c.fail("transA is not supported");
  int64_t bAxis = c.attrInt("transB", 0) ? 0 : 1;
  std::vector<Expr> ins{dequantize(c, c.input(0), c.input(1), c.input(2)),
                        dequantize(c, c.input(3), c.input(4), c.input(5), bAxis)};
  if (c.hasInput(6))
    ins.push_back(dequantize(c, c.input(6), scaleProduct(c, c.input(1), c.input(4)),
                             graph::makeScalar(0, DataType::Int(32)), 0));
  Expr y = viaFloat(c, "Gemm", ins);
  if (!c.hasInput(7)) return {y};
  return {quantize(c, y, c.input(7), zeroPointOr(c, 8, c.tensorType(c.input(0)).dtype))};
}

}  // namespace

const std::unordered_map<std::string, Converter>& quantConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"QuantizeLinear", quantizeLinear},
      {"DequantizeLinear", dequantizeLinear},
      {"QLinearConv", qlinearConv},
      {"QLinearMatMul", qlinearMatmul},
      {"ConvInteger", convInteger},
      {"MatMulInteger", matmulInteger},
      {"com.microsoft.QuantizeLinear", quantizeLinear},
      {"com.microsoft.DequantizeLinear", dequantizeLinear},
      {"com.microsoft.QLinearConv", qlinearConv},
      {"com.microsoft.QLinearAdd", binaryQLinear("Add")},
      {"com.microsoft.QLinearMul", binaryQLinear("Mul")},
      {"com.microsoft.QLinearConcat", qlinearConcat},
      {"com.microsoft.QLinearSigmoid", unaryQLinear("Sigmoid", 3)},
      {"com.microsoft.QLinearLeakyRelu", unaryQLinear("LeakyRelu", 3)},
      {"com.microsoft.QLinearGlobalAveragePool", qlinearGlobalAveragePool},
      {"com.microsoft.QLinearAveragePool", qlinearAveragePool},
      {"com.microsoft.QGemm", qgemm},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
