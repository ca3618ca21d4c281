// `loom-studio`: the desktop workbench. `--screenshot OUT.png` renders the window offscreen once
// the asynchronous work has settled, then exits.
#include <QApplication>
#include <QComboBox>
#include <QDockWidget>
#include <QCommandLineParser>
#include <QRegularExpression>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QSettings>
#include <QTemporaryDir>
#include <QTimer>
#include <cstdio>
#include <cstdlib>
#include <memory>

#include <QChartView>
#include <QTabWidget>

#include "views/GraphView.h"
#include "views/ModelJobs.h"
#include "views/ProfileDock.h"
#include "views/InputShapesDialog.h"
#include "views/MainWindow.h"
#include "views/Resources.h"
#include "views/ScheduleEditor.h"
#include "views/Session.h"
#include "views/TuningMonitor.h"

namespace {

/// "M=64,N=64" -> {M: 64, N: 64}; returns false on malformed text.
bool parseParams(const QString& text, QMap<QString, qint64>& out) {
  if (text.isEmpty()) return true;
  for (const QString& part : text.split(',', Qt::SkipEmptyParts)) {
    QStringList kv = part.split('=');
    bool ok = false;
    if (kv.size() != 2) return false;
    out[kv[0].trimmed()] = kv[1].trimmed().toLongLong(&ok);
    if (!ok) return false;
  }
  return true;
}

}  // namespace


int main(int argc, char** argv) {
  bool screenshot = false, helpOnly = false;
  for (int i = 1; i < argc; ++i) {
    QByteArray a(argv[i]);
    screenshot |= a == "--screenshot";
    helpOnly |= a == "--help" || a == "-h" || a == "--help-all" || a == "-?" || a == "--version" || a == "-v";
  }
  // --help and --version need no display: a core application prints them (QApplication would
  // abort without a display platform).
  std::unique_ptr<QCoreApplication> appPtr;
  if (helpOnly) appPtr = std::make_unique<QCoreApplication>(argc, argv);
  else {
    if (screenshot && qEnvironmentVariableIsEmpty("QT_QPA_PLATFORM")) qputenv("QT_QPA_PLATFORM", "offscreen");
    appPtr = std::make_unique<QApplication>(argc, argv);
  }
  QCoreApplication& app = *appPtr;
  QCoreApplication::setOrganizationName("Loom");
  QCoreApplication::setApplicationName(screenshot ? "Studio-screenshot" : "Studio");
  QCoreApplication::setApplicationVersion(LOOM_VERSION);

  QCommandLineParser cli;
  cli.setApplicationDescription("Loom Studio: schedule editor, live IR and assembly, runs, model graphs");
  cli.addHelpOption();
  cli.addVersionOption();
  cli.addPositionalArgument("file", "A model (.onnx, TorchScript .pt) or a .loomsession file to open");
  QCommandLineOption modelOpt("model", "Open this model (ONNX, or TorchScript with --input-shapes)", "M");
  QCommandLineOption presetOpt("preset", "Operator preset, e.g. matmul or \"matmul:M=256,N=256,K=256\"", "P");
  QCommandLineOption scheduleOpt("schedule", "Schedule script to load into the editor", "S.py");
  QCommandLineOption targetOpt("target", "Target, e.g. \"llvm -mcpu=native\"", "T");
  QCommandLineOption shotOpt("screenshot", "Render the window to OUT.png when idle, then exit", "OUT.png");
  QCommandLineOption sizeOpt("size", "Window size for --screenshot (WxH)", "WxH", "1600x1000");
  QCommandLineOption graphModeOpt("graph", "Model view: imported, optimized or fused", "MODE", "fused");
  QCommandLineOption darkOpt("dark", "Use the dark theme");
  QCommandLineOption runOpt("run", "Run the operator once (with --screenshot: before the capture)");
  QCommandLineOption groupOpt("open-group", "Open fused group N of the model (0-based, fused view order) in the schedule editor", "N");
  QCommandLineOption collapseOpt("collapse", "Collapse these fused groups of the model (\"all\" or N,N,...)", "LIST");
  QCommandLineOption findOpt("find", "Select the first model node whose op or name contains TEXT", "TEXT");
  QCommandLineOption linkOpt("link-line", "Select the loop at this lowered-IR line (colour linking)", "LINE");
  QCommandLineOption tuneOpt("tune", "Tune the operator for N trials in the Tuning dock (with --screenshot: capture when it "
                             "ends; records in a temporary file)", "N");
  QCommandLineOption tuneModelOpt("tune-model", "With --tune: tune the whole model (N trials over its kernels)");
  QCommandLineOption shapesOpt("input-shapes", "Shapes of the model's inputs, in `loom compile`'s grammar: numbers are the "
                               "concrete shapes of kernels, runs and profiles (without them, those of the model folder's "
                               "test_data_set_0), e.g. \"data:[4,3,224,224]\"; symbols, ? and bounds shape the graph and a "
                               "dynamic export, \"data:[N<=8,3,224,W=320]\" (W=320: symbolic with a value); a TorchScript "
                               "model's, with dtypes: \"ids:[1,64]:int64\"", "SPEC");
  QCommandLineOption profileOpt("profile", "Profile the model once it is loaded (Model > Profile; with --screenshot: before the capture)");
  QCommandLineOption profileRunsOpt("profile-runs", "Timed runs of --profile", "N", "20");
  QCommandLineOption grabOpt("grab", "With --screenshot: capture the window, or only the profile's roofline chart, its kernel "
                             "table, the model graph, the properties of the selected node (with --find) or the Input Shapes "
                             "dialog", "window|roofline|kernels|graph|properties|input-shapes", "window");
  cli.addOptions({modelOpt, presetOpt, scheduleOpt, targetOpt, shotOpt, sizeOpt, graphModeOpt, darkOpt, runOpt, linkOpt, findOpt,
                 groupOpt, collapseOpt, tuneOpt, tuneModelOpt, shapesOpt, profileOpt, profileRunsOpt, grabOpt});
  cli.process(app);  // --help / --version print and exit here
  loom::views::initResources();
  QMap<QString, QVector<qint64>> inputShapes;
  // A TorchScript model's spec may give dtypes ("ids:[1,64]:int64"); the shapes alone set symbolic dims.
  QString shapesSpec = cli.value(shapesOpt);
  shapesSpec.replace(QRegularExpression(R"(\]:[A-Za-z0-9]+)"), "]");
  QString symbolicShapes;  // inputs whose dims stay symbolic ("x:[1,3,48,W<=2048]")
  if (QString error; cli.isSet(shapesOpt) && !loom::views::parseInputShapesSpec(shapesSpec, inputShapes, &error, &symbolicShapes)) {
    std::fprintf(stderr, "loom-studio: --input-shapes: %s\n", qPrintable(error));
    return 2;
  }

  if (screenshot) QSettings().clear();  // a screenshot starts from the default layout and theme
  loom::views::MainWindow w;
  if (cli.isSet(darkOpt)) w.setDarkTheme(true);
  if (cli.isSet(presetOpt)) {
    QString spec = cli.value(presetOpt);
    QMap<QString, qint64> params;
    if (!parseParams(spec.section(':', 1), params)) {
      std::fprintf(stderr, "loom-studio: malformed --preset '%s' (expected NAME:P=V,...)\n", qPrintable(spec));
      return 2;
    }
    w.setPreset(spec.section(':', 0, 0), params);
  }
  if (cli.isSet(targetOpt)) w.targetBox()->setCurrentText(cli.value(targetOpt));
  if (cli.isSet(scheduleOpt)) {
    QFile f(cli.value(scheduleOpt));
    if (!f.open(QIODevice::ReadOnly)) {
      std::fprintf(stderr, "loom-studio: cannot open schedule '%s'\n", qPrintable(cli.value(scheduleOpt)));
      return 2;
    }
    w.setScheduleText(QString::fromUtf8(f.readAll()));
  }
  if (!inputShapes.isEmpty() || !symbolicShapes.isEmpty()) w.session()->setInputShapes(inputShapes, false, symbolicShapes);
  if (cli.isSet(shapesOpt)) w.session()->setTorchInputSpec(cli.value(shapesOpt), true);
  for (const QString& file : cli.positionalArguments()) {
    if (file.endsWith(".loomsession")) w.loadSession(file, screenshot);
    else w.openModel(file);
  }
  if (cli.isSet(modelOpt)) w.openModel(cli.value(modelOpt));
  QString mode = cli.value(graphModeOpt);
  w.graphView()->setMode(mode == "imported" ? loom::views::GraphView::Imported
                         : mode == "optimized" ? loom::views::GraphView::Optimized
                                               : loom::views::GraphView::Fused);
  w.session()->setModified(false);
  // Group opening and collapsing wait for the model (and its kernels).
  bool groupPending = cli.isSet(groupOpt), collapsePending = cli.isSet(collapseOpt);
  bool profilePending = cli.isSet(profileOpt);
  QString scheduleAfterGroup;
  if (groupPending && cli.isSet(scheduleOpt)) {
    QFile f(cli.value(scheduleOpt));
    if (f.open(QIODevice::ReadOnly)) scheduleAfterGroup = QString::fromUtf8(f.readAll());
  }
  QObject::connect(w.session(), &loom::views::Session::modelLoaded, &app, [&](const loom::views::ModelData& m) {
    // Kernels need concrete input shapes: without them no group opens and no profile runs.
    if ((groupPending || profilePending) && !m.concrete()) {
      std::fprintf(stderr, "loom-studio: %s has symbolic input dims without values: give them with --input-shapes to %s\n",
                   qPrintable(m.path), groupPending ? "open a group" : "profile");
      groupPending = profilePending = false;
    }
    if (!collapsePending) return;
    collapsePending = false;
    QString list = cli.value(collapseOpt);
    if (list == "all") {
      w.graphView()->setAllCollapsed(true);
    } else {
      QSet<int> clusters;
      for (const QString& n : list.split(',', Qt::SkipEmptyParts)) clusters.insert(n.toInt());
      w.graphView()->setCollapsedClusters(clusters);
    }
  });
  w.profileDock()->setRepeat(std::max(1, cli.value(profileRunsOpt).toInt()));
  QObject::connect(w.session(), &loom::views::Session::groupsReady, &app, [&] {
    if (profilePending) {
      profilePending = false;
      w.profileModel();
    }
    if (!groupPending) return;
    groupPending = false;
    if (!w.openCluster(cli.value(groupOpt).toInt()))
      std::fprintf(stderr, "loom-studio: fused group %s has no kernel to open\n", qPrintable(cli.value(groupOpt)));
    else if (!scheduleAfterGroup.isEmpty())  // the group's title line, then the script (for the unscheduled kernel)
      w.setScheduleText(w.editor()->text().section('\n', 0, 0) + "\n" + scheduleAfterGroup);
  });

  QTemporaryDir tuneDir;
  int tuneTrials = cli.value(tuneOpt).toInt();
  bool tuneOpened = false;
  auto startTuning = [&] {  // the Tuning dock raised and tall enough to read, then Start
    auto* dock = w.findChild<QDockWidget*>("tuningDock");
    dock->show();
    dock->raise();
    w.resizeDocks({dock}, {w.height() * 45 / 100}, Qt::Vertical);
    w.tuningMonitor()->setScope(cli.isSet(tuneModelOpt) ? loom::views::TuneJob::Scope::Model : loom::views::TuneJob::Scope::Operator);
    w.tuningMonitor()->setTrials(tuneTrials);
    if (screenshot) w.tuningMonitor()->setRecordsPath(tuneDir.filePath("records.json"));
    tuneTrials = 0;
    w.tuningMonitor()->startFromForm();
  };

  if (cli.isSet(profileOpt) && w.profileDock()) {  // the Profile dock forward, tall enough to read
    auto* dock = w.findChild<QDockWidget*>("profileDock");
    dock->show();
    dock->raise();
    w.resizeDocks({dock}, {w.height() * 40 / 100}, Qt::Vertical);
    if (cli.value(grabOpt) == "roofline" || cli.value(grabOpt) == "kernels") {  // a picture of its own: the dock floats, large
      dock->setFloating(true);
      dock->resize(1100, 680);
      w.profileDock()->tabs()->setCurrentIndex(cli.value(grabOpt) == "roofline" ? 1 : 0);
    }
  }
  if (!screenshot) {
    w.show();
    // Unsaved work left by a crash (MainWindow::autosavePath): offered back when the command line
    // opened nothing else.
    if (cli.positionalArguments().isEmpty() && !cli.isSet(modelOpt) && !cli.isSet(scheduleOpt))
      QTimer::singleShot(0, &w, [&w] { w.offerRestore(); });
    if (cli.isSet(runOpt)) w.session()->run();
    if (tuneTrials > 0 && cli.isSet(tuneModelOpt))  // the model's kernels are tuned once it is loaded
      QObject::connect(w.session(), &loom::views::Session::modelLoaded, &app, [&] {
        if (tuneTrials > 0) startTuning();
      });
    else if (tuneTrials > 0)
      QTimer::singleShot(0, &app, startTuning);
    return app.exec();
  }

  QObject::connect(w.session(), &loom::views::Session::logged, &app,
                   [](const QString& line) { std::fprintf(stderr, "%s\n", qPrintable(line)); });
  QStringList size = cli.value(sizeOpt).split('x');
  w.resize(size.value(0).toInt() > 0 ? size.value(0).toInt() : 1600, size.value(1).toInt() > 0 ? size.value(1).toInt() : 1000);
  w.show();
  QString out = cli.value(shotOpt);
  bool wantRun = cli.isSet(runOpt);
  int linkLine = cli.value(linkOpt).toInt();
  auto* timer = new QTimer(&app);
  // On the stack: the lambda below takes it by reference and app.exec() returns before it goes
  // (allocated with new, it was never freed: LeakSanitizer in studio.test_dynamic_model).
  QElapsedTimer clock;
  clock.start();
  int stage = 0;  // 0: wait for compile/model; 1: run started, wait; 2: settle then grab
  int idleTicks = 0;
  QObject::connect(timer, &QTimer::timeout, &app, [&] {
    bool idle = w.session()->isIdle() && !w.graphView()->isLayoutPending() && !groupPending && !collapsePending &&
                !w.tuningMonitor()->isRunning() && !profilePending && !w.profileDock()->isRunning();
    idleTicks = idle ? idleTicks + 1 : 0;
    if (clock.elapsed() > 300000) {
      std::fprintf(stderr, "loom-studio: the session did not settle within 300 s; capturing anyway\n");
      idleTicks = 100;
    }
    if (idleTicks < 3) return;
    if (stage == 0 && wantRun) {
      w.session()->run();
      stage = 1;
      idleTicks = 0;
      return;
    }
    if (tuneTrials > 0) {
      startTuning();
      idleTicks = 0;
      return;
    }
    if (cli.isSet(tuneOpt) && !tuneOpened && !w.tuningMonitor()->best().isEmpty()) {
      w.tuningMonitor()->openCandidate(0);  // the best candidate in the editor, its panes recompiled
      tuneOpened = true;
      idleTicks = 0;
      return;
    }
    if (linkLine > 0) w.linkLoweredLine(linkLine);
    if (cli.isSet(findOpt)) w.graphView()->findNext(cli.value(findOpt));
    timer->stop();
    // A 256-colour palette keeps the committed PNGs small; UI captures have few colours.
    if (cli.isSet(profileOpt) && cli.value(grabOpt) == "window") {  // the overlay large enough to read
      w.resizeDocks({w.findChild<QDockWidget*>("modelDock")}, {w.width() * 45 / 100}, Qt::Horizontal);
      w.resizeDocks({w.findChild<QDockWidget*>("profileDock")}, {w.height() * 38 / 100}, Qt::Vertical);
      for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
      w.graphView()->fitAll();
      QCoreApplication::processEvents();
    }
    QString grab = cli.value(grabOpt);
    if (grab == "graph") {  // the model dock wide and tall enough to read the types on the edges
      w.resizeDocks({w.findChild<QDockWidget*>("modelDock")}, {w.width() * 55 / 100}, Qt::Horizontal);
      w.resizeDocks({w.findChild<QDockWidget*>("modelDock")}, {w.height() * 75 / 100}, Qt::Vertical);
      for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
      w.graphView()->fitAll();
      QCoreApplication::processEvents();
    }
    QWidget* target = &w;
    if (grab == "properties") {  // the left docks wide and the properties tall enough to read every line
      w.resizeDocks({w.findChild<QDockWidget*>("modelDock")}, {w.width() * 45 / 100}, Qt::Horizontal);
      w.resizeDocks({w.findChild<QDockWidget*>("propertiesDock")}, {w.height() * 45 / 100}, Qt::Vertical);
      for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
      target = w.findChild<QDockWidget*>("propertiesDock");
    }
    if (grab == "roofline" || grab == "kernels") {
      w.profileDock()->tabs()->setCurrentIndex(grab == "roofline" ? 1 : 0);
      target = grab == "roofline" ? static_cast<QWidget*>(w.profileDock()->rooflineView()) : w.profileDock()->tabs();
    } else if (grab == "graph") {
      target = w.graphView();
    }
    std::unique_ptr<loom::views::InputShapesDialog> shapesDialog;
    if (grab == "input-shapes" && w.session()->model()) {
      shapesDialog = std::make_unique<loom::views::InputShapesDialog>(w.session()->model()->inputs, &w,
                                                                      w.session()->symbolicInputShapes());
      shapesDialog->show();
      for (int i = 0; i < 5; ++i) QCoreApplication::processEvents();
      target = shapesDialog.get();
    }
    QImage shot = target->grab().toImage().convertToFormat(QImage::Format_Indexed8, Qt::ThresholdDither | Qt::AvoidDither);
    if (!shot.save(out, nullptr, 9)) {
      std::fprintf(stderr, "loom-studio: cannot write %s\n", qPrintable(out));
      app.exit(1);
      return;
    }
    std::printf("wrote %s (%dx%d)\n", qPrintable(out), shot.width(), shot.height());
    app.exit(0);
  });
  timer->start(100);
  return app.exec();
}
