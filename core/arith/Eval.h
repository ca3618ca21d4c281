// Evaluation of integer expressions with TVM's semantics, for constant folding and testing.
#pragma once
#include <cstdint>
#include <optional>
#include <unordered_map>

#include "core/tir/Expr.h"

namespace loom::arith {

using VarValueMap = std::unordered_map<tir::Var, int64_t, RefHash, RefEqual>;

/// `v` wrapped to the width of integer type `t` as C does (sign-extended for intN, zero-extended
/// for uintN; uint64 keeps its bit pattern); 0/1 for bool.
int64_t wrapToType(int64_t v, DataType t);

/// `a op b` for integer (or bool) operands of type `t`, with wrap-around like C, truncdiv /
/// truncmod rounding toward zero and floordiv / floormod toward negative infinity; comparisons
/// and and/or give 0 or 1. std::nullopt for division or modulo by zero.
std::optional<int64_t> foldIntBinary(tir::BinOp op, int64_t a, int64_t b, DataType t);

/// The value of a scalar integer / bool expression with `env` giving each variable's value:
/// immediates, variables, casts between integer types, every binary operator, not, select and
/// let. std::nullopt when the expression divides by zero, uses an unbound variable or anything
/// else (floats, loads, calls, vectors). Select evaluates both branches (TIR semantics), so a
/// division by zero in the unused one makes it undefined; with `strictSelect` false only the
/// chosen branch counts (the semantics the simplifier keeps: it simplifies each branch knowing
/// its condition, which can leave a dead branch dividing by zero, as TVM does).
std::optional<int64_t> evalInt(const tir::Expr& e, const VarValueMap& env, bool strictSelect = true);

}  // namespace loom::arith
