// The executor JSON of a data-dependent call (dyn.nonzero, dyn.topk, dyn.nms, dyn.unique):
// a "__datadep" node that the graph executor runs on the host (runtime/GraphExecutorDataDep.cpp).
#pragma once
#include <nlohmann/json.hpp>

#include "core/graph/Expr.h"

namespace loom::driver {

/// {"op", "attrs", "symbol", "bound"} of a typed data-dependent call (its args typed).
nlohmann::json dataDependentNodeJson(const graph::CallNode& call);

}  // namespace loom::driver
