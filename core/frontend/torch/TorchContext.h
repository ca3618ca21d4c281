// Internals of the TorchScript converter: the values it tracks and the per-node context.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/frontend/torch/TorchImporter.h"

namespace loom::frontend::tsi {

/// A TorchScript value during conversion. Tensors are graph expressions; every scalar, list,
/// tuple, string and device is known at import time (shapes are static), so size() arithmetic,
/// if-conditions and loop counts evaluate here.
struct TV {
  enum class Kind { Undef, None, Int, Double, Bool, String, Device, Tensor, List, Tuple };
  Kind kind = Kind::Undef;
  int64_t i = 0;
  double d = 0;
  std::string s;
  graph::Expr e;
  /// List and tuple items; shared, since TorchScript lists are mutable references (aten::append).
  std::shared_ptr<std::vector<TV>> items;

  static TV none() { return make(Kind::None); }
  static TV integer(int64_t v) { TV t = make(Kind::Int); t.i = v; return t; }
  static TV real(double v) { TV t = make(Kind::Double); t.d = v; return t; }
  static TV boolean(bool v) { TV t = make(Kind::Bool); t.i = v; return t; }
  static TV string(std::string v) { TV t = make(Kind::String); t.s = std::move(v); return t; }
  static TV tensor(graph::Expr x) { TV t = make(Kind::Tensor); t.e = std::move(x); return t; }
  static TV list(std::vector<TV> v, Kind k = Kind::List) {
    TV t = make(k);
    t.items = std::make_shared<std::vector<TV>>(std::move(v));
    return t;
  }
  static TV make(Kind k) { TV t; t.kind = k; return t; }

  bool isNumber() const { return kind == Kind::Int || kind == Kind::Double || kind == Kind::Bool; }
  double number() const { return kind == Kind::Double ? d : double(i); }
};

class Context;
using Outs = std::vector<TV>;
using Converter = std::function<Outs(Context&)>;

/// Converts one graph: value bindings, the node being converted and typed accessors for its inputs.
class Context {
public:
  Context(const ts::Graph& g, std::string file) : m_g(g), m_file(std::move(file)) {}

  const ts::Graph& graph() const { return m_g; }
  const std::string& file() const { return m_file; }
  const ts::Node* node = nullptr;

  /// Throws ImportError "file: node %v (aten::x) in scope 's' at f.py:12 `text`: message".
  [[noreturn]] void fail(const std::string& message) const;
  /// "aten::x at f.py:12 `text`" for the node, for listings.
  static std::string where(const ts::Node& n);

  void bind(int value, TV v) { m_values[value] = std::move(v); }
  const TV& value(int index) const;

  int numInputs() const { return int(node->inputs.size()); }
  const TV& in(int i) const;
  bool isNone(int i) const { return i >= numInputs() || in(i).kind == TV::Kind::None; }
  /// Input i as a tensor (a number becomes a 0-d constant of its torch dtype).
  graph::Expr tensor(int i) const;
  int64_t integer(int i) const;
  double real(int i) const;
  bool boolean(int i) const;
  std::string string(int i) const;
  /// An int list (a single int is a list of one, TorchScript's int[2] broadcast).
  std::vector<int64_t> ints(int i) const;
  std::vector<TV> list(int i) const;
  /// ScalarType code (None: `def`).
  DataType dtypeArg(int i, DataType def) const;

  const graph::TensorTypeNode& tensorType(const graph::Expr& e) const;
  std::vector<int64_t> shapeOf(const graph::Expr& e) const;
  DataType dtypeOf(const graph::Expr& e) const { return tensorType(e).dtype; }

  /// A typed call of `op`, named after the node's module scope (or its output value).
  graph::Expr call(const std::string& op, std::vector<graph::Expr> args, graph::Attrs attrs = {}) const;
  /// A 0-d constant of `dtype`.
  graph::Expr scalar(double v, DataType dtype) const { return graph::makeScalar(v, dtype); }
  graph::Expr cast(const graph::Expr& e, DataType t) const;
  graph::Expr reshape(const graph::Expr& e, const std::vector<int64_t>& shape) const;

private:
  const ts::Graph& m_g;
  std::string m_file;
  std::unordered_map<int, TV> m_values;
};

/// DataType of a TorchScript ScalarType code (torch.float32 is 6, ...); ok=false when unknown.
DataType dtypeFromScalarType(int64_t code, bool* ok);
/// The node kinds converted by the aten table (TorchOps.cpp).
const std::unordered_map<std::string, Converter>& atenConverters();
/// Normalizes a possibly negative dim against `rank` (fails through ctx when out of range).
int64_t normDim(const Context& c, int64_t dim, int64_t rank);
/// normDim for ops that index the shape at the dim (size(d), select, split, chunk, unbind,
/// unflatten): a 0-d tensor has no dim to index, as torch says, where normDim lets 0 and -1
/// through for reductions.
int64_t normShapeDim(const Context& c, int64_t dim, int64_t rank);

} // namespace loom::frontend::tsi
