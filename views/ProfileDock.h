// The Profile dock: where a model's time goes. A sortable table of the kernels, a roofline chart
// and the model-level history of profiles (each against the one before).
#pragma once
#include <QJsonArray>
#include <QWidget>
#include <functional>

#include "views/ProfileJobs.h"

class QChart;
class QChartView;
class QComboBox;
class QLabel;
class QPushButton;
class QScatterSeries;
class QSortFilterProxyModel;
class QSpinBox;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QToolButton;

namespace loom::views {

class Session;

class ProfileDock : public QWidget {
  Q_OBJECT
public:
  /// Kernel table columns.
  enum Column { Kernel, Calls, TotalMs, PerCallMs, Percent, Gflops, GBs, Intensity, PeakPercent, Bound, Change, Schedule, ColumnCount };

  explicit ProfileDock(Session* session, QWidget* parent = nullptr);

  /// Profiles the session's model (its input shapes and layout) in a worker process: with the
  /// tuning records chosen in the dock (or default schedules), `repeat` timed runs after warm-up.
  /// False (with a message in the dock) when no model is open or a profile is running.
  bool startProfile();
  void cancel();
  bool isRunning() const;
  /// Called on each request before it starts (the window adds the editor's schedule of the
  /// open fused group when it differs from the default).
  void setRequestHook(std::function<void(ProfileRequest&)> hook) { m_hook = std::move(hook); }
  /// The last request started.
  const ProfileRequest& lastRequest() const { return m_lastRequest; }
  void setRepeat(int runs);
  void setWarmup(int runs);
  /// Tuning records to compile with ("" : default schedules).
  void setRecordsPath(const QString& path);
  QString recordsPath() const;
  /// An .npz of inputs by name ("" : random inputs).
  void setInputsPath(const QString& path);
  /// Adds a finished profile (what the worker's result does): the table, roofline and history
  /// show it against the previous one.
  void addResult(ProfileResult result);
  /// Forgets the profiles (another model was opened).
  void clear();
  /// The history for the session file; restoreHistory puts it back (ids kept).
  QJsonArray historyToJson() const;
  void restoreHistory(const QJsonArray& profiles);

  const QVector<ProfileResult>& history() const { return m_history; }
  /// The profile on screen (null when none).
  const ProfileResult* current() const { return m_history.isEmpty() ? nullptr : &m_history.back(); }
  MachinePeaks peaks() const { return m_peaks; }
  void setPeaks(const MachinePeaks& p) { m_peaks = p; }

  QStandardItemModel* kernelModel() const { return m_kernels; }
  QSortFilterProxyModel* kernelProxy() const { return m_proxy; }
  QTableView* kernelView() const { return m_kernelView; }
  QStandardItemModel* historyModel() const { return m_historyModel; }
  QStandardItemModel* compareModel() const { return m_compare; }
  QChartView* rooflineView() const { return m_chartView; }
  QTabWidget* tabs() const { return m_tabs; }
  /// Per kernel of the current profile with a known intensity: (kernel index, the point plotted:
  /// x = FLOP/byte, y = GFLOP/s).
  QVector<QPair<int, QPointF>> rooflinePoints() const;
  /// Selects kernel `name` in the table and the roofline (emits kernelSelected).
  void selectKernel(const QString& name);
  QString selectedKernel() const { return m_selectedKernel; }
  /// Shows history row `row` compared with the row before it.
  void showComparison(int row);

signals:
  void profileStarted();
  /// A profile arrived (after it is in the history).
  void profiled(const loom::views::ProfileResult& result);
  void profileFailed(const QString& message);
  void progress(const QString& line);
  /// A kernel was selected in the table or on the roofline.
  void kernelSelected(const QString& name);
  /// A kernel was double-clicked: open it in the schedule editor.
  void kernelActivated(const QString& name);

private:
  void showCurrent();
  void rebuildRoofline();
  void updateHistory();
  void highlightPoint();

  Session* m_session = nullptr;
  std::function<void(ProfileRequest&)> m_hook;
  ProfileRequest m_lastRequest;
  Profiler* m_profiler = nullptr;
  MachinePeaks m_peaks;
  bool m_forceMeasure = false;
  QVector<ProfileResult> m_history;
  int m_nextId = 1;
  QString m_selectedKernel;
  QPushButton* m_start = nullptr;
  QToolButton* m_cancel = nullptr;
  QSpinBox *m_repeat = nullptr, *m_warmup = nullptr;
  QComboBox *m_schedules = nullptr, *m_inputs = nullptr;
  QLabel* m_status = nullptr;
  QTabWidget* m_tabs = nullptr;
  QStandardItemModel* m_kernels = nullptr;
  QSortFilterProxyModel* m_proxy = nullptr;
  QTableView* m_kernelView = nullptr;
  QChart* m_chart = nullptr;
  QChartView* m_chartView = nullptr;
  QVector<QPair<int, QScatterSeries*>> m_points;
  QStandardItemModel *m_historyModel = nullptr, *m_compare = nullptr;
  QTableView *m_historyView = nullptr, *m_compareView = nullptr;
  QLabel* m_compareTitle = nullptr;
};

}  // namespace loom::views
