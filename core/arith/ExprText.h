// Compact infix text of an expression ("x*4 + y // 2"), for messages and test expectations.
#pragma once
#include <string>

#include "core/tir/Expr.h"

namespace loom::arith {

/// Infix with the fewest parentheses: `+ - * // %` (floordiv, floormod), comparisons, `and`,
/// `or`, `not`; truncdiv, truncmod, min, max, select and casts print as calls
/// (`truncdiv(x, 2)`, `int64(x)`). Booleans print as True / False.
std::string exprText(const tir::Expr& e);

}  // namespace loom::arith
