// The work behind the model view, run on a worker thread: import, optimize, fuse, lay out.
#pragma once
#include <QString>
#include <atomic>

#include "core/graph/Expr.h"
#include "views/StudioTypes.h"

namespace loom::views {

/// The drawable graph of a model function: one node per input and op call (constants are listed
/// in their consumers' properties, not drawn), fused groups as clusters. Not laid out yet.
GraphData buildGraphData(const graph::Function& main);

/// Imports `path` (ONNX), derives the optimized and fused graphs and lays all three out.
/// Throws loom::Error (import failures name the file and node) and ValueError when cancelled.
ModelData loadModelData(const QString& path, const std::atomic<bool>* cancel = nullptr);

}  // namespace loom::views
