// Graphviz dot text of a graph: one node per op call, one cluster per fused group.
#pragma once
#include <string>

#include "core/graph/Expr.h"

namespace loom::graph {

/// `digraph "main" { ... }`: inputs as ellipses, constants as small notes (named after their
/// initializer when known), ops as boxes labelled with the op and output type, and each
/// Primitive function's ops inside `subgraph cluster_k { label="fused_..." }`.
std::string toDot(const Function& f, const std::string& name = "main");

} // namespace loom::graph
