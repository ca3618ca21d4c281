// The work behind the operator workbench, run on worker threads: live compiles and measured runs.
#pragma once
#include <QMap>
#include <QString>
#include <atomic>

#include "views/StudioTypes.h"

namespace loom::views {

/// What to build: a preset with its parameters, a schedule script and a target.
struct OperatorRequest {
  QString preset = "matmul";
  QMap<QString, qint64> params;  ///< missing parameters take their defaults
  QString schedule;
  QString target = "llvm";
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
/// assembly for the target. Never throws: failures land in scriptOk/errorMessage/buildError.
CompileResult compileOperator(const OperatorRequest& req);

/// Compiles (host targets only), checks against the reference (the preset's C++ code up to 2e8
/// FLOPs, else the unscheduled program compiled), and times it. Never throws. `cancel` is polled
/// between stages; a cancelled run returns ok=false with error "cancelled".
RunRecord runOperator(const OperatorRequest& req, const std::atomic<bool>* cancel = nullptr);

/// The schedule primitives: name and "name(param, param=default)" call tip with its doc line.
struct PrimitiveInfo {
  QString name, signature, doc;
};
QVector<PrimitiveInfo> schedulePrimitives();

}  // namespace loom::views
