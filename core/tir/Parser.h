// Parses the TVMScript subset (docs/tvmscript-subset.md) back into TIR; errors are ParseErrors.
#pragma once
#include <string>
#include <vector>

#include "core/tir/Function.h"

namespace loom::tir {

/// One `@T.prim_func` (alone, or as the only function of an `@I.ir_module` class). Every node
/// carries the Span it came from. Throws loom::ParseError pointing at the offending token.
PrimFunc parseFunc(const std::string& text, const std::string& fileName = "<input>");

/// One or more `@T.prim_func`s, either at top level or inside an `@I.ir_module` class.
IRModule parseModule(const std::string& text, const std::string& fileName = "<input>");

/// A single expression. Names resolve to the given variables and buffers (by their names);
/// any other name is an error.
Expr parseExpr(const std::string& text, const std::vector<Var>& vars = {},
               const std::vector<Buffer>& buffers = {}, const std::string& fileName = "<input>");

}  // namespace loom::tir
