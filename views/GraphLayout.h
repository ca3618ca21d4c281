// Lays out a model graph with Graphviz `dot`, in-process through libgvc (call it off the UI thread).
#pragma once
#include "views/StudioTypes.h"

namespace loom::views {

/// The dot text of `g` (nodes sized from their labels, fused groups as clusters).
QString graphToDot(const GraphData& g);

/// Fills node boxes, edge splines, cluster boxes and bounds (scene coordinates, y down, points).
/// Graphviz is not thread-safe, so calls are serialized. On failure sets g.layoutError.
void layoutGraph(GraphData& g);

}  // namespace loom::views
