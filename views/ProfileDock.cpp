// The Profile dock: kernels table, roofline, and the model's profile history with diffs.
#include "views/ProfileDock.h"

#include <QChart>
#include <QChartView>
#include <QComboBox>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLegendMarker>
#include <QLineSeries>
#include <QLogValueAxis>
#include <QPushButton>
#include <QScatterSeries>
#include <QSortFilterProxyModel>
#include <QSpinBox>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

#include "loom/c_runtime_api.h"
#include "views/GraphView.h"
#include "views/ModelJobs.h"
#include "views/Session.h"

namespace loom::views {

namespace {

constexpr int kSortRole = Qt::UserRole + 1;  // the number a numeric column sorts by
constexpr int kNameRole = Qt::UserRole + 2;  // the kernel's name, on column 0

QStandardItem* textItem(const QString& text) {
  auto* it = new QStandardItem(text);
  it->setEditable(false);
  it->setData(text, kSortRole);
  return it;
}

QStandardItem* numberItem(double v, int decimals, const QString& suffix = {}, bool known = true) {
  auto* it = new QStandardItem(known ? QString::number(v, 'f', decimals) + suffix : QString("–"));
  it->setEditable(false);
  it->setData(known ? v : -1.0, kSortRole);
  it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  return it;
}

/// "−32.1%" for after/before - 1.
QString changeText(double before, double after) {
  if (before <= 0 || after <= 0) return "new";
  double change = after / before - 1;
  return QString("%1%2%").arg(change < 0 ? "−" : "+").arg(std::abs(100 * change), 0, 'f', 1);
}

/// changeText as a table cell (green when faster, red when slower).
QStandardItem* changeItem(double before, double after) {
  if (before <= 0 || after <= 0) return textItem("new");
  double change = after / before - 1;
  auto* it = new QStandardItem(changeText(before, after));
  it->setEditable(false);
  it->setData(change, kSortRole);
  it->setTextAlignment(Qt::AlignRight | Qt::AlignVCenter);
  if (std::abs(change) >= 0.03) it->setForeground(change < 0 ? QColor(0x1a, 0x8a, 0x2a) : QColor(0xc0, 0x20, 0x20));
  it->setToolTip(QString("%1 ms → %2 ms").arg(before, 0, 'f', 4).arg(after, 0, 'f', 4));
  return it;
}

QString shortName(const QString& kernel) { return kernel.startsWith("fused_") ? kernel.mid(6) : kernel; }

/// The profile before `index` in `history` (same model), or null.
const ProfileResult* previousOf(const QVector<ProfileResult>& history, int index) {
  return index > 0 && index < history.size() ? &history[index - 1] : nullptr;
}

}  // namespace

ProfileDock::ProfileDock(Session* session, QWidget* parent) : QWidget(parent), m_session(session) {
  m_profiler = new Profiler(this);
  auto* layout = new QVBoxLayout(this);
  layout->setContentsMargins(2, 2, 2, 2);
  layout->setSpacing(2);
  auto* bar = new QHBoxLayout;
  m_start = new QPushButton("Profile");
  m_start->setToolTip("Compile the open model and time every kernel in a worker process (Model > Profile, F6)");
  m_repeat = new QSpinBox;
  m_repeat->setRange(1, 1000);
  m_repeat->setValue(20);
  m_repeat->setToolTip("Timed runs (each kernel's time is the median over them)");
  m_warmup = new QSpinBox;
  m_warmup->setRange(0, 100);
  m_warmup->setValue(3);
  m_warmup->setToolTip("Untimed runs first (caches, page faults, thread pool start)");
  m_schedules = new QComboBox;
  m_schedules->addItem("default schedules", QString());
  m_schedules->addItem("tuning records…", QString("?"));
  m_schedules->setToolTip("Compile with the default schedules or with the best schedules of a tuning records file");
  m_inputs = new QComboBox;
  m_inputs->addItem("random inputs", QString());
  m_inputs->addItem("inputs from .npz…", QString("?"));
  m_cancel = new QToolButton;
  m_cancel->setText("Cancel");
  m_cancel->setEnabled(false);
  auto* remeasure = new QToolButton;
  remeasure->setText("Re-measure peaks");
  remeasure->setToolTip(QString("The machine's FMA peak and bandwidth are measured once and cached (%1); measure them again "
                                "with the next profile (best on a quiet machine)").arg(MachinePeaks::cachePath()));
  connect(remeasure, &QToolButton::clicked, this, [this] {
    m_peaks = MachinePeaks();
    m_forceMeasure = true;
    m_status->setText("the next profile measures the machine's peaks first");
  });
  m_status = new QLabel("No profile yet: Model > Profile (F6) times every kernel of the open model.");
  m_status->setWordWrap(false);
  m_status->setMinimumWidth(50);
  m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  bar->addWidget(m_start);
  bar->addWidget(new QLabel("runs:"));
  bar->addWidget(m_repeat);
  bar->addWidget(new QLabel("warm-up:"));
  bar->addWidget(m_warmup);
  bar->addWidget(m_schedules);
  bar->addWidget(m_inputs);
  bar->addWidget(m_cancel);
  bar->addWidget(remeasure);
  bar->addWidget(m_status, 1);
  layout->addLayout(bar);

  m_tabs = new QTabWidget;
  m_kernels = new QStandardItemModel(this);
  m_kernels->setHorizontalHeaderLabels({"Kernel", "Calls", "Total ms", "Per call ms", "% time", "GFLOP/s", "GB/s", "FLOP/B",
                                        "% peak", "Bound", "Δ per call", "Schedule"});
  m_kernels->horizontalHeaderItem(GBs)->setToolTip("The kernel's arguments read and written once per call: a lower bound on its traffic");
  m_kernels->horizontalHeaderItem(Intensity)->setToolTip("Arithmetic intensity: FLOP per byte of argument traffic");
  m_kernels->horizontalHeaderItem(PeakPercent)->setToolTip("GFLOP/s as a share of the machine's measured fp32 FMA peak");
  m_kernels->horizontalHeaderItem(Bound)->setToolTip("Below the ridge of the roofline: bound by memory bandwidth; above: by compute");
  m_kernels->horizontalHeaderItem(Change)->setToolTip("Change of the per-call time against the previous profile");
  m_proxy = new QSortFilterProxyModel(this);
  m_proxy->setSourceModel(m_kernels);
  m_proxy->setSortRole(kSortRole);
  m_kernelView = new QTableView;
  m_kernelView->setModel(m_proxy);
  m_kernelView->setSortingEnabled(true);
  m_kernelView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_kernelView->setSelectionMode(QAbstractItemView::SingleSelection);
  m_kernelView->verticalHeader()->hide();
  m_kernelView->horizontalHeader()->setStretchLastSection(true);
  m_kernelView->setToolTip("Double-click a kernel to open it in the schedule editor");
  m_tabs->addTab(m_kernelView, "Kernels");

  m_chart = new QChart;
  m_chart->legend()->hide();
  m_chart->setMargins(QMargins(4, 4, 4, 4));
  m_chartView = new QChartView(m_chart);
  m_chartView->setRenderHint(QPainter::Antialiasing);
  m_chartView->setMinimumSize(200, 150);
  m_tabs->addTab(m_chartView, "Roofline");

  auto* historyPage = new QSplitter(Qt::Vertical);
  m_historyModel = new QStandardItemModel(this);
  m_historyModel->setHorizontalHeaderLabels({"#", "When", "Schedules", "Inputs", "Median ms", "Spread", "Change", "Runs"});
  m_historyView = new QTableView;
  m_historyView->setModel(m_historyModel);
  m_historyView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_historyView->setSelectionMode(QAbstractItemView::SingleSelection);
  m_historyView->verticalHeader()->hide();
  m_historyView->horizontalHeader()->setStretchLastSection(true);
  auto* comparePage = new QWidget;
  auto* cl = new QVBoxLayout(comparePage);
  cl->setContentsMargins(0, 0, 0, 0);
  m_compareTitle = new QLabel("Select a profile to compare it with the one before.");
  m_compareTitle->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_compare = new QStandardItemModel(this);
  m_compare->setHorizontalHeaderLabels({"Kernel", "Before ms/call", "After ms/call", "Change", "Before % time", "After % time"});
  auto* compareProxy = new QSortFilterProxyModel(this);
  compareProxy->setSourceModel(m_compare);
  compareProxy->setSortRole(kSortRole);
  m_compareView = new QTableView;
  m_compareView->setModel(compareProxy);
  m_compareView->setSortingEnabled(true);
  m_compareView->verticalHeader()->hide();
  m_compareView->horizontalHeader()->setStretchLastSection(true);
  cl->addWidget(m_compareTitle);
  cl->addWidget(m_compareView, 1);
  historyPage->addWidget(m_historyView);
  historyPage->addWidget(comparePage);
  m_tabs->addTab(historyPage, "History");
  layout->addWidget(m_tabs, 1);

  connect(m_start, &QPushButton::clicked, this, &ProfileDock::startProfile);
  connect(m_cancel, &QToolButton::clicked, this, &ProfileDock::cancel);
  connect(m_schedules, &QComboBox::activated, this, [this](int i) {
    if (m_schedules->itemData(i).toString() != "?") return;
    QString path = QFileDialog::getOpenFileName(this, "Tuning records", {}, "Tuning records (*.json);;All files (*)");
    if (path.isEmpty()) m_schedules->setCurrentIndex(0);
    else setRecordsPath(path);
  });
  connect(m_inputs, &QComboBox::activated, this, [this](int i) {
    if (m_inputs->itemData(i).toString() != "?") return;
    QString path = QFileDialog::getOpenFileName(this, "Model inputs", {}, "NumPy archives (*.npz);;All files (*)");
    if (path.isEmpty()) m_inputs->setCurrentIndex(0);
    else setInputsPath(path);
  });
  connect(m_kernelView, &QTableView::doubleClicked, this, [this](const QModelIndex& index) {
    QString name = m_proxy->index(index.row(), Kernel).data(kNameRole).toString();
    if (!name.isEmpty()) emit kernelActivated(name);
  });
  connect(m_kernelView->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& index) {
    QString name = m_proxy->index(index.row(), Kernel).data(kNameRole).toString();
    if (name.isEmpty() || name == m_selectedKernel) return;
    m_selectedKernel = name;
    highlightPoint();
    emit kernelSelected(name);
  });
  connect(m_historyView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
          [this](const QModelIndex& index) { showComparison(index.row()); });
  connect(m_profiler, &Profiler::progress, this, [this](const QString& line) {
    m_status->setText(line);
    emit progress(line);
  });
  connect(m_profiler, &Profiler::failed, this, [this](const QString& message) {
    m_start->setEnabled(true);
    m_cancel->setEnabled(false);
    m_status->setText(message.section('\n', 0, 0));
    m_status->setToolTip(message);
    emit profileFailed(message);
  });
  connect(m_profiler, &Profiler::finished, this, [this](const ProfileResult& r) {
    m_start->setEnabled(true);
    m_cancel->setEnabled(false);
    ProfileResult copy = r;
    if (copy.machine.valid()) {
      m_peaks = copy.machine;
      m_peaks.saveCache();
    } else {
      copy.machine = m_peaks;
    }
    addResult(copy);
  });
}

bool ProfileDock::isRunning() const { return m_profiler->isRunning(); }

void ProfileDock::setRepeat(int runs) { m_repeat->setValue(runs); }
void ProfileDock::setWarmup(int runs) { m_warmup->setValue(runs); }

void ProfileDock::setRecordsPath(const QString& path) {
  if (path.isEmpty()) {
    m_schedules->setCurrentIndex(0);
    return;
  }
  int i = m_schedules->findData(path);
  if (i < 0) {
    m_schedules->insertItem(1, "records: " + QFileInfo(path).fileName(), path);
    m_schedules->setItemData(1, path, Qt::ToolTipRole);
    i = 1;
  }
  m_schedules->setCurrentIndex(i);
}

QString ProfileDock::recordsPath() const {
  QString d = m_schedules->currentData().toString();
  return d == "?" ? QString() : d;
}

void ProfileDock::setInputsPath(const QString& path) {
  if (path.isEmpty()) {
    m_inputs->setCurrentIndex(0);
    return;
  }
  int i = m_inputs->findData(path);
  if (i < 0) {
    m_inputs->insertItem(1, "inputs: " + QFileInfo(path).fileName(), path);
    i = 1;
  }
  m_inputs->setCurrentIndex(i);
}

bool ProfileDock::startProfile() {
  const ModelData* model = m_session->model();
  if (!model) {
    m_status->setText("Open a model first (File > Open Model…), then profile it.");
    return false;
  }
  if (isRunning()) return false;
  if (!model->concrete()) {
    m_status->setText("The model's symbolic dims have no values: set them with Model > Input Shapes…, then profile.");
    return false;
  }
  ProfileRequest req;
  req.model = model->path;
  req.layout = model->layout;
  req.inputShapes = inputShapesSpec(model->inputs);
  req.records = recordsPath();
  QString npz = m_inputs->currentData().toString();
  req.inputsNpz = npz == "?" ? QString() : npz;
  req.repeat = m_repeat->value();
  req.warmup = m_warmup->value();
  req.label = req.records.isEmpty() ? QString("default schedules") : "records: " + QFileInfo(req.records).fileName();
  if (!m_peaks.valid() && !m_forceMeasure) m_peaks = MachinePeaks::loadCached(loom_backend_num_threads());
  req.measureMachine = !m_peaks.valid();
  m_forceMeasure = false;
  if (m_hook) m_hook(req);
  m_lastRequest = req;
  m_start->setEnabled(false);
  m_cancel->setEnabled(true);
  m_status->setText(QString("profiling %1 (%2 runs after %3 warm-up)%4…")
                        .arg(QFileInfo(req.model).fileName()).arg(req.repeat).arg(req.warmup)
                        .arg(req.measureMachine ? ", measuring the machine's peaks first" : ""));
  m_profiler->start(req);
  emit profileStarted();
  return true;
}

void ProfileDock::cancel() { m_profiler->cancel(); }

void ProfileDock::clear() {
  if (isRunning()) cancel();
  m_history.clear();
  m_selectedKernel.clear();
  m_kernels->removeRows(0, m_kernels->rowCount());
  m_historyModel->removeRows(0, m_historyModel->rowCount());
  m_compare->removeRows(0, m_compare->rowCount());
  m_compareTitle->setText("Select a profile to compare it with the one before.");
  rebuildRoofline();
  m_status->setText("No profile yet: Model > Profile (F6) times every kernel of the open model.");
}

QJsonArray ProfileDock::historyToJson() const {
  QJsonArray a;
  for (const ProfileResult& r : m_history) a.append(profileToJson(r));
  return a;
}

void ProfileDock::restoreHistory(const QJsonArray& profiles) {
  clear();
  for (const QJsonValue& v : profiles) {
    ProfileResult r;
    if (!profileFromJson(v.toObject(), r)) continue;
    m_history.push_back(r);
    m_nextId = std::max(m_nextId, r.id + 1);
  }
  if (m_history.isEmpty()) return;
  showCurrent();
  updateHistory();
  m_status->setText(QString("%1 profile(s) restored from the session; the last: #%2, %3 ms per run")
                        .arg(m_history.size()).arg(m_history.back().id).arg(m_history.back().medianMs, 0, 'f', 3));
  emit profiled(m_history.back());
}

void ProfileDock::addResult(ProfileResult result) {
  result.id = m_nextId++;
  if (!result.when.isValid()) result.when = QDateTime::currentDateTime();
  if (!result.machine.valid()) result.machine = m_peaks;
  m_history.push_back(result);
  showCurrent();
  updateHistory();
  const ProfileResult& r = m_history.back();
  const ProfileResult* prev = previousOf(m_history, int(m_history.size()) - 1);
  QString change = prev && prev->medianMs > 0 ? QString(" · %1%2% against #%3").arg(r.medianMs < prev->medianMs ? "−" : "+")
                                                     .arg(std::abs(100 * (r.medianMs / prev->medianMs - 1)), 0, 'f', 1).arg(prev->id)
                                               : QString();
  m_status->setText(QString("#%1: %2 ms per run (median of %3, compiled in %4 s) · %5 kernels%6")
                        .arg(r.id).arg(r.medianMs, 0, 'f', 3).arg(r.repeat).arg(r.compileMs / 1000, 0, 'f', 1).arg(r.kernels.size()).arg(change));
  emit profiled(r);
}

void ProfileDock::showCurrent() {
  m_kernels->removeRows(0, m_kernels->rowCount());
  const ProfileResult* r = current();
  if (!r) return;
  const ProfileResult* prev = previousOf(m_history, int(m_history.size()) - 1);
  double peak = r->machine.peakGflops;
  for (int k = 0; k < r->kernels.size(); ++k) {
    const KernelProfile& kp = r->kernels[k];
    QList<QStandardItem*> row;
    auto* name = textItem(kp.name);
    name->setData(kp.name, kNameRole);
    QColor heat = GraphView::heatColor(r->share(k) / std::max(1e-12, [&] {
      double m = 0;
      for (int j = 0; j < r->kernels.size(); ++j) m = std::max(m, r->share(j));
      return m;
    }()));
    name->setData(heat, Qt::DecorationRole);
    name->setToolTip(kp.name + "\ndouble-click: open in the schedule editor");
    bool flopsKnown = kp.flops > 0, bytesKnown = kp.bytes > 0;
    double intensity = kp.intensity();
    QString bound = "–";
    if (r->machine.valid() && flopsKnown && bytesKnown) bound = intensity < r->machine.ridge() ? "memory" : "compute";
    row << name << numberItem(kp.calls, 0) << numberItem(kp.totalMs, 4) << numberItem(kp.perCallMs(), 4)
        << numberItem(100 * r->share(k), 1) << numberItem(kp.gflops(), 1, {}, flopsKnown) << numberItem(kp.gbs(), 1, {}, bytesKnown)
        << numberItem(intensity, 2, {}, flopsKnown && bytesKnown) << numberItem(peak > 0 ? 100 * kp.gflops() / peak : 0, 1, {}, flopsKnown && peak > 0)
        << textItem(bound);
    int before = prev ? prev->kernelIndex(kp.name) : -1;
    row << (prev ? changeItem(before >= 0 ? prev->kernels[before].perCallMs() : 0, kp.perCallMs()) : textItem(""));
    row << textItem(kp.schedule);
    m_kernels->appendRow(row);
  }
  m_kernelView->sortByColumn(TotalMs, Qt::DescendingOrder);
  m_kernelView->resizeColumnsToContents();
  rebuildRoofline();
  if (!m_selectedKernel.isEmpty()) selectKernel(m_selectedKernel);
}

QVector<QPair<int, QPointF>> ProfileDock::rooflinePoints() const {
  QVector<QPair<int, QPointF>> out;
  const ProfileResult* r = current();
  if (!r) return out;
  for (int k = 0; k < r->kernels.size(); ++k) {
    const KernelProfile& kp = r->kernels[k];
    if (kp.flops > 0 && kp.bytes > 0 && kp.totalMs > 0) out.push_back({k, QPointF(kp.intensity(), kp.gflops())});
  }
  return out;
}

void ProfileDock::rebuildRoofline() {
  m_chart->removeAllSeries();
  for (QAbstractAxis* a : m_chart->axes()) {
    m_chart->removeAxis(a);
    delete a;
  }
  m_points.clear();
  const ProfileResult* r = current();
  if (!r) {
    m_chart->setTitle("Roofline: no profile yet (Model > Profile)");
    return;
  }
  QVector<QPair<int, QPointF>> pts = rooflinePoints();
  const MachinePeaks& m = r->machine;
  double xMin = 1e9, xMax = 0, yMin = 1e9, yMax = 0;
  for (const auto& p : pts) {
    xMin = std::min(xMin, p.second.x());
    xMax = std::max(xMax, p.second.x());
    yMin = std::min(yMin, p.second.y());
    yMax = std::max(yMax, p.second.y());
  }
  if (m.valid()) {
    xMin = std::min(xMin, m.ridge() / 8);
    xMax = std::max(xMax, m.ridge() * 8);
    yMax = std::max(yMax, m.peakGflops);
    yMin = std::min(yMin, m.bandwidthGBs * xMin);
  }
  if (xMax <= 0) {
    m_chart->setTitle("Roofline: no kernel with a known FLOP count and traffic");
    return;
  }
  auto pow10floor = [](double v) { return std::pow(10.0, std::floor(std::log10(std::max(v, 1e-6)))); };
  auto pow10ceil = [](double v) { return std::pow(10.0, std::ceil(std::log10(std::max(v, 1e-6)))); };
  xMin = pow10floor(xMin / 1.5);
  xMax = pow10ceil(xMax * 1.5);
  yMin = pow10floor(yMin / 1.5);
  yMax = pow10ceil(yMax * 1.5);
  auto* ax = new QLogValueAxis;
  ax->setBase(10);
  ax->setLabelFormat("%g");
  ax->setTitleText("arithmetic intensity (FLOP / byte)");
  ax->setRange(xMin, xMax);
  auto* ay = new QLogValueAxis;
  ay->setBase(10);
  ay->setLabelFormat("%g");
  ay->setTitleText("GFLOP/s");
  ay->setRange(yMin, yMax);
  m_chart->addAxis(ax, Qt::AlignBottom);
  m_chart->addAxis(ay, Qt::AlignLeft);
  if (m.valid()) {
    auto* roof = new QLineSeries;
    roof->setName("roof");
    roof->append(xMin, m.roof(xMin));
    roof->append(m.ridge(), m.peakGflops);
    roof->append(xMax, m.peakGflops);
    roof->setPen(QPen(QColor(0x30, 0x30, 0x30), 2));
    m_chart->addSeries(roof);
    roof->attachAxis(ax);
    roof->attachAxis(ay);
  }
  double maxShare = 0;
  for (const auto& p : pts) maxShare = std::max(maxShare, r->share(p.first));
  // The three hottest kernels get a label.
  QVector<int> byShare;
  for (const auto& p : pts) byShare << p.first;
  std::sort(byShare.begin(), byShare.end(), [&](int a, int b) { return r->share(a) > r->share(b); });
  byShare.resize(std::min<qsizetype>(3, byShare.size()));
  for (const auto& p : pts) {
    int k = p.first;
    auto* s = new QScatterSeries;
    s->setName(r->kernels[k].name);
    s->append(p.second);
    double share = r->share(k);
    s->setMarkerSize(8 + 34 * std::sqrt(maxShare > 0 ? share / maxShare : 0));
    QColor c = GraphView::heatColor(maxShare > 0 ? share / maxShare : 0);
    c.setAlpha(220);
    s->setColor(c);
    s->setBorderColor(QColor(0x60, 0x20, 0x10));
    if (byShare.contains(k)) {
      s->setPointLabelsVisible(true);
      s->setPointLabelsFormat(QString("%1 (%2%)").arg(shortName(r->kernels[k].name)).arg(100 * share, 0, 'f', 1));
      s->setPointLabelsClipping(false);
    }
    m_chart->addSeries(s);
    s->attachAxis(ax);
    s->attachAxis(ay);
    QString name = r->kernels[k].name;
    connect(s, &QScatterSeries::clicked, this, [this, name] { selectKernel(name); });
    connect(s, &QScatterSeries::hovered, this, [this, s, k](const QPointF&, bool state) {
      const ProfileResult* cur = current();
      if (!state || !cur || k >= cur->kernels.size()) {
        m_chartView->setToolTip({});
        return;
      }
      const KernelProfile& kp = cur->kernels[k];
      m_chartView->setToolTip(QString("%1\n%2 ms (%3% of the model) · %4 GFLOP/s · %5 FLOP/B\nclick: select · double-click the row: open")
                                  .arg(kp.name).arg(kp.totalMs, 0, 'f', 4).arg(100 * cur->share(k), 0, 'f', 1)
                                  .arg(kp.gflops(), 0, 'f', 1).arg(kp.intensity(), 0, 'f', 2));
      Q_UNUSED(s);
    });
    m_points.push_back({k, s});
  }
  m_chart->setTitle(m.valid() ? QString("Roofline: %1 GFLOP/s fp32 FMA peak, %2 GB/s bandwidth (%3 thread(s)), %4 of %5 kernels")
                                    .arg(m.peakGflops, 0, 'f', 0).arg(m.bandwidthGBs, 0, 'f', 1).arg(m.threads).arg(pts.size()).arg(r->kernels.size())
                              : QString("Roofline (machine peaks not measured): %1 of %2 kernels").arg(pts.size()).arg(r->kernels.size()));
  highlightPoint();
}

void ProfileDock::highlightPoint() {
  const ProfileResult* r = current();
  for (const auto& [k, s] : m_points) {
    bool selected = r && k < r->kernels.size() && r->kernels[k].name == m_selectedKernel;
    s->setBorderColor(selected ? QColor(0x00, 0x60, 0xff) : QColor(0x60, 0x20, 0x10));
    QPen pen = s->pen();
    pen.setWidthF(selected ? 3.5 : 1);
    pen.setColor(selected ? QColor(0x00, 0x60, 0xff) : QColor(0x60, 0x20, 0x10));
    s->setPen(pen);
  }
}

void ProfileDock::selectKernel(const QString& name) {
  for (int row = 0; row < m_proxy->rowCount(); ++row)
    if (m_proxy->index(row, Kernel).data(kNameRole).toString() == name) {
      bool changed = name != m_selectedKernel;
      m_selectedKernel = name;  // before the selection model reports it
      m_kernelView->selectRow(row);
      m_kernelView->scrollTo(m_proxy->index(row, Kernel));
      highlightPoint();
      if (changed) emit kernelSelected(name);
      return;
    }
}

void ProfileDock::updateHistory() {
  m_historyModel->removeRows(0, m_historyModel->rowCount());
  for (int i = 0; i < m_history.size(); ++i) {
    const ProfileResult& r = m_history[i];
    const ProfileResult* prev = previousOf(m_history, i);
    double lo = r.runMs.isEmpty() ? 0 : *std::min_element(r.runMs.begin(), r.runMs.end());
    double hi = r.runMs.isEmpty() ? 0 : *std::max_element(r.runMs.begin(), r.runMs.end());
    QList<QStandardItem*> row{numberItem(r.id, 0), textItem(r.when.toString("HH:mm:ss")), textItem(r.label), textItem(r.inputs),
                              numberItem(r.medianMs, 3),
                              textItem(QString("%1–%2 ms").arg(lo, 0, 'f', 3).arg(hi, 0, 'f', 3)),
                              prev ? changeItem(prev->medianMs, r.medianMs) : textItem(""),
                              textItem(QString("%1 + %2 warm-up").arg(r.repeat).arg(r.warmup))};
    row[2]->setToolTip(r.records.isEmpty() ? QString("default schedules") : r.records);
    m_historyModel->appendRow(row);
  }
  m_historyView->resizeColumnsToContents();
  if (!m_history.isEmpty()) {
    m_historyView->selectRow(int(m_history.size()) - 1);
    showComparison(int(m_history.size()) - 1);
  }
}

void ProfileDock::showComparison(int row) {
  m_compare->removeRows(0, m_compare->rowCount());
  const ProfileResult* after = row >= 0 && row < m_history.size() ? &m_history[row] : nullptr;
  const ProfileResult* before = previousOf(m_history, row);
  if (!after) return;
  if (!before) {
    m_compareTitle->setText(QString("#%1 is the first profile: profile again after tuning or editing a schedule to see the change.").arg(after->id));
    return;
  }
  m_compareTitle->setText(QString("#%1 (%2) against #%3 (%4): %5 ms → %6 ms per run (%7)")
                              .arg(after->id).arg(after->label).arg(before->id).arg(before->label)
                              .arg(before->medianMs, 0, 'f', 3).arg(after->medianMs, 0, 'f', 3)
                              .arg(changeText(before->medianMs, after->medianMs)));
  QStringList names;
  for (const KernelProfile& k : after->kernels) names << k.name;
  for (const KernelProfile& k : before->kernels)
    if (!names.contains(k.name)) names << k.name;
  for (const QString& name : names) {
    int a = after->kernelIndex(name), b = before->kernelIndex(name);
    double msA = a >= 0 ? after->kernels[a].perCallMs() : 0, msB = b >= 0 ? before->kernels[b].perCallMs() : 0;
    auto* n = textItem(name);
    n->setData(name, kNameRole);
    m_compare->appendRow({n, numberItem(msB, 4, {}, b >= 0), numberItem(msA, 4, {}, a >= 0),
                          a < 0 ? textItem("gone") : changeItem(msB, msA), numberItem(100 * before->share(b), 1, {}, b >= 0),
                          numberItem(100 * after->share(a), 1, {}, a >= 0)});
  }
  m_compareView->sortByColumn(2, Qt::DescendingOrder);
  m_compareView->resizeColumnsToContents();
}

}  // namespace loom::views
