// Graph IR types: construction, equality and the Relay-style spelling.
#include "core/graph/Type.h"

#include "core/support/Error.h"

namespace loom::graph {

std::string Dim::str() const {
  if (isStatic()) return std::to_string(value);
  return name.empty() ? "?" : name;
}

bool TensorTypeNode::isStatic() const {
  for (const Dim& d : shape)
    if (!d.isStatic()) return false;
  return true;
}

std::vector<int64_t> TensorTypeNode::staticShape() const {
  std::vector<int64_t> out;
  for (const Dim& d : shape) {
    LOOM_ICHECK(d.isStatic()) << "staticShape() of a symbolic shape " << shapeStr(shape);
    out.push_back(d.value);
  }
  return out;
}

int64_t TensorTypeNode::numel() const {
  int64_t n = 1;
  for (int64_t v : staticShape())
    n *= v;
  return n;
}

TensorType tensorType(Shape shape, DataType dtype) {
  return TensorType(new TensorTypeNode(std::move(shape), dtype));
}

TensorType tensorType(const std::vector<int64_t>& shape, DataType dtype) {
  return tensorType(Shape(shape.begin(), shape.end()), dtype);
}

Type tupleType(std::vector<Type> fields) {
  return Type(new TupleTypeNode(std::vector<Ref<TypeNode>>(fields.begin(), fields.end())));
}

bool typeEqual(const Type& a, const Type& b) {
  if (a.same_as(b)) return true;
  if (!a.defined() || !b.defined() || a->kind != b->kind) return false;
  if (auto* ta = a.as<TensorTypeNode>()) {
    auto* tb = b.as<TensorTypeNode>();
    return ta->dtype == tb->dtype && ta->shape == tb->shape;
  }
  auto* ta = a.as<TupleTypeNode>();
  auto* tb = b.as<TupleTypeNode>();
  if (ta->fields.size() != tb->fields.size()) return false;
  for (size_t i = 0; i < ta->fields.size(); ++i)
    if (!typeEqual(ta->fields[i], tb->fields[i])) return false;
  return true;
}

std::string shapeStr(const Shape& s) {
  std::string out = "(";
  for (size_t i = 0; i < s.size(); ++i)
    out += (i ? ", " : "") + s[i].str();
  if (s.size() == 1) out += ",";
  return out + ")";
}

std::string typeStr(const Type& t) {
  if (!t.defined()) return "?";
  if (auto* tt = t.as<TensorTypeNode>())
    return "Tensor[" + shapeStr(tt->shape) + ", " + tt->dtype.str() + "]";
  auto* tu = t.as<TupleTypeNode>();
  std::string out = "(";
  for (size_t i = 0; i < tu->fields.size(); ++i)
    out += (i ? ", " : "") + typeStr(tu->fields[i]);
  if (tu->fields.size() == 1) out += ",";
  return out + ")";
}

} // namespace loom::graph
