// FoldConstant: evaluates every subgraph whose inputs are all constants into a constant.
#pragma once
#include "core/graph/Expr.h"

namespace loom::graph {

/// Replaces each op call whose arguments are all constants by the constant its host kernel
/// computes (tuple results become tuples of constants), `shape_of` of a statically shaped
/// tensor by its shape, and `tuple.i` of a literal tuple by the field. Nested (fused) functions
/// are left alone, and so are results of more than 2^26 elements.
Expr foldConstant(const Expr& e);
Module foldConstant(const Module& m);

} // namespace loom::graph
