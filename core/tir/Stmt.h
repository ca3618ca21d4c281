// Tensor IR statements: stores, bindings, allocation, control flow, loops and TVM's block form.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "core/tir/Buffer.h"
#include "core/tir/Expr.h"

namespace loom::tir {

struct StmtNode : public IRNode {
  explicit StmtNode(NodeKind k) : IRNode(k) {}
};

/// A handle to an immutable statement.
class Stmt : public Ref<StmtNode> {
public:
  using Ref<StmtNode>::Ref;
  Stmt() = default;
  Stmt(const Ref<StmtNode>& r) : Ref<StmtNode>(r) {}
};

template <NodeKind K> struct StmtNodeBase : public StmtNode {
  static constexpr NodeKind kNodeKind = K;
  StmtNodeBase() : StmtNode(K) {}
};

/// Annotation values are immediates (IntImm, FloatImm, StringImm) or other expressions.
using Annotations = std::map<std::string, Expr>;

struct BufferStoreNode : StmtNodeBase<NodeKind::BufferStore> {
  BufferStoreNode(Buffer b, Expr v, std::vector<Expr> i)
      : buffer(std::move(b)), value(std::move(v)), indices(std::move(i)) {}
  Buffer buffer;
  Expr value;
  std::vector<Expr> indices;
};

struct LetStmtNode : StmtNodeBase<NodeKind::LetStmt> {
  LetStmtNode(Var v, Expr val, Stmt b) : var(std::move(v)), value(std::move(val)), body(std::move(b)) {}
  Var var;
  Expr value;
  Stmt body;
};

/// A key/value attribute on a region of code ("pragma_...", "thread_extent", ...). `node` is the
/// thing the attribute is about (a Var, or undefined).
struct AttrStmtNode : StmtNodeBase<NodeKind::AttrStmt> {
  AttrStmtNode(Expr n, std::string k, Expr v, Stmt b)
      : node(std::move(n)), key(std::move(k)), value(std::move(v)), body(std::move(b)) {}
  Expr node;
  std::string key;
  Expr value;
  Stmt body;
};

struct AssertStmtNode : StmtNodeBase<NodeKind::AssertStmt> {
  AssertStmtNode(Expr c, std::string m, Stmt b)
      : condition(std::move(c)), message(std::move(m)), body(std::move(b)) {}
  Expr condition;
  std::string message;
  Stmt body;
};

/// Allocates `extents` elements of `dtype` in `scope`, bound to the handle `bufferVar` in `body`.
struct AllocateNode : StmtNodeBase<NodeKind::Allocate> {
  AllocateNode(Var v, DataType t, std::vector<Expr> e, Expr c, Stmt b, std::string s = "global",
               Annotations a = {})
      : bufferVar(std::move(v)), dtype(t), extents(std::move(e)), condition(std::move(c)),
        body(std::move(b)), scope(std::move(s)), annotations(std::move(a)) {}
  Var bufferVar;
  DataType dtype;
  std::vector<Expr> extents;
  Expr condition;
  Stmt body;
  std::string scope;
  Annotations annotations;
};

/// Declares `buffer` (a view on an existing handle) for `body`.
struct DeclBufferNode : StmtNodeBase<NodeKind::DeclBuffer> {
  DeclBufferNode(Buffer buf, Stmt b) : buffer(std::move(buf)), body(std::move(b)) {}
  Buffer buffer;
  Stmt body;
};

struct SeqStmtNode : StmtNodeBase<NodeKind::SeqStmt> {
  explicit SeqStmtNode(std::vector<Stmt> s) : seq(std::move(s)) {}
  std::vector<Stmt> seq;
};

struct IfThenElseNode : StmtNodeBase<NodeKind::IfThenElse> {
  IfThenElseNode(Expr c, Stmt t, Stmt e = Stmt())
      : condition(std::move(c)), thenCase(std::move(t)), elseCase(std::move(e)) {}
  Expr condition;
  Stmt thenCase, elseCase;  ///< elseCase may be undefined
};

enum class ForKind : uint8_t { Serial, Parallel, Vectorized, Unrolled, ThreadBinding };
/// "serial", "parallel", "vectorized", "unroll", "thread_binding" (TVMScript spelling).
const char* forKindName(ForKind k);

struct ForNode : StmtNodeBase<NodeKind::For> {
  ForNode(Var v, Expr m, Expr e, ForKind k, Stmt b, std::string tag = {}, Annotations a = {})
      : loopVar(std::move(v)), min(std::move(m)), extent(std::move(e)), kind(k), body(std::move(b)),
        threadTag(std::move(tag)), annotations(std::move(a)) {}
  Var loopVar;
  Expr min, extent;
  ForKind kind;
  Stmt body;
  std::string threadTag;  ///< "blockIdx.x", "threadIdx.y", ... when kind == ThreadBinding
  Annotations annotations;
};

struct WhileNode : StmtNodeBase<NodeKind::While> {
  WhileNode(Expr c, Stmt b) : condition(std::move(c)), body(std::move(b)) {}
  Expr condition;
  Stmt body;
};

struct EvaluateNode : StmtNodeBase<NodeKind::Evaluate> {
  explicit EvaluateNode(Expr v) : value(std::move(v)) {}
  Expr value;
};

/// A block iteration variable: its domain and whether it is spatial (data-parallel) or reduce.
enum class IterType : uint8_t { DataPar, CommReduce, Ordered, Opaque };
/// "spatial", "reduce", "scan", "opaque" (the T.axis spelling).
const char* iterTypeName(IterType t);

struct IterVar {
  Var var;
  Range dom;
  IterType iterType = IterType::DataPar;
  IterVar() = default;
  IterVar(Var v, Range d, IterType t) : var(std::move(v)), dom(std::move(d)), iterType(t) {}
};

/// TVM's block: the unit of computation that schedule legality reasons about. Its signature is
/// its iter vars (with types), the regions it reads and writes, and its init statement.
struct BlockNode : StmtNodeBase<NodeKind::Block> {
  std::vector<IterVar> iterVars;
  std::vector<BufferRegion> reads, writes;
  std::string name;
  Stmt body;
  Stmt init;  ///< run when the reduce iter vars are all at their first value; may be undefined
  std::vector<Buffer> allocBuffers;
  Annotations annotations;
};
using Block = Ref<BlockNode>;

/// Binds a block's iter vars to values (expressions of the enclosing loop vars) and guards it.
struct BlockRealizeNode : StmtNodeBase<NodeKind::BlockRealize> {
  BlockRealizeNode(std::vector<Expr> v, Expr p, Block b)
      : iterValues(std::move(v)), predicate(std::move(p)), block(std::move(b)) {}
  std::vector<Expr> iterValues;
  Expr predicate;  ///< a bool expression; `true` when the block always runs
  Block block;
};

}  // namespace loom::tir
