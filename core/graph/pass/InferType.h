// InferType: fills every node's checkedType from the op type relations (errors name the node).
#pragma once
#include "core/graph/Expr.h"

namespace loom::graph {

/// Types `e` and everything it reaches (into nested functions), caching the results in the
/// nodes, and returns e's type. A FunctionNode's type is its return type. Throws GraphTypeError
/// (from a type relation) or TypeError (untyped variable, bad tuple index, function argument
/// mismatch), each naming the node.
Type inferType(const Expr& e);
/// Types every function of the module; returns the same module.
Module inferType(const Module& m);

} // namespace loom::graph
