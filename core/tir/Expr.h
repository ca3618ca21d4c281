// Tensor IR expressions: immediates, variables, arithmetic, loads, vectors and intrinsic calls.
#pragma once
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/ir/DataType.h"
#include "core/ir/Object.h"
#include "core/support/Span.h"

namespace loom::tir {

/// Every TIR node kind, expressions first. Used for fast dispatch in visitors and `as<T>()`.
enum class NodeKind : uint8_t {
  // Expressions
  IntImm, FloatImm, StringImm, Var, Cast, Binary, Not, Select, Let, BufferLoad, Ramp, Broadcast,
  Call,
  // Statements
  BufferStore, LetStmt, AttrStmt, AssertStmt, Allocate, DeclBuffer, SeqStmt, IfThenElse, For,
  While, Evaluate, Block, BlockRealize,
};

/// Base of expressions and statements. `span` points at the text the node came from.
struct IRNode : public Object {
  explicit IRNode(NodeKind k) : nodeKind(k) {}
  const NodeKind nodeKind;
  Span span;
};

struct ExprNode : public IRNode {
  ExprNode(NodeKind k, DataType t) : IRNode(k), dtype(t) {}
  DataType dtype;
};

/// A handle to an immutable expression.
class Expr : public Ref<ExprNode> {
public:
  using Ref<ExprNode>::Ref;
  Expr() = default;
  Expr(const Ref<ExprNode>& r) : Ref<ExprNode>(r) {}
  /// Integer immediates convert implicitly (as int32, TVM's default index type).
  Expr(int v);
  DataType dtype() const { return get()->dtype; }
};

template <NodeKind K> struct ExprNodeBase : public ExprNode {
  static constexpr NodeKind kNodeKind = K;
  explicit ExprNodeBase(DataType t) : ExprNode(K, t) {}
};

struct IntImmNode : ExprNodeBase<NodeKind::IntImm> {
  IntImmNode(DataType t, int64_t v) : ExprNodeBase(t), value(v) {}
  int64_t value;
};

struct FloatImmNode : ExprNodeBase<NodeKind::FloatImm> {
  FloatImmNode(DataType t, double v) : ExprNodeBase(t), value(v) {}
  double value;
};

struct StringImmNode : ExprNodeBase<NodeKind::StringImm> {
  explicit StringImmNode(std::string v) : ExprNodeBase(DataType::Handle()), value(std::move(v)) {}
  std::string value;
};

/// A variable. Identity is the node: two Vars with the same name are different variables.
struct VarNode : ExprNodeBase<NodeKind::Var> {
  VarNode(std::string n, DataType t) : ExprNodeBase(t), name(std::move(n)) {}
  std::string name;
};
using Var = Ref<VarNode>;

struct CastNode : ExprNodeBase<NodeKind::Cast> {
  CastNode(DataType t, Expr v) : ExprNodeBase(t), value(std::move(v)) {}
  Expr value;
};

/// Binary operators. Div/Mod truncate toward zero for integers (C semantics, TVM's truncdiv /
/// truncmod); FloorDiv/FloorMod round toward negative infinity. Comparisons and And/Or give bool.
enum class BinOp : uint8_t {
  Add, Sub, Mul, Div, Mod, FloorDiv, FloorMod, Min, Max, EQ, NE, LT, LE, GT, GE, And, Or,
};
/// "add", "floordiv", "lt", ... (the TVMScript function name where there is one).
const char* binOpName(BinOp op);
/// "+", "//", "<", ... or nullptr for ops printed as calls (min, max, truncdiv, ...).
const char* binOpSymbol(BinOp op);
bool isComparison(BinOp op);
bool isLogical(BinOp op);

struct BinaryNode : ExprNodeBase<NodeKind::Binary> {
  BinaryNode(DataType t, BinOp o, Expr x, Expr y)
      : ExprNodeBase(t), op(o), a(std::move(x)), b(std::move(y)) {}
  BinOp op;
  Expr a, b;
};

struct NotNode : ExprNodeBase<NodeKind::Not> {
  explicit NotNode(Expr v) : ExprNodeBase(v.dtype()), a(std::move(v)) {}
  Expr a;
};

/// Both branches are evaluated (unlike if_then_else); the condition picks one.
struct SelectNode : ExprNodeBase<NodeKind::Select> {
  SelectNode(Expr c, Expr t, Expr f)
      : ExprNodeBase(t.dtype()), condition(std::move(c)), trueValue(std::move(t)),
        falseValue(std::move(f)) {}
  Expr condition, trueValue, falseValue;
};

struct LetNode : ExprNodeBase<NodeKind::Let> {
  LetNode(Var v, Expr val, Expr b)
      : ExprNodeBase(b.dtype()), var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  Var var;
  Expr value, body;
};

struct BufferNode;
using Buffer = Ref<BufferNode>;

struct BufferLoadNode : ExprNodeBase<NodeKind::BufferLoad> {
  BufferLoadNode(DataType t, Buffer buf, std::vector<Expr> idx);
  Buffer buffer;
  std::vector<Expr> indices;
};

/// The vector base, base+stride, ..., base+(lanes-1)*stride.
struct RampNode : ExprNodeBase<NodeKind::Ramp> {
  RampNode(Expr b, Expr s, int l)
      : ExprNodeBase(b.dtype().withLanes(l)), base(std::move(b)), stride(std::move(s)), lanes(l) {}
  Expr base, stride;
  int lanes;
};

struct BroadcastNode : ExprNodeBase<NodeKind::Broadcast> {
  BroadcastNode(Expr v, int l) : ExprNodeBase(v.dtype().withLanes(l)), value(std::move(v)), lanes(l) {}
  Expr value;
  int lanes;
};

/// A call of a named intrinsic ("exp", "if_then_else", ...); see Intrinsics.h for the registry.
struct CallNode : ExprNodeBase<NodeKind::Call> {
  CallNode(DataType t, std::string o, std::vector<Expr> a)
      : ExprNodeBase(t), op(std::move(o)), args(std::move(a)) {}
  std::string op;
  std::vector<Expr> args;
};

/// A half-open interval [min, min + extent).
struct Range {
  Expr min, extent;
  Range() = default;
  Range(Expr m, Expr e) : min(std::move(m)), extent(std::move(e)) {}
};

}  // namespace loom::tir
