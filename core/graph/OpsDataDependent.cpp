// dyn.nonzero, dyn.topk, dyn.nms and dyn.unique: ops whose output shape depends on the data.
// The type relation gives the data-dependent dim as the call's fresh symbol; the host kernel is
// the runtime's (runtime/DataDependentOps), so the evaluator and the executor run one code.
#include <algorithm>

#include "core/graph/DataDependent.h"
#include "core/graph/OpsInternal.h"
#include "core/graph/SymDim.h"
#include "runtime/RuntimeFailure.h"

namespace loom::graph {

namespace {

Dim symbolDim(const CallNode& call) {
  const std::string& s = call.attrs.getString("symbol");
  if (s.empty() || symbolName(s) != s)
    LOOM_TYPE_FAIL(call) << "the data-dependent symbol must be an identifier, got '" << s << "'";
  return Dim::symbol(s);
}

void checkOneInt(const CallNode& call, const std::vector<Type>& args, size_t i, const char* what) {
  const TensorTypeNode& t = argTensor(call, args, i);
  if (!t.dtype.isIntegral() || !t.isStatic() || t.numel() != 1)
    LOOM_TYPE_FAIL(call) << what << " must be one integer, got " << typeStr(args[i]);
}

Type nonzeroRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  return tensorType(Shape{Dim(int64_t(std::max<size_t>(x.ndim(), 1))), symbolDim(call)}, DataType::Int(64));
}

Type topkRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  checkOneInt(call, args, 1, "K");
  if (x.ndim() == 0) LOOM_TYPE_FAIL(call) << "needs an input of rank >= 1, got " << typeStr(args[0]);
  int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(x.ndim()));
  Shape s = x.shape;
  s[size_t(axis)] = symbolDim(call);
  return tupleType({tensorType(s, x.dtype), tensorType(s, DataType::Int(64))});
}

Type nmsRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& b = argTensor(call, args, 0);
  const TensorTypeNode& s = argTensor(call, args, 1);
  if (b.ndim() != 3 || !(b.shape[2] == Dim(4)) || s.ndim() != 3 || !b.dtype.isFloat() || !s.dtype.isFloat())
    LOOM_TYPE_FAIL(call) << "boxes must be float[batches, boxes, 4] and scores float[batches, classes, boxes], got "
                         << typeStr(args[0]) << " and " << typeStr(args[1]);
  if (!dimsProvablyEqual(b.shape[0], s.shape[0]) || !dimsProvablyEqual(b.shape[1], s.shape[2]))
    LOOM_TYPE_FAIL(call) << "boxes " << typeStr(args[0]) << " and scores " << typeStr(args[1])
                         << " disagree on batches or boxes";
  checkOneInt(call, args, 2, "max_output_boxes_per_class");
  for (size_t i : {size_t(3), size_t(4)}) {
    const TensorTypeNode& t = argTensor(call, args, i);
    if (!t.dtype.isFloat() || !t.isStatic() || t.numel() != 1)
      LOOM_TYPE_FAIL(call) << (i == 3 ? "iou_threshold" : "score_threshold") << " must be one float, got "
                           << typeStr(args[i]);
  }
  int64_t cpb = call.attrs.getInt("center_point_box");
  if (cpb != 0 && cpb != 1) LOOM_TYPE_FAIL(call) << "center_point_box must be 0 or 1, got " << cpb;
  return tensorType(Shape{symbolDim(call), Dim(3)}, DataType::Int(64));
}

Type uniqueRel(const CallNode& call, const std::vector<Type>& args) {
  const TensorTypeNode& x = argTensor(call, args, 0);
  Dim u = symbolDim(call);
  Shape y{u}, inv{dimProduct(x.shape)};
  if (call.attrs.getInt("has_axis")) {
    int64_t axis = normAxis(call, call.attrs.getInt("axis"), int64_t(x.ndim()));
    y = x.shape;
    y[size_t(axis)] = u;
    inv = {x.shape[size_t(axis)]};
  }
  Type i64 = tensorType(Shape{u}, DataType::Int(64));
  return tupleType({tensorType(y, x.dtype), i64, tensorType(inv, DataType::Int(64)), i64});
}

HostKernel hostKernel() {
  return [](const CallNode& call, const std::vector<runtime::NDArray>& in, const Type&) {
    try {
      return runtime::datadep::run(dataDependentRuntimeOp(call), dataDependentAttrs(call), in);
    } catch (const runtime::RuntimeFailure& e) {
      LOOM_THROW(ValueError) << callDescription(call) << ": " << e.what();
    }
  };
}

void define(const std::string& name, int numInputs, std::vector<AttrSpec> attrs, TypeRelation rel, std::string doc) {
  OpDef d;
  d.name = name;
  d.numInputs = numInputs;
  d.pattern = OpPattern::Opaque;  // never fused: the executor runs the call on its own
  attrs.push_back(attrString("symbol"));
  d.attrs = std::move(attrs);
  d.typeRel = std::move(rel);
  d.hostKernel = hostKernel();
  d.doc = std::move(doc);
  registerOp(std::move(d));
}

}  // namespace

void registerDataDependentOps() {
  define("dyn.nonzero", 1, {}, nonzeroRel,
         "int64[rank, n]: the indices of the n nonzero elements (ONNX NonZero); n is the call's symbol");
  define("dyn.topk", 2, {attrInt("axis", -1), attrInt("largest", 1), attrInt("sorted", 1)}, topkRel,
         "values and int64 indices of the k largest (smallest) elements along axis, k from data (ONNX TopK)");
  define("dyn.nms", 5, {attrInt("center_point_box", 0), attrInt("has_score_threshold", 0)}, nmsRel,
         "int64[n, 3] (batch, class, box) selected by greedy non-max suppression (ONNX NonMaxSuppression); "
         "inputs boxes, scores, max_output_boxes_per_class, iou_threshold, score_threshold");
  define("dyn.unique", 1, {attrInt("axis", 0), attrInt("has_axis", 0), attrInt("sorted", 1)}, uniqueRel,
         "the unique elements (slices along axis) with int64 first indices, inverse indices and counts (ONNX Unique)");
}

bool isDataDependentOp(const std::string& opName) {
  return opName == "dyn.nonzero" || opName == "dyn.topk" || opName == "dyn.nms" || opName == "dyn.unique";
}

std::optional<std::string> dataDependentSymbol(const CallNode& call) {
  if (!call.op || !isDataDependentOp(call.op->name)) return std::nullopt;
  return call.attrs.getString("symbol");
}

std::string dataDependentRuntimeOp(const CallNode& call) { return call.op->name.substr(4); }

runtime::datadep::Attrs dataDependentAttrs(const CallNode& call) {
  runtime::datadep::Attrs a;
  const std::string& op = call.op->name;
  if (op == "dyn.topk") {
    a.axis = call.attrs.getInt("axis");
    a.largest = call.attrs.getInt("largest") != 0;
    a.sorted = call.attrs.getInt("sorted") != 0;
  } else if (op == "dyn.nms") {
    a.centerPointBox = call.attrs.getInt("center_point_box");
    a.hasScoreThreshold = call.attrs.getInt("has_score_threshold") != 0;
  } else if (op == "dyn.unique") {
    a.axis = call.attrs.getInt("axis");
    a.hasAxis = call.attrs.getInt("has_axis") != 0;
    a.sorted = call.attrs.getInt("sorted") != 0;
  }
  return a;
}

Dim dataDependentBound(const CallNode& call) {
  auto shapeOf = [&](size_t i) { return call.args.at(i).type().as<TensorTypeNode>()->shape; };
  const std::string& op = call.op->name;
  if (op == "dyn.nonzero") return dimProduct(shapeOf(0));
  if (op == "dyn.topk") {
    Shape s = shapeOf(0);
    int64_t axis = call.attrs.getInt("axis");
    return s.at(size_t(axis < 0 ? axis + int64_t(s.size()) : axis));
  }
  if (op == "dyn.nms") {
    Shape b = shapeOf(0), s = shapeOf(1);
    Dim perClass = b[1];
    // A constant max_output_boxes_per_class below the box count bounds each class's selection.
    if (auto* c = call.args[2].as<ConstantNode>(); c && perClass.isStatic() && c->data.numel() == 1) {
      int64_t m = c->data.dtype().bits == 32 ? *c->data.as<int32_t>() : *c->data.as<int64_t>();
      perClass = Dim(std::clamp<int64_t>(m, 0, perClass.value));
    }
    return dimMul(dimMul(b[0], s[1]), perClass);
  }
  Shape s = shapeOf(0);
  if (!call.attrs.getInt("has_axis")) return dimProduct(s);
  int64_t axis = call.attrs.getInt("axis");
  return s.at(size_t(axis < 0 ? axis + int64_t(s.size()) : axis));
}

}  // namespace loom::graph
