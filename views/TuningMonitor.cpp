// The Tuning dock: a tuning run on a worker thread, its events charted and tabulated on the UI thread.
#include "views/TuningMonitor.h"

#include <QChart>
#include <QChartView>
#include <QCheckBox>
#include <QComboBox>
#include <QCoreApplication>
#include <QDir>
#include <QFileDialog>
#include <QFileInfo>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonArray>
#include <QLabel>
#include <QLineEdit>
#include <QLineSeries>
#include <QPointer>
#include <QProgressBar>
#include <QPushButton>
#include <QScatterSeries>
#include <QSettings>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTableView>
#include <QPointer>
#include <QThread>
#include <QVBoxLayout>
#include <QXYSeries>
#include <QValueAxis>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>

#include "codegen/Target.h"
#include "core/driver/CompileModelGPU.h"
#include "core/support/Error.h"
#include "core/topi/Workloads.h"
#include "core/tune/FlopCount.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/TaskScheduler.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"
#include "views/Background.h"
#include "views/ClusterTuning.h"
#include "views/Session.h"

namespace loom::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

/// The error kind of a candidate the run was stopped before: never measured, never recorded.
constexpr const char* kStopped = "stopped";

constexpr int kShownCandidates = 20;

/// "split, split, reorder, parallel ...": the primitives of a script, for a one-line table cell.
QString traceSummary(const QString& script) {
  QStringList prims;
  for (const QString& line : script.split('\n', Qt::SkipEmptyParts)) {
    int at = line.indexOf("sch.");
    if (at < 0) continue;
    QString name = line.mid(at + 4).section('(', 0, 0);
    if (name != "get_block" && name != "get_loops" && name != "get_child_blocks") prims << name;
  }
  return prims.join(", ");
}

/// Measures candidates one at a time through `inner`, so that a pause holds the next candidate
/// and a stop skips the rest of the batch (reported with error kind kStopped).
class StoppableRunner : public tune::Runner {
public:
  StoppableRunner(tune::Runner& inner, std::function<bool()> waitOrStop) : m_inner(inner), m_waitOrStop(std::move(waitOrStop)) {}

  std::vector<tune::MeasureResult> run(const std::vector<tune::MeasureCandidate>& candidates,
                                       const tune::MeasureOptions& options,
                                       const std::function<void(size_t, const tune::MeasureResult&)>& onResult) override {
    std::vector<tune::MeasureResult> out;
    for (size_t i = 0; i < candidates.size(); ++i) {
      tune::MeasureResult r;
      if (m_waitOrStop()) {
        r.errorKind = kStopped;
        r.errorMessage = "the tuning run was stopped before this candidate";
      } else {
        r = m_inner.run({candidates[i]}, options).at(0);
        if (r.errorKind == "Cancelled") {  // killed by Cancel: not a measurement of the candidate
          r.errorKind = kStopped;
          r.errorMessage = "the tuning run was cancelled while this candidate was being measured";
        }
      }
      out.push_back(r);
      if (onResult) onResult(i, r);
    }
    return out;
  }

private:
  tune::Runner& m_inner;
  std::function<bool()> m_waitOrStop;
};

/// The records file, minus the candidates a stop skipped (they were never measured).
class RecordsFile : public tune::Database {
public:
  RecordsFile(const std::string& path, bool truncate) : m_file(path, truncate) {}
  void commit(const tune::TuningRecord& r) override {
    if (r.errorKind != kStopped) m_file.commit(r);
  }
  std::vector<tune::TuningRecord> records(const std::string& workload, const std::string& target) const override {
    return m_file.records(workload, target);
  }
  const std::vector<tune::TuningRecord>& all() const override { return m_file.all(); }

private:
  tune::JsonDatabase m_file;
};

}  // namespace

/// Shared by the UI and the tuning thread: cancel, pause and the time budget.
struct TuningMonitor::Control {
  using Clock = std::chrono::steady_clock;
  std::atomic<bool> cancelled{false};
  std::mutex mutex;
  std::condition_variable cv;
  bool paused = false;
  double budgetS = 0;
  Clock::time_point start = Clock::now(), pausedAt;
  Clock::duration pausedFor{};
  std::atomic<bool> holding{false};  ///< the tuning thread waits in a pause
  std::function<void()> onHold;      ///< called on the tuning thread when it starts holding

  bool overBudget() const {  // with mutex held
    if (budgetS <= 0) return false;
    Clock::duration spent = (paused ? pausedAt : Clock::now()) - start - pausedFor;
    return std::chrono::duration<double>(spent).count() >= budgetS;
  }
  /// Blocks while paused; true when the run must stop (cancelled, or the budget is spent).
  bool waitOrStop() {
    std::unique_lock<std::mutex> lock(mutex);
    if (paused && !cancelled) {
      holding = true;
      if (onHold) onHold();
      cv.wait(lock, [&] { return !paused || cancelled.load(); });
      holding = false;
    }
    return cancelled.load() || overBudget();
  }
  void setPaused(bool p) {
    std::lock_guard<std::mutex> lock(mutex);
    if (p == paused) return;
    if (p) pausedAt = Clock::now();
    else pausedFor += Clock::now() - pausedAt;
    paused = p;
    cv.notify_all();
  }
  void cancel() {
    std::lock_guard<std::mutex> lock(mutex);
    cancelled = true;
    cv.notify_all();
  }
};

TuningMonitor::TuningMonitor(Session* session, QWidget* parent) : QWidget(parent), m_session(session) {
  setObjectName("tuningMonitor");
  buildUi();
  updateButtons();
}

TuningMonitor::~TuningMonitor() {
  // The tuning thread stops after the candidate being measured; its queued events find this
  // widget gone. Waiting keeps it from outliving the application.
  if (m_control) m_control->cancel();
  if (m_thread) m_thread->wait();
}

void TuningMonitor::buildUi() {
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(4, 4, 4, 4);

  // The form: what to tune, how long, where the records go.
  auto* form = new QHBoxLayout;
  m_scope = new QComboBox;
  m_scope->addItems({"This operator", "Whole model"});
  m_scope->setToolTip("Tune what is in the editor (an operator preset or a model's fused-group kernel), or every kernel of the open model");
  if (m_session) {
    auto rename = [this] {
      const OperatorRequest& req = m_session->request();
      m_scope->setItemText(0, req.isGroup() ? QString("This kernel (%1)").arg(req.group) : QString("This operator (%1)").arg(req.preset));
    };
    connect(m_session, &Session::requestChanged, this, rename);
    rename();
    connect(m_session, &Session::modelLoaded, this, &TuningMonitor::onModelLoaded);
  }
  m_target = new QComboBox;
  m_target->setEditable(true);
  m_target->addItems({"llvm", "llvm -mcpu=native"});
  m_target->setMinimumContentsLength(12);
  m_target->setToolTip("Tuning measures candidates, so the target must run on this machine");
  m_trials = new QSpinBox;
  m_trials->setRange(1, 100000);
  m_trials->setValue(32);
  m_trials->setToolTip("Trials of this run (a model: over all its kernels)");
  m_perTask = new QSpinBox;
  m_perTask->setRange(1, 100000);
  m_perTask->setValue(16);
  m_perTask->setToolTip("Whole model: the most trials one kernel gets (records already in the file count)");
  m_budget = new QSpinBox;
  m_budget->setRange(0, 7 * 24 * 3600);
  m_budget->setSuffix(" s");
  m_budget->setSpecialValueText("none");
  m_budget->setToolTip("Time budget (paused time excluded); the run stops after the candidate that passes it");
  form->addWidget(new QLabel("Tune:"));
  form->addWidget(m_scope);
  form->addWidget(new QLabel("target"));
  form->addWidget(m_target);
  form->addWidget(new QLabel("trials"));
  form->addWidget(m_trials);
  form->addWidget(new QLabel("per kernel"));
  form->addWidget(m_perTask);
  form->addWidget(new QLabel("budget"));
  form->addWidget(m_budget);
  form->addStretch(1);
  layout->addLayout(form);

  auto* recordsRow = new QHBoxLayout;
  m_records = new QLineEdit;
  m_records->setPlaceholderText("records file (default: next to the session file)");
  m_records->setToolTip("Tuning records, JSON lines, written as each trial finishes");
  auto* browse = new QPushButton("…");
  browse->setToolTip("Pick the records file");
  browse->setMaximumWidth(30);
  m_resume = new QCheckBox("resume");
  m_resume->setChecked(true);
  m_resume->setToolTip("Keep the records already in the file (unchecked: start the file empty)");
  m_start = new QPushButton("Start");
  m_start->setObjectName("tuneStart");
  m_pause = new QPushButton("Pause");
  m_pause->setObjectName("tunePause");
  m_pause->setToolTip("No new candidate starts while paused; Resume continues");
  m_cancel = new QPushButton("Cancel");
  m_cancel->setObjectName("tuneCancel");
  m_cancel->setToolTip("Stop now: the candidate being measured is dropped (not recorded), the records so far stay");
  recordsRow->addWidget(new QLabel("Records:"));
  recordsRow->addWidget(m_records, 1);
  recordsRow->addWidget(browse);
  recordsRow->addWidget(m_resume);
  recordsRow->addWidget(m_start);
  recordsRow->addWidget(m_pause);
  recordsRow->addWidget(m_cancel);
  auto* cluster = new QPushButton("Cluster…");
  cluster->setObjectName("tuneCluster");
  cluster->setToolTip("Run this job with mpirun on the hosts of a host file (views/ClusterTuning.h)");
  connect(cluster, &QPushButton::clicked, this, [this] {
    auto* panel = new ClusterTuningPanel;
    panel->setAttribute(Qt::WA_DeleteOnClose);
    panel->setLoomProgram(findLoomBinary());
    panel->setTuneArguments(tuneArguments(jobFromForm()));
    panel->resize(720, 480);
    panel->show();
  });
  recordsRow->addWidget(cluster);
  layout->addLayout(recordsRow);

  auto* progressRow = new QHBoxLayout;
  m_progress = new QProgressBar;
  m_progress->setRange(0, 1);
  m_progress->setValue(0);
  m_progress->setFormat("%v/%m trials");
  m_progress->setMaximumWidth(220);
  m_status = new QLabel("idle");
  m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);
  // A long status line wraps or clips here; it never widens the dock (nor the window).
  m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_status->setMinimumWidth(50);
  progressRow->addWidget(m_progress);
  progressRow->addWidget(m_status, 1);
  layout->addLayout(progressRow);

  // The chart: best GFLOP/s and best latency over trials, every trial's GFLOP/s as a dot.
  auto* chart = new QChart;
  chart->setMargins(QMargins(2, 2, 2, 2));
  chart->legend()->setAlignment(Qt::AlignBottom);
  m_trialSeries = new QScatterSeries;
  m_trialSeries->setName("trial GFLOP/s");
  m_gflopsSeries = new QLineSeries;
  m_gflopsSeries->setName("best GFLOP/s");
  m_msSeries = new QLineSeries;
  m_msSeries->setName("best latency (ms)");
  styleSeries();
  chart->addSeries(m_trialSeries);
  chart->addSeries(m_gflopsSeries);
  chart->addSeries(m_msSeries);
  m_axisX = new QValueAxis;
  m_axisX->setTitleText("trial");
  m_axisX->setLabelFormat("%d");
  m_axisGflops = new QValueAxis;
  m_axisGflops->setTitleText("GFLOP/s");
  m_axisGflops->setLabelFormat("%.0f");
  m_axisMs = new QValueAxis;
  m_axisMs->setTitleText("ms");
  m_axisMs->setLabelFormat("%.3g");
  chart->addAxis(m_axisX, Qt::AlignBottom);
  chart->addAxis(m_axisGflops, Qt::AlignLeft);
  chart->addAxis(m_axisMs, Qt::AlignRight);
  for (QAbstractSeries* s : std::initializer_list<QAbstractSeries*>{m_trialSeries, m_gflopsSeries}) {
    s->attachAxis(m_axisX);
    s->attachAxis(m_axisGflops);
  }
  m_msSeries->attachAxis(m_axisX);
  m_msSeries->attachAxis(m_axisMs);
  m_chartView = new QChartView(chart);
  m_chartView->setRenderHint(QPainter::Antialiasing);
  m_chartView->setMinimumSize(240, 160);
  chart->setTitle("No trials yet: Start (or Tune > Tune This Operator, Ctrl+T) plots the best GFLOP/s and latency here");
  for (QValueAxis* a : {m_axisX, m_axisGflops, m_axisMs}) a->setLabelsVisible(false);  // no "1, 1, 0, 0" ticks of an empty range

  m_candidates = new QStandardItemModel(this);
  m_candidates->setHorizontalHeaderLabels({"GFLOP/s", "ms", "trial", "task", "trace"});
  m_candidatesView = new QTableView;
  m_candidatesView->setModel(m_candidates);
  m_candidatesView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_candidatesView->setSelectionMode(QAbstractItemView::SingleSelection);
  m_candidatesView->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_candidatesView->verticalHeader()->hide();
  m_candidatesView->horizontalHeader()->setStretchLastSection(true);
  m_candidatesView->setWordWrap(false);
  m_candidatesView->setMinimumHeight(m_candidatesView->verticalHeader()->defaultSectionSize() * 4 + 30);
  m_candidatesView->setToolTip("The fastest candidates; double-click one to open its trace in the schedule editor");
  m_candidatesView->setObjectName("tuneCandidates");
  m_open = new QPushButton("Open in Editor");
  m_open->setObjectName("tuneOpen");
  m_open->setToolTip("Put the selected candidate's schedule into the editor");

  m_tasks = new QStandardItemModel(this);
  m_tasks->setHorizontalHeaderLabels({"task", "weight", "trials", "best ms", "GFLOP/s", "baseline ms", "speedup"});
  m_tasksView = new QTableView;
  m_tasksView->setModel(m_tasks);
  m_tasksView->setEditTriggers(QAbstractItemView::NoEditTriggers);
  m_tasksView->verticalHeader()->hide();
  m_tasksView->horizontalHeader()->setStretchLastSection(true);
  m_tasksView->setWordWrap(false);
  m_tasksView->setMinimumHeight(m_tasksView->verticalHeader()->defaultSectionSize() * 4 + 30);
  m_tasksView->setToolTip("Per task: the kernels it stands for, how often the model runs it, trials, best time, and the\n"
                          "baseline (an operator: the unscheduled program; a model kernel: its default schedule, which the\n"
                          "compiled model keeps while it is faster than the best candidate: \"default kept\")");

  auto* candidatesPage = new QWidget;
  auto* cl = new QVBoxLayout(candidatesPage);
  cl->setContentsMargins(0, 0, 0, 0);
  // The button sits on the title's line: below the table it was drawn over the fourth row when
  // the bottom docks are short.
  auto* titleRow = new QHBoxLayout;
  titleRow->addWidget(new QLabel("Best candidates"));
  titleRow->addStretch(1);
  titleRow->addWidget(m_open);
  cl->addLayout(titleRow);
  cl->addWidget(m_candidatesView, 1);
  auto* tasksPage = new QWidget;
  auto* tl = new QVBoxLayout(tasksPage);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(new QLabel("Tasks"));
  tl->addWidget(m_tasksView, 1);

  auto* tables = new QSplitter(Qt::Vertical);
  tables->addWidget(candidatesPage);
  tables->addWidget(tasksPage);
  tables->setStretchFactor(0, 3);
  tables->setStretchFactor(1, 2);
  tables->setChildrenCollapsible(false);  // each table keeps its four rows
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(m_chartView);
  split->addWidget(tables);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 1);
  split->setSizes({500, 500});
  split->setChildrenCollapsible(false);
  layout->addWidget(split, 1);

  connect(browse, &QPushButton::clicked, this, [this] {
    QString path = QFileDialog::getSaveFileName(this, "Tuning records", recordsPath(), "Tuning records (*.json *.jsonl);;All files (*)",
                                                nullptr, QFileDialog::DontConfirmOverwrite);
    if (!path.isEmpty()) m_records->setText(path);
  });
  connect(m_start, &QPushButton::clicked, this, &TuningMonitor::startFromForm);
  connect(m_pause, &QPushButton::clicked, this, [this] { m_paused ? resume() : pause(); });
  connect(m_cancel, &QPushButton::clicked, this, &TuningMonitor::cancel);
  connect(m_open, &QPushButton::clicked, this, [this] {
    QModelIndexList rows = m_candidatesView->selectionModel()->selectedRows();
    openCandidate(rows.isEmpty() ? 0 : rows.first().row());
  });
  connect(m_candidatesView, &QTableView::doubleClicked, this, [this](const QModelIndex& index) { openCandidate(index.row()); });
  connect(m_scope, &QComboBox::currentIndexChanged, this, &TuningMonitor::updateButtons);

  // The form as it was last started.
  QSettings settings;
  m_trials->setValue(settings.value("tuning/trials", m_trials->value()).toInt());
  m_perTask->setValue(settings.value("tuning/perKernel", m_perTask->value()).toInt());
  m_budget->setValue(settings.value("tuning/budget", m_budget->value()).toInt());
  m_target->setCurrentText(settings.value("tuning/target", m_target->currentText()).toString());
}

void TuningMonitor::styleSeries() {
  m_trialSeries->setMarkerSize(5);
  m_trialSeries->setColor(QColor(0x9e, 0xb8, 0xd9));
  m_trialSeries->setBorderColor(Qt::transparent);
  m_gflopsSeries->setPen(QPen(QColor(0x3a, 0x7b, 0xe0), 2));
  m_msSeries->setPen(QPen(QColor(0xe0, 0x7a, 0x2a), 2, Qt::DashLine));
}

void TuningMonitor::setDark(bool dark) {
  // A theme resets the series' colours: ours go back on after it.
  chart()->setTheme(dark ? QChart::ChartThemeDark : QChart::ChartThemeLight);
  chart()->setBackgroundRoundness(0);
  if (dark) chart()->setBackgroundBrush(QColor(0x2b, 0x2d, 0x30));  // the Studio's dark window colour
  styleSeries();
}

void TuningMonitor::saveForm() const {
  QSettings s;
  s.setValue("tuning/trials", m_trials->value());
  s.setValue("tuning/perKernel", m_perTask->value());
  s.setValue("tuning/budget", m_budget->value());
  s.setValue("tuning/target", m_target->currentText());
}

QChart* TuningMonitor::chart() const { return m_chartView->chart(); }

int TuningMonitor::chartPoints() const { return int(m_gflopsSeries->count()); }

QString TuningMonitor::statusText() const { return m_status->text(); }

void TuningMonitor::setStatus(const QString& text) { m_status->setText(text); }

QJsonObject TuningMonitor::formToJson() const {
  QJsonObject o;
  o["scope"] = m_scope->currentIndex() == 1 ? "model" : "operator";
  o["target"] = m_target->currentText();
  o["trials"] = m_trials->value();
  o["perKernel"] = m_perTask->value();
  o["budgetS"] = m_budget->value();
  o["records"] = m_records->text();
  o["resume"] = m_resume->isChecked();
  if (!m_running && m_status->text() != "idle") o["lastRun"] = m_status->text();
  return o;
}

void TuningMonitor::formFromJson(const QJsonObject& o) {
  if (o.isEmpty()) return;
  m_scope->setCurrentIndex(o["scope"].toString() == "model" ? 1 : 0);
  m_target->setCurrentText(o["target"].toString(m_target->currentText()));
  m_trials->setValue(o["trials"].toInt(m_trials->value()));
  m_perTask->setValue(o["perKernel"].toInt(m_perTask->value()));
  m_budget->setValue(o["budgetS"].toInt(m_budget->value()));
  m_records->setText(o["records"].toString());
  m_resume->setChecked(o["resume"].toBool(true));
  if (!m_running && o.contains("lastRun")) setStatus("last run (from the session): " + o["lastRun"].toString());
}

namespace {

QJsonArray pointsToJson(const QXYSeries* s) {
  QJsonArray a;
  for (const QPointF& p : s->points()) a.append(QJsonArray{p.x(), p.y()});
  return a;
}

void pointsFromJson(QXYSeries* s, const QJsonArray& a) {
  QList<QPointF> points;
  for (const QJsonValue& v : a) points.append(QPointF(v.toArray().at(0).toDouble(), v.toArray().at(1).toDouble()));
  s->replace(points);
}

bool sameFile(const QString& a, const QString& b) {
  return !a.isEmpty() && !b.isEmpty() && QFileInfo(a).absoluteFilePath() == QFileInfo(b).absoluteFilePath();
}

/// Results of a whole model or of one of its kernels (not of a preset): they need that model.
bool modelBound(const QJsonObject& o) { return o["scope"].toString() == "model" || o["preset"].toString().isEmpty(); }

}  // namespace

QJsonObject TuningMonitor::resultsToJson() const {
  QJsonObject o;
  if (m_running || m_rows.isEmpty()) return o;
  o["scope"] = m_job.scope == TuneJob::Scope::Model ? "model" : "operator";
  o["preset"] = m_job.preset;
  QJsonObject params;
  for (auto it = m_job.params.begin(); it != m_job.params.end(); ++it) params[it.key()] = double(it.value());
  o["params"] = params;
  o["kernel"] = m_job.funcName;
  o["model"] = m_job.modelPath;
  o["layout"] = m_job.layout;
  o["target"] = m_job.target;
  o["records"] = m_job.recordsPath;
  o["trials"] = m_job.trials;
  o["trialsPerTask"] = m_job.trialsPerTask;
  o["trialsDone"] = m_trialsDone;
  o["failed"] = m_failed;
  o["trialsTotal"] = m_trialsTotal;
  o["summary"] = m_summary;
  QJsonArray rows;
  for (const TaskRow& r : m_rows)
    rows.append(QJsonObject{{"key", r.key}, {"name", r.name}, {"kernel", r.kernel}, {"weight", r.weight}, {"trials", r.trials},
                            {"total", r.total}, {"flops", r.flops}, {"bestMs", r.bestMs}, {"baselineMs", r.baselineMs}});
  o["tasks"] = rows;
  QJsonArray best;
  for (int i = 0; i < m_best.size() && i < kShownCandidates; ++i) {
    const TuneCandidate& c = m_best[i];
    best.append(QJsonObject{{"task", c.task}, {"taskName", c.taskName}, {"kernel", c.kernel}, {"trial", c.trial},
                            {"ms", c.ms}, {"gflops", c.gflops}, {"script", c.script}});
  }
  o["best"] = best;
  o["chartGflops"] = pointsToJson(m_gflopsSeries);
  o["chartMs"] = pointsToJson(m_msSeries);
  o["chartTrials"] = pointsToJson(m_trialSeries);
  return o;
}

bool TuningMonitor::restoreResults(const QJsonObject& o) {
  if (m_running) return false;
  m_heldResults = {};
  if (o.isEmpty()) {  // a session without results: those of the one before go
    if (!m_rows.isEmpty()) {
      clearRun();
      m_job = TuneJob();
      updateButtons();
    }
    return false;
  }
  if (modelBound(o)) {
    if (!m_session || !sameFile(m_session->modelPath(), o["model"].toString())) {
      // The session's model loads after the session file is read: shown then (onModelLoaded).
      m_heldResults = o;
      return true;
    }
    if (o["preset"].toString().isEmpty() && o["scope"].toString() != "model" &&
        (!m_session->request().isGroup() || m_session->request().group != o["kernel"].toString())) {
      setStatus(QString("tuning results of kernel %1 (from the session) not shown: the editor holds %2")
                    .arg(o["kernel"].toString(), m_session->request().isGroup() ? m_session->request().group : m_session->request().preset));
      return false;
    }
  }
  showResults(o);
  return true;
}

void TuningMonitor::onModelLoaded(const ModelData& model) {
  if (m_running) return;
  if (!m_heldResults.isEmpty()) {
    QJsonObject held = std::exchange(m_heldResults, QJsonObject());
    if (sameFile(held["model"].toString(), model.path)) {
      restoreResults(held);
    } else {
      clearRun();
      setStatus(QString("tuning results of %1 (from the session) not shown: %2 is open").arg(QFileInfo(held["model"].toString()).fileName(), QFileInfo(model.path).fileName()));
    }
  }
  bool bound = m_job.scope == TuneJob::Scope::Model || m_job.preset.isEmpty();
  if (m_rows.isEmpty() || !bound) return;
  if (sameFile(m_job.modelPath, model.path)) {
    if (!m_job.module) m_job.module = model.module;  // a restored job can tune or export again
    return;
  }
  // Results of another model's kernels: they would open kernels this model does not have.
  QString was = QFileInfo(m_job.modelPath).fileName();
  clearRun();
  m_job = TuneJob();
  setStatus(QString("idle · the tuning results of %1 were cleared when %2 was opened").arg(was, QFileInfo(model.path).fileName()));
  updateButtons();
}

void TuningMonitor::showResults(const QJsonObject& o) {
  clearRun();
  TuneJob job;
  job.scope = o["scope"].toString() == "model" ? TuneJob::Scope::Model : TuneJob::Scope::Operator;
  job.preset = o["preset"].toString();
  QJsonObject params = o["params"].toObject();
  for (auto it = params.begin(); it != params.end(); ++it) job.params[it.key()] = qint64(it.value().toDouble());
  job.funcName = o["kernel"].toString();
  job.modelPath = o["model"].toString();
  job.layout = o["layout"].toString();
  job.target = o["target"].toString("llvm");
  job.recordsPath = o["records"].toString();
  job.trials = o["trials"].toInt(job.trials);
  job.trialsPerTask = o["trialsPerTask"].toInt(job.trialsPerTask);
  if (m_session && sameFile(m_session->modelPath(), job.modelPath) && m_session->model()) job.module = m_session->model()->module;
  if (m_session && job.preset.isEmpty() && m_session->request().isGroup() && m_session->request().group == job.funcName) {
    job.func = m_session->request().func;
    job.numInputs = m_session->request().numInputs;
    job.flops = m_session->request().flops;
  }
  m_job = job;
  m_trialsDone = o["trialsDone"].toInt();
  m_failed = o["failed"].toInt();
  m_trialsTotal = o["trialsTotal"].toInt();
  for (const QJsonValue& v : o["tasks"].toArray()) {
    QJsonObject j = v.toObject();
    TaskRow row;
    row.key = j["key"].toString();
    row.name = j["name"].toString();
    row.kernel = j["kernel"].toString();
    row.weight = j["weight"].toInt(1);
    row.trials = j["trials"].toInt();
    row.total = j["total"].toInt();
    row.flops = j["flops"].toDouble();
    row.bestMs = j["bestMs"].toDouble();
    row.baselineMs = j["baselineMs"].toDouble();
    m_rowOf.insert(row.key, int(m_rows.size()));
    m_rows.push_back(row);
    QList<QStandardItem*> items;
    for (int c = 0; c < 7; ++c) items << new QStandardItem("-");
    items[0]->setText(row.name);
    items[0]->setToolTip(row.key + "\n" + row.name);
    items[1]->setText(QString::number(row.weight));
    if (row.baselineMs > 0) items[5]->setText(QString::number(row.baselineMs, 'g', 4));
    m_tasks->appendRow(items);
    updateTaskRow(int(m_rows.size()) - 1);
  }
  m_tasksView->resizeColumnsToContents();
  m_candidatesView->setColumnHidden(3, m_rows.size() == 1);
  for (const QJsonValue& v : o["best"].toArray()) {
    QJsonObject j = v.toObject();
    TuneCandidate c;
    c.task = j["task"].toString();
    c.taskName = j["taskName"].toString();
    c.kernel = j["kernel"].toString();
    c.trial = j["trial"].toInt();
    c.ms = j["ms"].toDouble();
    c.gflops = j["gflops"].toDouble();
    c.script = j["script"].toString();
    m_best.push_back(c);
  }
  updateCandidates();
  pointsFromJson(m_gflopsSeries, o["chartGflops"].toArray());
  pointsFromJson(m_msSeries, o["chartMs"].toArray());
  pointsFromJson(m_trialSeries, o["chartTrials"].toArray());
  if (m_gflopsSeries->count() > 0) {
    m_bestGflops = m_gflopsSeries->points().last().y();
    m_bestMs = m_msSeries->count() > 0 ? m_msSeries->points().last().y() : 0;
  }
  updateAxes();
  m_progress->setRange(0, std::max(1, m_trialsTotal));
  m_progress->setValue(std::min(m_trialsDone, m_progress->maximum()));
  m_summary = o["summary"].toString();
  m_restored = true;
  setStatus("from the session: " + m_summary);
  updateButtons();
}

void TuningMonitor::setScope(TuneJob::Scope scope) { m_scope->setCurrentIndex(scope == TuneJob::Scope::Model ? 1 : 0); }

void TuningMonitor::setTrials(int trials) { m_trials->setValue(trials); }

void TuningMonitor::setTarget(const QString& target) { m_target->setCurrentText(target); }

void TuningMonitor::setRecordsPath(const QString& path) { m_records->setText(path); }

QString TuningMonitor::recordsPath() const {
  if (!m_records->text().trimmed().isEmpty()) return m_records->text().trimmed();
  QString name = m_scope->currentIndex() == 1 ? "model" : "operator";
  if (m_scope->currentIndex() == 1 && m_session && !m_session->modelPath().isEmpty())
    name = QFileInfo(m_session->modelPath()).completeBaseName();
  else if (m_session)
    name = m_session->request().isGroup() ? m_session->request().group : m_session->request().preset;
  if (!m_sessionPath.isEmpty()) {
    QFileInfo session(m_sessionPath);
    return session.absoluteDir().filePath(session.completeBaseName() + "." + name + ".records.json");
  }
  return QDir::current().filePath(name + ".records.json");
}

QString TuningMonitor::findLoomBinary() {
  QString env = qEnvironmentVariable("LOOM_BINARY");
  if (!env.isEmpty() && QFileInfo(env).isExecutable()) return env;
  QDir here(QCoreApplication::applicationDirPath());
  for (const QString& candidate : {here.filePath("loom"), here.filePath("../bin/loom")})
    if (QFileInfo(candidate).isExecutable() && QFileInfo(candidate).isFile()) return QFileInfo(candidate).canonicalFilePath();
  return QStandardPaths::findExecutable("loom");
}

TuneJob TuningMonitor::jobFromForm() const {
  TuneJob job;
  job.scope = m_scope->currentIndex() == 1 ? TuneJob::Scope::Model : TuneJob::Scope::Operator;
  if (m_session) {
    const OperatorRequest& req = m_session->request();
    if (req.isGroup()) {
      job.func = req.func;
      job.numInputs = req.numInputs;
      job.funcName = req.group;
      job.flops = req.flops;
    } else {
      job.preset = req.preset;
      job.params = req.params;
    }
    job.modelPath = m_session->modelPath();
    if (m_session->model()) {
      job.module = m_session->model()->module;
      job.layout = m_session->model()->layout;
    }
  }
  job.target = m_target->currentText().trimmed();
  job.trials = m_trials->value();
  job.trialsPerTask = m_perTask->value();
  job.budgetS = m_budget->value();
  job.recordsPath = recordsPath();
  job.resume = m_resume->isChecked();
  return job;
}

bool TuningMonitor::startFromForm() {
  saveForm();
  return start(jobFromForm());
}

void TuningMonitor::clearRun() {
  m_restored = false;
  m_summary.clear();
  m_trialsDone = 0;
  m_failed = 0;
  m_trialsTotal = 0;
  m_rows.clear();
  m_rowOf.clear();
  m_best.clear();
  m_bestGflops = 0;
  m_bestMs = 0;
  m_candidates->removeRows(0, m_candidates->rowCount());
  m_tasks->removeRows(0, m_tasks->rowCount());
  m_gflopsSeries->clear();
  m_msSeries->clear();
  m_trialSeries->clear();
  m_axisX->setRange(0, 1);
  m_axisGflops->setRange(0, 1);
  m_axisMs->setRange(0, 1);
  for (QValueAxis* a : {m_axisX, m_axisGflops, m_axisMs}) a->setLabelsVisible(false);
  m_chartView->chart()->setTitle("No trials yet: the best GFLOP/s and latency appear here as trials finish");
}

bool TuningMonitor::start(const TuneJob& job) {
  QString why;
  if (m_running) {
    // One run at a time (two would append to one records file): stop this one first.
    cancel();
    why = "a run is still stopping; start again when it has ended";
  } else if (job.scope == TuneJob::Scope::Model && (job.modelPath.isEmpty() || !job.module))
    why = job.modelPath.isEmpty() ? QString("open a model first (File > Open Model)")
          : m_session && m_session->model() && !m_session->model()->concrete()
              ? QString("the model's symbolic dims have no values: set them with Model > Input Shapes…, then tune")
              : QString("the model is still loading");
  else if (job.scope == TuneJob::Scope::Operator && job.preset.isEmpty() && !job.func.defined()) why = "no operator to tune";
  else if (job.recordsPath.isEmpty()) why = "pick a records file";
  else if (job.trials < 1) why = "the number of trials must be at least 1";
  if (why.isEmpty()) {
    try {
      if (!codegen::Target::parse(job.target.toStdString()).isHost())
        why = QString("target '%1' does not run on this machine, and tuning times every candidate; pick an llvm target "
                      "of this CPU").arg(job.target);
    } catch (const Error& e) {
      why = QString("target '%1': %2").arg(job.target, q(e.what()));
    }
  }
  QStringList command = m_workerCommand;
  if (why.isEmpty() && command.isEmpty()) {
    QString loom = findLoomBinary();
    if (loom.isEmpty()) why = "the `loom` program (the tuning worker) was not found beside loom-studio or on PATH; set LOOM_BINARY";
    command = {loom, "tune-worker"};
  }
  if (!why.isEmpty()) {
    setStatus("cannot start: " + why);
    return false;
  }

  clearRun();
  m_job = job;
  m_running = true;
  m_paused = false;
  quint64 run = ++m_run;
  auto control = std::make_shared<Control>();
  control->budgetS = job.budgetS;
  m_control = control;
  QPointer<TuningMonitor> guard(this);
  control->onHold = [guard, run] {
    postToGui(qApp, [guard, run] {
      if (guard && guard->m_run == run && guard->m_paused)
        guard->setStatus(QString("paused after %1 trials · Resume continues").arg(guard->m_trialsDone));
    });
  };
  m_trialsTotal = job.trials;
  m_progress->setRange(0, job.trials);
  m_progress->setValue(0);
  setStatus(job.scope == TuneJob::Scope::Model ? QString("extracting the kernels of %1…").arg(QFileInfo(job.modelPath).fileName())
                                               : QString("starting…"));
  updateButtons();
  emit runStarted();

  QPointer<TuningMonitor> self(this);
  auto post = [self](auto fn) {
    postToGui(qApp, [self, fn] {
      if (self) fn(self.data());
    });
  };
  std::vector<std::string> worker;
  for (const QString& s : command) worker.push_back(s.toStdString());

  QThread* thread = QThread::create([job, run, control, post, worker] {
    bool ok = true;
    QString summary;
    try {
      RecordsFile db(job.recordsPath.toStdString(), !job.resume);
      tune::ProcessRunner processes(worker, false);
      StoppableRunner runner(processes, [control] { return control->waitOrStop(); });
      tune::TuneOptions opts;
      opts.batchSize = std::max(1, job.batchSize);
      opts.shouldStop = [control] { return control->waitOrStop(); };
      opts.measure.minRepeatMs = job.minRepeatMs;
      opts.measure.abort = &control->cancelled;  // Cancel kills the worker in flight at once
      auto forward = [post, run](const tune::TuneEvent& e) {
        if (e.result.errorKind == kStopped) return;
        post([run, e](TuningMonitor* m) { m->onEvent(run, e); });
      };
      auto announce = [post, run](const std::vector<tune::TuneTask>& tasks, int perTask) {
        QStringList keys, names, firstKernels;
        QVector<int> weights;
        QVector<double> flops;
        for (const tune::TuneTask& t : tasks) {
          keys << q(t.key);
          QStringList kernels;
          for (const std::string& k : t.kernels) kernels << q(k);
          names << (kernels.isEmpty() ? q(t.key) : kernels.join(", "));
          firstKernels << kernels.value(0);
          weights << t.weight;
          flops << t.flops;
        }
        post([=](TuningMonitor* m) { m->onTasks(run, keys, names, firstKernels, weights, flops, perTask); });
      };
      std::string target = job.target.toStdString();
      if (job.scope == TuneJob::Scope::Operator) {
        tune::TuneTask task;
        if (!job.preset.isEmpty()) {
          topi::ParamMap params;
          for (auto it = job.params.begin(); it != job.params.end(); ++it) params[it.key().toStdString()] = it.value();
          task = tune::TuneTask::fromWorkload(topi::makeWorkloadSpec(job.preset.toStdString(), params).str(), target);
        } else {
          tir::PrimFunc f = tune::asTaskFunc(job.func);
          task = tune::TuneTask::fromFunc(f, job.numInputs, target, job.flops > 0 ? job.flops : tune::countFlops(f));
          if (!job.funcName.isEmpty()) task.kernels = {job.funcName.toStdString()};
        }
        // The form's trials are this run's: records already in the file come on top.
        opts.trials = int(db.trialCount(task.key, task.target)) + job.trials;
        announce({task}, opts.trials);
        tune::TuneResult r = tune::tuneTask(task, db, runner, opts, forward);
        summary = q(r.task) + (r.best ? QString(": best %1 ms").arg(r.best->meanMs(), 0, 'g', 4) : QString(": no working schedule yet"));
      } else {
        driver::CompileModelOptions co;
        co.desiredLayout = job.layout.toStdString();
        std::vector<tune::TuneTask> tasks = tune::extractTasks(*job.module, {}, co, target);
        opts.trials = job.trialsPerTask;
        tune::TaskSchedulerOptions so;
        so.totalTrials = job.trials;
        // A kernel's baseline is what it gets without records: the driver's default schedule.
        tune::useDefaultSchedule(so, target);
        if (!driver::isGPUTarget(target)) {
          // As `loom tune MODEL`: weights are timed from memory (as in the model), and the
          // winners are re-timed beside the default.
          opts.measure.flushCache = true;
          opts.retimeTopK = 4;
        }
        tune::TaskScheduler scheduler(std::move(tasks), db, runner, opts, so, forward);
        announce(scheduler.tasks(), opts.trials);
        std::vector<tune::TuneResult> results = scheduler.run();
        int tuned = 0;
        for (const tune::TuneResult& r : results) tuned += r.best.has_value();
        summary = QString("%1 kernels to tune: %2 have a measured candidate (the export uses it where it beats the default), "
                          "%3 have none yet and keep their default schedule")
                      .arg(results.size()).arg(tuned).arg(int(results.size()) - tuned);
      }
      if (control->cancelled) {
        summary = "cancelled · " + summary;
      } else {
        std::lock_guard<std::mutex> lock(control->mutex);
        if (control->overBudget()) summary = QString("time budget of %1 s spent · ").arg(job.budgetS) + summary;
      }
    } catch (const Error& e) {
      ok = false;
      summary = QString("%1: %2").arg(e.kind(), q(e.what()));
    } catch (const std::exception& e) {
      ok = false;
      summary = q(e.what());
    }
    post([run, ok, summary](TuningMonitor* m) { m->onFinished(run, ok, summary); });
  });
  connect(thread, &QThread::finished, thread, &QObject::deleteLater);
  m_thread = thread;
  thread->start();
  return true;
}

void TuningMonitor::pause() {
  if (!m_running || m_paused) return;
  m_paused = true;
  m_control->setPaused(true);
  setStatus(QString("pausing after %1 trials: the candidate being measured finishes…").arg(m_trialsDone));
  updateButtons();
}

bool TuningMonitor::isHolding() const { return m_running && m_paused && m_control && m_control->holding; }

void TuningMonitor::resume() {
  if (!m_running || !m_paused) return;
  m_paused = false;
  m_control->setPaused(false);
  setStatus(QString("resumed at %1 trials").arg(m_trialsDone));
  updateButtons();
}

void TuningMonitor::cancel() {
  if (!m_running) return;
  m_control->cancel();
  m_paused = false;
  setStatus("cancelling: the worker in flight is stopped…");
  updateButtons();
}

void TuningMonitor::updateButtons() {
  m_start->setEnabled(!m_running);
  m_pause->setEnabled(m_running && !m_control->cancelled);
  m_pause->setText(m_paused ? "Resume" : "Pause");
  m_cancel->setEnabled(m_running && !m_control->cancelled);
  m_open->setEnabled(!m_best.isEmpty());
  m_perTask->setEnabled(m_scope->currentIndex() == 1);
}

void TuningMonitor::onTasks(quint64 run, const QStringList& keys, const QStringList& names, const QStringList& kernels, const QVector<int>& weights,
                            const QVector<double>& flops, int perTask) {
  if (run != m_run) return;
  m_rows.clear();
  m_rowOf.clear();
  m_tasks->removeRows(0, m_tasks->rowCount());
  for (int i = 0; i < keys.size(); ++i) {
    TaskRow row;
    row.key = keys[i];
    row.name = names[i];
    row.kernel = kernels.value(i);
    row.weight = weights[i];
    row.flops = flops[i];
    row.total = perTask;
    m_rowOf.insert(row.key, int(m_rows.size()));
    m_rows.push_back(row);
    QList<QStandardItem*> items{new QStandardItem(row.name), new QStandardItem(QString::number(row.weight)),
                                new QStandardItem(QString("0/%1").arg(perTask)), new QStandardItem("-"), new QStandardItem("-"),
                                new QStandardItem("-"), new QStandardItem("-")};
    items[0]->setToolTip(row.key + "\n" + row.name);
    m_tasks->appendRow(items);
  }
  m_tasksView->resizeColumnsToContents();
  // One task (an operator): its name need not repeat on every candidate row.
  m_candidatesView->setColumnHidden(3, keys.size() == 1);
  setStatus(QString("tuning %1 task%2…").arg(keys.size()).arg(keys.size() == 1 ? "" : "s"));
}

void TuningMonitor::onEvent(quint64 run, const tune::TuneEvent& e) {
  if (run != m_run) return;
  QString key = q(e.task);
  int rowIndex = m_rowOf.value(key, -1);
  TaskRow* row = rowIndex >= 0 ? &m_rows[rowIndex] : nullptr;
  auto gflopsOf = [&](double ms) { return e.flops > 0 && ms > 0 && std::isfinite(ms) ? e.flops / ms / 1e6 : 0.0; };
  switch (e.kind) {
  case tune::TuneEventKind::Baseline:
    if (e.result.ok() && row) {
      row->baselineMs = e.result.meanMs();
      m_tasks->item(rowIndex, 5)->setText(QString::number(row->baselineMs, 'g', 4));
      setStatus(QString("%1: baseline %2 ms").arg(row->name).arg(row->baselineMs, 0, 'g', 4));
      updateTaskRow(rowIndex);
      addChartPoint();
    }
    return;
  case tune::TuneEventKind::TaskSelected:
    if (row) setStatus(QString("%1tuning %2 (task %3 of %4) · %5/%6 trials").arg(m_paused ? "paused · " : "").arg(row->name)
                           .arg(e.taskIndex + 1).arg(e.taskCount).arg(m_trialsDone).arg(m_trialsTotal));
    return;
  case tune::TuneEventKind::TaskProgress:
    // After a batch, or after the re-timing at the end, which can change the best time, or leave
    // no working schedule when every re-timing failed (0: shown as "-", as the compile sees it).
    if (row) {
      double best = std::isfinite(e.bestMs) ? e.bestMs : 0;
      if (best != row->bestMs) {
        row->bestMs = best;
        updateTaskRow(rowIndex);
        addChartPoint();
      }
    }
    return;
  case tune::TuneEventKind::NewBest:
    return;
  case tune::TuneEventKind::TrialDone:
    break;
  }
  ++m_trialsDone;
  m_failed += !e.result.ok();
  m_progress->setValue(std::min(m_trialsDone, m_progress->maximum()));
  if (row) {
    row->trials = e.trialsDone;
    row->total = e.trialsTotal;
    if (std::isfinite(e.bestMs)) row->bestMs = e.bestMs;
    updateTaskRow(rowIndex);
  }
  if (e.result.ok()) {
    TuneCandidate c;
    c.task = key;
    c.taskName = row ? row->name : key;
    c.kernel = row ? row->kernel : QString();
    c.trial = m_trialsDone;
    c.ms = e.result.meanMs();
    c.gflops = gflopsOf(c.ms);
    c.script = q(e.traceScript);
    auto at = std::lower_bound(m_best.begin(), m_best.end(), c, [](const TuneCandidate& a, const TuneCandidate& b) {
      return a.gflops != b.gflops ? a.gflops > b.gflops : a.ms < b.ms;
    });
    m_best.insert(at, c);
    if (m_best.size() > 200) m_best.resize(200);
    // Trials of one task share a scale with its best; a model's kernels do not.
    if (c.gflops > 0 && m_rows.size() == 1) m_trialSeries->append(m_trialsDone, c.gflops);
    updateCandidates();
  }
  addChartPoint();
  QString best = m_bestMs > 0 ? QString(" · best %1 ms, %2 GFLOP/s").arg(m_bestMs, 0, 'g', 4).arg(m_bestGflops, 0, 'f', 2) : QString();
  QString last = e.result.ok() ? QString("last %1 ms").arg(e.result.meanMs(), 0, 'g', 4) : QString("last failed: ") + q(e.result.errorKind);
  setStatus(QString("%1%2 · %3/%4 trials · %5").arg(m_paused ? "paused · " : "").arg(row ? row->name : key).arg(m_trialsDone)
                .arg(m_trialsTotal).arg(last) + best);
  updateButtons();
}

void TuningMonitor::updateTaskRow(int index) {
  const TaskRow& row = m_rows[index];
  m_tasks->item(index, 2)->setText(QString("%1/%2").arg(row.trials).arg(row.total));
  m_tasksView->resizeColumnToContents(2);
  if (row.bestMs <= 0) {
    for (int column : {3, 4, 6}) m_tasks->item(index, column)->setText("-");
    return;
  }
  m_tasks->item(index, 3)->setText(QString::number(row.bestMs, 'g', 4));
  m_tasks->item(index, 4)->setText(row.flops > 0 ? QString::number(row.flops / row.bestMs / 1e6, 'f', 2) : "?");
  if (row.baselineMs > 0)
    m_tasks->item(index, 6)->setText(QString("%1x%2").arg(row.baselineMs / row.bestMs, 0, 'f', 2)
                                         .arg(m_job.scope == TuneJob::Scope::Model && row.bestMs > row.baselineMs ? " (default kept)" : ""));
}

void TuningMonitor::addChartPoint() {
  // One task: its best time. A model: the estimated model time, the sum of weight x time over
  // the tasks, a task's time being the faster of its best candidate and its baseline (the default
  // schedule, which the compiled model keeps when it is faster); charted once every task has one.
  double ms = 0, flops = 0;
  for (const TaskRow& r : m_rows) {
    double t = r.bestMs > 0 ? r.bestMs : r.baselineMs;
    if (m_job.scope == TuneJob::Scope::Model && r.bestMs > 0 && r.baselineMs > 0) t = std::min(r.bestMs, r.baselineMs);
    if (t <= 0) return;
    ms += r.weight * t;
    flops += r.weight * r.flops;
  }
  if (m_rows.isEmpty() || ms <= 0) return;
  m_bestMs = ms;
  m_bestGflops = flops > 0 ? flops / ms / 1e6 : 0;
  m_gflopsSeries->append(m_trialsDone, m_bestGflops);
  m_msSeries->append(m_trialsDone, m_bestMs);
  updateAxes();
}

void TuningMonitor::updateAxes() {
  if (m_gflopsSeries->count() == 0) return;
  if (!m_axisX->labelsVisible()) {
    for (QValueAxis* a : {m_axisX, m_axisGflops, m_axisMs}) a->setLabelsVisible(true);
    m_chartView->chart()->setTitle({});
  }
  double maxGflops = m_bestGflops;
  for (const QPointF& p : m_gflopsSeries->points()) maxGflops = std::max(maxGflops, p.y());
  for (const QPointF& p : m_trialSeries->points()) maxGflops = std::max(maxGflops, p.y());
  double maxMs = 0;
  for (const QPointF& p : m_msSeries->points()) maxMs = std::max(maxMs, p.y());
  m_axisX->setRange(0, std::max(m_trialsTotal, m_trialsDone));
  m_axisGflops->setRange(0, maxGflops > 0 ? maxGflops * 1.1 : 1);
  m_axisMs->setRange(0, maxMs > 0 ? maxMs * 1.1 : 1);
}

void TuningMonitor::updateCandidates() {
  m_candidates->removeRows(0, m_candidates->rowCount());
  for (int i = 0; i < m_best.size() && i < kShownCandidates; ++i) {
    const TuneCandidate& c = m_best[i];
    QList<QStandardItem*> items{new QStandardItem(c.gflops > 0 ? QString::number(c.gflops, 'f', 2) : QString("?")),
                                new QStandardItem(QString::number(c.ms, 'g', 4)), new QStandardItem(QString::number(c.trial)),
                                new QStandardItem(c.taskName), new QStandardItem(traceSummary(c.script))};
    for (QStandardItem* it : items) it->setToolTip(c.script);
    m_candidates->appendRow(items);
  }
  m_candidatesView->resizeColumnsToContents();
}

void TuningMonitor::openCandidate(int row) {
  if (row < 0 || row >= m_best.size()) return;
  const TuneCandidate& c = m_best[row];
  bool preset = m_job.scope == TuneJob::Scope::Operator && !m_job.preset.isEmpty();
  QString header = QString("# Tuned candidate: trial %1 of %2, %3 ms").arg(c.trial).arg(c.taskName).arg(c.ms, 0, 'g', 4);
  if (c.gflops > 0) header += QString(", %1 GFLOP/s").arg(c.gflops, 0, 'f', 2);
  emit openInEditor(header + "\n" + c.script + (c.script.endsWith('\n') ? "" : "\n"), preset ? m_job.preset : QString(),
                    preset ? m_job.params : QMap<QString, qint64>{}, preset ? QString() : c.task);
}

void TuningMonitor::onFinished(quint64 run, bool ok, const QString& summary) {
  if (run != m_run) return;
  m_running = false;
  m_paused = false;
  QString text = ok ? QString("%1 trials this run, %2 failed · %3 · records: %4").arg(m_trialsDone).arg(m_failed).arg(summary, m_job.recordsPath)
                   : "failed: " + summary;
  m_summary = text;
  setStatus(text);
  updateButtons();
  emit runFinished(ok, text);
}

}  // namespace loom::views
