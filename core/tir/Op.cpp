// Builders for TIR nodes, with TVM-like operand type matching.
#include "core/tir/Op.h"

#include <cmath>

#include "core/support/Error.h"

namespace loom::tir {

Expr::Expr(int v) : Expr(intImm(DataType::Int(32), v)) {}

const char* binOpName(BinOp op) {
  switch (op) {
  case BinOp::Add: return "add";
  case BinOp::Sub: return "sub";
  case BinOp::Mul: return "mul";
  case BinOp::Div: return "truncdiv";
  case BinOp::Mod: return "truncmod";
  case BinOp::FloorDiv: return "floordiv";
  case BinOp::FloorMod: return "floormod";
  case BinOp::Min: return "min";
  case BinOp::Max: return "max";
  case BinOp::EQ: return "eq";
  case BinOp::NE: return "ne";
  case BinOp::LT: return "lt";
  case BinOp::LE: return "le";
  case BinOp::GT: return "gt";
  case BinOp::GE: return "ge";
  case BinOp::And: return "and";
  case BinOp::Or: return "or";
  }
  return "?";
}

const char* binOpSymbol(BinOp op) {
  switch (op) {
  case BinOp::Add: return "+";
  case BinOp::Sub: return "-";
  case BinOp::Mul: return "*";
  case BinOp::FloorDiv: return "//";
  case BinOp::FloorMod: return "%";
  case BinOp::EQ: return "==";
  case BinOp::NE: return "!=";
  case BinOp::LT: return "<";
  case BinOp::LE: return "<=";
  case BinOp::GT: return ">";
  case BinOp::GE: return ">=";
  case BinOp::And: return "and";
  case BinOp::Or: return "or";
  default: return nullptr;
  }
}

bool isComparison(BinOp op) { return op >= BinOp::EQ && op <= BinOp::GE; }
bool isLogical(BinOp op) { return op == BinOp::And || op == BinOp::Or; }

const char* forKindName(ForKind k) {
  switch (k) {
  case ForKind::Serial: return "serial";
  case ForKind::Parallel: return "parallel";
  case ForKind::Vectorized: return "vectorized";
  case ForKind::Unrolled: return "unroll";
  case ForKind::ThreadBinding: return "thread_binding";
  }
  return "?";
}

const char* iterTypeName(IterType t) {
  switch (t) {
  case IterType::DataPar: return "spatial";
  case IterType::CommReduce: return "reduce";
  case IterType::Ordered: return "scan";
  case IterType::Opaque: return "opaque";
  }
  return "?";
}

BufferLoadNode::BufferLoadNode(DataType t, Buffer buf, std::vector<Expr> idx)
    : ExprNodeBase(t), buffer(std::move(buf)), indices(std::move(idx)) {}

// --- Immediates --------------------------------------------------------------------------

Expr intImm(DataType t, int64_t v) {
  LOOM_ICHECK(t.isIntegral() || t.isBool()) << "intImm of type " << t.str();
  if (t.isBool()) v = v != 0;
  return Expr(new IntImmNode(t, v));
}
Expr floatImm(DataType t, double v) {
  LOOM_ICHECK(t.isFloat()) << "floatImm of type " << t.str();
  return Expr(new FloatImmNode(t, v));
}
Expr stringImm(std::string v) { return Expr(new StringImmNode(std::move(v))); }
Expr boolImm(bool v) { return intImm(DataType::Bool(), v); }

Expr makeConst(DataType t, double v) {
  if (t.lanes() > 1) return broadcast(makeConst(t.element(), v), t.lanes());
  if (t.isFloat()) return floatImm(t, v);
  return intImm(t, static_cast<int64_t>(v));
}
Expr makeZero(DataType t) { return makeConst(t, 0); }
Var makeVar(std::string name, DataType t) { return Var(new VarNode(std::move(name), t)); }

const int64_t* asConstInt(const Expr& e) {
  if (auto* i = e.as<IntImmNode>()) return &i->value;
  return nullptr;
}
bool isConstInt(const Expr& e, int64_t v) {
  auto* p = asConstInt(e);
  return p && *p == v;
}
bool isZero(const Expr& e) {
  if (auto* f = e.as<FloatImmNode>()) return f->value == 0;
  return isConstInt(e, 0);
}
bool isOne(const Expr& e) {
  if (auto* f = e.as<FloatImmNode>()) return f->value == 1;
  return isConstInt(e, 1);
}

// --- Type matching -----------------------------------------------------------------------

namespace {
bool isImm(const Expr& e) { return e.as<IntImmNode>() || e.as<FloatImmNode>(); }

Expr convertImm(const Expr& e, DataType t) {
  if (auto* i = e.as<IntImmNode>()) return makeConst(t, static_cast<double>(i->value));
  if (auto* f = e.as<FloatImmNode>()) return makeConst(t, f->value);
  return cast(t, e);
}

/// Brings both operands to one type, as TVM's BinaryOpMatchTypes does.
void matchTypes(Expr& a, Expr& b, const char* what) {
  LOOM_ICHECK(a.defined() && b.defined()) << "undefined operand of " << what;
  DataType ta = a.dtype(), tb = b.dtype();
  if (ta == tb) return;
  // Scalars broadcast to the vector side.
  if (ta.lanes() != tb.lanes()) {
    if (ta.lanes() == 1) {
      a = broadcast(a, tb.lanes());
    } else if (tb.lanes() == 1) {
      b = broadcast(b, ta.lanes());
    } else {
      LOOM_THROW(TypeError) << "lanes mismatch in " << what << ": " << ta.str() << " vs " << tb.str();
    }
    ta = a.dtype();
    tb = b.dtype();
    if (ta == tb) return;
  }
  // An immediate takes the other side's type, except that a float immediate never becomes an
  // integer (TVM casts the integer side to float: `i * 0.5` is float, not `i * 0`).
  if (isImm(a) && !isImm(b) && (tb.isFloat() || !ta.isFloat())) {
    a = convertImm(a, tb);
  } else if (isImm(b) && !isImm(a) && (ta.isFloat() || !tb.isFloat())) {
    b = convertImm(b, ta);
  } else if (ta.isFloat() && !tb.isFloat()) {
    b = cast(ta, b);
  } else if (tb.isFloat() && !ta.isFloat()) {
    a = cast(tb, a);
  } else if (ta.isFloat() && tb.isFloat()) {
    if (ta.bits() >= tb.bits()) b = cast(ta, b); else a = cast(tb, a);
  } else if (ta.isBool() != tb.isBool()) {
    if (ta.isBool()) a = cast(tb, a); else b = cast(ta, b);
  } else {
    // Both integers: widen to the larger; on equal width, signed wins like TVM.
    if (ta.bits() > tb.bits()) b = cast(ta, b);
    else if (tb.bits() > ta.bits()) a = cast(tb, a);
    else if (ta.isInt()) b = cast(ta, b);
    else a = cast(tb, a);
  }
}
}  // namespace

Expr cast(DataType t, Expr v) {
  if (v.dtype() == t) return v;
  if (t.lanes() > 1 && v.dtype().lanes() == 1) return broadcast(cast(t.element(), v), t.lanes());
  return Expr(new CastNode(t, std::move(v)));
}

Expr binary(BinOp op, Expr a, Expr b) {
  matchTypes(a, b, binOpName(op));
  DataType t = a.dtype();
  if (isComparison(op)) t = DataType::Bool(t.lanes());
  if (isLogical(op)) {
    if (!a.dtype().isBool()) a = ne(a, makeZero(a.dtype()));
    if (!b.dtype().isBool()) b = ne(b, makeZero(b.dtype()));
    t = a.dtype();
  }
  return Expr(new BinaryNode(t, op, std::move(a), std::move(b)));
}

Expr operator+(Expr a, Expr b) { return binary(BinOp::Add, a, b); }
Expr operator-(Expr a, Expr b) { return binary(BinOp::Sub, a, b); }
Expr operator-(Expr a) { return binary(BinOp::Sub, makeZero(a.dtype().element()), a); }
Expr operator*(Expr a, Expr b) { return binary(BinOp::Mul, a, b); }
Expr operator/(Expr a, Expr b) { return binary(BinOp::Div, a, b); }
Expr operator%(Expr a, Expr b) { return binary(BinOp::Mod, a, b); }
Expr truncdiv(Expr a, Expr b) { return binary(BinOp::Div, a, b); }
Expr truncmod(Expr a, Expr b) { return binary(BinOp::Mod, a, b); }
Expr floordiv(Expr a, Expr b) { return binary(BinOp::FloorDiv, a, b); }
Expr floormod(Expr a, Expr b) { return binary(BinOp::FloorMod, a, b); }
Expr min(Expr a, Expr b) { return binary(BinOp::Min, a, b); }
Expr max(Expr a, Expr b) { return binary(BinOp::Max, a, b); }
Expr eq(Expr a, Expr b) { return binary(BinOp::EQ, a, b); }
Expr ne(Expr a, Expr b) { return binary(BinOp::NE, a, b); }
Expr operator<(Expr a, Expr b) { return binary(BinOp::LT, a, b); }
Expr operator<=(Expr a, Expr b) { return binary(BinOp::LE, a, b); }
Expr operator>(Expr a, Expr b) { return binary(BinOp::GT, a, b); }
Expr operator>=(Expr a, Expr b) { return binary(BinOp::GE, a, b); }
Expr operator&&(Expr a, Expr b) { return binary(BinOp::And, a, b); }
Expr operator||(Expr a, Expr b) { return binary(BinOp::Or, a, b); }
Expr operator!(Expr a) {
  if (!a.dtype().isBool()) a = eq(a, makeZero(a.dtype()));
  return Expr(new NotNode(std::move(a)));
}

Expr select(Expr c, Expr t, Expr f) {
  matchTypes(t, f, "select");
  if (!c.dtype().isBool()) c = ne(c, makeZero(c.dtype()));
  return Expr(new SelectNode(std::move(c), std::move(t), std::move(f)));
}
Expr let(Var v, Expr value, Expr body) { return Expr(new LetNode(std::move(v), std::move(value), std::move(body))); }
Expr ramp(Expr base, Expr stride, int lanes) {
  matchTypes(base, stride, "ramp");
  return Expr(new RampNode(std::move(base), std::move(stride), lanes));
}
Expr broadcast(Expr v, int lanes) {
  LOOM_ICHECK(v.dtype().lanes() == 1) << "broadcast of a vector";
  return Expr(new BroadcastNode(std::move(v), lanes));
}

Expr bufferLoad(const Buffer& b, std::vector<Expr> indices) {
  LOOM_ICHECK(b.defined()) << "load from an undefined buffer";
  int lanes = 1;
  for (auto& i : indices) lanes = std::max(lanes, i.dtype().lanes());
  return Expr(new BufferLoadNode(b->dtype.withLanes(lanes * b->dtype.lanes()), b, std::move(indices)));
}

Expr call(DataType t, std::string op, std::vector<Expr> args) {
  return Expr(new CallNode(t, std::move(op), std::move(args)));
}
Expr call(std::string op, std::vector<Expr> args) {
  LOOM_ICHECK(!args.empty()) << "call of " << op << " without arguments needs a type";
  DataType t = args[0].dtype();
  return call(t, std::move(op), std::move(args));
}
Expr ifThenElse(Expr c, Expr t, Expr f) {
  matchTypes(t, f, "if_then_else");
  DataType ty = t.dtype();
  return call(ty, "if_then_else", {std::move(c), std::move(t), std::move(f)});
}

// --- Statements --------------------------------------------------------------------------

Stmt bufferStore(const Buffer& b, Expr value, std::vector<Expr> indices) {
  LOOM_ICHECK(b.defined()) << "store to an undefined buffer";
  DataType want = b->dtype.withLanes(value.dtype().lanes());
  if (value.dtype() != want) value = cast(want, value);
  return Stmt(new BufferStoreNode(b, std::move(value), std::move(indices)));
}

Stmt seq(std::vector<Stmt> stmts) {
  std::vector<Stmt> flat;
  for (auto& s : stmts) {
    if (!s.defined()) continue;
    if (auto* q = s.as<SeqStmtNode>()) {
      for (auto& t : q->seq) flat.push_back(t);
    } else {
      flat.push_back(s);
    }
  }
  if (flat.size() == 1) return flat[0];
  return Stmt(new SeqStmtNode(std::move(flat)));
}

Stmt forLoop(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string threadTag,
             Annotations ann) {
  return Stmt(new ForNode(std::move(v), std::move(min), std::move(extent), kind, std::move(body),
                          std::move(threadTag), std::move(ann)));
}
Stmt ifThen(Expr c, Stmt t, Stmt e) { return Stmt(new IfThenElseNode(std::move(c), std::move(t), std::move(e))); }
Stmt letStmt(Var v, Expr value, Stmt body) { return Stmt(new LetStmtNode(std::move(v), std::move(value), std::move(body))); }
Stmt attrStmt(Expr node, std::string key, Expr value, Stmt body) {
  return Stmt(new AttrStmtNode(std::move(node), std::move(key), std::move(value), std::move(body)));
}
Stmt assertStmt(Expr cond, std::string message, Stmt body) {
  return Stmt(new AssertStmtNode(std::move(cond), std::move(message), std::move(body)));
}
Stmt allocate(Var bufferVar, DataType t, std::vector<Expr> extents, Stmt body, std::string scope) {
  return Stmt(new AllocateNode(std::move(bufferVar), t, std::move(extents), boolImm(true), std::move(body),
                               std::move(scope)));
}
Stmt declBuffer(const Buffer& b, Stmt body) { return Stmt(new DeclBufferNode(b, std::move(body))); }
Stmt whileLoop(Expr c, Stmt body) { return Stmt(new WhileNode(std::move(c), std::move(body))); }
Stmt evaluate(Expr v) { return Stmt(new EvaluateNode(std::move(v))); }
Stmt blockRealize(std::vector<Expr> values, Expr predicate, Block block) {
  if (!predicate.defined()) predicate = boolImm(true);
  return Stmt(new BlockRealizeNode(std::move(values), std::move(predicate), std::move(block)));
}

}  // namespace loom::tir
