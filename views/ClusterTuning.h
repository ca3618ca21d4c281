// The tuning monitor's distributed run: starts `mpirun ... loom tune ... --worker-events` as a
// child process and shows each worker rank's state and throughput; Cancel ends the whole job.
#pragma once
#include <QElapsedTimer>
#include <QProcess>
#include <QStringList>
#include <QWidget>

class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QSpinBox;
class QStandardItemModel;
class QTableView;

namespace loom::views {

struct TuneJob;

/// `loom tune` arguments for `job` (workload preset or model, trials, batch, records); empty when
/// the job has no command-line form (an arbitrary function opened in the editor).
QStringList tuneArguments(const TuneJob& job);

/// A panel (shown as a window from the tuning monitor): host file, rank count and the `loom tune`
/// arguments; Start runs `mpirun [--hostfile F] --oversubscribe -np N LOOM tune ARGS --worker-events`
/// and fills a table from the "loom-worker ..." lines rank 0 prints (rank, host, state: building,
/// timing, idle, failed, trials, failed, trials per minute); Cancel terminates mpirun, which ends
/// every rank (killed after 5 s if it does not), and the records written so far stay.
class ClusterTuningPanel : public QWidget {
  Q_OBJECT
public:
  explicit ClusterTuningPanel(QWidget* parent = nullptr);
  ~ClusterTuningPanel() override;

  void setLoomProgram(const QString& loom) { m_loom = loom; }
  void setMpirun(const QString& mpirun) { m_mpirun = mpirun; }
  void setHostFile(const QString& path);
  void setRanks(int ranks);
  void setTuneArguments(const QStringList& args);
  /// The full command line Start runs (program first).
  QStringList commandLine() const;

  bool start();
  void cancel();
  bool isRunning() const;
  int exitCode() const { return m_exitCode; }
  QStandardItemModel* workers() const { return m_workers; }
  QString log() const;

signals:
  void finished(int exitCode);

private:
  void readStderr();
  void readStdout();
  void workerLine(const QString& line);
  void updateRates();

  QString m_loom, m_mpirun;
  QLineEdit* m_hostFile;
  QSpinBox* m_ranks;
  QLineEdit* m_args;
  QPushButton *m_start, *m_cancel;
  QLabel* m_status;
  QStandardItemModel* m_workers;
  QTableView* m_table;
  QPlainTextEdit* m_log;
  QProcess* m_proc = nullptr;
  QElapsedTimer m_clock;
  QString m_errBuffer, m_outBuffer;
  int m_exitCode = -1;
  bool m_cancelled = false;
};

} // namespace loom::views
