// qnn-canonicalize: qnn ops as integer and float32 core ops (TVM's QNN canonicalization).
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
      r = makeCall("multiply", {x, alongAxis(a[1], axis, rank)});
    } else if (op == "qnn.requantize") {
      int64_t axis = normAxis(c->attrs.getInt("axis"), rank);
      DataType f = DataType::Float(32);
      Expr m = makeCall("divide", {alongAxis(cast(a[1], f), axis, rank), alongAxis(cast(a[2], f), axis, rank)});
      r = roundAddSaturate(makeCall("multiply", {cast(a[0], f), m}), a[3], axis, rank, c->attrs.getDType("out_dtype"));
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
