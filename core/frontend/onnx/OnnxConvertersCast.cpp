// Cast and CastLike as the opset in use defines them. A cast to bfloat16 truncates before
// opset 19 (the low 16 bits of the float32 dropped, what the node tests' data and the ONNX
// reference of those opsets do) and rounds to nearest even from opset 19 (Cast-19's table); the
// graph's `cast` rounds to nearest even, so the truncating cast first rounds the value toward zero
// to 8 significant bits with exact float32 arithmetic (scaling by powers of two and floor) and then
// casts, which is exact. The `saturate` attribute (19) only concerns float8 types, which the
// importer refuses as element types.
#include <cmath>
#include <limits>

#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

Expr f32(double v) { return graph::makeScalar(v, DataType::Float(32)); }

/// `x` (float32) rounded toward zero to a bfloat16 value, still float32. For finite non-zero x
/// with 2^e <= |x| < 2^(e+1), bfloat16 keeps 8 significant bits: the step is 2^(max(e, -126) - 7)
/// (bfloat16 has float32's exponent range, so its subnormals step by 2^-133), and |x| / step is
/// exact, so floor(|x| / step) * step is the truncation. e comes from a logarithm and is corrected by
/// one either way (log(|x|) / log(2) of a value just below a power of two may round up). Zeros, infinities
/// and NaNs pass through.
Expr truncateToBFloat16(Context& c, const Expr& x) {
  Expr ax = c.call("abs", {x});
  Expr e = c.call("floor", {c.call("divide", {c.call("log", {ax}), f32(std::log(2.0))})});
  Expr two = f32(2);
  Expr q = c.call("divide", {ax, c.call("power", {two, e})});
  e = c.call("subtract", {e, c.call("cast", {c.call("less", {q, f32(1)})}, {{"dtype", DataType::Float(32)}})});
  e = c.call("add", {e, c.call("cast", {c.call("greater_equal", {q, f32(2)})}, {{"dtype", DataType::Float(32)}})});
  e = c.call("maximum", {e, f32(-126)});
  Expr step = c.call("power", {two, c.call("subtract", {e, f32(7)})});
  Expr t = c.call("multiply", {c.call("floor", {c.call("divide", {ax, step})}), step});
  Expr signedT = c.call("where", {c.call("less", {x, f32(0)}), c.call("negative", {t}), t});
  // Finite and non-zero: 0 < |x| < inf (false for NaN).
  Expr regular = c.call("logical_and", {c.call("greater", {ax, f32(0)}),
                                        c.call("less", {ax, f32(std::numeric_limits<double>::infinity())})});
  return c.call("where", {regular, signedT, x});
}

Expr castTo(Context& c, const Expr& x, DataType to) {
  DataType from = c.tensorType(x).dtype;
  if (to.isBFloat16() && from.isFloat() && !from.isBFloat16() && c.opset() < 19) {
    Expr v = from == DataType::Float(32) ? x : c.call("cast", {x}, {{"dtype", DataType::Float(32)}});
    return c.call("cast", {truncateToBFloat16(c, v)}, {{"dtype", to}});
  }
  return c.call("cast", {x}, {{"dtype", to}});
}

Outs cast(Context& c) {
  bool ok = false;
  DataType t = dtypeFromOnnx(int(c.attrInt("to", 1)), &ok);
  if (!ok) c.fail("cast to unsupported element type " + std::to_string(c.attrInt("to", 1)));
  return {castTo(c, c.input(0), t)};
}

Outs castLike(Context& c) { return {castTo(c, c.input(0), c.tensorType(c.input(1)).dtype)}; }

}  // namespace

const std::unordered_map<std::string, Converter>& castConverters() {
  static const std::unordered_map<std::string, Converter> table = {
      {"Cast", cast},
      {"CastLike", castLike},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
