// The graph IR (Relay-like dataflow): variables, constants, op calls, tuples, functions, modules.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/graph/Attrs.h"
#include "core/graph/Type.h"
#include "core/support/Span.h"
#include "runtime/NDArray.h"

namespace loom::graph {

struct OpDef;

enum class ExprKind : uint8_t { Var, Constant, Call, Tuple, TupleGetItem, Function };

/// Base of all graph expressions. Nodes are immutable; `checkedType` is a cache that InferType
/// fills (a node's type is a function of its structure, so filling it never changes meaning).
/// Typing the same untyped graph from two threads at once is a data race: type it first.
struct ExprNode : public Object {
  explicit ExprNode(ExprKind k) : kind(k) {}
  const ExprKind kind;
  Span span;
  mutable Ref<TypeNode> checkedType;
};

class Expr : public Ref<ExprNode> {
public:
  using Ref<ExprNode>::Ref;
  Expr() = default;
  Expr(const Ref<ExprNode>& r) : Ref<ExprNode>(r) {}
  template <class U> const U* as() const {
    return get() && get()->kind == U::kNodeKind ? static_cast<const U*>(get()) : nullptr;
  }
  /// The inferred type; undefined until InferType (or inferType()) ran over this node.
  Type type() const { return Type(get()->checkedType); }
};

template <ExprKind K> struct ExprNodeBase : ExprNode {
  static constexpr ExprKind kNodeKind = K;
  ExprNodeBase() : ExprNode(K) {}
};

/// A function parameter (or a graph input). Identity is the node.
struct VarNode : ExprNodeBase<ExprKind::Var> {
  std::string name;
  Type annotation;
};
using Var = Ref<VarNode>;

/// A tensor constant (ONNX initializers, folded values). `name` is a hint for printing and dot.
struct ConstantNode : ExprNodeBase<ExprKind::Constant> {
  runtime::NDArray data;
  std::string name;
};
using Constant = Ref<ConstantNode>;

struct FunctionNode;
using Function = Ref<FunctionNode>;

/// A call of a registered op (`op` set) or of a function (`fn` set, a fused Primitive group).
/// `name` is the source node's name (ONNX node name) used in error messages.
struct CallNode : ExprNodeBase<ExprKind::Call> {
  const OpDef* op = nullptr;
  Function fn;
  std::vector<Expr> args;
  Attrs attrs;
  std::string name;
};
using Call = Ref<CallNode>;

struct TupleNode : ExprNodeBase<ExprKind::Tuple> {
  std::vector<Expr> fields;
};
using Tuple = Ref<TupleNode>;

struct TupleGetItemNode : ExprNodeBase<ExprKind::TupleGetItem> {
  Expr tuple;
  int index = 0;
};
using TupleGetItem = Ref<TupleGetItemNode>;

/// A function. `primitive` marks a fused group (lowered as one kernel); `name` is its readable
/// group name ("fused_nn_conv2d_add_nn_relu").
struct FunctionNode : ExprNodeBase<ExprKind::Function> {
  std::vector<Var> params;
  Expr body;
  bool primitive = false;
  std::string name;
};

/// Named functions; "main" is the model.
struct Module {
  std::map<std::string, Function> functions;
  Function main() const;
};

// Builders.
Var makeVar(std::string name, Type annotation);
Constant makeConstant(runtime::NDArray data, std::string name = {});
/// A scalar (0-d) constant of `dtype` holding `value`.
Constant makeScalar(double value, DataType dtype);
/// A call of the op registered as `opName`: checks arity and attributes against the op's schema
/// (unknown attribute, wrong kind, missing required one: TypeError naming op and node) and fills
/// in defaults.
Call makeCall(const std::string& opName, std::vector<Expr> args, Attrs attrs = {},
              std::string nodeName = {});
Call makeCall(const OpDef* op, std::vector<Expr> args, Attrs attrs = {}, std::string nodeName = {});
/// A call of function `fn` with `args`.
Call makeFnCall(Function fn, std::vector<Expr> args);
Tuple makeTuple(std::vector<Expr> fields);
TupleGetItem makeTupleGetItem(Expr tuple, int index);
Function makeFunction(std::vector<Var> params, Expr body, bool primitive = false,
                      std::string name = {});

/// `call` with its arguments replaced (same op or function, attributes, name and span).
Call withArgs(const CallNode& call, std::vector<Expr> args);
/// The op name of a call ("nn.conv2d"), or the function's name for a function call.
std::string calleeName(const CallNode& call);

/// Every node reachable from `root`, each once, operands before users. A called function is a
/// node (listed after the call's arguments, before the call); its parameters and body are entered
/// only when `intoFunctions` (or when it is `root` itself).
std::vector<Expr> postOrder(const Expr& root, bool intoFunctions = false);

/// runtime::DType <-> loom::DataType (same codes).
DataType toDataType(runtime::DType t);
runtime::DType toDType(DataType t);

} // namespace loom::graph
