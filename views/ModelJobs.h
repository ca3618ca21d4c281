// The work behind the model view, run on a worker thread: import, optimize, fuse, lay out.
#pragma once
#include <QMap>
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
/// `inputShapes` sets the shapes of inputs by name (a model's symbolic dims, batch or sequence,
/// are 1 otherwise); ValueError for an unknown input or a shape of another rank. `torchSpec`: the
/// --input-shapes text of a TorchScript model (which records none).
/// `symbolicSpec` (from parseInputShapesSpec): inputs whose dims stay symbolic, named, `?` or
/// bounded ("x:[1,3,48,W<=2048]"); the symbolic module (the views, a dynamic export) is imported
/// with it as `loom compile --input-shapes` would, and its bounds land in ModelData::symbolBounds.
ModelData loadModelData(const QString& path, const std::atomic<bool>* cancel = nullptr, const QString& layout = "NCHW",
                        const QMap<QString, QVector<qint64>>& inputShapes = {}, const QString& torchSpec = {},
                        const QString& symbolicSpec = {});

/// "data:[1,3,224,224],mask:[1,128]": the shapes of `inputs` as `loom compile --input-shapes` takes them.
QString inputShapesSpec(const QVector<ModelInput>& inputs);
/// Parses an --input-shapes text with the CLI's grammar (core/driver/InputShapes.h: numbers,
/// names, `?`, bounds `W<=2048`, values `W=320`). `out` gets the concrete shapes: a number per dim
/// (a symbol's value counts), 0 for a dim without one (loadModelData takes the model folder's
/// test_data_set_0 there, else the input has no concrete shape). `symbolic` (when given) gets the inputs with
/// a symbolic dim, values dropped ("x:[1,3,48,W<=2048]"), for loadModelData's symbolic import.
/// False with the grammar's error (column and caret) in `error`.
bool parseInputShapesSpec(const QString& spec, QMap<QString, QVector<qint64>>& out, QString* error = nullptr,
                          QString* symbolic = nullptr);

/// The kernels of a model's fused groups, unscheduled, and which cluster of the fused view each is.
struct ModelGroups {
  std::vector<driver::ModelGroup> groups;  ///< driver::extractGroups: what compileModel builds
  /// Per cluster of ModelData::fused: its kernel (index into groups), or -1 for a group that
  /// computes nothing (empty results). Groups that compute the same thing share one kernel.
  QVector<int> clusterGroup;
  /// Per cluster: the name of its node in the compiled model's graph (what `loom run --profile`
  /// and `loom profile` report times under), e.g. "fused_nn_conv2d_add_nn_relu_2".
  QVector<QString> clusterNodeNames;
  std::vector<double> flops;  ///< per kernel: floating-point operations of one call, 0 when unknown
  /// Per kernel: the model's default CPU schedule as a script (driver::defaultScheduleScript).
  std::vector<std::string> defaultScripts;
  double ms = 0;              ///< time taken
};

/// Which fused call of the concrete model (by index) each fused call of the symbolic one is,
/// given their ops in post order; -1 for none. The same graph through the same pipeline gives
/// the same calls in the same order, but a call's ops may differ where the concrete shapes pick
/// another algorithm (a Winograd conv) or fold a shape computation: equal counts match by
/// position; otherwise by their ops, in order (the longest common subsequence).
QVector<int> alignFusedCalls(const QVector<std::vector<std::string>>& shown, const QVector<std::vector<std::string>>& concrete);

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
