// The executor JSON of a data-dependent call (dyn.nonzero, dyn.topk, dyn.nms, dyn.unique):
// a "__datadep" node that the graph executor runs on the host (runtime/GraphExecutorDataDep.cpp).
#pragma once
#include <nlohmann/json.hpp>
#include <set>
#include <string>

#include "core/graph/Expr.h"
#include "core/tir/Function.h"

namespace loom::driver {

/// {"op", "attrs", "symbol", "bound"} of a typed data-dependent call (its args typed).
nlohmann::json dataDependentNodeJson(const graph::CallNode& call);

/// The symbols that the "__datadep" nodes of an executor graph JSON bind.
std::set<std::string> dataDependentSymbols(const std::string& graphJson);

/// UnsupportedError naming the first "__datadep" node of `graphJson`, if any: such nodes run on
/// the host, and a GPU target's executor keeps every tensor on the device.
void refuseDataDependentNodes(const std::string& graphJson, const std::string& target);

/// `f` (scheduled) with the init of every reduction moved before its outermost reduce loop
/// (decompose_reduction). A data-dependent count may be 0, and an init inside a reduce loop of
/// extent 0 never runs: a sum over no hits would keep the storage's old value. Reductions the
/// primitive cannot decompose are left as they are.
tir::PrimFunc hoistReductionInits(const tir::PrimFunc& f);

}  // namespace loom::driver
