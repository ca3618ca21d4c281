// GUI tests of Loom Studio (offscreen): live panes, error squiggles, runs, model graphs, sessions.
#include <QAbstractItemModelTester>
#include <QApplication>
#include <QComboBox>
#include <QFile>
#include <QStandardItemModel>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "views/CodePane.h"
#include "views/DiffDialog.h"
#include "views/GraphView.h"
#include "views/Lexers.h"
#include "views/MainWindow.h"
#include "views/ProblemsModel.h"
#include "views/Resources.h"
#include "views/RunsModel.h"
#include "views/ScheduleEditor.h"
#include "views/Session.h"

using namespace loom::views;

class TestWorkbench : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioTest");
    initResources();
  }

  void itemModelsPassTheTester() {
    MainWindow w;
    QAbstractItemModelTester t1(w.session()->runs(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t2(w.problems(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t3(w.loopModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t4(w.propertiesModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    QAbstractItemModelTester t5(w.passModel(), QAbstractItemModelTester::FailureReportingMode::QtTest);
    w.setPreset("matmul", {{"M", 32}, {"N", 32}, {"K", 32}});
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.bogus(i)\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->rowCount() == 1, 20000);
    w.setScheduleText("b = sch.get_block(\"C\")\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->rowCount() == 0 && w.loopModel()->rowCount() > 0, 20000);
    RunRecord r;
    r.id = 1;
    r.ok = true;
    r.correct = true;
    r.medianMs = 1;
    r.gflops = 2;
    w.session()->runs()->addRun(r);
    QCOMPARE(w.session()->runs()->rowCount(), 1);
  }

  void typingUpdatesLoweredAndAssembly() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 64}, {"N", 64}, {"K", 64}});
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n");
    QTRY_VERIFY_WITH_TIMEOUT(!w.asmPane()->text().isEmpty() && w.session()->isIdle(), 30000);
    QString lowered = w.loweredPane()->text(), assembly = w.asmPane()->text();
    QVERIFY(!lowered.contains("T.parallel"));
    // Type a line at the end, as a user would.
    w.editor()->setCursorPosition(2, 0);
    w.editor()->insert("sch.parallel(i)\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.loweredPane()->text() != lowered && w.asmPane()->text() != assembly, 30000);
    QVERIFY(w.tirPane()->text().contains("T.parallel"));
    QVERIFY(w.problems()->rowCount() == 0);
    // The pass selector lists the lowering passes; some change nothing and are greyed.
    QVERIFY(w.passModel()->rowCount() > 3);
    // The loop nest shows the parallel i with j inside.
    QStandardItem* i = w.loopModel()->item(0, 0);
    QVERIFY(i);
    QCOMPARE(i->text(), QString("i"));
    QCOMPARE(w.loopModel()->item(0, 2)->text(), QString("parallel"));
    QVERIFY(i->rowCount() == 1);
    QCOMPARE(i->child(0, 0)->text(), QString("j"));
  }

  void clickingALoopLinksAssembly() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 64}, {"N", 64}, {"K", 64}});
    w.setScheduleText("b = sch.get_block(\"C\")\n");
    QTRY_VERIFY_WITH_TIMEOUT(!w.session()->lastCompile().asmLines.isEmpty() && w.session()->isIdle(), 30000);
    const CompileResult& r = w.session()->lastCompile();
    QVERIFY(!r.loweredLoops.isEmpty());
    int line = r.loweredLoops.front().firstLine;
    w.linkLoweredLine(line);
    QVERIFY(w.loweredPane()->lineColors().contains(line));
    QVERIFY(!w.asmPane()->lineColors().isEmpty());
    // Every coloured assembly line came from a loop inside the clicked one, in that loop's colour.
    for (auto it = w.asmPane()->lineColors().begin(); it != w.asmPane()->lineColors().end(); ++it) {
      int tirLine = r.asmLines[w.asmShownLines()[it.key() - 1]].tirLine;  // the pane hides directives and unused labels
      QVERIFY(tirLine >= r.loweredLoops.front().firstLine && tirLine <= r.loweredLoops.front().lastLine);
      QCOMPARE(w.loweredPane()->lineColors().value(tirLine, -1), it.value());
    }
    // And back: clicking a coloured assembly line selects its loop.
    int asmLine = w.asmPane()->lineColors().begin().key();
    w.loweredPane()->setLineColors({});
    w.linkAsmLine(asmLine);
    QVERIFY(w.loweredPane()->lineColors().contains(r.asmLines[w.asmShownLines()[asmLine - 1]].tirLine));
  }

  void illegalPrimitiveIsSquiggled() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 32}, {"N", 32}, {"K", 32}});
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.splitt(i, factors=[None, 4])\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->rowCount() == 1, 30000);
    QVERIFY(w.editor()->hasErrorIndicator(3));
    QVERIFY(!w.editor()->hasErrorIndicator(2));
    QString message = w.problems()->index(0, ProblemsModel::Message).data().toString();
    QVERIFY2(message.contains("splitt"), qPrintable(message));
    QCOMPARE(w.problems()->index(0, ProblemsModel::Location).data().toString(), QString("schedule.py:3:5"));
    QCOMPARE(w.editor()->errorLine(), 3);
    // The panes show the IR as of the line before: the loops are still there, unsplit.
    QVERIFY(w.tirPane()->text().contains("T.grid(32, 32, 32)") || w.tirPane()->text().contains("for i"));
    // Fixing the line clears the squiggle and the problem.
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.split(i, factors=[None, 4])\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.problems()->rowCount() == 0, 30000);
    QVERIFY(!w.editor()->hasErrorIndicator(3));
  }

  void keyboardTypingCompletesAndRecompiles() {
    MainWindow w;
    w.show();
    w.setPreset("matmul", {{"M", 32}, {"N", 32}, {"K", 32}});
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n");
    QTRY_VERIFY_WITH_TIMEOUT(!w.asmPane()->text().isEmpty() && w.session()->isIdle(), 30000);
    QString tir = w.tirPane()->text();
    w.editor()->setFocus();
    w.editor()->setCursorPosition(2, 0);
    QTest::keyClicks(w.editor(), "sch.");
    QVERIFY(w.editor()->isListActive());  // the primitives are offered
    w.editor()->cancelList();
    QTest::keyClicks(w.editor(), "unroll(");
    QTest::keyClicks(w.editor(), "k)");
    QCOMPARE(w.editor()->text(2), QString("sch.unroll(k)"));
    QTRY_VERIFY_WITH_TIMEOUT(w.tirPane()->text() != tir, 30000);
    QVERIFY(w.tirPane()->text().contains("T.unroll"));
    // Passes that changed nothing are greyed in the selector.
    bool someGrey = false;
    for (int r = 0; r < w.passModel()->rowCount(); ++r)
      someGrey |= w.passModel()->item(r)->foreground().color() == QColor(0x99, 0x99, 0x99);
    QVERIFY(someGrey);
    // Choosing the input shows the IR before lowering: the block is still there.
    w.passBox()->setCurrentIndex(0);
    QVERIFY(w.loweredPane()->text().contains("T.block"));
    w.passBox()->setCurrentIndex(w.passModel()->rowCount() - 1);
    QCOMPARE(w.loweredPane()->text(), w.session()->lastCompile().loweredTir);
  }

  void completionOffersPrimitivesAndNames() {
    MainWindow w;
    w.setScheduleText("b = sch.get_block(\"C\")\nio, ii = sch.split(i, [None, 4])\n\n");
    QVERIFY(w.editor()->callTipOf("split").startsWith("split("));
    QStringList names = w.editor()->namesInScope(3);
    QVERIFY(names.contains("b") && names.contains("io") && names.contains("ii"));
    QVERIFY(!w.editor()->namesInScope(1).contains("b"));
  }

  void runAddsACorrectRow() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 64}, {"N", 64}, {"K", 64}});
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nsch.vectorize(j)\n");
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 1, 60000);
    RunsModel* runs = w.session()->runs();
    QVERIFY2(runs->record(0).ok, qPrintable(runs->record(0).error));
    QCOMPARE(runs->index(0, RunsModel::Correct).data().toString(), QString("✓ correct"));
    double gflops = runs->index(0, RunsModel::Gflops).data(RunsModel::RawRole).toDouble();
    QVERIFY(gflops > 0);
    QVERIFY(runs->index(0, RunsModel::Gflops).data().toString().endsWith("GFLOP/s"));
    QVERIFY(runs->record(0).peakGflops > 0);
    QCOMPARE(runs->record(0).scheduleVersion, 1);
    // A second run of another schedule gets version 2; the diff marks the changed line.
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n");
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(runs->rowCount() == 2, 60000);
    QCOMPARE(runs->record(1).scheduleVersion, 2);
    LineDiff d = diffLines(runs->record(0).schedule.split('\n'), runs->record(1).schedule.split('\n'));
    QCOMPARE(d.removed.count(true), 1);
    QCOMPARE(d.added.count(true), 0);
  }

  void wrongScheduleRunIsReported() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 16}, {"N", 16}, {"K", 16}});
    w.setScheduleText("sch.nonsense()\n");
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 1, 60000);
    QVERIFY(!w.session()->runs()->record(0).ok);
    QVERIFY(w.session()->runs()->index(0, RunsModel::Correct).data().toString().startsWith("✗"));
  }

  void modelShowsNodesAndFusedClusters() {
    QString path = QString(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx";
    if (!QFile::exists(path)) QSKIP("examples/models/small_cnn/model.onnx is missing (helper H's make_models.py)");
    MainWindow w;
    QSignalSpy loaded(w.session(), &Session::modelLoaded);
    w.openModel(path);
    QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, 60000);
    const ModelData* m = w.session()->model();
    QVERIFY(m && m->opCount > 0);
    GraphView* g = w.graphView();
    g->setMode(GraphView::Imported);
    QCOMPARE(g->nodeItemCount(), int(m->imported.nodes.size()));
    int ops = 0;
    for (const GraphNode& n : g->graph().nodes) ops += n.kind == "op";
    QCOMPARE(ops, m->opCount);
    QVERIFY(g->graph().layoutError.isEmpty());
    // Every node was placed, inside the layout's bounds.
    for (const GraphNode& n : g->graph().nodes) QVERIFY(g->graph().bounds.adjusted(-1, -1, 1, 1).contains(n.box));
    g->setMode(GraphView::Fused);
    QVERIFY(g->clusterItemCount() > 0);
    QCOMPARE(g->clusterItemCount(), m->fusedGroups);
    // Each fused node lies inside its cluster's box.
    for (const GraphNode& n : g->graph().nodes)
      if (n.cluster >= 0) QVERIFY(g->graph().clusters[n.cluster].box.adjusted(-1, -1, 1, 1).contains(n.box));
    // Search finds conv nodes and the properties panel shows the selected one.
    QVERIFY(g->findNext("conv") > 0);
    QVERIFY(g->selectedNode() >= 0);
    QVERIFY(w.propertiesModel()->rowCount() > 0);
    QCOMPARE(w.propertiesModel()->item(0, 0)->text(), QString("op"));
    QVERIFY(w.propertiesModel()->item(0, 1)->text().contains("conv"));
  }

  void cancelledModelLoadIsDropped() {
    QString path = QString(LOOM_SOURCE_DIR) + "/examples/models/transformer_block/model.onnx";
    if (!QFile::exists(path)) QSKIP("examples/models/transformer_block/model.onnx is missing (helper H's make_models.py)");
    MainWindow w;
    QSignalSpy loaded(w.session(), &Session::modelLoaded);
    QSignalSpy finished(w.session(), &Session::taskFinished);
    w.openModel(path);
    QVERIFY(!w.session()->isIdle());
    w.session()->cancel();
    QTRY_VERIFY_WITH_TIMEOUT(finished.count() == 1, 60000);
    QTest::qWait(50);
    QCOMPARE(loaded.count(), 0);
    QVERIFY(w.session()->model() == nullptr);
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
    // A later load goes through.
    w.openModel(path);
    QTRY_VERIFY_WITH_TIMEOUT(loaded.count() == 1, 60000);
    QVERIFY(w.session()->model()->opCount > 0);
  }

  void badModelFails() {
    QTemporaryDir dir;
    QString path = dir.filePath("broken.onnx");
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write("not a model");
    f.close();
    MainWindow w;
    QSignalSpy failed(w.session(), &Session::modelFailed);
    w.openModel(path);
    QTRY_VERIFY_WITH_TIMEOUT(failed.count() == 1, 30000);
    QVERIFY(failed.at(0).at(1).toString().contains("broken.onnx"));
  }

  void sessionFileRoundTrips() {
    QTemporaryDir dir;
    QString path = dir.filePath("s.loomsession");
    {
      MainWindow w;
      w.setPreset("matmul", {{"M", 48}, {"N", 32}, {"K", 16}});
      w.setScheduleText("b = sch.get_block(\"C\")\n");
      w.targetBox()->setCurrentText("llvm -mtriple=aarch64-linux-gnu");
      RunRecord r;
      r.id = 3;
      r.ok = true;
      r.correct = true;
      r.schedule = "x";
      w.session()->runs()->addRun(r);
      QVERIFY(w.session()->isModified());
      QVERIFY(w.saveSession(path, true));
      QVERIFY(!w.session()->isModified());
      QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
    }
    MainWindow w2;
    QVERIFY(w2.loadSession(path, true));
    QCOMPARE(w2.session()->request().preset, QString("matmul"));
    QCOMPARE(w2.session()->request().params.value("M"), 48);
    QCOMPARE(w2.editor()->text(), QString("b = sch.get_block(\"C\")\n"));
    QCOMPARE(w2.session()->request().target, QString("llvm -mtriple=aarch64-linux-gnu"));
    QCOMPARE(w2.session()->runs()->rowCount(), 1);
    QCOMPARE(w2.session()->runs()->record(0).id, 3);
    QVERIFY(!w2.session()->isModified());
    // A cross target compiles to AArch64 assembly.
    QTRY_VERIFY_WITH_TIMEOUT(!w2.session()->lastCompile().asmLines.isEmpty() && w2.session()->isIdle(), 30000);
    QVERIFY(w2.asmPane()->text().contains("fmul") || w2.asmPane()->text().contains("fmla") || w2.asmPane()->text().contains("ldr"));
    QVERIFY(!w2.loadSession(dir.filePath("missing.loomsession"), true));
  }

  void asmLexerSpotsVectorAndFma() {
    QCOMPARE(AsmLexer::mnemonicStyle("vfmadd231ps", "zmm0, zmm1, zmm2"), AsmLexer::Fma);
    QCOMPARE(AsmLexer::mnemonicStyle("fmla", "v0.4s, v1.4s, v2.4s"), AsmLexer::Fma);
    QCOMPARE(AsmLexer::mnemonicStyle("vmovups", "ymm0, (%rax)"), AsmLexer::Vector);
    QCOMPARE(AsmLexer::mnemonicStyle("addq", "$1, %rax"), AsmLexer::Mnemonic);
  }

  void staleCompilesAreDropped() {
    Session s;
    s.setCompileDelay(0);
    QSignalSpy spy(&s, &Session::operatorCompiled);
    s.setPreset("matmul", {{"M", 16}, {"N", 16}, {"K", 16}});
    for (int n = 1; n <= 5; ++n) s.setScheduleText(QString("b = sch.get_block(\"C\")\n").repeated(n));
    s.compileNow();
    QTRY_VERIFY_WITH_TIMEOUT(s.isIdle(), 30000);
    QVERIFY(spy.count() >= 1);
    // Only the newest request's result reached the views.
    auto last = spy.last().at(0).value<CompileResult>();
    QCOMPARE(last.generation, s.lastCompile().generation);
    for (const auto& args : spy) QVERIFY(args.at(0).value<CompileResult>().scriptOk);
    QCOMPARE(s.lastCompile().preset, QString("matmul"));
  }
};

QTEST_MAIN(TestWorkbench)
#include "test_workbench.moc"
