// Tensor expressions: tensors, the operations that produce them, placeholder() and compute().
#pragma once
#include <functional>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "core/te/Reduce.h"
#include "core/tir/Buffer.h"
#include "core/tir/Stmt.h"

namespace loom::te {

struct OperationNode;
using Operation = Ref<OperationNode>;

/// A tensor: a shape, an element type, a name, and the operation that produces it. Each tensor
/// owns the tir::Buffer that stands for it (same name, shape and dtype); element access `A(i, j)`
/// is a `BufferLoad` of that buffer, and `createPrimFunc` uses the buffer as is.
struct TensorNode : public Object {
  std::string name;
  std::vector<Expr> shape;
  DataType dtype;
  Operation op;
  tir::Buffer buffer;
  ~TensorNode() override;
  size_t ndim() const { return shape.size(); }
};

class Tensor : public Ref<TensorNode> {
public:
  using Ref<TensorNode>::Ref;
  Tensor() = default;
  Tensor(const Ref<TensorNode>& r) : Ref<TensorNode>(r) {}

  /// The element at `indices` (as many as the tensor has dimensions).
  Expr operator()(std::vector<Expr> indices) const;
  template <class... Args> Expr operator()(Args&&... args) const {
    return (*this)(std::vector<Expr>{Expr(std::forward<Args>(args))...});
  }
};

/// The tensor whose buffer is `b`, if `b` belongs to a live te::Tensor (else undefined).
Tensor tensorOfBuffer(const tir::Buffer& b);

/// What a compute evaluates at each point: a plain expression or a reduction (see Reduce.h).
class ComputeBody {
public:
  ComputeBody(Expr e) : m_value(std::move(e)) {}
  ComputeBody(const tir::Var& v) : m_value(Expr(v)) {}
  ComputeBody(Reduce r) : m_value(std::move(r)) {}
  bool isReduce() const { return std::holds_alternative<Reduce>(m_value); }
  const Reduce& reduce() const { return std::get<Reduce>(m_value); }
  const Expr& expr() const { return std::get<Expr>(m_value); }
  DataType dtype() const { return isReduce() ? reduce().source.dtype() : expr().dtype(); }

private:
  std::variant<Expr, Reduce> m_value;
};

/// The producer of a tensor. `tag` is the TOPI op family ("elemwise", "broadcast", "injective",
/// "conv2d_nchw", ...); `attrs` become the block's annotations.
struct OperationNode : public Object {
  std::string name, tag;
  tir::Annotations attrs;
};

/// An input: data that comes from outside.
struct PlaceholderOpNode : OperationNode {};

/// `out[axis...] = body`. `inputs` are the tensors the body reads, in order of first use.
struct ComputeOpNode : OperationNode {
  std::vector<IterVar> axis;
  ComputeBody body = Expr();
  std::vector<Tensor> inputs;
  /// The reduction axes (empty for a plain expression body).
  const std::vector<IterVar>& reduceAxis() const;
};

/// An input tensor.
Tensor placeholder(std::vector<Expr> shape, DataType dtype = DataType::Float(32),
                   std::string name = "placeholder");

/// The body as a function of all axis variables at once.
using FCompute = std::function<ComputeBody(const std::vector<tir::Var>&)>;

/// A tensor of `shape` whose element at (i, j, ...) is `f({i, j, ...})`. Axis variables are named
/// `axisNames` when given, else i, j, k for up to three dimensions and i0, i1, ... beyond.
/// The element type is the body's type.
Tensor compute(std::vector<Expr> shape, const FCompute& f, std::string name = "compute",
               std::string tag = "", tir::Annotations attrs = {},
               std::vector<std::string> axisNames = {});

/// Throws ValueError: the lambda of compute `name` takes `arity` indices for a rank-`rank` shape.
[[noreturn]] void throwArityMismatch(const std::string& name, size_t rank, size_t arity);

/// The same with a lambda of one to six `Var` parameters: `compute({M, N}, [&](Var i, Var j)
/// {...})`.
template <class F>
requires(!std::is_convertible_v<F, FCompute>) Tensor
    compute(std::vector<Expr> shape, F&& f, std::string name = "compute", std::string tag = "",
            tir::Annotations attrs = {}, std::vector<std::string> axisNames = {}) {
  using tir::Var;
  FCompute g = [f = std::forward<F>(f)](const std::vector<Var>& v) -> ComputeBody {
    if constexpr (std::is_invocable_v<F, Var>)
      return f(v.at(0));
    else if constexpr (std::is_invocable_v<F, Var, Var>)
      return f(v.at(0), v.at(1));
    else if constexpr (std::is_invocable_v<F, Var, Var, Var>)
      return f(v.at(0), v.at(1), v.at(2));
    else if constexpr (std::is_invocable_v<F, Var, Var, Var, Var>)
      return f(v.at(0), v.at(1), v.at(2), v.at(3));
    else if constexpr (std::is_invocable_v<F, Var, Var, Var, Var, Var>)
      return f(v.at(0), v.at(1), v.at(2), v.at(3), v.at(4));
    else {
      static_assert(std::is_invocable_v<F, Var, Var, Var, Var, Var, Var>,
                    "te::compute: the body takes 1 to 6 Var arguments");
      return f(v.at(0), v.at(1), v.at(2), v.at(3), v.at(4), v.at(5));
    }
  };
  constexpr size_t arity = std::is_invocable_v<F, Var>                       ? 1
                           : std::is_invocable_v<F, Var, Var>                ? 2
                           : std::is_invocable_v<F, Var, Var, Var>           ? 3
                           : std::is_invocable_v<F, Var, Var, Var, Var>      ? 4
                           : std::is_invocable_v<F, Var, Var, Var, Var, Var> ? 5
                                                                             : 6;
  if (shape.size() != arity) throwArityMismatch(name, shape.size(), arity);
  return compute(std::move(shape), g, std::move(name), std::move(tag), std::move(attrs),
                 std::move(axisNames));
}

} // namespace loom::te
