// Graph IR types: tensor types (a shape of static or symbolic dims and an element type) and tuples.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/ir/DataType.h"
#include "core/ir/Object.h"

namespace loom::graph {

/// One dimension of a shape: a static extent, a named symbol ("batch"), or unknown ("?").
struct Dim {
  int64_t value = -1; ///< the extent when static, else -1
  std::string name;   ///< the symbol when symbolic (value == -1)

  Dim() = default;
  Dim(int64_t v) : value(v) {}
  static Dim symbol(std::string n) {
    Dim d;
    d.name = std::move(n);
    return d;
  }
  static Dim any() { return Dim(); }
  bool isStatic() const { return value >= 0; }
  bool operator==(const Dim& o) const { return value == o.value && name == o.name; }
  /// "224", "batch" or "?".
  std::string str() const;
};
using Shape = std::vector<Dim>;

enum class TypeKind : uint8_t { Tensor, Tuple };

struct TypeNode : public Object {
  explicit TypeNode(TypeKind k) : kind(k) {}
  const TypeKind kind;
};

struct TensorTypeNode : TypeNode {
  static constexpr TypeKind kNodeKind = TypeKind::Tensor;
  TensorTypeNode(Shape s, DataType t) : TypeNode(TypeKind::Tensor), shape(std::move(s)), dtype(t) {}
  Shape shape;
  DataType dtype;
  size_t ndim() const { return shape.size(); }
  bool isStatic() const;
  /// The static extents; only valid when isStatic().
  std::vector<int64_t> staticShape() const;
  /// Product of the extents (only when static).
  int64_t numel() const;
};

struct TupleTypeNode : TypeNode {
  static constexpr TypeKind kNodeKind = TypeKind::Tuple;
  explicit TupleTypeNode(std::vector<Ref<TypeNode>> f)
      : TypeNode(TypeKind::Tuple), fields(std::move(f)) {}
  std::vector<Ref<TypeNode>> fields;
};

class Type : public Ref<TypeNode> {
public:
  using Ref<TypeNode>::Ref;
  Type() = default;
  Type(const Ref<TypeNode>& r) : Ref<TypeNode>(r) {}
  template <class U> const U* as() const {
    return get() && get()->kind == U::kNodeKind ? static_cast<const U*>(get()) : nullptr;
  }
};
using TensorType = Ref<TensorTypeNode>;

TensorType tensorType(Shape shape, DataType dtype);
TensorType tensorType(const std::vector<int64_t>& shape, DataType dtype);
Type tupleType(std::vector<Type> fields);

/// Structural equality of types (same dims, same dtypes).
bool typeEqual(const Type& a, const Type& b);
/// Relay spelling: "Tensor[(1, 3, 224, 224), float32]", "(Tensor[...], Tensor[...])".
std::string typeStr(const Type& t);
/// "(1, 3, 224, 224)".
std::string shapeStr(const Shape& s);

} // namespace loom::graph
