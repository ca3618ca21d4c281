// The Studio main window: the operator workbench, the model view and their docks.
#include "views/MainWindow.h"

#include <QAction>
#include <QActionGroup>
#include <QApplication>
#include <QCloseEvent>
#include <QDateTime>
#include <QDir>
#include <QSaveFile>
#include <QStandardPaths>
#include <QComboBox>
#include <QDockWidget>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QInputDialog>
#include <QJsonDocument>
#include <QLabel>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QScrollArea>
#include <QDialog>
#include <QRegularExpression>
#include <QSignalBlocker>
#include <QScrollBar>
#include <QLineEdit>
#include <QCheckBox>
#include <QScreen>
#include <QTextBrowser>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QPushButton>
#include <QSettings>
#include <QSpinBox>
#include <QStandardItemModel>
#include <QStatusBar>
#include <QStyleFactory>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QToolButton>
#include <QThreadPool>
#include <QTimer>
#include <QTreeView>
#include <QVBoxLayout>
#include <utility>

#include "views/Background.h"
#include "views/CodePane.h"
#include "views/DiffDialog.h"
#include "views/GraphView.h"
#include "views/Lexers.h"
#include "views/ModelJobs.h"
#include "views/ProblemsModel.h"
#include "views/RunsModel.h"
#include "views/ScheduleEditor.h"
#include "views/Session.h"
#include "views/TuningMonitor.h"
#include "views/ExportDialog.h"
#include "views/FindBar.h"
#include "views/InputShapesDialog.h"
#include "views/ProfileDock.h"
#include "views/ProfileJobs.h"
#include "core/driver/LoadModel.h"
#include "core/frontend/torch/TorchImporter.h"
#include "core/driver/CompileModelGPU.h"
#include "core/tune/ModelTasks.h"

namespace loom::views {

namespace {

QDockWidget* makeDock(QMainWindow* w, const QString& title, const QString& name, QWidget* content, Qt::DockWidgetArea area) {
  auto* dock = new QDockWidget(title, w);
  dock->setObjectName(name);
  dock->setWidget(content);
  w->addDockWidget(area, dock);
  return dock;
}

/// The innermost loop of `loops` whose lines contain `line`, or -1.
int loopAt(const QVector<LoopInfo>& loops, int line) {
  int best = -1;
  for (int i = 0; i < loops.size(); ++i)
    if (loops[i].firstLine <= line && line <= loops[i].lastLine && (best < 0 || loops[i].depth > loops[best].depth)) best = i;
  return best;
}

}  // namespace

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent) {
  setObjectName("LoomStudio");
  setWindowIcon(QIcon(":/loom/icons/loom.svg"));
  setAcceptDrops(true);
  setDockNestingEnabled(true);
  m_session = new Session(this);
  m_confirm = [this](const QString& why) {
    return QMessageBox::question(this, "Replace the schedule?",
                                 QString("The schedule editor has edits of yours. %1 replaces them.\n\nReplace them? "
                                         "(Edit > Undo brings them back.)").arg(why),
                                 QMessageBox::Yes | QMessageBox::No, QMessageBox::No) == QMessageBox::Yes;
  };

  // Central: the preset bar and the schedule editor.
  auto* central = new QWidget;
  auto* cl = new QVBoxLayout(central);
  cl->setContentsMargins(2, 2, 2, 2);
  auto* presetBar = new QHBoxLayout;
  m_presetBox = new QComboBox;
  m_presetBox->addItems(presetNames());
  m_presetBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  m_presetBox->setToolTip("Operator preset");
  presetBar->addWidget(new QLabel("Preset:"));
  presetBar->addWidget(m_presetBox);
  m_paramLayout = new QHBoxLayout;
  presetBar->addLayout(m_paramLayout);
  presetBar->addStretch(1);
  // The target and Run live in the tool bar, beside the menus.
  auto* tools = new QWidget;
  auto* toolsLayout = new QHBoxLayout(tools);
  toolsLayout->setContentsMargins(0, 0, 4, 0);
  toolsLayout->addWidget(new QLabel("Target: "));
  m_targetBox = new QComboBox;
  m_targetBox->setEditable(true);
  m_targetBox->addItems({"llvm", "llvm -mcpu=native", "llvm -mcpu=skylake-avx512", "llvm -mcpu=znver4",
                         "llvm -mtriple=aarch64-linux-gnu", "llvm -mtriple=aarch64-linux-gnu -mcpu=neoverse-v1",
                         "cuda", "cuda -arch=sm_80", "opencl"});
  m_targetBox->setToolTip("Code generation target: llvm (this CPU), llvm -mcpu=... / -mtriple=... (other CPUs), "
                          "cuda (CUDA C and PTX; no GPU here to run it), opencl (runs on the OpenCL device, e.g. PoCL)");
  m_targetBox->setMinimumContentsLength(22);
  toolsLayout->addWidget(m_targetBox);
  auto* runButton = new QToolButton;
  runButton->setIcon(QIcon(":/loom/icons/run.svg"));
  runButton->setText("Run");
  runButton->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
  runButton->setToolTip("Compile, check and time (Ctrl+R)");
  toolsLayout->addWidget(runButton);
  menuBar()->setCornerWidget(tools, Qt::TopRightCorner);
  // The preset bar scrolls sideways when a preset has many parameters, instead of widening the window.
  auto* presetWidget = new QWidget;
  presetWidget->setLayout(presetBar);
  presetBar->setContentsMargins(0, 0, 0, 0);
  auto* presetScroll = new QScrollArea;
  presetScroll->setObjectName("presetScroll");
  presetScroll->setWidget(presetWidget);
  presetScroll->setWidgetResizable(true);
  presetScroll->setFrameShape(QFrame::NoFrame);
  presetScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAsNeeded);
  presetScroll->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  presetScroll->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Fixed);
  presetScroll->setFixedHeight(presetWidget->sizeHint().height() + presetScroll->horizontalScrollBar()->sizeHint().height() + 2);
  cl->addWidget(presetScroll);
  m_editor = new ScheduleEditor;
  m_editor->setObjectName("schedule editor");
  m_editor->setMinimumSize(200, 120);
  cl->addWidget(m_editor, 1);
  m_findBar = new FindBar;
  m_findBar->setTarget(m_editor);
  cl->addWidget(m_findBar);
  setCentralWidget(central);

  buildDocks();
  buildMenus();

  m_status = new QLabel("ready");
  m_status->setMinimumWidth(50);
  m_status->setSizePolicy(QSizePolicy::Ignored, QSizePolicy::Preferred);
  m_progress = new QProgressBar;
  m_progress->setRange(0, 0);
  m_progress->setMaximumWidth(160);
  m_progress->hide();
  m_cancel = new QToolButton;
  m_cancel->setText("Cancel");
  m_cancel->hide();
  statusBar()->addWidget(m_status, 1);
  statusBar()->addPermanentWidget(m_progress);
  statusBar()->addPermanentWidget(m_cancel);

  connect(runButton, &QToolButton::clicked, m_session, &Session::run);
  connect(m_cancel, &QToolButton::clicked, m_session, &Session::cancel);
  connect(m_cancel, &QToolButton::clicked, this, [this] {
    m_progress->hide();
    m_cancel->hide();
    m_status->setText("cancelled");
  });
  connect(m_presetBox, &QComboBox::currentTextChanged, this, [this](const QString&) {
    if (m_updatingPreset) return;
    if (m_presetBox->currentIndex() == 0 && m_presetBox->itemData(0).toString() == "group") return;
    QString preset = m_presetBox->currentText();
    if (m_presetBox->itemData(0).toString() == "group") {
      // A preset replaces the fused group, and the group's script (it would not apply to the preset).
      if (!confirmReplaceEditor(QString("Switching to preset %1").arg(preset))) {
        m_updatingPreset = true;
        m_presetBox->setCurrentIndex(0);
        m_updatingPreset = false;
        return;
      }
      leaveGroup(preset);
      return;
    }
    m_graph->setHighlightedClusters({});
    m_lastPreset = preset;
    rebuildParams();
    m_session->setPreset(preset);
  });
  connect(m_targetBox, &QComboBox::currentTextChanged, this, [this](const QString& target) {
    if (m_session->request().isGroup()) {
      bool gpu = driver::isGPUTarget(target.toStdString());
      if (gpu && m_editor->text() == m_groupCpuText) m_editor->setText(m_groupGpuText);
      else if (!gpu && m_editor->text() == m_groupGpuText) m_editor->setText(m_groupCpuText);
    }
    m_session->setTarget(target);
  });
  connect(m_editor, &QsciScintilla::textChanged, this, [this] { m_session->setScheduleText(m_editor->text()); });
  connect(qApp, &QApplication::focusChanged, this, [this](QWidget*, QWidget* now) {
    for (QsciScintilla* w : {static_cast<QsciScintilla*>(m_editor), static_cast<QsciScintilla*>(m_tirPane),
                             static_cast<QsciScintilla*>(m_loweredPane), static_cast<QsciScintilla*>(m_asmPane)})
      if (now && (now == w || w->isAncestorOf(now))) m_findBar->setTarget(w);
  });
  connect(m_session, &Session::operatorCompiled, this, &MainWindow::onCompiled);
  connect(m_session, &Session::compileStarted, this, [this] { m_status->setText("compiling…"); });
  connect(m_session, &Session::modelLoaded, this, [this](const ModelData& m) {
    bool otherModel = QFileInfo(m.path).absoluteFilePath() != QFileInfo(m_shownModel).absoluteFilePath() || m_shownModel.isEmpty();
    // A reload (layout, input shapes) or another model: the kernels change, so a group open in the
    // editor, the profiles and the heat overlay are of the old ones.
    if (m_session->request().isGroup() && QFileInfo(m_groupModel).absoluteFilePath() != QFileInfo(m.path).absoluteFilePath())
      leaveGroup(m_lastPreset);
    // A group or a profile asked for input shapes: they come once the model's kernels do.
    const bool sameModel = QFileInfo(m.path).absoluteFilePath() == QFileInfo(m_afterShapesModel).absoluteFilePath();
    m_pendingCluster = sameModel ? std::exchange(m_clusterAfterShapes, -1) : -1;
    m_profileAfterShapes = sameModel && m_profileAfterShapes;
    m_clusterAfterShapes = -1;
    m_profile->clear();
    if (!m_pendingProfiles.isEmpty()) {
      QJsonArray profiles = std::exchange(m_pendingProfiles, QJsonArray());
      if (QFileInfo(profiles.last().toObject()["model"].toString()).fileName() == QFileInfo(m.path).fileName()) m_restoreProfiles = profiles;
    }
    if (otherModel && !m_shownModel.isEmpty()) {
      int dropped = m_session->runs()->removeIf([&](const RunRecord& r) { return !r.model.isEmpty() && r.model != m.path; });
      if (dropped) m_log->appendPlainText(QString("%1 run(s) of %2's kernels removed from Runs (they are in the saved session)").arg(dropped).arg(QFileInfo(m_shownModel).fileName()));
    }
    m_shownModel = m.path;
    m_graph->setHeat({}, 0);
    m_graph->setModel(m);
    addRecent(m.path);
    m_status->setText(QString("model %1 (%2 ops as imported, %3 fused groups) · laid out in %4 ms%5")
                          .arg(QFileInfo(m.path).fileName()).arg(m.opCount).arg(m.fusedGroups).arg(m.loadMs, 0, 'f', 0)
                          .arg(inputShapesSummary(m)));
    if (!m.symbolicNote.isEmpty()) m_log->appendPlainText(m.symbolicNote);
    updateTitle();
  });
  connect(m_session, &Session::modelFailed, this, [this](const QString& path, const QString& msg) {
    m_status->setText("could not open " + QFileInfo(path).fileName());
    m_problems->setProblems({{"error", "ImportError", msg, 0, 0}});
  });
  connect(m_session, &Session::taskStarted, this, [this](const QString& what) {
    m_status->setText(what + "…");
    m_progress->show();
    m_cancel->show();
  });
  connect(m_session, &Session::taskFinished, this, [this] {
    m_progress->hide();
    m_cancel->hide();
  });
  connect(m_session, &Session::runFinished, this, [this](const RunRecord& r) {
    QString rate = r.flopsKnown ? QString("%1 GFLOP/s").arg(r.gflops, 0, 'f', 1) : QString("GFLOP/s unknown");
    m_status->setText(r.ok ? QString("run #%1: %2 ms · %3 · %4 (vs %5)").arg(r.id).arg(r.medianMs, 0, 'f', 4).arg(rate, r.correct ? "correct" : "WRONG", r.reference)
                           : QString("run #%1 failed: %2").arg(r.id).arg(r.error.section('\n', 0, 0)));
    m_runsView->resizeColumnsToContents();
    m_runsView->scrollToBottom();
  });
  connect(m_session, &Session::logged, this, [this](const QString& line) { m_log->appendPlainText(line); });
  connect(m_session, &Session::modifiedChanged, this, &MainWindow::updateTitle);
  connect(m_graph, &GraphView::nodeSelected, this, &MainWindow::showProperties);
  connect(m_graph, &GraphView::nodeSelected, this, [this](const GraphNode& n) {
    const ModelGroups* groups = m_session->modelGroups();
    int c = n.kind == "group" ? n.group : n.cluster;
    if (!groups || !m_profile->current() || c < 0 || c >= groups->clusterGroup.size() || groups->clusterGroup[c] < 0) return;
    m_profile->selectKernel(QString::fromStdString(groups->groups[size_t(groups->clusterGroup[c])].name));
  });
  connect(m_graph, &GraphView::groupActivated, this, &MainWindow::openCluster);
  connect(m_graph, &GraphView::layoutReady, this, [this] {
    m_status->setText(QString("fused view: %1 of %2 groups collapsed").arg(m_graph->collapsedClusters().size()).arg(m_graph->graph().clusters.size()));
  });
  connect(m_session, &Session::groupsReady, this, [this] {
    const ModelGroups* g = m_session->modelGroups();
    QVector<QString> costs;
    for (int k : g->clusterGroup) costs << (k >= 0 ? flopsText(g->flops[size_t(k)]) : QString());
    m_graph->setClusterCosts(costs);
    m_status->setText(QString("%1 kernels in %2 fused groups · double-click a group to schedule it").arg(g->groups.size()).arg(g->clusterGroup.size()));
    int pending = std::exchange(m_pendingCluster, -1);
    if (pending >= 0) openCluster(pending);
    if (std::exchange(m_profileAfterShapes, false)) profileModel();
    if (!m_restoreProfiles.isEmpty()) m_profile->restoreHistory(std::exchange(m_restoreProfiles, QJsonArray()));
  });
  connect(m_session, &Session::groupsFailed, this, [this](const QString& msg) {
    m_pendingCluster = -1;
    m_problems->setProblems({{"error", "ModelGroups", msg, 0, 0}});
  });
  connect(m_graph, &GraphView::selectionCleared, this, [this] { m_propsModel->removeRows(0, m_propsModel->rowCount()); });
  connect(m_tirPane, &CodePane::lineClicked, this, &MainWindow::linkTirLine);
  connect(m_loweredPane, &CodePane::lineClicked, this, &MainWindow::linkLoweredLine);
  connect(m_asmPane, &CodePane::lineClicked, this, &MainWindow::linkAsmLine);

  QSettings settings;
  m_dark = settings.value("theme/dark", false).toBool();
  setDarkTheme(m_dark);
  resize(1500, 900);
  restoreGeometry(settings.value("window/geometry").toByteArray());
  restoreState(settings.value("window/state").toByteArray());
  updateRecentMenu();

  m_updatingPreset = true;
  m_presetBox->setCurrentText("matmul");
  m_updatingPreset = false;
  rebuildParams();
  m_session->setPreset("matmul");
  m_editor->setText("# Schedule script (tvm.tir.Schedule subset). Type `sch.` for the primitives.\n");
  m_editorBaseline = m_editor->text();
  m_session->setModified(false);
  updateTitle();

  m_autosaveTimer = new QTimer(this);
  m_autosaveTimer->setInterval(5000);
  connect(m_autosaveTimer, &QTimer::timeout, this, [this] {
    if (m_session->isModified()) writeAutosave();
  });
  m_autosaveTimer->start();
}

// ~QWidget hides the window after this object's members are gone, and qApp's focusChanged then
// reaches the find bar's lambda (UBSan: member access within a QWidget that is no longer a
// MainWindow). Disconnected first.
MainWindow::~MainWindow() { disconnect(qApp, nullptr, this, nullptr); }

void MainWindow::applyDefaultLayout() {
  auto* model = findChild<QDockWidget*>("modelDock");
  auto* code = findChild<QDockWidget*>("codeDock");
  auto* assembly = findChild<QDockWidget*>("asmDock");
  resizeDocks({model, code, assembly}, {width() * 22 / 100, width() * 25 / 100, width() * 25 / 100}, Qt::Horizontal);
  resizeDocks({findChild<QDockWidget*>("loopDock")}, {height() * 22 / 100}, Qt::Vertical);
  resizeDocks({model, findChild<QDockWidget*>("propertiesDock")}, {height() * 45 / 100, height() * 20 / 100}, Qt::Vertical);
}

void MainWindow::showEvent(QShowEvent* e) {
  QMainWindow::showEvent(e);
  if (m_layoutApplied) return;
  m_layoutApplied = true;
  if (!QSettings().contains("window/state")) QTimer::singleShot(0, this, &MainWindow::applyDefaultLayout);
}

void MainWindow::buildDocks() {
  // Code panes: lowered IR (with the pass selector), assembly, TIR after the schedule.
  auto* tabs = new QTabWidget;
  auto* loweredPage = new QWidget;
  auto* ll = new QVBoxLayout(loweredPage);
  ll->setContentsMargins(0, 0, 0, 0);
  ll->setSpacing(2);
  auto* passRow = new QHBoxLayout;
  passRow->setContentsMargins(4, 2, 4, 0);
  passRow->addWidget(new QLabel("IR after pass:"));
  m_passBox = new QComboBox;
  m_passModel = new QStandardItemModel(this);
  m_passBox->setModel(m_passModel);
  m_passBox->setToolTip("The function after each lowering pass (greyed: the pass changed nothing)");
  passRow->addWidget(m_passBox, 1);
  ll->addLayout(passRow);
  m_loweredPane = new CodePane;
  m_loweredPane->setLexer(new TirLexer(m_loweredPane));
  ll->addWidget(m_loweredPane, 1);
  m_asmPane = new CodePane;
  m_asmPane->setLexer(new AsmLexer(m_asmPane));
  m_tirPane = new CodePane;
  m_tirPane->setLexer(new TirLexer(m_tirPane));
  tabs->addTab(loweredPage, "Lowered IR");
  tabs->addTab(m_tirPane, "TIR");
  tabs->setObjectName("codeTabs");
  connect(m_passBox, &QComboBox::currentIndexChanged, this, &MainWindow::showPass);
  QDockWidget* codeDock = makeDock(this, "Code", "codeDock", tabs, Qt::RightDockWidgetArea);
  // The assembly beside the IR, so colour links are visible on both sides at once.
  auto* asmPage = new QWidget;
  auto* al = new QVBoxLayout(asmPage);
  al->setContentsMargins(0, 0, 0, 0);
  al->setSpacing(1);
  auto* filterRow = new QHBoxLayout;
  filterRow->setContentsMargins(4, 1, 4, 0);
  filterRow->addWidget(new QLabel("Hide:"));
  auto filterBox = [&](const QString& text, const QString& name, const QString& tip) {
    auto* b = new QCheckBox(text);
    b->setObjectName(name);
    b->setChecked(true);
    b->setToolTip(tip);
    filterRow->addWidget(b);
    connect(b, &QCheckBox::toggled, this, [this] {
      setAsmFilters(findChild<QCheckBox*>("asmHideDirectives")->isChecked(), findChild<QCheckBox*>("asmHideLabels")->isChecked(),
                    findChild<QCheckBox*>("asmHideComments")->isChecked());
    });
  };
  filterBox("directives", "asmHideDirectives", "Hide assembler directives (.text, .p2align, .section, .cfi_*, ...)");
  filterBox("unused labels", "asmHideLabels", "Hide labels no instruction jumps to or refers to (and jump-table data)");
  filterBox("comments", "asmHideComments", "Hide comment-only lines and trailing # comments");
  filterRow->addStretch(1);
  al->addLayout(filterRow);
  al->addWidget(m_asmPane, 1);
  m_asmPane->setObjectName("assembly");
  m_tirPane->setObjectName("TIR");
  m_loweredPane->setObjectName("lowered IR");
  for (CodePane* pane : {m_asmPane, m_tirPane, m_loweredPane}) pane->setMinimumWidth(220);
  QDockWidget* asmDock = makeDock(this, "Assembly", "asmDock", asmPage, Qt::RightDockWidgetArea);
  splitDockWidget(codeDock, asmDock, Qt::Horizontal);

  m_loopModel = new QStandardItemModel(this);
  m_loopModel->setHorizontalHeaderLabels({"Loop", "Extent", "Kind", "Annotations"});
  auto* loopView = new QTreeView;
  loopView->setModel(m_loopModel);
  loopView->setUniformRowHeights(true);
  loopView->header()->setSectionResizeMode(QHeaderView::ResizeToContents);
  QDockWidget* loops = makeDock(this, "Loop nest", "loopDock", loopView, Qt::BottomDockWidgetArea);
  connect(loopView, &QTreeView::clicked, this, [this](const QModelIndex& index) {
    int line = index.siblingAtColumn(0).data(Qt::UserRole).toInt();
    if (line > 0) linkTirLine(line);
  });

  m_graph = new GraphView;
  QDockWidget* model = makeDock(this, "Model", "modelDock", m_graph, Qt::LeftDockWidgetArea);
  m_propsModel = new QStandardItemModel(this);
  m_propsModel->setHorizontalHeaderLabels({"Property", "Value"});
  auto* propsView = new QTreeView;
  propsView->setModel(m_propsModel);
  propsView->setRootIsDecorated(false);
  propsView->header()->setSectionResizeMode(0, QHeaderView::ResizeToContents);
  propsView->setTextElideMode(Qt::ElideMiddle);  // long values: the middle is elided, the tooltip has all
  QDockWidget* props = makeDock(this, "Properties", "propertiesDock", propsView, Qt::LeftDockWidgetArea);
  splitDockWidget(model, props, Qt::Vertical);

  auto* runsPage = new QWidget;
  auto* rl = new QVBoxLayout(runsPage);
  rl->setContentsMargins(0, 0, 0, 0);
  m_runsView = new QTableView;
  m_runsView->setModel(m_session->runs());
  m_runsView->setSelectionBehavior(QAbstractItemView::SelectRows);
  m_runsView->setWordWrap(false);
  m_runsView->horizontalHeader()->setStretchLastSection(true);
  m_runsView->verticalHeader()->hide();
  rl->addWidget(m_runsView, 1);
  auto* diffButton = new QPushButton("Diff selected runs");
  diffButton->setToolTip("Select two runs, then compare their schedules and lowered IR");
  auto* runRow = new QHBoxLayout;
  runRow->addWidget(diffButton);
  runRow->addStretch(1);
  rl->addLayout(runRow);
  connect(diffButton, &QPushButton::clicked, this, [this] {
    QModelIndexList rows = m_runsView->selectionModel()->selectedRows();
    int n = m_session->runs()->rowCount();
    if (rows.size() >= 2) diffRuns(rows[0].row(), rows[1].row());
    else if (n >= 2) diffRuns(n - 2, n - 1);
  });
  QDockWidget* runs = makeDock(this, "Runs", "runsDock", runsPage, Qt::BottomDockWidgetArea);

  m_problems = new ProblemsModel(this);
  auto* problemsView = new QTableView;
  problemsView->setModel(m_problems);
  problemsView->horizontalHeader()->setStretchLastSection(true);
  problemsView->verticalHeader()->hide();
  problemsView->setSelectionBehavior(QAbstractItemView::SelectRows);
  QDockWidget* problems = makeDock(this, "Problems", "problemsDock", problemsView, Qt::BottomDockWidgetArea);
  connect(problemsView, &QTableView::activated, this, [this](const QModelIndex& index) {
    int line = index.siblingAtColumn(0).data(Qt::UserRole).toInt();
    if (line > 0) {
      m_editor->setCursorPosition(line - 1, 0);
      m_editor->setFocus();
    }
  });

  m_log = new QPlainTextEdit;
  m_log->setReadOnly(true);
  m_log->setMaximumBlockCount(2000);
  QDockWidget* log = makeDock(this, "Log", "logDock", m_log, Qt::BottomDockWidgetArea);
  tabifyDockWidget(runs, problems);
  tabifyDockWidget(problems, log);
  runs->raise();
  splitDockWidget(loops, runs, Qt::Horizontal);

  // Tuning (S2): the monitor docks beside the log; a candidate opens in the editor.
  m_tuning = new TuningMonitor(m_session);
  // In a short bottom dock area the monitor scrolls instead of squeezing its chart and tables
  // below their minimum sizes (they showed no row in a 1600x1000 window).
  auto* tuningScroll = new QScrollArea;
  tuningScroll->setWidget(m_tuning);
  tuningScroll->setWidgetResizable(true);
  tuningScroll->setFrameShape(QFrame::NoFrame);
  QDockWidget* tuningDock = makeDock(this, "Tuning", "tuningDock", tuningScroll, Qt::BottomDockWidgetArea);
  // Brought forward (its tab, Tune > ...), it grows tall enough to show the chart and the tables
  // without scrolling, when the window has the room.
  connect(tuningDock, &QDockWidget::visibilityChanged, this, [this, tuningDock](bool visible) {
    if (!visible || tuningDock->isFloating()) return;
    QTimer::singleShot(0, this, [this, tuningDock] {
      int need = m_tuning->minimumSizeHint().height() + 40;
      if (tuningDock->isVisible() && tuningDock->height() < need && need < height() / 2)
        resizeDocks({tuningDock}, {need}, Qt::Vertical);
    });
  });
  tabifyDockWidget(log, tuningDock);
  // Profile: where the model's time goes (kernels, roofline, history).
  m_profile = new ProfileDock(m_session);
  QDockWidget* profileDock = makeDock(this, "Profile", "profileDock", m_profile, Qt::BottomDockWidgetArea);
  tabifyDockWidget(tuningDock, profileDock);
  runs->raise();
  for (QDockWidget* d : findChildren<QDockWidget*>()) d->widget()->setMinimumSize(160, 80);
  connect(m_profile, &ProfileDock::profiled, this, [this](const ProfileResult& r) {
    applyProfileOverlay();
    m_log->appendPlainText(QString("profile #%1 of %2: %3 ms per run (median of %4 after %5 warm-up), %6 kernels, %7")
                               .arg(r.id).arg(QFileInfo(r.model).fileName()).arg(r.medianMs, 0, 'f', 3).arg(r.repeat).arg(r.warmup)
                               .arg(r.kernels.size()).arg(r.label));
  });
  connect(m_profile, &ProfileDock::profileFailed, this, [this](const QString& msg) {
    m_log->appendPlainText("profile failed: " + msg);
    m_problems->setProblems({{"error", "ProfileError", msg, 0, 0}});
    updateProblemsTitle(1);
  });
  connect(m_profile, &ProfileDock::kernelActivated, this, [this](const QString& name) {
    const ModelGroups* groups = m_session->modelGroups();
    for (size_t i = 0; groups && i < groups->groups.size(); ++i)
      if (QString::fromStdString(groups->groups[i].name) == name) {
        if (m_session->request().func.get() != groups->groups[i].func.get()) openGroup(int(i));
        return;
      }
  });
  connect(m_profile, &ProfileDock::kernelSelected, this, [this](const QString& name) {
    const ModelGroups* groups = m_session->modelGroups();
    if (!groups) return;
    QSet<int> clusters;
    for (int c = 0; c < groups->clusterGroup.size(); ++c) {
      int k = groups->clusterGroup[c];
      if (k >= 0 && QString::fromStdString(groups->groups[size_t(k)].name) == name) clusters.insert(c);
    }
    if (clusters.isEmpty()) return;
    if (m_graph->mode() != GraphView::Fused) m_graph->setMode(GraphView::Fused);
    m_graph->setHighlightedClusters(clusters);
    m_graph->focusCluster(*std::min_element(clusters.begin(), clusters.end()));
  });
  m_profile->setRequestHook([this](ProfileRequest& req) {
    // The schedule being edited for a fused group, when it is not the default one: profiled in the model.
    const ModelGroups* groups = m_session->modelGroups();
    if (!groups || !m_session->request().isGroup()) return;
    QString text = m_editor->text();
    if (text == m_groupCpuText || text == m_groupGpuText || driver::isGPUTarget(m_targetBox->currentText().toStdString())) return;
    if (!m_session->lastCompile().scriptOk) return;  // a failing script would fail the profile
    req.scriptKernel = m_session->request().group;
    req.scriptText = text;
    req.label = (req.records.isEmpty() ? QString() : req.label + " + ") + "edited " + req.scriptKernel;
  });
  connect(m_tuning, &TuningMonitor::openInEditor, this,
          [this](const QString& script, const QString& preset, const QMap<QString, qint64>& params, const QString& taskKey) {
    if (m_editor->text() != script && !confirmReplaceEditor("Opening the tuning candidate")) return;
    m_editorBaseline = m_editor->text();  // asked once: the group opening below does not ask again
    if (!preset.isEmpty()) setPreset(preset, params);
    const ModelGroups* groups = m_session->modelGroups();  // a model kernel: open its group first
    for (size_t i = 0; groups && !taskKey.isEmpty() && i < groups->groups.size(); ++i)
      if (tune::groupKey(groups->groups[i].func) == taskKey.toStdString()) {
        if (m_session->request().func.get() != groups->groups[i].func.get()) openGroup(int(i));
        break;
      }
    replaceEditorText(script);
    m_editorBaseline = script;
  });
}

void MainWindow::buildMenus() {
  QMenu* file = menuBar()->addMenu("&File");
  file->addAction("&Open Model…", QKeySequence::Open, this, [this] {
    QString path = QFileDialog::getOpenFileName(this, "Open model", {},
                                                QString::fromStdString(driver::modelFileFilter()) + ";;All files (*)");
    if (!path.isEmpty()) openModel(path);
  });
  m_recentMenu = file->addMenu("Recent Models");
  file->addSeparator();
  file->addAction("Open &Session…", this, [this] {
    if (!maybeSave()) return;
    QString path = QFileDialog::getOpenFileName(this, "Open session", {}, "Loom sessions (*.loomsession);;All files (*)");
    if (!path.isEmpty()) loadSession(path);
  });
  file->addAction("&Save Session", QKeySequence::Save, this, [this] {
    QString path = m_sessionPath;
    if (path.isEmpty()) path = QFileDialog::getSaveFileName(this, "Save session", "studio.loomsession", "Loom sessions (*.loomsession)");
    if (!path.isEmpty()) saveSession(path);
  });
  file->addAction("Save Session &As…", QKeySequence::SaveAs, this, [this] {
    QString path = QFileDialog::getSaveFileName(this, "Save session", m_sessionPath, "Loom sessions (*.loomsession)");
    if (!path.isEmpty()) saveSession(path);
  });
  file->addAction("Load Schedule Script…", this, [this] {
    QString path = QFileDialog::getOpenFileName(this, "Load schedule", {}, "Schedule scripts (*.py);;All files (*)");
    QFile f(path);
    if (!path.isEmpty() && f.open(QIODevice::ReadOnly)) setScheduleText(QString::fromUtf8(f.readAll()));
  });
  file->addAction("&Export Model Package…", QKeySequence(Qt::CTRL | Qt::Key_E), this, &MainWindow::showExportDialog);
  file->addSeparator();
  file->addAction("&Quit", QKeySequence::Quit, this, &QWidget::close);

  QMenu* edit = menuBar()->addMenu("&Edit");
  edit->addAction("&Undo", QKeySequence::Undo, m_editor, &QsciScintilla::undo);
  edit->addAction("&Redo", QKeySequence::Redo, m_editor, &QsciScintilla::redo);
  edit->addSeparator();
  // Cut / Copy / Paste act on the focused text (the editor, a code pane, a field).
  auto focused = [] { return qobject_cast<QsciScintilla*>(QApplication::focusWidget()); };
  QList<QAction*> clipboard;
  clipboard << edit->addAction("Cu&t", QKeySequence::Cut, this, [this, focused] {
    if (QsciScintilla* w = focused()) w->cut();
    else if (auto* l = qobject_cast<QLineEdit*>(QApplication::focusWidget())) l->cut();
    else m_editor->cut();
  });
  clipboard << edit->addAction("&Copy", QKeySequence::Copy, this, [this, focused] {
    if (QsciScintilla* w = focused()) w->copy();
    else if (auto* l = qobject_cast<QLineEdit*>(QApplication::focusWidget())) l->copy();
    else m_editor->copy();
  });
  clipboard << edit->addAction("&Paste", QKeySequence::Paste, this, [this, focused] {
    if (QsciScintilla* w = focused(); w && !w->isReadOnly()) w->paste();
    else if (auto* l = qobject_cast<QLineEdit*>(QApplication::focusWidget())) l->paste();
    else m_editor->paste();
  });
  for (QAction* a : clipboard) a->setShortcutContext(Qt::WidgetShortcut);  // the focused widget's own keys stay in charge
  edit->addSeparator();
  edit->addAction("&Find…", QKeySequence::Find, this, [this] { m_findBar->activate(); });
  edit->addAction("Find &Next", QKeySequence::FindNext, this, [this] {
    if (!m_findBar->isVisible()) m_findBar->activate();
    else m_findBar->findNext(false);
  });
  edit->addAction("Find Pre&vious", QKeySequence::FindPrevious, this, [this] { m_findBar->findNext(true); });
  edit->addSeparator();
  edit->addAction("Select &All", QKeySequence::SelectAll, m_editor, [this] { m_editor->selectAll(); });

  m_viewMenu = menuBar()->addMenu("&View");
  for (QDockWidget* d : findChildren<QDockWidget*>()) m_viewMenu->addAction(d->toggleViewAction());
  m_viewMenu->addSeparator();
  QAction* dark = m_viewMenu->addAction("&Dark Theme");
  dark->setCheckable(true);
  dark->setChecked(m_dark);
  connect(dark, &QAction::toggled, this, &MainWindow::setDarkTheme);

  QMenu* model = menuBar()->addMenu("&Model");
  model->addAction("As &Imported", this, [this] { m_graph->setMode(GraphView::Imported); });
  model->addAction("&Optimized", this, [this] { m_graph->setMode(GraphView::Optimized); });
  model->addAction("&Fused", this, [this] { m_graph->setMode(GraphView::Fused); });
  model->addSeparator();
  model->addAction("&Profile", QKeySequence(Qt::Key_F6), this, &MainWindow::profileModel)->setObjectName("profileAction");
  model->addAction("Input &Shapes…", this, &MainWindow::showInputShapesDialog)->setObjectName("inputShapesAction");
  model->addSeparator();
  QMenu* layout = model->addMenu("Conv &Layout");
  auto* layouts = new QActionGroup(this);
  for (const QString& l : {QString("NCHW"), QString("NCHWc")}) {
    QAction* a = layout->addAction(l == "NCHW" ? "NCHW (as imported)" : "NCHWc (channel-blocked, as --desired-layout NCHWc)");
    a->setObjectName("layout" + l);
    a->setCheckable(true);
    a->setChecked(l == m_session->modelLayout());
    layouts->addAction(a);
    connect(a, &QAction::triggered, this, [this, l] {
      if (m_session->request().isGroup() && l != m_session->modelLayout()) {
        if (!confirmReplaceEditor("Changing the conv layout (the kernels change)")) return;
        leaveGroup(m_lastPreset);
      }
      m_session->setModelLayout(l);
    });
  }
  model->addAction("&Collapse All Groups", this, [this] { m_graph->setAllCollapsed(true); });
  model->addAction("&Expand All Groups", this, [this] { m_graph->setAllCollapsed(false); });
  model->addSeparator();
  model->addAction("Fit to &View", QKeySequence(Qt::CTRL | Qt::Key_0), m_graph, &GraphView::fitAll);

  QMenu* schedule = menuBar()->addMenu("&Schedule");
  QAction* run = schedule->addAction("&Run", QKeySequence(Qt::CTRL | Qt::Key_R), m_session, &Session::run);
  run->setIcon(QIcon(":/loom/icons/run.svg"));
  schedule->addAction("&Compile Now", QKeySequence(Qt::CTRL | Qt::Key_B), m_session, &Session::compileNow);
  schedule->addAction("&Diff Last Two Runs", this, [this] {
    int n = m_session->runs()->rowCount();
    if (n >= 2) diffRuns(n - 2, n - 1);
  });

  QMenu* tune = menuBar()->addMenu("&Tune");
  auto startTuning = [this](TuneJob::Scope scope) {
    m_tuning->setScope(scope);
    m_tuning->setSessionPath(m_sessionPath);
    if (QString t = m_targetBox->currentText(); t.startsWith("llvm") && !t.contains("-mtriple")) m_tuning->setTarget(t);
    auto* dock = findChild<QDockWidget*>("tuningDock");
    dock->show();
    dock->raise();
    m_tuning->startFromForm();
  };
  tune->addAction("Tune This &Operator", QKeySequence(Qt::CTRL | Qt::Key_T), this, [startTuning] { startTuning(TuneJob::Scope::Operator); });
  tune->addAction("Tune the &Model", QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_T), this, [startTuning] { startTuning(TuneJob::Scope::Model); });
  tune->addAction("&Pause / Resume", this, [this] { m_tuning->isPaused() ? m_tuning->resume() : m_tuning->pause(); });
  tune->addAction("&Cancel Tuning", this, [this] { m_tuning->cancel(); });

  QMenu* help = menuBar()->addMenu("&Help");
  help->addAction("Schedule &Primitives and Shortcuts", QKeySequence(Qt::Key_F1), this, &MainWindow::showReference);
  help->addAction("&About Loom Studio", this, [this] {
    QMessageBox::about(this, "Loom Studio",
                       QString("<b>Loom Studio %1</b><br>A workbench for the Loom deep-learning compiler: schedule editor, "
                               "live lowered IR and assembly, runs, tuning, model graphs and profiles.<br><br>"
                               "Qt %2 · uses QScintilla (GPL-3), Qt Charts and Graphviz.")
                           .arg(QApplication::applicationVersion().isEmpty() ? QString("(version unknown)") : QApplication::applicationVersion(), qVersion()));
  });
}

void MainWindow::rebuildParams() {
  for (QSpinBox* s : m_paramSpins) s->deleteLater();
  m_paramSpins.clear();
  while (QLayoutItem* it = m_paramLayout->takeAt(0)) {
    if (it->widget()) it->widget()->deleteLater();
    delete it;
  }
  if (m_presetBox->currentIndex() == 0 && m_presetBox->itemData(0).toString() == "group") {
    auto* label = new QLabel(m_groupDetails);
    label->setObjectName("groupDetails");
    m_paramLayout->addWidget(label);
    m_presetBox->setToolTip("A fused group of the model: pick a preset to leave it");
    return;
  }
  const QMap<QString, qint64>& current = m_session->request().params;
  bool samePreset = m_session->request().preset == m_presetBox->currentText();
  for (const PresetParamInfo& p : presetParams(m_presetBox->currentText())) {
    m_paramLayout->addWidget(new QLabel(p.name + ":"));
    auto* spin = new QSpinBox;
    spin->setObjectName(p.name);
    spin->setMaximumWidth(80);
    spin->setRange(int(p.minValue), 1 << 20);
    spin->setValue(int(samePreset ? current.value(p.name, p.defaultValue) : p.defaultValue));
    spin->setToolTip(p.help);
    spin->setKeyboardTracking(false);
    m_paramLayout->addWidget(spin);
    m_paramSpins << spin;
    connect(spin, &QSpinBox::valueChanged, this, [this] {
      if (m_updatingPreset) return;
      QMap<QString, qint64> params;
      for (QSpinBox* s : m_paramSpins) params[s->objectName()] = s->value();
      m_session->setPreset(m_presetBox->currentText(), params);
    });
  }
  m_presetBox->setToolTip(presetDescription(m_presetBox->currentText()));
}

void MainWindow::setPreset(const QString& name, const QMap<QString, qint64>& params) {
  if (m_session->request().isGroup()) {  // the group's script does not apply to the preset
    m_groupModel.clear();
    replaceEditorText(presetStartText());
    m_editorBaseline = m_editor->text();
  }
  m_lastPreset = name;
  m_session->setPreset(name, params);
  m_graph->setHighlightedClusters({});
  m_updatingPreset = true;
  if (m_presetBox->itemData(0).toString() == "group") m_presetBox->removeItem(0);
  m_presetBox->setCurrentText(name);
  rebuildParams();
  m_updatingPreset = false;
}

void MainWindow::setScheduleText(const QString& text) {
  m_editor->setText(text);
  m_editorBaseline = text;
}

QString MainWindow::presetStartText() { return "# Schedule script (tvm.tir.Schedule subset). Type `sch.` for the primitives.\n"; }

bool MainWindow::confirmReplaceEditor(const QString& why) {
  QString text = m_editor->text();
  if (text == m_editorBaseline || text.trimmed().isEmpty() || text == m_groupCpuText || text == m_groupGpuText || text == presetStartText())
    return true;
  return !m_confirm || m_confirm(why);
}

void MainWindow::replaceEditorText(const QString& text) {
  if (m_editor->text() == text) return;
  if (m_editor->text().isEmpty()) {
    m_editor->setText(text);
  } else {
    m_editor->beginUndoAction();
    m_editor->selectAll();
    m_editor->replaceSelectedText(text);
    m_editor->endUndoAction();
    m_editor->setCursorPosition(0, 0);
  }
}

void MainWindow::leaveGroup(const QString& preset) {
  m_groupModel.clear();
  m_groupCpuText.clear();
  m_groupGpuText.clear();
  m_graph->setHighlightedClusters({});
  m_updatingPreset = true;
  if (m_presetBox->itemData(0).toString() == "group") m_presetBox->removeItem(0);
  m_presetBox->setCurrentText(preset);
  m_updatingPreset = false;
  m_lastPreset = preset;
  m_session->setPreset(preset);
  rebuildParams();
  replaceEditorText(presetStartText());
  m_editorBaseline = m_editor->text();
}

bool MainWindow::profileModel() {
  if (const ModelData* model = m_session->model(); model && !model->concrete()) {
    // A profile runs the model at concrete shapes: ask for them, then profile.
    m_status->setText("profiling needs values for the model's symbolic dims");
    if (showInputShapesDialog()) {
      m_profileAfterShapes = true;
      m_afterShapesModel = model->path;
    }
    return false;
  }
  auto* dock = findChild<QDockWidget*>("profileDock");
  dock->show();
  dock->raise();
  // The records of the last tuning of this model are the likely choice.
  // (offered once per tuning: choosing "default schedules" afterwards sticks).
  if (const TuneJob& j = m_tuning->lastJob(); j.module && QFileInfo::exists(j.recordsPath) && j.recordsPath != m_offeredRecords) {
    m_offeredRecords = j.recordsPath;
    m_profile->setRecordsPath(j.recordsPath);
  }
  return m_profile->startProfile();
}

void MainWindow::applyProfileOverlay() {
  const ProfileResult* r = m_profile->current();
  const ModelGroups* groups = m_session->modelGroups();
  if (!r || !groups) {
    m_graph->setHeat({}, 0);
    return;
  }
  if (m_graph->mode() != GraphView::Fused) m_graph->setMode(GraphView::Fused);
  m_graph->setHeat(r->clusterMs(groups->clusterNodeNames), r->nodeSumMs());
}

bool MainWindow::showInputShapesDialog() {
  const ModelData* model = m_session->model();
  if (!model) {
    m_status->setText("Open a model first: its input shapes are set here");
    return false;
  }
  InputShapesDialog dlg(model->inputs, this, m_session->symbolicInputShapes());
  if (dlg.exec() != QDialog::Accepted) return false;
  if (dlg.shapes() == m_session->inputShapes() && dlg.symbolicShapes() == m_session->symbolicInputShapes() && model->concrete())
    return false;
  if (m_session->request().isGroup()) {
    if (!confirmReplaceEditor("Changing the input shapes (the kernels change)")) return false;
    leaveGroup(m_lastPreset);
  }
  m_session->setInputShapes(dlg.shapes(), true, dlg.symbolicShapes());
  return true;
}

QString MainWindow::inputShapesSummary(const ModelData& m) {
  QStringList symbolic, fromTestData;
  for (const ModelInput& in : m.inputs)
    if (in.isSymbolic()) {
      symbolic << in.name;
      if (in.shapeSource == "test_data_set_0") fromTestData << in.name;
    }
  if (symbolic.isEmpty()) return QString();
  if (!m.concrete())
    return QString(" · symbolic dims of %1 have no values: Model > Input Shapes… sets them for kernels, runs and profiles").arg(symbolic.join(", "));
  return QString(" · symbolic dims of %1 at %2%3 (Model > Input Shapes…)")
      .arg(symbolic.join(", "), inputShapesSpec(m.inputs), fromTestData.isEmpty() ? QString() : QString(", from test_data_set_0"));
}

void MainWindow::updateProblemsTitle(int count) {
  auto* dock = findChild<QDockWidget*>("problemsDock");
  if (!dock) return;
  dock->setWindowTitle(count > 0 ? QString("Problems (%1)").arg(count) : QString("Problems"));
  if (count > 0) {  // the tab comes forward (the editor keeps the focus)
    dock->show();
    dock->raise();
  }
}

namespace {

bool isDirective(const QString& t) {
  QString s = t.trimmed();
  return s.startsWith('.') && !s.endsWith(':');
}

bool isLabel(const QString& t) {
  QString s = t.trimmed();
  return s.endsWith(':') && !s.contains(' ') && !s.contains('\t');
}

bool isCommentLine(const QString& t) {
  QString s = t.trimmed();
  return s.startsWith('#') || s.startsWith("//") || s.startsWith(';');
}

}  // namespace

void MainWindow::showAssembly() {
  const CompileResult& r = m_session->lastCompile();
  m_asmShown.clear();
  bool isAsm = r.codeKind == "assembly";
  // The filters are assembly's: GPU source (CUDA C, OpenCL C, PTX) is shown whole, the boxes greyed.
  for (const char* name : {"asmHideDirectives", "asmHideLabels", "asmHideComments"})
    if (auto* b = findChild<QCheckBox*>(name); b && b->isEnabled() != isAsm) {
      if (!b->property("asmTip").isValid()) b->setProperty("asmTip", b->toolTip());
      b->setEnabled(isAsm);
      b->setToolTip(isAsm ? b->property("asmTip").toString() : QString("Filters CPU assembly; %1 is shown whole").arg(r.codeKind));
    }
  // Labels something refers to: every identifier-like word of an instruction or data line.
  QSet<QString> used;
  if (isAsm && m_asmUnusedLabels) {
    static const QRegularExpression word("[A-Za-z_.$][A-Za-z0-9_.$@]*");
    for (const AsmLineInfo& a : r.asmLines) {
      if (isLabel(a.text)) continue;
      QString t = a.text.section('#', 0, 0);
      for (auto it = word.globalMatch(t); it.hasNext();) used.insert(it.next().captured());
    }
  }
  QString text;
  // A label of directives only (a constant pool, a jump table, a string, a function's end: up to
  // the next label, no instruction) goes with the directives: it would stand alone.
  QVector<bool> dataLabel(r.asmLines.size(), false);
  if (isAsm && m_asmDirectives) {
    for (int i = 0; i < r.asmLines.size(); ++i) {
      if (!isLabel(r.asmLines[i].text)) continue;
      bool data = false;
      int j = i + 1;
      for (; j < r.asmLines.size(); ++j) {
        const QString& t = r.asmLines[j].text;
        if (isLabel(t) || (!isDirective(t) && !isCommentLine(t) && !t.trimmed().isEmpty())) break;
        data |= isDirective(t);
      }
      dataLabel[i] = data && (j == r.asmLines.size() || isLabel(r.asmLines[j].text));
    }
  }
  bool inData = false;  // after an unused label: its data (jump tables, constants) goes too
  for (int i = 0; i < r.asmLines.size(); ++i) {
    QString line = r.asmLines[i].text;
    if (isAsm) {
      if (m_asmComments && isCommentLine(line)) continue;
      if (isLabel(line)) {
        QString name = line.trimmed().chopped(1);
        inData = m_asmUnusedLabels && !used.contains(name);
        if (inData || dataLabel[i]) continue;
      } else if (inData && isDirective(line)) {
        continue;
      } else {
        inData = false;
      }
      if (m_asmDirectives && isDirective(line)) continue;
      if (m_asmComments) {
        int hash = line.indexOf(" #");
        if (hash < 0) hash = line.indexOf("\t#");
        if (hash > 0) line = line.left(hash).trimmed().isEmpty() ? line : line.left(hash);
      }
    }
    m_asmShown << i;
    text += line + '\n';
  }
  m_asmPane->setCode(text);
}

void MainWindow::setAsmFilters(bool directives, bool unusedLabels, bool comments) {
  m_asmDirectives = directives;
  m_asmUnusedLabels = unusedLabels;
  m_asmComments = comments;
  for (auto [name, on] : {std::pair{"asmHideDirectives", directives}, {"asmHideLabels", unusedLabels}, {"asmHideComments", comments}})
    if (auto* b = findChild<QCheckBox*>(name); b && b->isChecked() != on) {
      QSignalBlocker block(b);
      b->setChecked(on);
    }
  showAssembly();
  if (m_selectedLoop >= 0) linkLoweredLine(m_session->lastCompile().loweredLoops.value(m_selectedLoop).firstLine);
}

void MainWindow::showReference() {
  auto* dlg = new QDialog(this);
  dlg->setObjectName("referenceDialog");
  dlg->setWindowTitle("Schedule primitives and shortcuts");
  dlg->setAttribute(Qt::WA_DeleteOnClose);
  auto* l = new QVBoxLayout(dlg);
  auto* view = new QTextBrowser;
  view->setObjectName("referenceText");
  QString html = "<h3>Schedule primitives</h3><p>A schedule script calls them on <tt>sch</tt> (a tvm.tir.Schedule "
                 "subset); type <tt>sch.</tt> in the editor to be offered them.</p><table cellspacing=4>";
  for (const QString& p : m_editor->primitives()) {
    QString tip = m_editor->callTipOf(p);
    QString sig = tip.section("  ", 0, 0), doc = tip.section("  ", 1).trimmed();
    html += QString("<tr><td><tt>sch.%1</tt></td><td>%2</td></tr>").arg(sig.toHtmlEscaped(), doc.toHtmlEscaped());
  }
  html += "</table><h3>Shortcuts</h3><table cellspacing=4>";
  for (QAction* menu : menuBar()->actions()) {
    if (!menu->menu()) continue;
    for (QAction* a : menu->menu()->actions())
      if (!a->shortcut().isEmpty())
        html += QString("<tr><td><tt>%1</tt></td><td>%2 &gt; %3</td></tr>")
                    .arg(a->shortcut().toString(QKeySequence::NativeText).toHtmlEscaped(), menu->text().remove('&').toHtmlEscaped(),
                         a->text().remove('&').remove(QString::fromUtf8("…")).toHtmlEscaped());
  }
  html += "<tr><td><tt>Ctrl+Space</tt></td><td>Editor: complete a loop, block or variable name</td></tr>"
          "<tr><td><tt>Double-click</tt></td><td>Model: open a fused group (or a Profile row) in the schedule editor</td></tr>"
          "</table>";
  view->setHtml(html);
  l->addWidget(view);
  auto* close = new QPushButton("Close");
  connect(close, &QPushButton::clicked, dlg, &QDialog::close);
  l->addWidget(close, 0, Qt::AlignRight);
  dlg->resize(720, 560);
  dlg->show();
}

bool MainWindow::openCluster(int cluster) {
  const ModelData* model = m_session->model();
  if (!model || cluster < 0 || cluster >= model->fused.clusters.size()) return false;
  if (!model->concrete()) {
    // Kernels are made at concrete shapes: ask for them, then open the group.
    m_status->setText(QString("%1 needs values for the model's symbolic dims").arg(model->fused.clusters[cluster].name));
    if (showInputShapesDialog()) {
      m_clusterAfterShapes = cluster;
      m_afterShapesModel = model->path;
      return true;
    }
    return false;
  }
  const ModelGroups* groups = m_session->modelGroups();
  if (!groups) {
    m_pendingCluster = cluster;
    m_status->setText(QString("extracting the model's kernels; %1 opens when they are ready…").arg(model->fused.clusters[cluster].name));
    return true;
  }
  int index = cluster < groups->clusterGroup.size() ? groups->clusterGroup[cluster] : -1;
  if (index < 0) {
    m_status->setText(QString("fused group %1 has no kernel at these input shapes (it computes nothing, or folds away): nothing to schedule")
                          .arg(model->fused.clusters[cluster].name));
    return false;
  }
  return openGroup(index);
}

bool MainWindow::openGroup(int index) {
  const ModelGroups* groups = m_session->modelGroups();
  if (!groups || index < 0 || size_t(index) >= groups->groups.size()) return false;
  if (!confirmReplaceEditor(QString("Opening fused group %1").arg(QString::fromStdString(groups->groups[size_t(index)].name)))) return false;
  if (!m_session->openGroup(index)) return false;
  m_groupModel = m_session->modelPath();
  const driver::ModelGroup& g = groups->groups[size_t(index)];
  QSet<int> clusters;  // every cluster that runs this kernel
  for (int c = 0; c < groups->clusterGroup.size(); ++c)
    if (groups->clusterGroup[c] == index) clusters.insert(c);
  m_graph->setHighlightedClusters(clusters);
  if (!clusters.isEmpty()) m_graph->focusCluster(*std::min_element(clusters.begin(), clusters.end()));  // into view
  QStringList ops;
  for (const std::string& op : g.ops) ops << QString::fromStdString(op);
  QString name = QString::fromStdString(g.name);
  QString details = QString("%1 · %2 input(s) · used %3x in the model").arg(ops.join(", ")).arg(g.numInputs).arg(g.occurrences);
  showGroupInPresetBar(name, details);
  QString script = size_t(index) < groups->defaultScripts.size() ? QString::fromStdString(groups->defaultScripts[size_t(index)]) : QString();
  QString head = QString("# Fused group %1: %2 (used %3x in the model).\n").arg(name, ops.join(", ")).arg(g.occurrences);
  // A symbolic model's kernels are made at the concrete input shapes: say which.
  if (const ModelData* model = m_session->model(); model && model->hasSymbolicInputs())
    head += QString("# The kernel at %1 (the model's symbolic dims at these values: Model > Input Shapes… changes them).\n")
                .arg(inputShapesSpec(model->inputs));
  m_groupCpuText = head + "# Below is the schedule `loom compile` gives this kernel by default (its trace); edit it,\n"
                          "# or delete it to see the unscheduled kernel. Run compares the result with the unscheduled\n"
                          "# program on random inputs. Type `sch.` for the primitives.\n" + script;
  m_groupGpuText = head + "# GPU target: with no schedule lines the default GPU schedule (loops bound to blocks and\n"
                          "# threads) applies. Run compares the result with the unscheduled program on random inputs.\n";
  replaceEditorText(driver::isGPUTarget(m_targetBox->currentText().toStdString()) ? m_groupGpuText : m_groupCpuText);
  m_editorBaseline = m_editor->text();
  m_status->setText("opened fused group " + name);
  return true;
}

void MainWindow::showGroupInPresetBar(const QString& name, const QString& details) {
  m_groupDetails = details;
  m_updatingPreset = true;
  QString label = "group: " + name;
  if (m_presetBox->itemData(0).toString() == "group") m_presetBox->setItemText(0, label);
  else m_presetBox->insertItem(0, label, QString("group"));
  m_presetBox->setCurrentIndex(0);
  rebuildParams();
  m_updatingPreset = false;
}

void MainWindow::openModel(const QString& path) {
  // Another model's kernels replace this one's: a fused group open in the editor goes with them.
  bool other = QFileInfo(path).absoluteFilePath() != QFileInfo(m_session->modelPath()).absoluteFilePath();
  if (other && m_session->request().isGroup() && !confirmReplaceEditor("Opening model " + QFileInfo(path).fileName())) return;
  // TorchScript files record no input shapes: ask for them (the last answer is the default).
  if (frontend::looksLikeTorchScript(path.toStdString()) && !m_session->torchInputSpecFixed()) {
    QSettings settings;
    bool ok = false;
    QString spec = QInputDialog::getText(this, "Input shapes",
                                         "Shapes (and dtypes) of forward()'s arguments, e.g. x:[1,3,224,224] or ids:[1,64]:int64",
                                         QLineEdit::Normal, settings.value("torchInputShapes", "x:[1,3,224,224]").toString(), &ok);
    if (!ok) return;
    settings.setValue("torchInputShapes", spec);
    m_session->setTorchInputSpec(spec);
  }
  m_session->loadModel(path);
}

void MainWindow::onCompiled(const CompileResult& r) {
  // Problems, squiggle and the names offered in completion.
  QVector<ProblemsModel::Problem> problems;
  if (!r.scriptOk) problems.push_back({"error", r.errorKind, r.errorMessage, r.errorLine, r.errorColumn});
  if (!r.buildError.isEmpty()) problems.push_back({"error", "BuildError", r.buildError, 0, 0});
  m_problems->setProblems(problems);
  updateProblemsTitle(int(problems.size()));
  m_editor->setError(r.scriptOk ? 0 : r.errorLine, r.errorColumn, r.errorEndColumn, r.errorMessage);
  m_editor->setBlockNames(r.blockNames);
  if (auto* asmDock = findChild<QDockWidget*>("asmDock")) asmDock->setWindowTitle(r.codeKind == "assembly" ? QString("Assembly") : r.codeKind);
  if (!r.buildError.isEmpty()) {
    m_status->setText("build failed: " + r.buildError.section('\n', 0, 0));
    return;
  }
  m_tirPane->setCode(r.scheduledTir);
  showAssembly();
  // The pass selector: the last entry is what the assembly came from.
  int previous = m_passBox->currentIndex();
  bool wasLast = previous < 0 || previous == m_passModel->rowCount() - 1;
  m_passBox->blockSignals(true);
  m_passModel->clear();
  for (const PassText& p : r.passes) {
    bool last = &p == &r.passes.back();
    auto* item = new QStandardItem(p.name == "input" ? QString("input (after the schedule)")
                                                     : "after " + p.name + (last ? "  (the assembly's source)" : ""));
    if (!p.changed) {
      item->setForeground(QColor(0x99, 0x99, 0x99));
      item->setToolTip("unchanged by this pass");
    }
    m_passModel->appendRow(item);
  }
  m_passBox->setCurrentIndex(wasLast || previous >= m_passModel->rowCount() ? m_passModel->rowCount() - 1 : previous);
  m_passBox->blockSignals(false);
  showPass(m_passBox->currentIndex());

  m_loopModel->removeRows(0, m_loopModel->rowCount());
  QVector<QStandardItem*> parents;
  for (const LoopInfo& l : r.scheduledLoops) {
    QList<QStandardItem*> row{new QStandardItem(l.name), new QStandardItem(l.extent), new QStandardItem(l.kind),
                              new QStandardItem(l.annotations)};
    row[0]->setData(l.firstLine, Qt::UserRole);
    for (QStandardItem* it : row) it->setEditable(false);
    parents.resize(l.depth + 1);
    if (l.depth == 0 || !parents[l.depth - 1]) m_loopModel->appendRow(row);
    else parents[l.depth - 1]->appendRow(row);
    parents[l.depth] = row[0];
  }
  if (auto* tree = qobject_cast<QTreeView*>(findChild<QDockWidget*>("loopDock")->widget())) tree->expandAll();
  m_selectedLoop = -1;
  QString state = r.scriptOk ? QString("schedule applied") : QString("schedule stops at line %1").arg(r.errorLine);
  if (!r.note.isEmpty()) state += " · " + r.note;
  m_status->setText(QString("compiled in %1 ms · %2 · %3 %4 lines · target %5").arg(r.compileMs, 0, 'f', 0).arg(state).arg(r.asmLines.size()).arg(r.codeKind).arg(r.target));
}

void MainWindow::showPass(int index) {
  const CompileResult& r = m_session->lastCompile();
  if (index < 0) return;
  if (index >= r.passes.size() - 1) m_loweredPane->setCode(r.loweredTir);
  else m_loweredPane->setCode(r.passes[index].text);
  if (m_selectedLoop >= 0 && index >= r.passes.size() - 1) linkLoweredLine(r.loweredLoops.value(m_selectedLoop).firstLine);
}

void MainWindow::linkLoweredLine(int line) {
  const CompileResult& r = m_session->lastCompile();
  bool final = m_passBox->currentIndex() >= r.passes.size() - 1;
  if (!final) return;  // only the final IR is what the assembly came from
  int loop = loopAt(r.loweredLoops, line);
  m_selectedLoop = loop;
  if (loop < 0) {
    m_loweredPane->setLineColors({});
    m_asmPane->setLineColors({});
    m_tirPane->setLineColors({});
    return;
  }
  const LoopInfo& outer = r.loweredLoops[loop];
  QHash<int, int> loweredColors, asmColors, tirColors;
  QHash<int, int> colorOfHeader;  // loop header line -> colour
  for (int i = 0; i < r.loweredLoops.size(); ++i) {
    const LoopInfo& l = r.loweredLoops[i];
    if (l.firstLine < outer.firstLine || l.lastLine > outer.lastLine) continue;
    colorOfHeader[l.firstLine] = i;
    // The scheduled TIR's loop of the same name, in the same colour.
    for (const LoopInfo& s : r.scheduledLoops)
      if (s.name == l.name) tirColors[s.firstLine] = i;
  }
  for (int ln = outer.firstLine; ln <= outer.lastLine; ++ln) {
    int inner = loopAt(r.loweredLoops, ln);
    if (inner >= 0) loweredColors[ln] = inner;
  }
  for (int line = 0; line < m_asmShown.size(); ++line)
    if (auto it = colorOfHeader.find(r.asmLines.value(m_asmShown[line]).tirLine); it != colorOfHeader.end()) asmColors[line + 1] = *it;
  m_loweredPane->setLineColors(loweredColors);
  m_asmPane->setLineColors(asmColors);
  m_tirPane->setLineColors(tirColors);
  if (!asmColors.isEmpty()) m_asmPane->revealLine(std::min_element(asmColors.keyBegin(), asmColors.keyEnd()).operator*());
}

void MainWindow::linkAsmLine(int line) {
  const CompileResult& r = m_session->lastCompile();
  if (line < 1 || line > m_asmShown.size()) return;
  int tirLine = r.asmLines.value(m_asmShown[line - 1]).tirLine;
  if (tirLine <= 0) return;
  if (m_passBox->currentIndex() != m_passModel->rowCount() - 1) m_passBox->setCurrentIndex(m_passModel->rowCount() - 1);
  linkLoweredLine(tirLine);
  m_loweredPane->revealLine(tirLine);
}

void MainWindow::linkTirLine(int line) {
  const CompileResult& r = m_session->lastCompile();
  int loop = loopAt(r.scheduledLoops, line);
  if (loop < 0) return;
  for (const LoopInfo& l : r.loweredLoops)
    if (l.name == r.scheduledLoops[loop].name) {
      if (m_passBox->currentIndex() != m_passModel->rowCount() - 1) m_passBox->setCurrentIndex(m_passModel->rowCount() - 1);
      linkLoweredLine(l.firstLine);
      m_loweredPane->revealLine(l.firstLine);
      return;
    }
}

void MainWindow::diffRuns(int rowA, int rowB) {
  RunsModel* runs = m_session->runs();
  if (rowA < 0 || rowB < 0 || rowA >= runs->rowCount() || rowB >= runs->rowCount()) return;
  auto* dlg = new DiffDialog(runs->record(std::min(rowA, rowB)), runs->record(std::max(rowA, rowB)), m_dark, this);
  dlg->setAttribute(Qt::WA_DeleteOnClose);
  dlg->show();
}

void MainWindow::showProperties(const GraphNode& n) {
  m_propsModel->removeRows(0, m_propsModel->rowCount());
  for (const QString& line : n.properties) {
    auto* key = new QStandardItem(line.section('\t', 0, 0));
    auto* value = new QStandardItem(line.section('\t', 1));
    key->setEditable(false);
    value->setEditable(false);
    value->setToolTip(value->text());
    m_propsModel->appendRow({key, value});
  }
  int cluster = n.kind == "group" ? n.group : n.cluster;
  if (n.cluster >= 0 && n.cluster < m_graph->graph().clusters.size()) {
    auto* key = new QStandardItem("fused group");
    auto* value = new QStandardItem(m_graph->graph().clusters[n.cluster].name);
    m_propsModel->appendRow({key, value});
  }
  const ModelGroups* groups = m_session->modelGroups();
  if (const ProfileResult* prof = m_profile->current(); prof && groups && cluster >= 0 && cluster < groups->clusterNodeNames.size()) {
    double ms = prof->clusterMs({groups->clusterNodeNames[cluster]}).value(0);
    double total = prof->nodeSumMs();
    m_propsModel->appendRow({new QStandardItem("time"), new QStandardItem(QString("%1 ms · %2% of the model (profile #%3)")
                                                                             .arg(ms, 0, 'f', 4).arg(total > 0 ? 100 * ms / total : 0, 0, 'f', 1).arg(prof->id))});
  }
  if (cluster >= 0 && groups && cluster < groups->clusterGroup.size()) {
    int k = groups->clusterGroup[cluster];
    QString text = k < 0 ? QString("none (computes nothing)")
                         : QString("%1 (used %2x) · double-click to schedule").arg(QString::fromStdString(groups->groups[size_t(k)].name)).arg(groups->groups[size_t(k)].occurrences);
    auto* key = new QStandardItem("kernel");
    auto* value = new QStandardItem(text);
    key->setEditable(false);
    value->setEditable(false);
    m_propsModel->appendRow({key, value});
    // A symbolic model's kernels are made at the concrete input shapes: say which.
    if (const ModelData* model = m_session->model(); k >= 0 && model && model->hasSymbolicInputs())
      m_propsModel->appendRow({new QStandardItem("kernel shapes"), new QStandardItem("at " + inputShapesSpec(model->inputs))});
  } else if (cluster >= 0) {
    if (const ModelData* model = m_session->model(); model && !model->concrete())
      m_propsModel->appendRow({new QStandardItem("kernel"),
                               new QStandardItem("none yet: the symbolic dims need values (Model > Input Shapes…)")});
  }
  // Values cut off by the column width are readable in full as tooltips.
  for (int row = 0; row < m_propsModel->rowCount(); ++row)
    for (int col = 0; col < 2; ++col)
      if (QStandardItem* it = m_propsModel->item(row, col)) {
        it->setEditable(false);
        if (it->toolTip().isEmpty()) it->setToolTip(it->text());
      }
}

void MainWindow::setDarkTheme(bool dark) {
  m_dark = dark;
  QSettings().setValue("theme/dark", dark);
  qApp->setStyle(QStyleFactory::create("Fusion"));
  QPalette p;
  if (dark) {
    p.setColor(QPalette::Window, QColor(0x2b, 0x2d, 0x30));
    p.setColor(QPalette::WindowText, QColor(0xdd, 0xdd, 0xdd));
    p.setColor(QPalette::Base, QColor(0x1e, 0x1f, 0x22));
    p.setColor(QPalette::AlternateBase, QColor(0x26, 0x27, 0x2a));
    p.setColor(QPalette::Text, QColor(0xdd, 0xdd, 0xdd));
    p.setColor(QPalette::Button, QColor(0x35, 0x37, 0x3b));
    p.setColor(QPalette::ButtonText, QColor(0xdd, 0xdd, 0xdd));
    p.setColor(QPalette::Highlight, QColor(0x2f, 0x65, 0xca));
    p.setColor(QPalette::HighlightedText, Qt::white);
    p.setColor(QPalette::ToolTipBase, QColor(0x35, 0x37, 0x3b));
    p.setColor(QPalette::ToolTipText, QColor(0xdd, 0xdd, 0xdd));
    p.setColor(QPalette::PlaceholderText, QColor(0x88, 0x88, 0x88));
    p.setColor(QPalette::Disabled, QPalette::Text, QColor(0x77, 0x77, 0x77));
    p.setColor(QPalette::Disabled, QPalette::ButtonText, QColor(0x77, 0x77, 0x77));
  } else {
    p = qApp->style()->standardPalette();
  }
  qApp->setPalette(p);
  m_editor->setDark(dark);
  for (CodePane* pane : {m_tirPane, m_loweredPane, m_asmPane}) {
    applyLexerTheme(pane->lexer(), dark);
    pane->setDark(dark);
  }
  m_graph->setDark(dark);
  if (m_tuning) m_tuning->setDark(dark);
}

void MainWindow::addRecent(const QString& path) {
  QSettings s;
  QStringList recent = s.value("recentModels").toStringList();
  QString abs = QFileInfo(path).absoluteFilePath();
  recent.removeAll(abs);
  recent.prepend(abs);
  while (recent.size() > 8) recent.removeLast();
  updateRecentMenu(recent);
  // Writing the settings file syncs it to disk (tens of ms on a busy disk): off the UI thread.
  startJob(*QThreadPool::globalInstance(), [recent] { QSettings().setValue("recentModels", recent); });
}

void MainWindow::updateRecentMenu() { updateRecentMenu(QSettings().value("recentModels").toStringList()); }

void MainWindow::updateRecentMenu(const QStringList& recent) {
  m_recentMenu->clear();
  for (const QString& path : recent) m_recentMenu->addAction(path, this, [this, path] { openModel(path); });
  m_recentMenu->setEnabled(!recent.isEmpty());
}

void MainWindow::showExportDialog() {
  auto* dlg = new ExportDialog(m_session, this);
  dlg->setOutputPath(ExportDialog::defaultOutputPath(m_session->modelPath(), m_sessionPath));
  // The records of the last tuning of this model's kernels, on its target, are the likely choice.
  if (const TuneJob& j = m_tuning->lastJob(); (j.module || j.func.defined()) && QFileInfo::exists(j.recordsPath)) {
    dlg->setRecordsPath(j.recordsPath);
    dlg->setTarget(j.target);
  }
  dlg->setAttribute(Qt::WA_DeleteOnClose);
  dlg->show();
}

void MainWindow::updateTitle() {
  if (m_tuning) m_tuning->setSessionPath(m_sessionPath);
  QString name = m_sessionPath.isEmpty() ? QString("untitled") : QFileInfo(m_sessionPath).fileName();
  QString model = m_session->modelPath().isEmpty() ? QString() : " · " + QFileInfo(m_session->modelPath()).fileName();
  setWindowTitle(QString("%1%2%3 — Loom Studio").arg(name, m_session->isModified() ? "*" : "", model));
}

QJsonObject MainWindow::sessionJson() const {
  QJsonObject o;
  o["loomSession"] = 1;
  o["workspace"] = m_session->toJson();
  o["layout"] = QString::fromLatin1(saveState().toBase64());
  o["tuningForm"] = m_tuning->formToJson();
  if (QJsonObject results = m_tuning->resultsToJson(); !results.isEmpty()) o["tuningResults"] = results;
  if (!m_profile->history().isEmpty()) o["profiles"] = m_profile->historyToJson();
  o["dark"] = m_dark;
  return o;
}

namespace {
/// Writes `bytes` to `path` all or nothing (QSaveFile: a temporary file, renamed when complete).
bool writeWhole(const QString& path, const QByteArray& bytes, QString* error) {
  QSaveFile f(path);
  if (!f.open(QIODevice::WriteOnly) || f.write(bytes) != bytes.size() || !f.commit()) {
    *error = f.errorString();
    f.cancelWriting();
    return false;
  }
  return true;
}
}  // namespace

bool MainWindow::saveSession(const QString& path, bool quiet) {
  QString error;
  // All or nothing: a full disk or a crash while saving leaves the previous session file whole.
  if (!writeWhole(path, QJsonDocument(sessionJson()).toJson(), &error)) {
    if (!quiet) QMessageBox::warning(this, "Save session", QString("Cannot write %1: %2").arg(path, error));
    return false;
  }
  m_sessionPath = path;
  m_session->setModified(false);
  QFile::remove(autosavePath());
  updateTitle();
  return true;
}

QString MainWindow::autosavePath() {
  if (QByteArray env = qgetenv("LOOM_STUDIO_AUTOSAVE"); !env.isEmpty()) return QString::fromLocal8Bit(env);
  return QStandardPaths::writableLocation(QStandardPaths::AppDataLocation) + "/autosave.loomsession";
}

void MainWindow::setAutosaveInterval(int ms) { m_autosaveTimer->setInterval(ms); }

bool MainWindow::writeAutosave() {
  QJsonObject o = sessionJson();
  o["autosaveOf"] = m_sessionPath;
  o["editorText"] = m_editor->text();
  o["autosavedAt"] = QDateTime::currentDateTime().toString(Qt::ISODate);
  QString path = autosavePath(), error;
  QDir().mkpath(QFileInfo(path).absolutePath());
  if (!writeWhole(path, QJsonDocument(o).toJson(), &error)) {
    statusBar()->showMessage(QString("Autosave to %1 failed: %2").arg(path, error), 10000);
    return false;
  }
  return true;
}

bool MainWindow::offerRestore() {
  QString path = autosavePath();
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) return false;
  QByteArray bytes = f.readAll();
  f.close();
  driver::SessionFile file;
  try {
    file = driver::parseSessionFile(bytes.toStdString(), path.toStdString());
  } catch (const driver::SessionFileError&) {
    QFile::remove(path);  // cut short or damaged: nothing to restore
    return false;
  }
  QString of = QString::fromStdString(file.autosaveOf);
  QString when = QDateTime::fromString(QString::fromStdString(file.autosavedAt), Qt::ISODate).toString("yyyy-MM-dd hh:mm:ss");
  QString question = QString("Loom Studio did not close normally. Unsaved work of %1 was kept at %2.\n\n"
                             "Restore it? (No deletes it.)")
                         .arg(of.isEmpty() ? QString("an untitled session") : QFileInfo(of).fileName(), when);
  bool yes = m_askRestore ? m_askRestore(question)
                          : QMessageBox::question(this, "Restore unsaved work?", question,
                                                  QMessageBox::Yes | QMessageBox::No, QMessageBox::Yes) == QMessageBox::Yes;
  if (!yes) {
    QFile::remove(path);
    return false;
  }
  if (!loadSession(path, true)) return false;
  m_sessionPath = of;
  QString text = QString::fromStdString(file.editorText);
  if (m_editor->text() != text) m_editor->setText(text);
  m_session->setModified(true);  // restored, not saved: the autosave stays until a save
  updateTitle();
  statusBar()->showMessage("Restored the unsaved work kept at " + when, 10000);
  return true;
}

bool MainWindow::loadSession(const QString& path, bool quiet) {
  QFile f(path);
  if (!f.open(QIODevice::ReadOnly)) {
    if (!quiet) QMessageBox::warning(this, "Open session", QString("Cannot open %1: %2").arg(path, f.errorString()));
    return false;
  }
  // Read and checked without Qt (core/driver/SessionFile.h): a damaged file is refused whole,
  // with the key and what was wrong, before anything of the open session changes.
  driver::SessionFile file;
  try {
    file = driver::parseSessionFile(f.readAll().toStdString(), path.toStdString());
  } catch (const driver::SessionFileError& e) {
    if (!quiet) QMessageBox::warning(this, "Open session", QString::fromStdString(e.what()));
    m_log->appendPlainText(QString::fromStdString(e.what()));
    return false;
  }
  auto jsonOf = [](const std::string& text) { return QJsonDocument::fromJson(QByteArray::fromStdString(text)); };
  m_session->restore(file.workspace);
  m_updatingPreset = true;
  if (m_presetBox->itemData(0).toString() == "group") m_presetBox->removeItem(0);
  m_presetBox->setCurrentText(m_session->request().preset);
  rebuildParams();
  m_targetBox->setCurrentText(m_session->request().target);
  m_updatingPreset = false;
  if (m_session->request().isGroup()) showGroupInPresetBar(m_session->request().group, "restored from the session");
  m_groupModel = m_session->request().isGroup() ? QString::fromStdString(file.workspace.model) : QString();
  m_shownModel.clear();
  m_profile->clear();
  m_editor->setText(m_session->request().schedule);
  m_editorBaseline = m_editor->text();
  restoreState(QByteArray::fromBase64(QByteArray::fromStdString(file.layout)));
  m_tuning->formFromJson(jsonOf(file.tuningForm).object());
  m_tuning->restoreResults(jsonOf(file.tuningResults).object());  // a model's: once it is loaded
  m_pendingProfiles = jsonOf(file.profiles).array();  // restored once the model is loaded
  setDarkTheme(file.dark.value_or(m_dark));
  m_sessionPath = path;
  m_session->setModified(false);
  if (path != autosavePath()) QFile::remove(autosavePath());  // unsaved work was discarded for this
  updateTitle();
  return true;
}

bool MainWindow::maybeSave() {
  if (!m_session->isModified()) return true;
  auto answer = QMessageBox::question(this, "Unsaved changes", "The session has unsaved changes. Save them first?",
                                      QMessageBox::Save | QMessageBox::Discard | QMessageBox::Cancel, QMessageBox::Save);
  if (answer == QMessageBox::Cancel) return false;
  if (answer == QMessageBox::Discard) return true;
  QString path = m_sessionPath;
  if (path.isEmpty()) path = QFileDialog::getSaveFileName(this, "Save session", "studio.loomsession", "Loom sessions (*.loomsession)");
  return !path.isEmpty() && saveSession(path);
}

void MainWindow::closeEvent(QCloseEvent* e) {
  if (!maybeSave()) {
    e->ignore();
    return;
  }
  QSettings s;
  s.setValue("window/geometry", saveGeometry());
  s.setValue("window/state", saveState());
  QFile::remove(autosavePath());  // a clean close (saved or discarded): nothing to restore
  e->accept();
}

void MainWindow::dragEnterEvent(QDragEnterEvent* e) {
  if (e->mimeData()->hasUrls()) e->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* e) {
  for (const QUrl& url : e->mimeData()->urls()) {
    QString path = url.toLocalFile();
    if (path.endsWith(".loomsession")) loadSession(path);
    else if (!path.isEmpty()) openModel(path);
  }
}

}  // namespace loom::views
