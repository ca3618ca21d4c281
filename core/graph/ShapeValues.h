// The values of shape computations (ONNX's Shape -> Gather -> Concat -> Reshape chains) as
// integer expressions over the graph's symbols, for importers and passes that need a shape
// argument that is not a constant because the model's input dims are symbolic.
#pragma once
#include <optional>
#include <vector>

#include "core/graph/Expr.h"
#include "core/tir/Expr.h"

namespace loom::graph {

/// The values of a 0-d or 1-d integer (or float holding integers) tensor expression built from
/// constants, shape_of, strided_slice, take, concatenate, cast, reshape and integer arithmetic
/// (add, subtract, multiply, divide, maximum, minimum), as int64 expressions over the symbols
/// (simplified; constants where they fold). nullopt when a value depends on tensor data.
std::optional<std::vector<tir::Expr>> shapeValues(const Expr& e);

}  // namespace loom::graph
