// The work behind the model view, run on a worker thread: import, optimize, fuse, lay out.
#pragma once
#include <QString>
#include <atomic>

#include "core/driver/CompileModel.h"
#include "core/graph/Expr.h"
#include "views/StudioTypes.h"

namespace loom::views {

/// The drawable graph of a model function: one node per input and op call (constants are listed
/// in their consumers' properties, not drawn), fused groups as clusters. Not laid out yet.
GraphData buildGraphData(const graph::Function& main);

/// Imports `path` (ONNX), derives the optimized and fused graphs (fused in conv layout `layout`,
/// "NCHW" or "NCHWc") and lays all three out. Throws loom::Error (import failures name the file
/// and node) and ValueError when cancelled or for another layout.
/// `inputShapes`: --input-shapes text for models that record none (TorchScript).
ModelData loadModelData(const QString& path, const std::atomic<bool>* cancel = nullptr, const QString& layout = "NCHW",
                        const QString& inputShapes = {});

/// The kernels of a model's fused groups, unscheduled, and which cluster of the fused view each is.
struct ModelGroups {
  std::vector<driver::ModelGroup> groups;  ///< driver::extractGroups: what compileModel builds
  /// Per cluster of ModelData::fused: its kernel (index into groups), or -1 for a group that
  /// computes nothing (empty results). Groups that compute the same thing share one kernel.
  QVector<int> clusterGroup;
  std::vector<double> flops;  ///< per kernel: floating-point operations of one call, 0 when unknown
  /// Per kernel: the model's default CPU schedule as a script (driver::defaultScheduleScript).
  std::vector<std::string> defaultScripts;
  double ms = 0;              ///< time taken
};

/// Extracts `model`'s kernels (call it off the UI thread) and maps the fused view's clusters onto
/// them. Throws loom::Error (ValueError when cancelled).
ModelGroups extractModelGroups(const ModelData& model, const std::atomic<bool>* cancel = nullptr);

/// The fused clusters of `g`, collapsed: each cluster in `collapsed` becomes one node (kind
/// "group", labelled with the group's name, op count, cost (costs[cluster], e.g. "12.5 MFLOP",
/// when given) and output type) and the edges that entered or left it attach to that node. Not
/// laid out.
GraphData collapseClusters(const GraphData& g, const QSet<int>& collapsed, const QVector<QString>& costs = {});

/// "12.5 MFLOP" (empty for 0: unknown).
QString flopsText(double flops);

}  // namespace loom::views
