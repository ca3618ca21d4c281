// GUI tests of the Studio's model side (offscreen): fused groups opened in the schedule editor,
// collapsed clusters, GPU targets.
#include <QAction>
#include <QApplication>
#include <QComboBox>
#include <QContextMenuEvent>
#include <QDockWidget>
#include <QFile>
#include <QMenu>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QtTest>

#include "core/driver/DefaultSchedule.h"

#include "views/CodePane.h"
#include "views/GraphLayout.h"
#include "views/GraphView.h"
#include "views/MainWindow.h"
#include "views/ModelJobs.h"
#include "views/ProblemsModel.h"
#include "views/Resources.h"
#include "views/RunsModel.h"
#include "views/ScheduleEditor.h"
#include "views/Session.h"

using namespace loom::views;

namespace {

QString smallCnn() { return QString(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx"; }

/// Opens `path` in `w` and waits for the graph and the extracted kernels.
bool openAndWait(MainWindow& w, const QString& path) {
  QSignalSpy groups(w.session(), &Session::groupsReady);
  w.openModel(path);
  return groups.wait(60000) || groups.count() > 0;
}

/// The index of the first op node of cluster `c` in `g`, or -1.
int firstNodeOf(const GraphData& g, int c) {
  for (int i = 0; i < g.nodes.size(); ++i)
    if (g.nodes[i].cluster == c && g.nodes[i].kind == "op") return i;
  return -1;
}

/// A cluster of the fused view whose kernel contains `op` (e.g. "nn.conv2d"), or -1.
/// The first cluster whose group has an op named `op` or starting with it ("nn.conv2d" finds
/// nn.conv2d_winograd too).
int clusterWithOp(const Session& s, const QString& op) {
  const ModelGroups* g = s.modelGroups();
  for (int c = 0; g && c < g->clusterGroup.size(); ++c) {
    int k = g->clusterGroup[c];
    if (k < 0) continue;
    for (const std::string& o : g->groups[size_t(k)].ops)
      if (QString::fromStdString(o).startsWith(op)) return c;
  }
  return -1;
}

}  // namespace

class TestModelView : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioModelViewTest");
    initResources();
    if (!QFile::exists(smallCnn())) QSKIP("examples/models/small_cnn/model.onnx is missing");
  }

  void clustersMapOntoKernels_data() {
    QTest::addColumn<QString>("path");
    QTest::addColumn<QString>("layout");
    for (const char* layout : {"NCHW", "NCHWc"}) {
      for (const char* m : {"small_cnn", "fire_net", "transformer_block"})
        QTest::addRow("%s %s", m, layout) << QString(LOOM_SOURCE_DIR) + "/examples/models/" + m + "/model.onnx" << QString(layout);
      // Made on demand by examples/models/make_torch_models.py (not in a fresh clone).
      QString resnet = QString(LOOM_SOURCE_DIR) + "/build/models/resnet18/model.onnx";
      if (QFile::exists(resnet)) QTest::addRow("resnet18 %s", layout) << resnet << QString(layout);
    }
  }

  void clustersMapOntoKernels() {
    QFETCH(QString, path);
    QFETCH(QString, layout);
    if (!QFile::exists(path)) QSKIP("model missing");
    MainWindow w;
    w.session()->setModelLayout(layout);
    QVERIFY(openAndWait(w, path));
    QCOMPARE(w.session()->model()->layout, layout);
    const ModelData* m = w.session()->model();
    const ModelGroups* g = w.session()->modelGroups();
    QVERIFY(m && g);
    QCOMPARE(g->clusterGroup.size(), m->fused.clusters.size());
    QVERIFY(!g->groups.empty());
    // Every kernel is used by at least one cluster and as often as the driver counts.
    std::vector<int> uses(g->groups.size(), 0);
    for (int k : g->clusterGroup) {
      QVERIFY(k >= 0 && size_t(k) < g->groups.size());
      ++uses[size_t(k)];
    }
    int shared = 0;
    for (size_t k = 0; k < g->groups.size(); ++k) {
      QCOMPARE(uses[k], g->groups[k].occurrences);
      // Flops are counted from the TIR: a conv or dense kernel does at least 2 per MAC.
      for (const std::string& op : g->groups[k].ops)
        if (op == "nn.conv2d" || op == "nn.dense") QVERIFY(g->flops[k] > 0);
      shared += g->groups[k].occurrences > 1;
    }
    qInfo("%d clusters, %d kernels (%d used more than once), extracted in %.0f ms", int(g->clusterGroup.size()),
          int(g->groups.size()), shared, g->ms);
    // A cluster's kernel computes the cluster's ops.
    for (int c = 0; c < g->clusterGroup.size(); ++c) {
      QStringList clusterOps;
      for (const GraphNode& n : m->fused.nodes)
        if (n.cluster == c && n.kind == "op") clusterOps << n.op;
      QStringList kernelOps;
      for (const std::string& op : g->groups[size_t(g->clusterGroup[c])].ops) kernelOps << QString::fromStdString(op);
      clusterOps.sort();
      kernelOps.sort();
      QCOMPARE(kernelOps, clusterOps);
    }
  }

  void doubleClickOpensGroupInEditor() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.session()->setModelLayout("NCHW");  // the script below names the NCHW conv's block and loops
    QVERIFY(openAndWait(w, smallCnn()));
    GraphView* gv = w.graphView();
    gv->setMode(GraphView::Fused);
    int c = clusterWithOp(*w.session(), "nn.conv2d");
    QVERIFY(c >= 0);
    int node = firstNodeOf(gv->graph(), c);
    QVERIFY(node >= 0);
    // Double-click the node on screen, as a user would.
    gv->canvas()->centerOn(gv->graph().nodes[node].box.center());
    QPoint at = gv->canvas()->mapFromScene(gv->graph().nodes[node].box.center());
    QSignalSpy activated(gv, &GraphView::groupActivated);
    QTest::mouseDClick(gv->canvas()->viewport(), Qt::LeftButton, {}, at);
    QCOMPARE(activated.count(), 1);
    QCOMPARE(activated.at(0).at(0).toInt(), c);
    const ModelGroups* g = w.session()->modelGroups();
    const auto& group = g->groups[size_t(g->clusterGroup[c])];
    QVERIFY(w.session()->request().isGroup());
    QCOMPARE(w.session()->request().group, QString::fromStdString(group.name));
    QVERIFY(w.editor()->text().startsWith("# Fused group " + QString::fromStdString(group.name)));
    // The editor starts from the schedule loom compile gives the kernel by default.
    QString defaultScript = QString::fromStdString(loom::driver::defaultScheduleScript(group.func, true));
    QVERIFY(defaultScript.contains("sch."));
    QVERIFY(w.editor()->text().endsWith(defaultScript));
    QVERIFY(gv->highlightedClusters().contains(c));  // the open group is marked in the graph
    // The panes fill in with the group's kernel.
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && !w.asmPane()->text().isEmpty() &&
                                 w.session()->lastCompile().preset == QString::fromStdString(group.name),
                             60000);
    QVERIFY(w.tirPane()->text().contains(QString::fromStdString(group.name)));
    QVERIFY(w.session()->lastCompile().blockNames.contains("conv2d_nchw"));
    QVERIFY(!w.loweredPane()->text().isEmpty());
    QCOMPARE(w.problems()->rowCount(), 0);
    // A schedule line changes the panes; Run checks the result against the unscheduled program.
    QVERIFY(w.tirPane()->text().contains("T.parallel"));  // the default schedule is applied
    // Replacing it with one line of our own changes the panes.
    QString lowered = w.loweredPane()->text();
    QString script = QString("# my schedule\n") +
                     "b = sch.get_block(\"conv2d_nchw\")\nn, k, h, x, rc, ry, rx = sch.get_loops(b)\nsch.parallel(k)\n";
    w.setScheduleText(script);
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.loweredPane()->text() != lowered, 60000);
    QVERIFY2(w.problems()->rowCount() == 0, qPrintable(w.session()->lastCompile().errorMessage));
    QVERIFY(w.tirPane()->text().contains("T.parallel"));
    QVERIFY(!w.tirPane()->text().contains("T.vectorized"));  // only our line now
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 1, 120000);
    RunRecord r = w.session()->runs()->record(0);
    QVERIFY2(r.ok, qPrintable(r.error));
    QVERIFY(r.correct);
    QCOMPARE(r.reference, QString("unscheduled program"));
    QVERIFY(r.medianMs > 0);
    QVERIFY(r.preset.contains(QString::fromStdString(group.name)));
    QVERIFY(r.defaultMs > 0);  // the default schedule's time, to beat
    QVERIFY(w.session()->runs()->index(0, RunsModel::Time).data().toString().contains("(default "));
    QString rate = w.session()->runs()->index(0, RunsModel::Gflops).data().toString();
    QVERIFY2(r.flopsKnown ? rate.endsWith("GFLOP/s") && r.gflops > 0 : rate == "GFLOP/s unknown", qPrintable(rate));
    // Picking a preset leaves the group.
    w.setPreset("matmul", {{"M", 16}, {"N", 16}, {"K", 16}});
    QVERIFY(!w.session()->request().isGroup());
    QVERIFY(gv->highlightedClusters().isEmpty());
  }

  void contextMenuCollapsesAndExpands() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(openAndWait(w, smallCnn()));
    GraphView* gv = w.graphView();
    gv->setMode(GraphView::Fused);
    GraphData before = gv->graph();
    int clustersBefore = gv->clusterItemCount(), nodesBefore = gv->nodeItemCount();
    QVERIFY(clustersBefore > 0);
    int c = clusterWithOp(*w.session(), "nn.conv2d");
    int members = 0;
    for (const GraphNode& n : before.nodes) members += n.cluster == c;
    QVERIFY(members >= 2);
    // Right-click the cluster's frame on screen: its context menu pops up.
    gv->canvas()->centerOn(before.clusters[c].box.topLeft() + QPointF(6, 6));
    QPoint at = gv->canvas()->mapFromScene(before.clusters[c].box.topLeft() + QPointF(6, 6));
    QContextMenuEvent rightClick(QContextMenuEvent::Mouse, at, gv->canvas()->viewport()->mapToGlobal(at));
    QApplication::sendEvent(gv->canvas()->viewport(), &rightClick);
    auto* menu = qobject_cast<QMenu*>(QApplication::activePopupWidget());
    QVERIFY(menu);
    QAction* collapse = menu->findChild<QAction*>("collapseGroup");
    QVERIFY(collapse && menu->findChild<QAction*>("openGroup"));
    QSignalSpy ready(gv, &GraphView::layoutReady);
    collapse->trigger();
    menu->close();
    QVERIFY(gv->isLayoutPending());  // laid out on a worker
    QTRY_VERIFY_WITH_TIMEOUT(ready.count() == 1, 30000);
    QVERIFY(!gv->isLayoutPending());
    QCOMPARE(gv->collapsedClusters(), QSet<int>{c});
    QCOMPARE(gv->clusterItemCount(), clustersBefore - 1);
    QCOMPARE(gv->nodeItemCount(), nodesBefore - members + 1);
    const GraphData& after = gv->graph();
    QVERIFY(after.layoutError.isEmpty());
    int groupNode = -1;
    for (int i = 0; i < after.nodes.size(); ++i)
      if (after.nodes[i].kind == "group") groupNode = i;
    QVERIFY(groupNode >= 0);
    QCOMPARE(after.nodes[groupNode].group, c);
    QCOMPARE(after.nodes[groupNode].op, before.clusters[c].name);
    QVERIFY(after.nodes[groupNode].shape.startsWith(QString("%1 ops").arg(members)));
    QVERIFY2(after.nodes[groupNode].shape.contains("FLOP"), qPrintable(after.nodes[groupNode].shape));  // its cost
    // The collapsed node keeps the cluster's connections: one edge in, one out (a chain).
    int in = 0, out = 0;
    for (const GraphEdge& e : after.edges) {
      QVERIFY(e.from != e.to);
      QVERIFY(!e.spline.isEmpty());
      in += e.to == groupNode;
      out += e.from == groupNode;
    }
    QVERIFY(in >= 1 && out >= 1);
    for (const GraphNode& n : after.nodes) QVERIFY(after.bounds.adjusted(-1, -1, 1, 1).contains(n.box));
    // Double-clicking the collapsed node opens its group; the context menu expands it again.
    QSignalSpy activated(gv, &GraphView::groupActivated);
    QCOMPARE(gv->clusterAt(after.nodes[groupNode].box.center()), c);
    menu = gv->showContextMenu(after.nodes[groupNode].box.center(), QPoint());
    QAction* expand = menu->findChild<QAction*>("expandGroup");
    QVERIFY(expand);
    expand->trigger();
    delete menu;
    QVERIFY(!gv->isLayoutPending());  // the expanded layout is the model's own
    QCOMPARE(gv->clusterItemCount(), clustersBefore);
    QCOMPARE(gv->nodeItemCount(), nodesBefore);
    // Collapsing again uses the cached layout: no new layout job.
    gv->setCollapsed(c, true);
    QVERIFY(!gv->isLayoutPending());
    QCOMPARE(gv->cachedLayoutCount(), 1);
    QCOMPARE(gv->nodeItemCount(), nodesBefore - members + 1);
    // Collapse all: no cluster frames left, one node per group.
    gv->setAllCollapsed(true);
    QTRY_VERIFY_WITH_TIMEOUT(!gv->isLayoutPending(), 30000);
    QCOMPARE(gv->clusterItemCount(), 0);
    int groupNodes = 0, loose = 0;
    for (const GraphNode& n : gv->graph().nodes) groupNodes += n.kind == "group";
    for (const GraphNode& n : before.nodes) loose += n.cluster < 0;
    QCOMPARE(groupNodes, clustersBefore);
    QCOMPARE(gv->nodeItemCount(), loose + clustersBefore);
    QCOMPARE(gv->cachedLayoutCount(), 2);
  }

  void collapsedGraphIsWellFormed() {
    // collapseClusters on a hand-made graph: a -> [b -> c] -> d, a -> d.
    GraphData g;
    auto node = [&](const QString& id, int cluster) {
      GraphNode n;
      n.id = id;
      n.op = "op_" + id;
      n.kind = "op";
      n.shape = "T" + id;
      n.cluster = cluster;
      g.nodes << n;
    };
    node("a", -1);
    node("b", 0);
    node("c", 0);
    node("d", -1);
    g.clusters << GraphCluster{"fused_b_c", QRectF(0, 0, 10, 10)};
    g.edges << GraphEdge{0, 1, "x", {}} << GraphEdge{1, 2, "y", {}} << GraphEdge{2, 3, "z", {}} << GraphEdge{0, 3, "w", {}}
            << GraphEdge{0, 2, "v", {}};
    GraphData c = collapseClusters(g, {0});
    QCOMPARE(c.nodes.size(), 3);
    QCOMPARE(c.nodes[1].kind, QString("group"));
    QCOMPARE(c.nodes[1].op, QString("fused_b_c"));
    QCOMPARE(c.nodes[1].shape, QString("2 ops · Tc"));  // the value leaving the cluster
    QCOMPARE(c.edges.size(), 3);                       // a->g (once), g->d, a->d
    QVERIFY(c.clusters[0].box.isNull());
    layoutGraph(c);
    QVERIFY(c.layoutError.isEmpty());
    QVERIFY(c.nodes[1].box.top() > c.nodes[0].box.bottom());
    QVERIFY(c.nodes[2].box.top() > c.nodes[1].box.bottom());
    QVERIFY(!graphToDot(c).contains("cluster_0"));
  }

  void gpuTargetsShowKernelsAndExplainRuns() {
    MainWindow w;
    w.setPreset("matmul", {{"M", 32}, {"N", 32}, {"K", 32}});
    w.targetBox()->setCurrentText("opencl");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().target == "opencl" &&
                                 !w.asmPane()->text().isEmpty(),
                             60000);
    QVERIFY2(w.session()->lastCompile().buildError.isEmpty(), qPrintable(w.session()->lastCompile().buildError));
    QCOMPARE(w.session()->lastCompile().codeKind, QString("OpenCL C"));
    QVERIFY(w.asmPane()->text().contains("__kernel"));
    QCOMPARE(w.findChild<QDockWidget*>("asmDock")->windowTitle(), QString("OpenCL C"));
    QVERIFY(w.tirPane()->text().contains("blockIdx") || w.tirPane()->text().contains("threadIdx"));
    // Run on the OpenCL device when there is one (PoCL), else a clear failure.
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 1, 120000);
    RunRecord r = w.session()->runs()->record(0);
    if (r.ok) {
      QVERIFY(r.correct);
      QVERIFY(!r.device.isEmpty());
      QVERIFY(r.gflops > 0);
      qInfo("opencl run on %s: %.4f ms", qPrintable(r.device), r.medianMs);
    } else {
      QVERIFY2(r.error.contains("OpenCL"), qPrintable(r.error));
    }

    w.targetBox()->setCurrentText("cuda");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().target == "cuda" &&
                                 w.asmPane()->text().contains("__global__"),
                             60000);
    QString code = w.asmPane()->text();
    QVERIFY(w.session()->lastCompile().codeKind.startsWith("CUDA C"));
    // PTX when NVRTC is there, else a note that says why not.
    QVERIFY(code.contains(".version") || code.contains("NVRTC (libnvrtc) is not available"));
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 2, 60000);
    QVERIFY(!w.session()->runs()->record(1).ok);
    QVERIFY(w.session()->runs()->record(1).error.contains("no CUDA GPU"));
  }

  void fusedGroupRunsOnOpenCL() {
    MainWindow w;
    QVERIFY(openAndWait(w, smallCnn()));
    int c = clusterWithOp(*w.session(), "nn.conv2d");
    QVERIFY(w.openCluster(c));
    w.targetBox()->setCurrentText("opencl");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().target == "opencl" &&
                                 w.session()->lastCompile().preset == w.session()->request().group,
                             60000);
    QVERIFY2(w.session()->lastCompile().buildError.isEmpty(), qPrintable(w.session()->lastCompile().buildError));
    QVERIFY(w.session()->lastCompile().note.contains("default GPU schedule"));
    // The CPU default schedule the editor started with gave way to the GPU default (an empty script).
    QVERIFY(w.editor()->text().contains("GPU target") && !w.editor()->text().contains("sch."));
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 1, 120000);
    RunRecord r = w.session()->runs()->record(0);
    if (!r.ok) {
      QVERIFY2(r.error.contains("OpenCL"), qPrintable(r.error));
    } else {
      QVERIFY2(r.correct, qPrintable(QString::number(r.maxRelError)));
      qInfo("fused group %s on %s: %.4f ms, max rel err %.2e vs %s", qPrintable(r.preset), qPrintable(r.device), r.medianMs,
            r.maxRelError, qPrintable(r.reference));
    }
    // Back on the CPU, the untouched editor gets the CPU default schedule again.
    w.targetBox()->setCurrentText("llvm");
    QVERIFY(w.editor()->text().contains("sch."));
  }

  void sessionRestoresTheOpenGroup() {
    QTemporaryDir dir;
    QString path = dir.filePath("g.loomsession");
    QString name;
    {
      MainWindow w;
      QVERIFY(openAndWait(w, smallCnn()));
      QVERIFY(w.openCluster(0));
      name = w.session()->request().group;
      QVERIFY(!name.isEmpty());
      QVERIFY(w.saveSession(path, true));
      QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 60000);
    }
    MainWindow w2;
    QVERIFY(w2.loadSession(path, true));
    QVERIFY(w2.session()->request().isGroup());
    QCOMPARE(w2.session()->request().group, name);
    QTRY_VERIFY_WITH_TIMEOUT(w2.session()->isIdle() && !w2.asmPane()->text().isEmpty(), 60000);
    QVERIFY(w2.session()->lastCompile().buildError.isEmpty());
    QVERIFY(w2.tirPane()->text().contains(name));
  }
};

QTEST_MAIN(TestModelView)
#include "test_model_view.moc"
