// The work behind the operator workbench, run on worker threads: live compiles and measured runs.
#pragma once
#include <QMap>
#include <QString>
#include <atomic>

#include "core/tir/Function.h"
#include "views/StudioTypes.h"

namespace loom::views {

/// What to build: a preset with its parameters (or a model's fused group), a schedule script and
/// a target ("llvm ...", "cuda [-arch=sm_XX]", "opencl").
struct OperatorRequest {
  QString preset = "matmul";
  QMap<QString, qint64> params;  ///< missing parameters take their defaults
  QString schedule;
  QString target = "llvm";
  /// A fused group of a model instead of the preset (when defined): its unscheduled kernel, as
  /// driver::extractGroups gives it.
  tir::PrimFunc func;
  QString group;        ///< the group's kernel name
  int numInputs = 0;    ///< func's first numInputs parameters are inputs, the rest results
  double flops = 0;     ///< of one call; 0 when unknown (runs then say "GFLOP/s unknown")
  bool isGroup() const { return func.defined(); }
};

/// A preset parameter with its default, for the preset picker.
struct PresetParamInfo {
  QString name;
  qint64 defaultValue = 1, minValue = 1;
  QString help;
};

/// The workload names, sorted.
QStringList presetNames();
/// The parameters of `preset` (empty for an unknown one).
QVector<PresetParamInfo> presetParams(const QString& preset);
/// One-line description of `preset`.
QString presetDescription(const QString& preset);

/// Runs the script (stopping at a failing line), lowers with every pass recorded, and generates
/// assembly for the target (for cuda: CUDA C, then PTX when NVRTC is available or a note why not;
/// for opencl: OpenCL C; an empty script on a GPU target takes the default GPU schedule). Never
/// throws: failures land in scriptOk/errorMessage/buildError.
CompileResult compileOperator(const OperatorRequest& req);

/// Compiles, checks against the reference (a preset's C++ code up to 2e8 FLOPs, else the
/// unscheduled program compiled for the host; always the latter for a fused group, on random
/// inputs), and times it. Host targets run in-process; opencl runs on the OpenCL device (PoCL on
/// a CPU-only machine) when the device plugin finds one; cuda fails with "no CUDA GPU" (Loom has
/// no CUDA device runtime). Never throws. `cancel` is polled between stages; a cancelled run
/// returns ok=false with error "cancelled".
RunRecord runOperator(const OperatorRequest& req, const std::atomic<bool>* cancel = nullptr);

/// The schedule primitives: name and "name(param, param=default)" call tip with its doc line.
struct PrimitiveInfo {
  QString name, signature, doc;
};
QVector<PrimitiveInfo> schedulePrimitives();

}  // namespace loom::views
