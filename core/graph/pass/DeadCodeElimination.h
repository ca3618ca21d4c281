// DeadCodeElimination: drops what no output needs (tuple fields never read, unused functions).
#pragma once
#include "core/graph/Expr.h"

namespace loom::graph {

/// A dataflow graph holds only what its result reaches, so dead nodes come from tuples:
/// `(a, b, c).1` becomes `b` (a and c die with the tuple), and module functions other than
/// "main" that main never calls are removed. Calls that return their argument unchanged (reshape
/// to the same shape, identity transpose, cast to the same type, copy) are bypassed.
Expr eliminateDeadCode(const Expr& e);
Module eliminateDeadCode(const Module& m);

} // namespace loom::graph
