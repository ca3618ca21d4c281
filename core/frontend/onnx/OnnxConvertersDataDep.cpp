// ONNX ops whose output shape depends on the data: NonZero, TopK with K from data,
// NonMaxSuppression, Unique and Compress with a data condition. Each becomes a dyn.* call whose
// count is a fresh symbol (nonzero_0, topk_1, ...); the dynamic executor binds it when the call
// has run (docs/dynamic-shapes.md). Constant inputs keep the folded / static converters.
#include "core/frontend/onnx/OnnxContext.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Op.h"
#include "core/graph/Type.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;
using Outs = std::vector<Expr>;

bool isConstant(Context& c, int i) {
  try {
    c.constInput(i);
    return true;
  } catch (const ImportError&) {
    return false;
  }
}

std::string freshSymbol(Context& c, const std::string& op) { return op + "_" + std::to_string(c.dataSymbols++); }

Outs fields(const Expr& t, int n) {
  Outs r;
  for (int i = 0; i < n; ++i) r.push_back(graph::makeTupleGetItem(t, i));
  return r;
}

Outs nonZero(Context& c) {
  if (isConstant(c, 0)) return einsumConverters().at("NonZero")(c);
  Expr x = c.input(0);
  auto it = c.nonZeroOf.find(x.get());
  if (it != c.nonZeroOf.end()) return {it->second};
  Expr nz = c.call("dyn.nonzero", {x}, {{"symbol", freshSymbol(c, "nonzero")}});
  c.nonZeroOf[x.get()] = nz;
  return {nz};
}

Outs topK(Context& c) {
  if (c.opset() < 10) c.fail("TopK before opset 10 (K as an attribute) is not supported");
  Expr x = c.input(0);
  // A constant K on a static float tensor keeps the fused argmax rounds (K <= 64).
  if (isConstant(c, 1) && c.tensorType(x).isStatic() && c.tensorType(x).dtype.isFloat()) {
    std::vector<int64_t> k = c.constInts(1);
    if (k.size() == 1 && k[0] >= 1 && k[0] <= 64) return extraConverters().at("TopK")(c);
  }
  graph::Attrs a{{"axis", c.attrInt("axis", -1)},
                 {"largest", c.attrInt("largest", 1)},
                 {"sorted", c.attrInt("sorted", 1)},
                 {"symbol", freshSymbol(c, "topk")}};
  return fields(c.call("dyn.topk", {x, c.input(1)}, a), 2);
}

Outs nonMaxSuppression(Context& c) {
  auto scalar = [](double v, DataType t) {
    runtime::NDArray a = runtime::NDArray::empty({1}, graph::toDType(t));
    if (t.isFloat()) a.as<float>()[0] = float(v);
    else a.as<int64_t>()[0] = int64_t(v);
    return graph::makeConstant(a);
  };
  Expr maxOut = c.hasInput(2) ? c.input(2) : scalar(0, DataType::Int(64));
  Expr iou = c.hasInput(3) ? c.input(3) : scalar(0, DataType::Float(32));
  bool hasScore = c.hasInput(4);
  Expr score = hasScore ? c.input(4) : scalar(0, DataType::Float(32));
  graph::Attrs a{{"center_point_box", c.attrInt("center_point_box", 0)},
                 {"has_score_threshold", int64_t(hasScore)},
                 {"symbol", freshSymbol(c, "nms")}};
  return {c.call("dyn.nms", {c.input(0), c.input(1), maxOut, iou, score}, a)};
}

Outs unique(Context& c) {
  bool hasAxis = c.attr("axis") != nullptr;
  graph::Attrs a{{"axis", c.attrInt("axis", 0)},
                 {"has_axis", int64_t(hasAxis)},
                 {"sorted", c.attrInt("sorted", 1)},
                 {"symbol", freshSymbol(c, "unique")}};
  return fields(c.call("dyn.unique", {c.input(0)}, a), 4);
}

/// Compress with a condition from data: take(x, nonzero(condition)[0]) along the axis.
Outs compress(Context& c) {
  if (isConstant(c, 1)) return extraConverters().at("Compress")(c);
  Expr x = c.input(0);
  int64_t axis = 0;
  if (c.attr("axis") == nullptr) {
    std::vector<int64_t> s = c.staticShape(x);
    int64_t total = 1;
    for (int64_t d : s) total *= d;
    x = c.call("reshape", {x}, {{"newshape", std::vector<int64_t>{total}}});
  } else {
    axis = c.attrInt("axis", 0);
    int64_t rank = int64_t(c.tensorType(x).ndim());
    if (axis < -rank || axis >= rank) c.fail("axis out of range");
    if (axis < 0) axis += rank;
  }
  if (c.tensorType(c.input(1)).ndim() != 1) c.fail("the condition must be 1-D");
  Expr nz = c.call("dyn.nonzero", {c.input(1)}, {{"symbol", freshSymbol(c, "compress")}});
  Expr idx = c.call("take", {nz, graph::makeScalar(0, DataType::Int(64))}, {{"axis", int64_t(0)}});
  return {c.call("take", {x, idx}, {{"axis", axis}})};
}

}  // namespace

const std::unordered_map<std::string, Converter>& dataDependentConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"NonZero", nonZero},
      {"TopK", topK},
      {"NonMaxSuppression", nonMaxSuppression},
      {"Unique", unique},
      {"Compress", compress},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
