// Builders for TIR nodes: immediates, arithmetic with type matching, and statement constructors.
#pragma once
#include <string>
#include <vector>

#include "core/tir/Function.h"
#include "core/tir/Stmt.h"

namespace loom::tir {

// --- Immediates and variables -------------------------------------------------------------
Expr intImm(DataType t, int64_t v);
Expr floatImm(DataType t, double v);
Expr stringImm(std::string v);
Expr boolImm(bool v);
/// A constant of any scalar type (int, uint, bool, float) holding `v`, broadcast for vector types.
Expr makeConst(DataType t, double v);
Expr makeZero(DataType t);
Var makeVar(std::string name, DataType t = DataType::Int(32));

/// The value of an integer immediate, or nullptr.
const int64_t* asConstInt(const Expr& e);
bool isConstInt(const Expr& e, int64_t v);
bool isZero(const Expr& e);
bool isOne(const Expr& e);

// --- Arithmetic (operands are matched: an immediate takes the other side's type, int with float
// becomes float, narrower integers widen). -------------------------------------------------
Expr cast(DataType t, Expr v);
Expr binary(BinOp op, Expr a, Expr b);
Expr operator+(Expr a, Expr b);
Expr operator-(Expr a, Expr b);
Expr operator-(Expr a);
Expr operator*(Expr a, Expr b);
/// Division: true division for floats, truncating for integers (TVM's tir.Div).
Expr operator/(Expr a, Expr b);
/// Truncating modulo (TVM's tir.Mod).
Expr operator%(Expr a, Expr b);
Expr truncdiv(Expr a, Expr b);
Expr truncmod(Expr a, Expr b);
Expr floordiv(Expr a, Expr b);
Expr floormod(Expr a, Expr b);
Expr min(Expr a, Expr b);
Expr max(Expr a, Expr b);
Expr eq(Expr a, Expr b);
Expr ne(Expr a, Expr b);
Expr operator<(Expr a, Expr b);
Expr operator<=(Expr a, Expr b);
Expr operator>(Expr a, Expr b);
Expr operator>=(Expr a, Expr b);
Expr operator&&(Expr a, Expr b);
Expr operator||(Expr a, Expr b);
Expr operator!(Expr a);
Expr select(Expr c, Expr t, Expr f);
Expr let(Var v, Expr value, Expr body);
Expr ramp(Expr base, Expr stride, int lanes);
Expr broadcast(Expr v, int lanes);
Expr bufferLoad(const Buffer& b, std::vector<Expr> indices);
/// A call of intrinsic `op`; the result type defaults to the first argument's type.
Expr call(DataType t, std::string op, std::vector<Expr> args);
Expr call(std::string op, std::vector<Expr> args);
Expr ifThenElse(Expr c, Expr t, Expr f);

// --- Statements ---------------------------------------------------------------------------
Stmt bufferStore(const Buffer& b, Expr value, std::vector<Expr> indices);
/// A sequence; nested SeqStmts are flattened, undefined entries dropped, one entry returned as is.
Stmt seq(std::vector<Stmt> stmts);
Stmt forLoop(Var v, Expr min, Expr extent, ForKind kind, Stmt body, std::string threadTag = {},
             Annotations ann = {});
Stmt ifThen(Expr c, Stmt t, Stmt e = Stmt());
Stmt letStmt(Var v, Expr value, Stmt body);
Stmt attrStmt(Expr node, std::string key, Expr value, Stmt body);
Stmt assertStmt(Expr cond, std::string message, Stmt body);
Stmt allocate(Var bufferVar, DataType t, std::vector<Expr> extents, Stmt body,
              std::string scope = "global");
Stmt declBuffer(const Buffer& b, Stmt body);
Stmt whileLoop(Expr c, Stmt body);
Stmt evaluate(Expr v);
/// A block realize whose iter vars are bound to `values` under `predicate` (true if undefined).
Stmt blockRealize(std::vector<Expr> values, Expr predicate, Block block);

/// A copy of `e` / `s` carrying `span`.
Expr withSpan(Expr e, const Span& span);
Stmt withSpan(Stmt s, const Span& span);

}  // namespace loom::tir
