// The graph evaluator: runs a graph on the host through each op's reference kernel.
#pragma once
#include <vector>

#include "core/graph/Expr.h"
#include "runtime/NDArray.h"

namespace loom::graph {

/// Runs `f` on `args` (one array per parameter, shapes and dtypes as annotated) and returns its
/// outputs (a tuple result is flattened). Types the function first. Slow and exact (kernels work
/// in double): the meaning reference for passes and the importer. Throws TypeError when an
/// argument does not match its parameter, UnsupportedError for an op without a host kernel.
std::vector<runtime::NDArray> evaluate(const Function& f,
                                       const std::vector<runtime::NDArray>& args);

/// Evaluates a closed expression (no free variables), e.g. a constant subgraph.
std::vector<runtime::NDArray> evaluateClosed(const Expr& e);

} // namespace loom::graph
