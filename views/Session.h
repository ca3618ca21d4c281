// The Studio's workspace: preset, schedule, target, model and runs, with the jobs that compute on them.
#pragma once
#include <QJsonObject>
#include <QObject>
#include <QThreadPool>
#include <QTimer>
#include <atomic>
#include <memory>

#include "core/driver/SessionFile.h"
#include "views/OperatorJobs.h"
#include "views/StudioTypes.h"

namespace loom::views {

class RunsModel;
struct ModelGroups;

/// Owns the workspace and runs compile / run / model jobs on worker threads. Results of a job
/// superseded by a newer request (generation counter) are dropped, never emitted. Views talk to
/// the compiler only through this class.
class Session : public QObject {
  Q_OBJECT
public:
  explicit Session(QObject* parent = nullptr);
  ~Session() override;

  // --- the operator under the editor ----------------------------------------------------
  const OperatorRequest& request() const { return m_request; }
  /// Picks a preset (parameters missing from `params` take defaults); recompiles after the delay.
  void setPreset(const QString& preset, const QMap<QString, qint64>& params = {});
  void setScheduleText(const QString& text);
  void setTarget(const QString& target);
  /// The delay between the last edit and the compile it triggers (150 ms).
  void setCompileDelay(int ms);
  /// Starts a compile of the current request now (the latest request wins).
  void compileNow();
  const CompileResult& lastCompile() const { return m_lastCompile; }

  // --- runs ---------------------------------------------------------------------------------
  /// Compiles, checks and times the current request on a worker; emits runFinished.
  void run();
  RunsModel* runs() const { return m_runs; }
  /// The version number of a schedule text (1, 2, ... in the order first seen).
  int scheduleVersion(const QString& schedule);
  /// The machine's fp32 FMA peak, measured once in the background (0 until known).
  double peakGflops() const { return m_peak; }
  void measurePeak();

  // --- model ----------------------------------------------------------------------------------
  /// Imports, optimizes, fuses and lays out the model off the UI thread; emits modelLoaded or
  /// modelFailed.
  /// Another model than the open one starts without input shapes unless `keepInputShapes`.
  void loadModel(const QString& path, bool markModified = true, bool keepInputShapes = false);
  QString modelPath() const { return m_model ? m_model->path : QString(); }
  /// The conv layout of the fused view and the kernels ("NCHW" or "NCHWc"); changing it reloads
  /// the model.
  void setModelLayout(const QString& layout);
  QString modelLayout() const { return m_layout; }
  /// Shapes of model inputs by name, for inputs with symbolic dims (which are 1 otherwise); the
  /// graph, the kernels, runs and profiles use them. Reloads the model when one is open and
  /// `reload` is set. `symbolic`: the inputs whose dims stay symbolic, named, `?` or bounded
  /// ("x:[1,3,48,W<=2048]", parseInputShapesSpec): the views and a dynamic export use them.
  void setInputShapes(const QMap<QString, QVector<qint64>>& shapes, bool reload = true, const QString& symbolic = {});
  const QMap<QString, QVector<qint64>>& inputShapes() const { return m_inputShapes; }
  const QString& symbolicInputShapes() const { return m_symbolicShapes; }
  /// --input-shapes text for TorchScript models, which record no input shapes:
  /// "x:[1,3,224,224],ids:[1,64]:int64". `fixed` (given on the command line): File > Open does
  /// not ask for others.
  void setTorchInputSpec(const QString& spec, bool fixed = false) {
    m_torchInputSpec = spec;
    m_torchInputSpecFixed = fixed;
  }
  QString torchInputSpec() const { return m_torchInputSpec; }
  bool torchInputSpecFixed() const { return m_torchInputSpecFixed; }
  const ModelData* model() const { return m_model.get(); }
  /// The kernels of the loaded model's fused groups, extracted off the UI thread after the model
  /// loads (null until groupsReady).
  const ModelGroups* modelGroups() const { return m_groups.get(); }
  /// Puts kernel `index` of modelGroups() under the editor instead of a preset (unscheduled; the
  /// caller sets the schedule text). False when there is no such kernel.
  bool openGroup(int index);

  // --- tasks ----------------------------------------------------------------------------------
  /// True while no compile, run or model job is pending or running.
  bool isIdle() const;
  /// Drops the results of the running run / model job (the worker stops at its next stage).
  void cancel();
  /// True when the workspace changed since the last save or load.
  bool isModified() const { return m_modified; }
  void setModified(bool m);

  /// The workspace as JSON (preset, parameters, schedule, target, model path, runs), the
  /// "workspace" of a session file; restore() sets it back (and reloads the model) from what
  /// driver::parseSessionFile read and checked. Layout is the window's business.
  QJsonObject toJson() const;
  void restore(const driver::SessionWorkspace& ws);

signals:
  void operatorCompiled(const loom::views::CompileResult& result);
  void compileStarted();
  void runStarted();
  void runFinished(const loom::views::RunRecord& record);
  void modelLoadStarted(const QString& path);
  void modelLoaded(const loom::views::ModelData& model);
  void modelFailed(const QString& path, const QString& message);
  void groupsReady();
  void groupsFailed(const QString& message);
  void peakMeasured(double gflops);
  void taskStarted(const QString& what);
  void taskFinished();
  void logged(const QString& line);
  void requestChanged();
  void modifiedChanged(bool modified);

private:
  void scheduleCompile();
  void startCompile();
  void endTask();
  void extractGroups();

  OperatorRequest m_request;
  CompileResult m_lastCompile;
  QTimer* m_timer = nullptr;
  QThreadPool m_pool;     ///< compiles, imports, kernel extraction (at a lowered priority)
  QThreadPool m_runPool;  ///< runs and the peak measurement: they time kernels, at normal priority
  quint64 m_compileGen = 0, m_runGen = 0, m_modelGen = 0;
  bool m_compileRunning = false, m_compilePending = false;
  int m_tasks = 0;  ///< runs and model loads in flight
  std::shared_ptr<std::atomic<bool>> m_cancel;
  RunsModel* m_runs = nullptr;
  QMap<QString, int> m_versions;
  int m_nextRunId = 1;
  double m_peak = 0;
  bool m_peakStarted = false;
  bool m_modified = false;
  std::shared_ptr<ModelData> m_model;
  std::shared_ptr<const ModelGroups> m_groups;
  QString m_layout = "NCHWc";  ///< as `loom compile` at opt level 3
  QMap<QString, QVector<qint64>> m_inputShapes;
  QString m_symbolicShapes;
  QString m_torchInputSpec;
  bool m_torchInputSpecFixed = false;
};

}  // namespace loom::views
