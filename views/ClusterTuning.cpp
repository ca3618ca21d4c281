// ClusterTuningPanel: mpirun as a child process, its worker-state lines as a table.
#include "views/ClusterTuning.h"

#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProcessEnvironment>
#include <QPushButton>
#include <QRegularExpression>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <unistd.h>

#include "views/TuningMonitor.h"

namespace loom::views {

namespace {
enum Column { kRank, kHost, kState, kTrials, kFailed, kRate, kColumns };

/// Arguments as one line that QProcess::splitCommand reads back (quoted where needed).
QString joinCommand(const QStringList& args) {
  QStringList out;
  for (QString a : args) {
    if (!a.isEmpty() && !a.contains(QRegularExpression("[\\s\"']"))) {
      out << a;
      continue;
    }
    out << "\"" + a.replace("\"", "\"\"\"") + "\"";
  }
  return out.join(' ');
}
} // namespace

QStringList tuneArguments(const TuneJob& job) {
  QStringList args;
  if (job.scope == TuneJob::Scope::Model) {
    if (job.modelPath.isEmpty()) return {};
    args << job.modelPath << "--trials" << QString::number(job.trials) << "--trials-per-task"
         << QString::number(job.trialsPerTask);
    if (!job.layout.isEmpty()) args << "--desired-layout" << job.layout;
  } else {
    if (job.preset.isEmpty()) return {};
    QStringList params;
    for (auto it = job.params.begin(); it != job.params.end(); ++it) params << it.key() + "=" + QString::number(it.value());
    args << "--workload" << job.preset + (params.isEmpty() ? "" : ":" + params.join(',')) << "--trials" << QString::number(job.trials);
  }
  args << "--target" << job.target << "--batch" << QString::number(job.batchSize) << "--min-repeat-ms"
       << QString::number(job.minRepeatMs) << "--output" << job.recordsPath;
  if (job.resume) args << "--resume";
  return args;
}

ClusterTuningPanel::ClusterTuningPanel(QWidget* parent) : QWidget(parent) {
  setWindowTitle("Tune on a cluster (MPI)");
  m_mpirun = QStandardPaths::findExecutable("mpirun");
  auto* layout = new QVBoxLayout(this);
  auto* hostRow = new QHBoxLayout;
  m_hostFile = new QLineEdit;
  m_hostFile->setObjectName("clusterHostFile");
  m_hostFile->setPlaceholderText("host file (empty: this machine)");
  auto* browse = new QPushButton("…");
  connect(browse, &QPushButton::clicked, this, [this] {
    QString f = QFileDialog::getOpenFileName(this, "Host file");
    if (!f.isEmpty()) m_hostFile->setText(f);
  });
  m_ranks = new QSpinBox;
  m_ranks->setObjectName("clusterRanks");
  m_ranks->setRange(2, 4096);
  m_ranks->setValue(3);
  m_ranks->setToolTip("MPI ranks: rank 0 searches, the others build and measure");
  hostRow->addWidget(new QLabel("Hosts:"));
  hostRow->addWidget(m_hostFile, 1);
  hostRow->addWidget(browse);
  hostRow->addWidget(new QLabel("Ranks:"));
  hostRow->addWidget(m_ranks);
  layout->addLayout(hostRow);
  auto* argRow = new QHBoxLayout;
  m_args = new QLineEdit;
  m_args->setObjectName("clusterArgs");
  m_args->setToolTip("Arguments of loom tune (the same as a local run)");
  m_start = new QPushButton("Start");
  m_start->setObjectName("clusterStart");
  m_cancel = new QPushButton("Cancel");
  m_cancel->setObjectName("clusterCancel");
  m_cancel->setEnabled(false);
  argRow->addWidget(new QLabel("loom tune"));
  argRow->addWidget(m_args, 1);
  argRow->addWidget(m_start);
  argRow->addWidget(m_cancel);
  layout->addLayout(argRow);
  m_status = new QLabel("Not running");
  m_status->setObjectName("clusterStatus");
  layout->addWidget(m_status);
  m_workers = new QStandardItemModel(0, kColumns, this);
  m_workers->setHorizontalHeaderLabels({"Rank", "Host", "State", "Trials", "Failed", "Trials/min"});
  m_table = new QTableView;
  m_table->setObjectName("clusterWorkers");
  m_table->setModel(m_workers);
  m_table->verticalHeader()->hide();
  m_table->horizontalHeader()->setStretchLastSection(true);
  layout->addWidget(m_table, 2);
  m_log = new QPlainTextEdit;
  m_log->setObjectName("clusterLog");
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(2000);
  layout->addWidget(m_log, 1);
  connect(m_start, &QPushButton::clicked, this, &ClusterTuningPanel::start);
  connect(m_cancel, &QPushButton::clicked, this, &ClusterTuningPanel::cancel);
  auto* rates = new QTimer(this);
  connect(rates, &QTimer::timeout, this, &ClusterTuningPanel::updateRates);
  rates->start(1000);
}

ClusterTuningPanel::~ClusterTuningPanel() {
  if (isRunning()) {
    m_proc->terminate();
    if (!m_proc->waitForFinished(5000)) m_proc->kill();
    m_proc->waitForFinished(2000);
  }
}

void ClusterTuningPanel::setHostFile(const QString& path) { m_hostFile->setText(path); }
void ClusterTuningPanel::setRanks(int ranks) { m_ranks->setValue(ranks); }
void ClusterTuningPanel::setTuneArguments(const QStringList& args) { m_args->setText(joinCommand(args)); }

QStringList ClusterTuningPanel::commandLine() const {
  QStringList cmd = {m_mpirun};
  if (!m_hostFile->text().trimmed().isEmpty()) cmd << "--hostfile" << m_hostFile->text().trimmed();
  cmd << "--oversubscribe" << "--bind-to" << "none" << "-np" << QString::number(m_ranks->value()) << m_loom << "tune";
  cmd << QProcess::splitCommand(m_args->text()) << "--worker-events";
  return cmd;
}

bool ClusterTuningPanel::isRunning() const { return m_proc && m_proc->state() != QProcess::NotRunning; }

QString ClusterTuningPanel::log() const { return m_log->toPlainText(); }

bool ClusterTuningPanel::start() {
  if (isRunning()) return false;
  if (m_mpirun.isEmpty() || m_loom.isEmpty()) {
    m_status->setText(m_mpirun.isEmpty() ? "mpirun not found (install openmpi-bin)" : "the loom binary was not found");
    return false;
  }
  if (QProcess::splitCommand(m_args->text()).isEmpty()) {
    m_status->setText("give the arguments of loom tune");
    return false;
  }
  m_workers->removeRows(0, m_workers->rowCount());
  m_log->clear();
  m_errBuffer.clear();
  m_outBuffer.clear();
  m_exitCode = -1;
  m_cancelled = false;
  delete m_proc;
  m_proc = new QProcess(this);
  QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
  if (::getuid() == 0) {
    env.insert("OMPI_ALLOW_RUN_AS_ROOT", "1");
    env.insert("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1");
  }
  m_proc->setProcessEnvironment(env);
  connect(m_proc, &QProcess::readyReadStandardError, this, &ClusterTuningPanel::readStderr);
  connect(m_proc, &QProcess::readyReadStandardOutput, this, &ClusterTuningPanel::readStdout);
  connect(m_proc, &QProcess::finished, this, [this](int code, QProcess::ExitStatus status) {
    readStderr();
    readStdout();
    m_exitCode = status == QProcess::NormalExit ? code : -2;
    for (int r = 0; r < m_workers->rowCount(); ++r)
      if (m_workers->item(r, kState)->text() != "failed") m_workers->item(r, kState)->setText(m_cancelled ? "cancelled" : "done");
    m_status->setText(m_cancelled ? "Cancelled; the records written so far are kept"
                                  : (m_exitCode == 0 ? "Finished" : QString("Ended with exit code %1 (see the log)").arg(m_exitCode)));
    m_start->setEnabled(true);
    m_cancel->setEnabled(false);
    emit finished(m_exitCode);
  });
  QStringList cmd = commandLine();
  m_log->appendPlainText("$ " + joinCommand(cmd));
  m_clock.start();
  m_proc->start(cmd.front(), cmd.mid(1));
  if (!m_proc->waitForStarted(10000)) {
    m_status->setText("mpirun did not start: " + m_proc->errorString());
    return false;
  }
  m_status->setText(QString("Running on %1 ranks").arg(m_ranks->value()));
  m_start->setEnabled(false);
  m_cancel->setEnabled(true);
  return true;
}

void ClusterTuningPanel::cancel() {
  if (!isRunning()) return;
  m_cancelled = true;
  m_status->setText("Cancelling…");
  m_proc->terminate(); // mpirun passes SIGTERM to every rank and ends the job
  QProcess* p = m_proc;
  QTimer::singleShot(5000, p, [p] {
    if (p->state() != QProcess::NotRunning) p->kill();
  });
}

void ClusterTuningPanel::readStderr() {
  if (!m_proc) return;
  m_errBuffer += QString::fromUtf8(m_proc->readAllStandardError());
  qsizetype nl;
  while ((nl = m_errBuffer.indexOf('\n')) >= 0) {
    QString line = m_errBuffer.left(nl);
    m_errBuffer.remove(0, nl + 1);
    if (line.startsWith("loom-worker "))
      workerLine(line);
    else
      m_log->appendPlainText(line);
  }
}

void ClusterTuningPanel::readStdout() {
  if (!m_proc) return;
  m_outBuffer += QString::fromUtf8(m_proc->readAllStandardOutput());
  qsizetype nl;
  while ((nl = m_outBuffer.indexOf('\n')) >= 0) {
    QString line = m_outBuffer.left(nl);
    m_outBuffer.remove(0, nl + 1);
    int cr = int(line.lastIndexOf('\r'));
    if (cr >= 0) line = line.mid(cr + 1); // a progress bar's last state
    m_log->appendPlainText(line.remove(QRegularExpression("\x1b\\[K")));
  }
}

void ClusterTuningPanel::workerLine(const QString& line) {
  static const QRegularExpression re("rank=(\\d+) host=(\\S+) state=(\\S+) trials=(\\d+) failed=(\\d+)");
  QRegularExpressionMatch m = re.match(line);
  if (!m.hasMatch()) return;
  const QString rank = m.captured(1);
  int row = 0;
  for (; row < m_workers->rowCount(); ++row)
    if (m_workers->item(row, kRank)->text() == rank) break;
  if (row == m_workers->rowCount()) {
    QList<QStandardItem*> items;
    for (int c = 0; c < kColumns; ++c) items << new QStandardItem;
    items[kRank]->setText(rank);
    m_workers->appendRow(items);
  }
  m_workers->item(row, kHost)->setText(m.captured(2));
  m_workers->item(row, kState)->setText(m.captured(3));
  m_workers->item(row, kTrials)->setText(m.captured(4));
  m_workers->item(row, kFailed)->setText(m.captured(5));
  updateRates();
}

void ClusterTuningPanel::updateRates() {
  if (!m_clock.isValid()) return;
  double minutes = double(m_clock.elapsed()) / 60000.0;
  if (minutes <= 0) return;
  for (int r = 0; r < m_workers->rowCount(); ++r)
    m_workers->item(r, kRate)->setText(QString::number(m_workers->item(r, kTrials)->text().toDouble() / minutes, 'f', 1));
}

} // namespace loom::views
