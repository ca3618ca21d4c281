// Workload presets scheduled by schedule scripts (splits with tails, vectorize, parallel, unroll,
// fuse, auto-unroll), lowered by the whole pipeline, checked against the unscheduled function
// and the preset's C++ reference.
#include <QtTest>

#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/topi/Workloads.h"
#include "core/transform/Pipeline.h"
#include "tests/transform/Meaning.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

class TestScheduled : public QObject {
  Q_OBJECT
private slots:
  void lowerScheduled_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("script");
    QTest::addColumn<int>("notes");  ///< vectorize / unroll notes expected
    QTest::newRow("matmul, vector tail") << "matmul:M=9,N=20,K=12" << R"(
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
jo, ji = sch.split(j, factors=[None, 8])
sch.reorder(i, jo, k, ji)
sch.vectorize(ji)
sch.parallel(i)
)" << 0;
    QTest::newRow("relu, fused then split (index folds back to affine)") << "relu:M=10,N=30" << R"(
b = sch.get_block("T_relu")
i, j = sch.get_loops(b)
f = sch.fuse(i, j)
o, v = sch.split(f, factors=[None, 16])
sch.parallel(o)
sch.vectorize(v)
)" << 0;
    QTest::newRow("matmul, vectorized outer loop falls back") << "matmul:M=4,N=6,K=5" << R"(
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
sch.vectorize(i)
)" << 1;
    QTest::newRow("softmax, vector + unroll + auto-unroll") << "softmax:M=6,N=20" << R"(
root = sch.get_block("root")
sch.annotate(root, "pragma_auto_unroll_max_step", 16)
b = sch.get_block("T_softmax_norm")
i, j = sch.get_loops(b)
jo, ji = sch.split(j, factors=[None, 8])
sch.vectorize(ji)
sch.parallel(i)
e = sch.get_block("T_softmax_exp")
i2, j2 = sch.get_loops(e)
sch.unroll(j2)
s = sch.get_block("T_softmax_expsum")
i3, k3 = sch.get_loops(s)
ko, ki = sch.split(k3, factors=[None, 3])
sch.unroll(ki)
)" << 0;
    QTest::newRow("conv2d, vector tail + unroll") << "conv2d:N=1,C=3,H=6,W=6,K=4" << R"(
b = sch.get_block("conv2d_nchw")
nn, ff, yy, xx, rc, ry, rx = sch.get_loops(b)
xo, xi = sch.split(xx, factors=[None, 4])
sch.reorder(nn, ff, yy, xo, rc, ry, rx, xi)
sch.vectorize(xi)
sch.unroll(rx)
sch.parallel(ff)
)" << 0;
    QTest::newRow("depthwise_conv2d, vectorized padding") << "depthwise_conv2d:N=1,C=3,H=7,W=7" << R"(
p = sch.get_block("pad_temp")
i0, i1, i2, i3 = sch.get_loops(p)
o, v = sch.split(i3, factors=[None, 4])
sch.vectorize(v)
)" << 0;
    QTest::newRow("reduce_sum, unrolled split reduction") << "reduce_sum:M=8,N=10" << R"(
b = sch.get_block("A_red")
i, k = sch.get_loops(b)
ko, ki = sch.split(k, factors=[None, 4])
sch.unroll(ki)
sch.parallel(i)
)" << 0;
    QTest::newRow("transpose, strided vector loads") << "transpose:M=12,N=10" << R"(
b = sch.get_block("T_transpose")
i, j = sch.get_loops(b)
jo, ji = sch.split(j, factors=[None, 4])
sch.vectorize(ji)
)" << 0;
    QTest::newRow("layernorm, vector rows") << "layernorm:M=5,N=24" << R"(
b = sch.get_block("T_layer_norm")
i, j = sch.get_loops(b)
jo, ji = sch.split(j, factors=[None, 8])
sch.vectorize(ji)
sch.parallel(i)
)" << 0;
  }

  void lowerScheduled() {
    QFETCH(QString, spec);
    QFETCH(QString, script);
    QFETCH(int, notes);
    topi::WorkloadSpec ws = topi::parseWorkloadSpec(spec.toStdString());
    PrimFunc f = topi::buildWorkload(ws);
    Schedule sch(f);
    ScriptResult r = runScript(sch, script.toStdString());
    QVERIFY2(r.ok, r.message.c_str());
    PassContext ctx;
    PrimFunc g = lower(sch.func(), ctx);
    QCOMPARE(countNodes(g, NodeKind::Block) + countNodes(g, NodeKind::BlockRealize), 0);
    QVERIFY(allFlat(g));
    QCOMPARE(countLoops(g, ForKind::Vectorized) + countLoops(g, ForKind::Unrolled), 0);
    std::string all;
    for (auto& d : ctx.diagnostics) all += d.str() + "\n";
    QVERIFY2(int(ctx.diagnostics.size()) == notes, (all + printFunc(g)).c_str());
    EXPECT_SAME_MEANING(f, g);
    // Against the C++ reference as well.
    auto args = randomArgs(f, 9), want = randomArgs(f, 9);
    interpret(g, asArgs(args));
    topi::runReference(ws, want);
    for (size_t i = size_t(ws.workload->numInputs); i < args.size(); ++i) {
      std::string m = mismatchReport(args[i], want[i], 1e-4, 1e-5);
      QVERIFY2(m.empty(), m.c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestScheduled)
#include "test_scheduled.moc"
