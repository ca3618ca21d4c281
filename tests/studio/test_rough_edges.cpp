// GUI tests of the rough edges a new user hit (offscreen): no stale group, script, preset or runs
// after switching model / preset / group; asking before replacing edits (and undo); a window that
// never outgrows the screen; --help / --version without a display; Problems coming forward with a
// count; assembly filters; find; the primitives and shortcuts reference; consistent op counts.
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QMenuBar>
#include <QStatusBar>
#include <QComboBox>
#include <QRegularExpression>
#include <QDialog>
#include <QDockWidget>
#include <QElapsedTimer>
#include <QTemporaryDir>
#include <QLabel>
#include <QLineEdit>
#include <QProcessEnvironment>
#include <QScreen>
#include <QStandardPaths>
#include <QTextBrowser>
#include <QtTest>

#include "tests/common/ProcessRun.h"
#include "views/CodePane.h"
#include "views/FindBar.h"
#include "views/GraphView.h"
#include "views/MainWindow.h"
#include "views/ModelJobs.h"
#include "views/ProblemsModel.h"
#include "views/ProfileDock.h"
#include "views/Resources.h"
#include "views/RunsModel.h"
#include "views/ScheduleEditor.h"
#include "views/Session.h"
#include "views/TuningMonitor.h"

using namespace loom::views;

namespace {

const QString kSmallCnn = QString(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx";
const QString kFireNet = QString(LOOM_SOURCE_DIR) + "/examples/models/fire_net/model.onnx";

bool openAndWait(MainWindow& w, const QString& path) {
  QSignalSpy groups(w.session(), &Session::groupsReady);
  w.openModel(path);
  return groups.wait(60000) || groups.count() > 0;
}

QComboBox* presetBox(MainWindow& w) {
  for (QComboBox* b : w.findChildren<QComboBox*>())
    if (b->toolTip() == "Operator preset" || b->findText("matmul") >= 0) return b;
  return nullptr;
}

}  // namespace

class TestRoughEdges : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioRoughEdgesTest");
    QApplication::setApplicationVersion("9.8.7");
    initResources();
  }

  /// Opening another model leaves the fused group, its script and its runs behind (after asking
  /// about the edits; undo brings them back); refusing keeps everything as it was.
  void switchingModelsLeavesNoStaleState() {
    MainWindow w;
    QStringList asked;
    bool answer = false;
    w.setConfirmHandler([&](const QString& why) {
      asked << why;
      return answer;
    });
    QVERIFY(openAndWait(w, kSmallCnn));
    QVERIFY(w.openCluster(0));
    QString group = w.session()->request().group;
    QVERIFY(!group.isEmpty());
    QComboBox* presets = presetBox(w);
    QVERIFY(presets);
    QCOMPARE(presets->itemData(0).toString(), QString("group"));
    // A run of the group and one of a preset.
    RunRecord groupRun;
    groupRun.id = 1;
    groupRun.ok = true;
    groupRun.preset = group;
    groupRun.model = kSmallCnn;
    RunRecord presetRun = groupRun;
    presetRun.id = 2;
    presetRun.preset = "matmul";
    presetRun.model.clear();
    w.session()->runs()->addRun(groupRun);
    w.session()->runs()->addRun(presetRun);
    // An edit of the user's.
    w.editor()->append("sch.get_loops(sch.get_block(\"x\"))  # mine\n");
    QString edited = w.editor()->text();

    answer = false;
    w.openModel(kFireNet);
    QCOMPARE(asked.size(), 1);
    QVERIFY(asked[0].contains("fire_net") || asked[0].contains("model"));
    QCOMPARE(w.session()->modelPath(), kSmallCnn);  // refused: nothing changed
    QCOMPARE(w.editor()->text(), edited);

    answer = true;
    QVERIFY(openAndWait(w, kFireNet));
    QCOMPARE(w.session()->modelPath(), kFireNet);
    QVERIFY(!w.session()->request().isGroup());
    QVERIFY(presets->itemData(0).toString() != "group");
    QCOMPARE(presets->currentText(), w.session()->request().preset);
    QVERIFY(!w.editor()->text().contains("# mine"));
    QVERIFY(w.graphView()->highlightedClusters().isEmpty());
    QCOMPARE(w.session()->runs()->rowCount(), 1);  // the preset's run stays
    QCOMPARE(w.session()->runs()->record(0).preset, QString("matmul"));
    // The replacement was one undoable step.
    w.editor()->undo();
    QVERIFY(w.editor()->text().contains("# mine"));
    // The session names no group of the other model.
    QJsonObject json = w.session()->toJson();
    QVERIFY(!json.contains("group"));
    QCOMPARE(json["model"].toString(), kFireNet);
  }

  /// A preset replaces the group's script (which would fail on it); opening another group or a
  /// tuning candidate asks first.
  void switchingPresetAndGroupAsks() {
    MainWindow w;
    int asked = 0;
    w.setConfirmHandler([&](const QString&) {
      ++asked;
      return true;
    });
    QVERIFY(openAndWait(w, kSmallCnn));
    QVERIFY(w.openCluster(0));
    QCOMPARE(asked, 0);  // the editor held no edits
    QString groupText = w.editor()->text();
    QComboBox* presets = presetBox(w);
    presets->setCurrentText("conv2d");
    QCOMPARE(asked, 0);
    QVERIFY(!w.session()->request().isGroup());
    QCOMPARE(w.session()->request().preset, QString("conv2d"));
    QCOMPARE(w.editor()->text(), MainWindow::presetStartText());
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
    QVERIFY(w.session()->lastCompile().scriptOk);  // no stale script failing on the preset
    // Edits, then another group: asked, and undo brings the edits back.
    QVERIFY(w.openCluster(0));
    w.editor()->append("# mine\n");
    QVERIFY(w.openCluster(1) || w.session()->modelGroups()->clusterGroup.value(1) < 0);
    if (w.session()->modelGroups()->clusterGroup.value(1) >= 0) {
      QCOMPARE(asked, 1);
      QVERIFY(!w.editor()->text().contains("# mine"));
      w.editor()->undo();
      QVERIFY(w.editor()->text().contains("# mine"));
    }
    // "Open in Editor" from the tuning monitor asks too.
    w.editor()->append("# mine again\n");
    emit w.tuningMonitor()->openInEditor("# a candidate\n", "matmul", {{"M", 32}, {"N", 32}, {"K", 32}}, {});
    QVERIFY(asked >= 2);
    QCOMPARE(w.editor()->text(), QString("# a candidate\n"));
    Q_UNUSED(groupText);
  }

  /// A preset with many parameters, a long status line: the window stays within the screen.
  void windowNeverGrowsPastTheScreen() {
    MainWindow w;
    QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
    QSize given(std::min(1100, screen.width()), std::min(700, screen.height()));
    w.resize(given);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    for (const QString& preset : {QString("conv2d"), QString("matmul"), QString("conv2d")}) {
      w.setPreset(preset);
      QCoreApplication::processEvents();
      QVERIFY2(w.width() <= given.width() && w.height() <= given.height(),
               qPrintable(QString("%1: %2x%3").arg(preset).arg(w.width()).arg(w.height())));
      QVERIFY2(w.minimumSizeHint().width() <= given.width(), qPrintable(QString::number(w.minimumSizeHint().width())));
    }
    for (QLabel* l : w.findChildren<QLabel*>()) l->setText(l->text().isEmpty() ? l->text() : l->text());  // no-op relayout
    w.statusBar()->findChild<QLabel*>()->setText(QString("a very long status line ").repeated(40));
    QCoreApplication::processEvents();
    QVERIFY(w.width() <= given.width());
    // Docks keep usable sizes.
    for (QDockWidget* d : w.findChildren<QDockWidget*>()) QVERIFY(d->widget()->minimumWidth() >= 100);
  }

  /// `loom-studio --help` and `--version` print and exit 0 with no display (the xcb platform and
  /// no DISPLAY: a QApplication would abort).
  void helpAndVersionNeedNoDisplay() {
    QString studio = QStringLiteral(LOOM_BINARY_DIR "/bin/loom-studio");
    if (!QFile::exists(studio)) QSKIP("loom-studio is not built");
    QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
    env.remove("DISPLAY");
    env.remove("WAYLAND_DISPLAY");
    env.insert("QT_QPA_PLATFORM", "xcb");
    loom::test::ProcessResult help = loom::test::runProcess(studio, {"--help"}, 30000, env);
    QVERIFY2(help.exitCode == 0, qPrintable(help.out + help.err));
    QVERIFY(help.out.contains("--input-shapes") && help.out.contains("--profile"));
    loom::test::ProcessResult version = loom::test::runProcess(studio, {"--version"}, 30000, env);
    QVERIFY2(version.exitCode == 0, qPrintable(version.out + version.err));
    QVERIFY(version.out.contains("loom-studio") || version.out.contains("Studio"));
    loom::test::ProcessResult bad = loom::test::runProcess(studio, {"--input-shapes", "data:[1,3", "--help"}, 30000, env);
    QCOMPARE(bad.exitCode, 0);  // --help wins
  }

  /// A failing script brings Problems forward with a count.
  void problemsComeForwardWithACount() {
    MainWindow w;
    w.show();
    auto* problems = w.findChild<QDockWidget*>("problemsDock");
    w.findChild<QDockWidget*>("runsDock")->raise();
    w.setPreset("matmul", {{"M", 32}, {"N", 32}, {"K", 32}});
    w.setScheduleText("b = sch.get_block(\"C\")\nsch.bogus(b)\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->rowCount() == 1, 20000);
    QCOMPARE(problems->windowTitle(), QString("Problems (1)"));
    QVERIFY(!problems->visibleRegion().isEmpty());
    w.setScheduleText("b = sch.get_block(\"C\")\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->rowCount() == 0, 20000);
    QCOMPARE(problems->windowTitle(), QString("Problems"));
  }

  /// The assembly starts without directives, unused labels and comments; turning the filters
  /// off shows them; colour linking still finds the loop's instructions.
  void assemblyFilters() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 64}, {"N", 64}, {"K", 64}});
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.parallel(i)\n");
    QTRY_VERIFY_WITH_TIMEOUT(!w.asmPane()->text().isEmpty() && w.session()->isIdle(), 30000);
    QString filtered = w.asmPane()->text();
    int all = int(w.session()->lastCompile().asmLines.size());
    QVERIFY(w.asmShownLines().size() < all);
    for (const QString& line : filtered.split('\n')) {
      QString t = line.trimmed();
      QVERIFY2(!(t.startsWith('.') && !t.endsWith(':')), qPrintable(line));  // no directive
      QVERIFY2(!t.startsWith('#'), qPrintable(line));
    }
    w.setAsmFilters(false, false, false);
    QCOMPARE(w.asmShownLines().size(), all);
    w.setAsmFilters(true, true, true);
    QCOMPARE(w.asmPane()->text(), filtered);
    // Linking: the parallel loop's lowered line colours some assembly lines, each of which came
    // from a line of that loop.
    const CompileResult& r = w.session()->lastCompile();
    QVERIFY(!r.loweredLoops.isEmpty());
    w.linkLoweredLine(r.loweredLoops[0].firstLine);
    QVERIFY(!w.asmPane()->lineColors().isEmpty());
    for (int line : w.asmPane()->lineColors().keys()) {
      int tir = r.asmLines[w.asmShownLines()[line - 1]].tirLine;
      QVERIFY(tir >= r.loweredLoops[0].firstLine && tir <= r.loweredLoops[0].lastLine);
    }

    // Labels of data only (softmax's exp constants, the argument checks' shape constants and
    // strings) go with their data: no bare ".LCPI0_0:" lines; every label shown has code under it.
    w.setPreset("softmax", {{"M", 64}, {"N", 64}});
    w.setScheduleText("");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().preset == "softmax" &&
                                 !w.session()->lastCompile().asmLines.isEmpty(), 30000);
    QStringList shown = w.asmPane()->text().split('\n');
    while (!shown.isEmpty() && shown.last().isEmpty()) shown.removeLast();
    QVERIFY(!shown.isEmpty() && !shown.last().endsWith(':'));
    for (const QString& line : shown) QVERIFY2(!line.startsWith(".LCPI") && !line.startsWith(".L.str"), qPrintable(line));
    // The instructions still name the constants, and without the filter the pools are there with their data.
    QVERIFY(w.asmPane()->text().contains(".LCPI"));
    w.setAsmFilters(false, true, true);
    QStringList unfiltered = w.asmPane()->text().split('\n');
    int pools = 0;
    for (int i = 0; i + 1 < unfiltered.size(); ++i)
      if (unfiltered[i].startsWith(".LCPI")) {
        ++pools;
        QVERIFY2(unfiltered[i + 1].trimmed().startsWith('.'), qPrintable(unfiltered[i + 1]));  // its data (.long, .zero, ...)
      }
    QVERIFY(pools > 0);
  }

  /// GPU source (OpenCL C) is line-mapped too: a lowered loop colours its `for` and body in the
  /// source pane, and clicking such a source line selects the loop.
  void gpuSourceHasALineMap() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 64}, {"N", 64}, {"K", 64}});
    w.targetBox()->setCurrentText("opencl");
    w.setScheduleText("");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().codeKind == "OpenCL C" &&
                                 !w.session()->lastCompile().asmLines.isEmpty(), 60000);
    const CompileResult& r = w.session()->lastCompile();
    int mapped = 0, loop = -1;
    for (const AsmLineInfo& a : r.asmLines)
      if (a.tirLine > 0) {
        ++mapped;
        for (int i = 0; i < r.loweredLoops.size(); ++i)
          if (r.loweredLoops[i].firstLine == a.tirLine) loop = i;
      }
    QVERIFY2(mapped > 0, qPrintable(w.asmPane()->text()));
    QVERIFY(loop >= 0);
    w.linkLoweredLine(r.loweredLoops[loop].firstLine);
    QVERIFY(!w.asmPane()->lineColors().isEmpty());
    for (int line : w.asmPane()->lineColors().keys()) {
      QString text = r.asmLines[w.asmShownLines()[line - 1]].text;
      QVERIFY(!text.trimmed().startsWith("__kernel"));  // the kernel header belongs to no loop
    }
    bool forLine = false;  // the loop's `for` is among them (after an `#pragma unroll` maybe)
    for (int line : w.asmPane()->lineColors().keys()) forLine |= r.asmLines[w.asmShownLines()[line - 1]].text.contains("for (");
    QVERIFY(forLine);
  }

  /// The GPU line map comes from the backend, not from loop names: softmax's default GPU schedule
  /// has a loop `k` in two kernels, and each colours its own kernel's lines only.
  void gpuLoopsOfTheSameNameLinkTheirOwnKernel() {
    MainWindow w;
    w.setPreset("softmax", {{"M", 64}, {"N", 64}});
    w.targetBox()->setCurrentText("opencl");
    w.setScheduleText("");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().codeKind == "OpenCL C" &&
                                 w.session()->lastCompile().preset == "softmax" && !w.session()->lastCompile().asmLines.isEmpty(), 60000);
    const CompileResult& r = w.session()->lastCompile();
    QVector<int> ks;  // the lowered loops named k
    for (int i = 0; i < r.loweredLoops.size(); ++i)
      if (r.loweredLoops[i].name == "k") ks << i;
    QCOMPARE(ks.size(), 2);
    // The kernel each shown source line is in (-1 before the first).
    QVector<int> kernelOf;
    int kernel = -1;
    for (int shown : w.asmShownLines()) {
      if (r.asmLines[shown].text.startsWith("__kernel void ")) ++kernel;
      kernelOf << kernel;
    }
    QVector<int> kernelOfLoop;
    for (int k : ks) {
      w.linkLoweredLine(r.loweredLoops[k].firstLine);
      QHash<int, int> colors = w.asmPane()->lineColors();
      QVERIFY(!colors.isEmpty());
      QSet<int> kernels;
      bool forLine = false;
      for (int line : colors.keys()) {
        kernels << kernelOf[line - 1];
        forLine |= r.asmLines[w.asmShownLines()[line - 1]].text.trimmed().startsWith("for (loom_i32 k = 0;");
      }
      QCOMPARE(kernels.size(), 1);  // one kernel's lines only
      QVERIFY(forLine);             // its `for`
      kernelOfLoop << *kernels.begin();
      // Clicking a coloured source line selects that loop again.
      w.linkAsmLine(colors.keys().last());
      QCOMPARE(w.asmPane()->lineColors(), colors);
    }
    QVERIFY(kernelOfLoop[0] != kernelOfLoop[1]);
    QVERIFY(kernelOfLoop[0] < kernelOfLoop[1]);  // in print order
    // The assembly filters do not apply to C source: greyed, every line shown (comments too).
    auto* comments = w.findChild<QCheckBox*>("asmHideComments");
    QVERIFY(comments && comments->isChecked() && !comments->isEnabled());
    QCOMPARE(w.asmShownLines().size(), r.asmLines.size());
    w.targetBox()->setCurrentText("llvm");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().codeKind == "assembly", 60000);
    QVERIFY(comments->isEnabled());
  }

  /// Ctrl+F finds in the editor; Edit has Cut / Copy / Paste; Help lists primitives and keys and
  /// About shows the version.
  void findEditMenuAndHelp() {
    MainWindow w;
    w.show();
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.parallel(i)\n");
    w.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&w));
    w.editor()->setFocus();
    QStringList editActions;
    for (QAction* a : w.menuBar()->actions())
      if (a->text() == "&Edit")
        for (QAction* e : a->menu()->actions()) editActions << e->text().remove('&');
    for (const char* name : {"Cut", "Copy", "Paste", "Find…"}) QVERIFY2(editActions.contains(name), name);
    QTest::keyClick(w.editor(), Qt::Key_F, Qt::ControlModifier);
    QTRY_VERIFY(w.findBar()->isVisible());
    w.findBar()->field()->setText("sch");
    QVERIFY(w.findBar()->findNext());
    QCOMPARE(w.editor()->selectedText(), QString("sch"));
    int line = 0, index = 0;
    w.editor()->getCursorPosition(&line, &index);
    QVERIFY(w.findBar()->findNext());
    int line2 = 0;
    w.editor()->getCursorPosition(&line2, &index);
    QVERIFY(line2 >= line);
    w.findBar()->field()->setText("no such text");
    QVERIFY(!w.findBar()->findNext());
    QCOMPARE(w.findBar()->info()->text(), QString("no match"));
    // Copy / paste through the menu.
    w.editor()->setFocus();
    w.editor()->setSelection(0, 0, 0, 1);
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text() == "&Copy") a->trigger();
    QCOMPARE(QApplication::clipboard()->text(), QString("b"));
    // The reference.
    for (QAction* a : w.findChildren<QAction*>())
      if (a->text().contains("Primitives and Shortcuts")) a->trigger();
    auto* ref = w.findChild<QTextBrowser*>("referenceText");
    QVERIFY(ref);
    QString text = ref->toPlainText();
    for (const char* p : {"sch.split", "sch.reorder", "sch.parallel", "Ctrl+R", "F6"}) QVERIFY2(text.contains(p), p);
  }

  /// Cancel stops a tuning run within a second even while a candidate's worker hangs (it used to
  /// wait for the worker's timeout: 10 s and more).
  void cancelStopsATrialWithinASecond() {
    QTemporaryDir dir;
    Session s;
    TuningMonitor m(&s);
    // A worker that never gets ready: the candidate stays in flight until its timeout.
    m.setWorkerCommand({"/bin/sh", "-c", "sleep 60", "hanging-worker"});
    TuneJob job;
    job.preset = "matmul";
    job.params = {{"M", 32}, {"N", 32}, {"K", 32}};
    job.trials = 4;
    job.batchSize = 1;
    job.recordsPath = dir.filePath("hang.json");
    job.resume = false;
    QVERIFY(m.start(job));
    QTest::qWait(1500);  // the first candidate's worker is running
    QVERIFY(m.isRunning());
    QElapsedTimer t;
    t.start();
    m.cancel();
    QTRY_VERIFY_WITH_TIMEOUT(!m.isRunning(), 10000);
    qInfo("cancel took %lld ms with a candidate in flight", t.elapsed());
    QVERIFY2(t.elapsed() < 1000, qPrintable(QString("%1 ms").arg(t.elapsed())));
    QCOMPARE(m.trialsDone(), 0);  // the killed candidate is no measurement
    QVERIFY(m.statusText().contains("cancelled"));
  }

  /// The log, the status bar and the graph view agree on op counts (each says which graph).
  void opCountsAgree() {
    MainWindow w;
    QSignalSpy loaded(w.session(), &Session::modelLoaded);
    QStringList log;
    connect(w.session(), &Session::logged, this, [&](const QString& line) { log << line; });
    w.openModel(kSmallCnn);
    QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, 30000);
    const ModelData* m = w.session()->model();
    QString line = log.filter("ops as imported").value(0);
    QVERIFY2(line.contains(QString("%1 ops as imported").arg(m->opCount)), qPrintable(line));
    QVERIFY(line.contains(QString("%1 in %2 fused groups").arg(m->fusedOpCount).arg(m->fusedGroups)));
    int fusedOps = 0;
    for (const GraphNode& n : w.graphView()->graph().nodes) fusedOps += n.kind == "op";
    QCOMPARE(fusedOps, m->fusedOpCount);
    QLabel* info = nullptr;
    for (QLabel* l : w.graphView()->findChildren<QLabel*>())
      if (l->text().contains("ops after fusion")) info = l;
    QVERIFY(info);
    QVERIFY2(info->text().startsWith(QString("%1 ops after fusion").arg(m->fusedOpCount)), qPrintable(info->text()));
    // Live search: typing finds and zooms to the match.
    QLineEdit* search = w.graphView()->searchBox();
    QTest::keyClicks(search, "conv");
    QVERIFY(w.graphView()->selectedNode() >= 0);
    QVERIFY(w.graphView()->canvas()->transform().m11() >= 0.79);
    // The minimap stays in a corner, small beside the view.
    QGraphicsView* mini = w.graphView()->minimap();
    QVERIFY(mini->width() <= std::max(140, w.graphView()->canvas()->viewport()->width() / 3));
  }
};

QTEST_MAIN(TestRoughEdges)
#include "test_rough_edges.moc"
