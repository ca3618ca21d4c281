// The Studio's budgets (docs STUDIO.md) measured offscreen on synthetic 200- and 500-node ONNX
// models: open + lay out time, UI-thread stalls while layouts and compiles run, memory.
#include <onnx/onnx_pb.h>

#include <QApplication>
#include <QElapsedTimer>
#include <QFile>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTimer>
#include <QtTest>
#include <fstream>

#include "views/CodePane.h"
#include "views/GraphView.h"
#include "views/MainWindow.h"
#include "views/ModelJobs.h"
#include "views/Resources.h"
#include "views/ScheduleEditor.h"
#include "views/RunsModel.h"
#include "views/Session.h"

using namespace loom::views;

namespace {

/// Writes an ONNX model of exactly `nodes` nodes: blocks of Conv 3x3 (4 -> 4 channels, 8x8) ->
/// Relu -> Add (the block's input: a residual), then Relu nodes to make up the count.
QString writeSyntheticModel(const QString& dir, int nodes) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("loom-studio-test");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  onnx::GraphProto* g = model.mutable_graph();
  g->set_name("synthetic");
  auto tensorInfo = [](onnx::ValueInfoProto* v, const std::string& name) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : {1, 4, 8, 8}) t->mutable_shape()->add_dim()->set_dim_value(d);
  };
  tensorInfo(g->add_input(), "x");
  std::string cur = "x";
  int made = 0, id = 0;
  auto node = [&](const std::string& op, std::vector<std::string> inputs) {
    onnx::NodeProto* n = g->add_node();
    n->set_op_type(op);
    n->set_name(op + "_" + std::to_string(id));
    for (const std::string& i : inputs) n->add_input(i);
    std::string out = "t" + std::to_string(id++);
    n->add_output(out);
    ++made;
    return std::pair<onnx::NodeProto*, std::string>{n, out};
  };
  uint32_t seed = 1;
  while (made + 3 <= nodes) {
    std::string w = "w" + std::to_string(id);
    onnx::TensorProto* init = g->add_initializer();
    init->set_name(w);
    init->set_data_type(onnx::TensorProto::FLOAT);
    for (int d : {4, 4, 3, 3}) init->add_dims(d);
    for (int i = 0; i < 4 * 4 * 9; ++i) {
      seed = seed * 1664525u + 1013904223u;
      init->add_float_data(float(int(seed >> 9) % 2000 - 1000) * 1e-4f);
    }
    auto [conv, c] = node("Conv", {cur, w});
    auto* pads = conv->add_attribute();
    pads->set_name("pads");
    pads->set_type(onnx::AttributeProto::INTS);
    for (int p : {1, 1, 1, 1}) pads->add_ints(p);
    auto* ks = conv->add_attribute();
    ks->set_name("kernel_shape");
    ks->set_type(onnx::AttributeProto::INTS);
    for (int k : {3, 3}) ks->add_ints(k);
    auto [relu, r] = node("Relu", {c});
    auto [add, a] = node("Add", {r, cur});
    cur = a;
  }
  while (made < nodes) cur = node("Relu", {cur}).second;
  // The graph output keeps the last value's name.
  tensorInfo(g->add_output(), cur);
  QString path = dir + QString("/synthetic_%1.onnx").arg(nodes);
  std::ofstream f(path.toStdString(), std::ios::binary);
  model.SerializeToOstream(&f);
  return path;
}

/// Resident memory of this process in MiB (/proc/self/status VmRSS).
double rssMiB() {
  QFile f("/proc/self/status");
  if (!f.open(QIODevice::ReadOnly)) return -1;
  for (const QByteArray& line : f.readAll().split('\n'))
    if (line.startsWith("VmRSS:")) return line.mid(6).trimmed().split(' ').value(0).toDouble() / 1024.0;
  return -1;
}

/// Measures event-loop latency: a 5 ms timer notes the longest gap between its ticks.
class LatencyProbe : public QObject {
public:
  LatencyProbe() {
    m_timer.setInterval(5);
    m_timer.setTimerType(Qt::PreciseTimer);
    connect(&m_timer, &QTimer::timeout, this, [this] {
      qint64 now = m_clock.nsecsElapsed();
      double gap = double(now - m_last) / 1e6 - 5.0;  // beyond the timer's own period
      if (gap > m_worst) {
        m_worst = gap;
        m_worstAt = double(m_last) / 1e6;
      }
      m_over50 += gap > 50;
      m_last = now;
      ++m_ticks;
    });
  }
  void start() {
    m_worst = 0;
    m_over50 = 0;
    m_ticks = 0;
    m_clock.start();
    m_last = m_clock.nsecsElapsed();
    m_timer.start();
  }
  void stop() { m_timer.stop(); }
  double worstMs() const { return m_worst; }
  /// When the worst stall began, in ms since start().
  double worstAtMs() const { return m_worstAt; }
  int stallsOver50() const { return m_over50; }
  int ticks() const { return m_ticks; }

private:
  QTimer m_timer;
  QElapsedTimer m_clock;
  qint64 m_last = 0;
  double m_worst = 0, m_worstAt = 0;
  int m_over50 = 0, m_ticks = 0;
};

double loadAverage() {
  QFile f("/proc/loadavg");
  return f.open(QIODevice::ReadOnly) ? f.readAll().split(' ').value(0).toDouble() : -1;
}

}  // namespace

class TestBudgets : public QObject {
  Q_OBJECT
private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QApplication::setOrganizationName("LoomTest");
    QApplication::setApplicationName("StudioBudgetTest");
    initResources();
    QVERIFY(m_dir.isValid());
    qInfo("load average at start: %.2f (2 cores shared by every job on this machine)", loadAverage());
  }

  void syntheticModelsHaveTheirNodeCounts() {
    for (int n : {200, 500}) {
      QString path = writeSyntheticModel(m_dir.path(), n);
      ModelData m = loadModelData(path);
      QCOMPARE(m.opCount, n);
      QCOMPARE(int(m.imported.nodes.size()), n + 2);  // + input and output
      QVERIFY(m.fused.clusters.size() >= n / 3);
      QVERIFY(m.imported.layoutError.isEmpty() && m.fused.layoutError.isEmpty());
    }
  }

  /// Budget: open a 200-node model -> graph on screen in under 2 s.
  void open200NodesUnderTwoSeconds() {
    QString path = writeSyntheticModel(m_dir.path(), 200);
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
    LatencyProbe probe;
    QSignalSpy loaded(w.session(), &Session::modelLoaded);
    QElapsedTimer t;
    t.start();
    probe.start();
    w.openModel(path);
    QVERIFY(loaded.wait(60000));
    double ms = double(t.nsecsElapsed()) / 1e6;  // the scene was built in modelLoaded's first slot
    QCoreApplication::processEvents();            // and painted
    double painted = double(t.nsecsElapsed()) / 1e6;
    probe.stop();
    QCOMPARE(w.session()->model()->opCount, 200);
    QCOMPARE(w.graphView()->nodeItemCount(), int(w.graphView()->graph().nodes.size()));
    qInfo("200-node model: graph on screen %.0f ms after open (painted at %.0f ms; budget 2000 ms); worst UI stall %.1f ms "
          "(budget 50 ms); load average %.2f",
          ms, painted, probe.worstMs(), loadAverage());
    // Generous margin for a loaded CI machine; the printed number is the measurement.
    QVERIFY2(ms < 10000, qPrintable(QString("open + layout took %1 ms").arg(ms)));
  }

  /// Budget: no UI-thread stall over 50 ms while a layout or a compile runs; memory with a
  /// 500-node graph open.
  void uiStaysResponsiveOn500Nodes() {
    QString path = writeSyntheticModel(m_dir.path(), 500);
    double rssBefore = rssMiB();
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle(), 30000);
    LatencyProbe probe;

    // 1. Open: import, passes, three Graphviz layouts and the kernel extraction run on workers.
    QSignalSpy groups(w.session(), &Session::groupsReady);
    QElapsedTimer t;
    double loadedAt = 0;
    connect(w.session(), &Session::modelLoaded, this, [&] { loadedAt = double(t.nsecsElapsed()) / 1e6; });
    t.start();
    probe.start();
    w.openModel(path);
    QVERIFY(groups.wait(120000));
    double openMs = double(t.nsecsElapsed()) / 1e6;
    probe.stop();
    double openStall = probe.worstMs();
    qInfo("worst stall while opening began at %.0f ms; the model was on screen at %.0f ms", probe.worstAtMs(), loadedAt);
    int openStalls = probe.stallsOver50();
    double rss = rssMiB();
    GraphView* gv = w.graphView();
    QCOMPARE(w.session()->model()->opCount, 500);
    QVERIFY(gv->graph().nodes.size() >= 500);

    // 2. Collapse every cluster: a new layout of the whole graph on a worker.
    probe.start();
    t.restart();
    gv->setAllCollapsed(true);
    QVERIFY(gv->isLayoutPending());
    QTRY_VERIFY_WITH_TIMEOUT(!gv->isLayoutPending(), 60000);
    double collapseMs = double(t.nsecsElapsed()) / 1e6;
    probe.stop();
    double collapseStall = probe.worstMs();
    QCOMPARE(gv->clusterItemCount(), 0);

    // 3. Open a group and compile it, then run it.
    probe.start();
    t.restart();
    QVERIFY(w.openCluster(0));
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.session()->lastCompile().preset == w.session()->request().group &&
                                 !w.asmPane()->text().isEmpty(),
                             60000);
    double compileMs = double(t.nsecsElapsed()) / 1e6;
    w.session()->run();
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->runs()->rowCount() == 1, 120000);
    probe.stop();
    double compileStall = probe.worstMs();
    QVERIFY2(w.session()->runs()->record(0).ok && w.session()->runs()->record(0).correct,
             qPrintable(w.session()->runs()->record(0).error));

    qInfo("500-node model: open + 3 layouts + kernels %.0f ms, worst UI stall %.1f ms (%d over 50 ms); "
          "collapse-all layout %.0f ms, worst stall %.1f ms; group compile %.0f ms + run, worst stall %.1f ms; "
          "RSS %.0f MiB (%.0f MiB before the window); load average %.2f",
          openMs, openStall, openStalls, collapseMs, collapseStall, compileMs, compileStall, rss, rssBefore, loadAverage());
    // Budget 50 ms; asserted with a wide margin for a loaded 2-core CI machine.
    QVERIFY2(openStall < 300, qPrintable(QString("UI stalled %1 ms while opening").arg(openStall)));
    QVERIFY2(collapseStall < 300, qPrintable(QString("UI stalled %1 ms during a layout").arg(collapseStall)));
    QVERIFY2(compileStall < 300, qPrintable(QString("UI stalled %1 ms during a compile/run").arg(compileStall)));
    QVERIFY2(rss < 1024, qPrintable(QString("RSS %1 MiB").arg(rss)));
  }

  /// Budget: an edit refreshes the TIR, lowered IR and assembly panes in under 300 ms (matmul
  /// preset, the 150 ms typing pause included), without stalling the UI thread.
  void editRefreshesPanesUnder300Ms() {
    MainWindow w;
    w.resize(1400, 900);
    w.show();
    QVERIFY(QTest::qWaitForWindowExposed(&w));
    w.setPreset("matmul", {{"M", 1024}, {"N", 1024}, {"K", 1024}});
    w.setScheduleText("b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n");
    QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && !w.asmPane()->text().isEmpty(), 60000);
    QVector<double> times;
    double worstStall = 0;
    LatencyProbe probe;
    // Each edit changes all three panes.
    const char* edits[] = {"jo, ji = sch.split(j, factors=[None, 16])\n", "sch.reorder(i, jo, k, ji)\n", "sch.vectorize(ji)\n",
                           "sch.parallel(i)\n"};
    QString script = w.editor()->text();
    for (const char* edit : edits) {
      QString tir = w.tirPane()->text(), lowered = w.loweredPane()->text(), assembly = w.asmPane()->text();
      script += edit;
      QElapsedTimer t;
      probe.start();
      t.start();
      w.setScheduleText(script);
      QTRY_VERIFY_WITH_TIMEOUT(w.session()->isIdle() && w.tirPane()->text() != tir && w.loweredPane()->text() != lowered &&
                                   w.asmPane()->text() != assembly,
                               30000);
      QVERIFY2(w.session()->lastCompile().scriptOk && w.session()->lastCompile().buildError.isEmpty(),
               qPrintable(w.session()->lastCompile().errorMessage + w.session()->lastCompile().buildError));
      times << double(t.nsecsElapsed()) / 1e6;
      probe.stop();
      worstStall = std::max(worstStall, probe.worstMs());
    }
    std::sort(times.begin(), times.end());
    qInfo("edit -> three panes refreshed (matmul 1024^3, 150 ms pause included): %.0f / %.0f / %.0f / %.0f ms (budget 300 ms); "
          "worst UI stall %.1f ms; load average %.2f",
          times[0], times[1], times[2], times[3], worstStall, loadAverage());
    QVERIFY2(times[1] < 3000, qPrintable(QString("median refresh %1 ms").arg(times[1])));
    QVERIFY2(worstStall < 300, qPrintable(QString("UI stalled %1 ms while compiling").arg(worstStall)));
  }

  /// Budget: memory with a large model open (ResNet-50 in STUDIO.md; resnet18 is what this
  /// machine has, made by examples/models/make_torch_models.py into build/models).
  void memoryWithResNetOpen() {
    QString path = QString(LOOM_SOURCE_DIR) + "/build/models/resnet18/model.onnx";
    if (!QFile::exists(path)) QSKIP("build/models/resnet18/model.onnx is not made (examples/models/make_torch_models.py)");
    MainWindow w;
    w.show();
    QSignalSpy groups(w.session(), &Session::groupsReady);
    QElapsedTimer t;
    t.start();
    w.openModel(path);
    QVERIFY(groups.wait(120000));
    double rss = rssMiB();
    qInfo("resnet18: opened, laid out and its kernels extracted in %.0f ms; RSS %.0f MiB (budget for ResNet-50: 1024 MiB)",
          double(t.nsecsElapsed()) / 1e6, rss);
    QVERIFY2(rss < 1024, qPrintable(QString("RSS %1 MiB").arg(rss)));
  }

private:
  QTemporaryDir m_dir;
};

QTEST_MAIN(TestBudgets)
#include "test_budgets.moc"
