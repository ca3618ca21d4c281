// The Tuning dock: launches tuning of the current operator or the whole model and shows it live.
#pragma once
#include <QJsonObject>
#include <QMap>
#include <QPointer>
#include <QThread>
#include <QString>
#include <QStringList>
#include <QVector>
#include <QWidget>
#include <memory>

#include "core/tir/Function.h"
#include "views/StudioTypes.h"

class QChart;
class QChartView;
class QLineSeries;
class QScatterSeries;
class QValueAxis;
class QXYSeries;
class QComboBox;
class QLabel;
class QLineEdit;
class QProgressBar;
class QPushButton;
class QSpinBox;
class QCheckBox;
class QStandardItemModel;
class QTableView;

namespace loom::tune {
struct TuneEvent;
}

namespace loom::views {

class Session;

/// What to tune and how: the monitor's form fills one, tests may build their own.
struct TuneJob {
  enum class Scope { Operator, Model };
  Scope scope = Scope::Operator;
  /// Operator scope: a preset with its parameters (missing ones take defaults) ...
  QString preset;
  QMap<QString, qint64> params;
  /// ... or, when `preset` is empty, any program whose first `numInputs` parameters are inputs
  /// (e.g. a model's fused group opened in the editor; its records are the model's).
  tir::PrimFunc func;
  int numInputs = 1;
  QString funcName;         ///< what the user knows `func` by (the kernel name)
  double flops = 0;         ///< of one call of `func` (0: counted from the TIR)
  QString modelPath;        ///< Model scope: the ONNX file ...
  std::shared_ptr<const graph::Module> module;  ///< ... as the session imported it (ModelData::module)
  /// Model scope: the conv layout of the kernels ("NCHW", "NCHWc"; "" the compiler's default), the
  /// one the model view shows, so that candidates open in the editor; export with the same layout.
  QString layout;
  QString target = "llvm";  ///< must run on this machine (candidates are timed)
  int trials = 32;          ///< trials of this run (operator), or over all tasks (model)
  int trialsPerTask = 16;   ///< model scope: a task's cap (records already in the file count)
  int batchSize = 4;        ///< candidates proposed per round
  double minRepeatMs = 10;  ///< the least duration of one timing sample (`loom tune --min-repeat-ms`)
  double budgetS = 0;       ///< wall-clock budget in seconds, paused time excluded (0: none)
  QString recordsPath;      ///< JSON lines, appended as trials finish
  bool resume = true;       ///< keep the records already in the file (false: start it empty)
};

/// One successful trial, as the candidates table lists it.
struct TuneCandidate {
  QString task;     ///< the task key
  QString taskName; ///< what the user knows it by (preset spec, or the model's kernel names)
  QString kernel;   ///< a model kernel the task stands for ("" for a preset)
  int trial = 0;    ///< 1-based, over the whole run
  double ms = 0, gflops = 0;
  QString script;   ///< the candidate's schedule as a script (what "Open in Editor" loads)
};

/// A dock widget that runs one tuning job at a time on a worker thread (candidates are measured by
/// `loom tune-worker` processes through tune::ProcessRunner), forwards the tuner's events to the
/// UI thread, and shows: a chart of the best GFLOP/s and latency over trials, a table of the best
/// candidates, per-task progress rows, pause / resume (no new candidate starts while paused) and
/// cancel (the candidate being measured finishes; the records file stays valid JSON lines).
class TuningMonitor : public QWidget {
  Q_OBJECT
public:
  explicit TuningMonitor(Session* session, QWidget* parent = nullptr);
  ~TuningMonitor() override;

  /// The job the form describes for the session's current operator or model.
  TuneJob jobFromForm() const;
  /// Starts `job`. Returns false and shows the reason in the status line when the job cannot start
  /// (no model, no records path, no `loom` binary, or a run in progress: that one is cancelled).
  bool start(const TuneJob& job);
  /// Starts the form's job (the Start button).
  bool startFromForm();
  void pause();
  void resume();
  /// Stops the run: no new candidate starts; the one being measured finishes.
  void cancel();
  bool isRunning() const { return m_running; }
  bool isPaused() const { return m_paused; }
  /// Paused, and the candidate that was being measured has finished: the run is holding.
  bool isHolding() const;

  /// Scope of the form ("operator" or "model").
  void setScope(TuneJob::Scope scope);
  void setTrials(int trials);
  void setTarget(const QString& target);
  void setRecordsPath(const QString& path);
  /// The records file of the form (or the default: next to the session file, else the working directory).
  QString recordsPath() const;
  /// Chart colours for the dark or the light theme.
  void setDark(bool dark);
  /// The job of the current or last run (default-constructed before the first).
  const TuneJob& lastJob() const { return m_job; }
  /// The session file whose directory holds the default records file ("" for none).
  void setSessionPath(const QString& path) { m_sessionPath = path; }
  /// The form (scope, target, trials, per kernel, budget, records file, resume) and the last
  /// run's summary, for the session file; formFromJson restores them.
  QJsonObject formToJson() const;
  void formFromJson(const QJsonObject& o);
  /// The last run's results (the job it tuned, task rows, best candidates, chart), for the session
  /// file; empty while a run is in progress or before the first.
  QJsonObject resultsToJson() const;
  /// Shows saved results again when they are of what the session holds now: a model's (scope
  /// Whole model, or one of its kernels) only once that model is loaded (held until then, and
  /// dropped when another model loads), a preset's at once. False (and the status says why) when
  /// they are dropped; true when shown or held for the model.
  bool restoreResults(const QJsonObject& o);
  /// The job's results on screen came from the session file (not run in this window).
  bool resultsRestored() const { return m_restored; }

  /// The worker program and leading arguments; default: `findLoomBinary()` and "tune-worker".
  void setWorkerCommand(const QStringList& command) { m_workerCommand = command; }
  /// The `loom` binary: $LOOM_BINARY, else beside this program, else ../bin beside it (test
  /// binaries), else on PATH; "" when none is found.
  static QString findLoomBinary();

  // --- what the monitor shows (also read by tests) -------------------------------------------
  QStandardItemModel* candidatesModel() const { return m_candidates; }
  QStandardItemModel* tasksModel() const { return m_tasks; }
  QChart* chart() const;
  /// Points on the best-GFLOP/s curve.
  int chartPoints() const;
  /// Trials measured in this run (cancelled candidates are not counted).
  int trialsDone() const { return m_trialsDone; }
  QString statusText() const;
  /// The best candidates, fastest first (the table shows the first 20).
  const QVector<TuneCandidate>& best() const { return m_best; }
  /// Puts candidate `row`'s trace into the schedule editor (emits openInEditor).
  void openCandidate(int row);

signals:
  /// A candidate's trace script, for the preset `preset` with `params`, or (preset "") for the
  /// model kernel whose record key (tune::groupKey) is `taskKey`.
  void openInEditor(const QString& script, const QString& preset, const QMap<QString, qint64>& params, const QString& taskKey);
  void runStarted();
  /// The run ended (finished, cancelled or failed); `summary` says how.
  void runFinished(bool ok, const QString& summary);

private:
  void buildUi();
  void onEvent(quint64 run, const tune::TuneEvent& e);
  void onTasks(quint64 run, const QStringList& keys, const QStringList& names, const QStringList& kernels, const QVector<int>& weights,
               const QVector<double>& flops, int perTask);
  void onFinished(quint64 run, bool ok, const QString& summary);
  void updateButtons();
  void updateCandidates();
  void addChartPoint();
  void updateAxes();
  void updateTaskRow(int index);
  void setStatus(const QString& text);
  void styleSeries();
  void saveForm() const;
  void clearRun();
  /// Fills the dock from resultsToJson's object (no consistency check).
  void showResults(const QJsonObject& o);
  /// Another model was loaded: results of the previous one go; held ones come if they match.
  void onModelLoaded(const ModelData& model);

  struct TaskRow {
    QString key, name, kernel;
    int weight = 1, trials = 0, total = 0;
    double flops = 0, bestMs = 0;  ///< 0: nothing succeeded yet
    double baselineMs = 0;         ///< 0: not measured
  };
  struct Control;

  Session* m_session = nullptr;
  QString m_sessionPath;
  QStringList m_workerCommand;
  std::shared_ptr<Control> m_control;
  QPointer<QThread> m_thread;
  quint64 m_run = 0;
  bool m_running = false, m_paused = false;
  TuneJob m_job;
  int m_trialsDone = 0, m_failed = 0, m_trialsTotal = 0;
  QVector<TaskRow> m_rows;
  QMap<QString, int> m_rowOf;
  QVector<TuneCandidate> m_best;
  double m_bestGflops = 0, m_bestMs = 0;
  QString m_summary;           ///< the finished run's status line
  bool m_restored = false;
  QJsonObject m_heldResults;   ///< restoreResults of a model not loaded yet

  QComboBox *m_scope = nullptr, *m_target = nullptr;
  QSpinBox *m_trials = nullptr, *m_perTask = nullptr, *m_budget = nullptr;
  QLineEdit* m_records = nullptr;
  QCheckBox* m_resume = nullptr;
  QPushButton *m_start = nullptr, *m_pause = nullptr, *m_cancel = nullptr, *m_open = nullptr;
  QProgressBar* m_progress = nullptr;
  QLabel* m_status = nullptr;
  QChartView* m_chartView = nullptr;
  QLineSeries *m_gflopsSeries = nullptr, *m_msSeries = nullptr;
  QScatterSeries* m_trialSeries = nullptr;
  QValueAxis *m_axisX = nullptr, *m_axisGflops = nullptr, *m_axisMs = nullptr;
  QStandardItemModel *m_candidates = nullptr, *m_tasks = nullptr;
  QTableView *m_candidatesView = nullptr, *m_tasksView = nullptr;
};

}  // namespace loom::views
