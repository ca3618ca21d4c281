// Symbolic dims: a dim that is not static is an integer expression over named symbols ("batch",
// "W", "(W - 1) // 2 + 1"). Type relations compute with them; the driver turns them into kernel
// variables and the executor evaluates them at run time (docs/dynamic-shapes.md).
#pragma once
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/graph/Type.h"
#include "core/tir/Expr.h"

namespace loom::graph {

/// The process-wide int64 variable of symbol `name` (the same Var for the same name).
tir::Var symbolVar(const std::string& name);

/// A dim's integer expression: an int64 constant when static, an expression over symbol vars
/// when symbolic; undefined for an anonymous `?` dim.
tir::Expr dimExpr(const Dim& d);

/// The dim of an integer expression over symbol vars, simplified (every symbol is at least 1):
/// static when it folds to a constant, else its canonical text as the dim's name.
Dim dimOf(const tir::Expr& e);

/// `e` simplified with every symbol it uses taken to be at least 1.
tir::Expr simplifyDimExpr(const tir::Expr& e);

/// Whether `a == b` for every value of the symbols (each at least 1): true or false when that
/// is decided for all of them, nullopt when it depends on their values (batch == 2).
std::optional<bool> dimExprsEqual(const tir::Expr& a, const tir::Expr& b);

/// True when `a` and `b` are the same extent for every value of the symbols (static and equal,
/// or symbolic with an equal simplified expression).
bool dimsProvablyEqual(const Dim& a, const Dim& b);

/// The symbols a dim uses, sorted.
std::vector<std::string> dimSymbols(const Dim& d);

/// The value of a dim with the symbols' values from `env`; nullopt when a symbol is missing or
/// the expression is undefined there (a division by zero).
std::optional<int64_t> evalDim(const Dim& d, const std::map<std::string, int64_t>& env);

/// Sum and product of dims (static when every operand is).
Dim dimAdd(const Dim& a, const Dim& b);
Dim dimMul(const Dim& a, const Dim& b);
/// floor(a / b) for a positive static b.
Dim dimFloorDiv(const Dim& a, int64_t b);

/// a / b when b divides a for every value of the symbols (common factors cancel: (N*16) / N
/// = 16); nullopt when that cannot be shown.
std::optional<Dim> dimDivExact(const Dim& a, const Dim& b);

/// A list of dims as attribute text: "batch;seq * 4;64" (static dims as numbers).
std::string dimsText(const Shape& dims);
/// The dims of dimsText's text; an empty text gives no dims.
Shape parseDimsText(const std::string& text);

/// The product of dims (1 for none).
Dim dimProduct(const Shape& dims);

/// A symbol name that is a valid identifier made from `text` ("batch size" -> "batch_size").
std::string symbolName(const std::string& text);

}  // namespace loom::graph
