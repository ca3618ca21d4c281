// Plain value types the Studio's session hands to its views: compile results, runs, model graphs.
#pragma once
#include <map>
#include <QMetaType>
#include <QPointF>
#include <QRectF>
#include <QString>
#include <QStringList>
#include <QVector>
#include <memory>

namespace loom::graph {
struct Module;
}

namespace loom::views {

/// One loop of a printed function: what the loop-nest outline shows and colour linking uses.
struct LoopInfo {
  QString name;         ///< the loop variable
  QString extent;       ///< printed extent expression
  QString kind;         ///< "serial", "parallel", "vectorized", "unroll", "thread_binding"
  QString annotations;  ///< "key=value, ..." (thread tag included)
  int firstLine = 0;    ///< 1-based lines of the printed text the loop spans
  int lastLine = 0;
  int depth = 0;        ///< nesting depth among loops (0: outermost)
};

/// The function after one lowering pass.
struct PassText {
  QString name;
  QString text;
  bool changed = false;
};

/// One assembly line and the lowered-IR line (a loop's) it came from (0: none).
struct AsmLineInfo {
  QString text;
  int tirLine = 0;
};

/// Everything one live compile produces, for the schedule editor and its panes.
struct CompileResult {
  quint64 generation = 0;
  QString preset, target;
  bool scriptOk = true;          ///< the schedule script ran to the end
  int errorLine = 0, errorColumn = 0, errorEndColumn = 0;  ///< 1-based; the failing statement
  QString errorMessage;          ///< "LINE:COL: error: ..." as runScript gives it
  QString errorKind;             ///< the error class name
  QString buildError;            ///< lowering or code generation failed (panes keep older text)
  QString scheduledTir;          ///< after the script (as of the line before a failing one)
  QVector<LoopInfo> scheduledLoops;
  QStringList blockNames;        ///< blocks of the scheduled function, for completion
  QVector<PassText> passes;      ///< input first, then the IR after each lowering pass
  QString loweredTir;            ///< the printed lowered function the assembly refers to
  QVector<LoopInfo> loweredLoops;
  QVector<AsmLineInfo> asmLines;
  QString codeKind = "assembly"; ///< what asmLines hold: "assembly", "CUDA C + PTX", "OpenCL C"
  QString note;                  ///< e.g. "default GPU schedule (the script is empty)"
  double compileMs = 0;
};

/// One row of the Runs dock.
struct RunRecord {
  int id = 0;
  int scheduleVersion = 0;
  QString preset, target, schedule, loweredTir;
  bool ok = false;          ///< it compiled and ran (the check is `correct`)
  QString error;            ///< why not, when !ok
  bool correct = false;
  double maxRelError = 0;
  QString reference;        ///< what the result was compared with
  double medianMs = 0, gflops = 0;
  double minMs = 0, maxMs = 0;  ///< spread of the timing samples (per call)
  int repeats = 0, callsPerRepeat = 0;  ///< samples taken after the warm-up, calls in each
  double peakGflops = 0;    ///< the machine's peak at the time (0: not measured yet)
  bool flopsKnown = true;   ///< false: the operator's FLOP count is unknown (gflops is 0)
  double defaultMs = 0;     ///< a fused group's time under the model's default schedule (0: not measured)
  QString device;           ///< where it ran when not the host CPU ("OpenCL: pocl ...")
  QString model;            ///< the model a fused group's run belongs to ("" for presets)
  QString assembly;         ///< the code the run's schedule compiled to (the Assembly pane's, unfiltered)
};

/// A node of a model graph as drawn.
struct GraphNode {
  QString id;        ///< dot id ("n12")
  QString op;        ///< op name, "input", "const", "tuple", ".0"
  QString name;      ///< the source node name (ONNX) or input / constant name
  QString shape;     ///< output type text
  QString kind;      ///< "op", "input", "const", "tuple", "output", "group" (a collapsed cluster)
  QStringList properties;  ///< "key\tvalue" lines for the Properties panel
  int cluster = -1;  ///< fused group index, or -1
  int group = -1;    ///< kind "group": the collapsed cluster it stands for
  QRectF box;        ///< laid out, scene coordinates (y down)
};

struct GraphEdge {
  int from = 0, to = 0;    ///< node indices
  QString label;           ///< the value's type text
  QVector<QPointF> spline; ///< cubic Bezier control points (1 + 3k), scene coordinates
};

struct GraphCluster {
  QString name;  ///< fused group name
  QRectF box;    ///< null when the cluster is collapsed (drawn as one node)
};

/// One view (imported / optimized / fused) of a model, laid out.
struct GraphData {
  QVector<GraphNode> nodes;
  QVector<GraphEdge> edges;
  QVector<GraphCluster> clusters;
  QRectF bounds;
  QString layoutError;  ///< set when Graphviz failed
};

/// A graph input of a model: its dims as the file declares them ("batch", "3", ...) and the
/// concrete shape kernels, runs and profiles use: set by Model > Input Shapes... (or
/// --input-shapes), else the shape of the input in the model folder's test_data_set_0, else
/// empty (a symbolic input without values: actions that need concrete shapes ask for them).
struct ModelInput {
  QString name;
  QStringList declared;
  QVector<qint64> shape;  ///< empty when unknown
  /// Where `shape` came from: "file" (all dims static), "set" (the dialog, the command line or
  /// the session), "test_data_set_0", or "" (unknown).
  QString shapeSource;
  bool hasShape() const { return !shape.isEmpty(); }
  bool isSymbolic() const {
    for (const QString& d : declared)
      if (d.isEmpty() || !d[0].isDigit()) return true;
    return false;
  }
};

/// A loaded model: three views of it and a summary.
struct ModelData {
  quint64 generation = 0;
  QString path;
  GraphData imported, optimized, fused;
  int opCount = 0, fusedGroups = 0;  ///< ops as imported; clusters of the fused view
  int optimizedOpCount = 0, fusedOpCount = 0;  ///< ops in the optimized and fused views
  QVector<ModelInput> inputs;  ///< the graph inputs and the shapes they were imported with
  double loadMs = 0;
  /// The conv layout the fused view and the kernels use: "NCHW" (as imported) or "NCHWc"
  /// (channel-blocked by ConvertLayout, as `loom compile --desired-layout NCHWc`).
  QString layout = "NCHW";
  /// The imported module at the concrete input shapes (types inferred): what the kernels of the
  /// fused groups, tuning and a static export are made from. Null when a symbolic input has no
  /// concrete shape (see concrete()).
  std::shared_ptr<const graph::Module> module;
  /// `module` after the fuse pipeline: one call of a Primitive function per kernel.
  std::shared_ptr<const graph::Module> fusedModule;
  /// The module with the model's symbolic dims kept (`Tensor[(batch, 3, 48, W), float32]`): what
  /// the three views show and a dynamic export compiles. The same as `module` for a static model.
  std::shared_ptr<const graph::Module> dynamicModule;
  /// The upper bounds Model > Input Shapes… or `--input-shapes` gave symbolic dims ("W<=2048"),
  /// by symbol (driver::LoadedModel::symbolBounds): a dynamic export records them.
  std::map<std::string, int64_t> symbolBounds;
  /// `dynamicModule` after the fuse pipeline: one call per cluster of `fused`.
  std::shared_ptr<const graph::Module> dynamicFusedModule;
  /// Set when the views could not be built from the symbolic model and show `module` instead
  /// (the reason), e.g. a Reshape whose target is tensor data.
  QString symbolicNote;
  /// True when every input has a concrete shape: kernels, runs, profiles and a static export work.
  bool concrete() const { return module != nullptr; }
  /// True when an input has a symbolic dim.
  bool hasSymbolicInputs() const {
    for (const ModelInput& in : inputs)
      if (in.isSymbolic()) return true;
    return false;
  }
};

}  // namespace loom::views

Q_DECLARE_METATYPE(loom::views::CompileResult)
Q_DECLARE_METATYPE(loom::views::RunRecord)
Q_DECLARE_METATYPE(loom::views::ModelData)
