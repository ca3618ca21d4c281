// Ops whose output shape depends on the data (dyn.nonzero, dyn.topk, dyn.nms, dyn.unique): each
// call's data-dependent dim is a fresh symbol (attribute "symbol"), bound when the op has run
// (docs/dynamic-shapes.md, "Data-dependent output shapes").
#pragma once
#include <optional>
#include <string>

#include "core/graph/Expr.h"
#include "runtime/DataDependentOps.h"

namespace loom::graph {

/// Registers the dyn.* ops (called by the op registry).
void registerDataDependentOps();

/// The symbol a data-dependent call binds, or nothing for any other call.
std::optional<std::string> dataDependentSymbol(const CallNode& call);
/// True for the dyn.* ops.
bool isDataDependentOp(const std::string& opName);
/// An upper bound of the call's symbol from its argument types (typed calls only), e.g. the
/// element count of NonZero's input; the executor sizes storage with it.
Dim dataDependentBound(const CallNode& call);
/// The runtime op name ("nonzero", ...) and attributes of a data-dependent call.
std::string dataDependentRuntimeOp(const CallNode& call);
runtime::datadep::Attrs dataDependentAttrs(const CallNode& call);

}  // namespace loom::graph
