// The Relay-style text form of the graph IR (what `loom graph --emit graph` prints).
#pragma once
#include <string>

#include "core/graph/Expr.h"

namespace loom::graph {

/// Prints a module: `def @main(%data: Tensor[(1, 3, 224, 224), float32]) -> Tensor[...] {`, then
/// one binding per call (`%0 = nn.conv2d(%data, meta[Constant][0], strides=[2, 2]) /* ty=... */;`),
/// the result expression last. Attributes equal to the op's defaults are omitted; 0-d constants
/// print inline (`1f`, `2i64`), larger ones as `meta[Constant][k]` numbered in print order.
/// Fused groups print as nested `fn (%p0: ..., Primitive=1, Name="fused_...") -> T { ... }`.
/// Variable names that are numbers or hold characters other than [A-Za-z0-9_.] print quoted
/// (`%"0"`, `%"input:0"`).
std::string printModule(const Module& m);
/// Prints one function as `def @name(...)`.
std::string printFunction(const Function& f, const std::string& name = "main");
/// Prints any expression (a function body without a signature).
std::string printExpr(const Expr& e);

} // namespace loom::graph
