// The x86 example schedules (examples/schedules/matmul_x86.py, conv2d_x86.py) at small sizes:
// lowered by the whole pipeline, they compute what the unscheduled program and the C++ reference do.
#include <QtTest>

#include <fstream>
#include <sstream>

#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/topi/Workloads.h"
#include "core/transform/Pipeline.h"
#include "tests/transform/Meaning.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {
std::string example(const std::string& name) {
  std::ifstream in(std::string(LOOM_SOURCE_DIR) + "/examples/schedules/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// How many Allocate nodes sit inside a parallel loop (memory of their own per thread).
int allocsUnderParallel(const PrimFunc& f) {
  struct V : IRVisitor {
    int depth = 0, found = 0;
    using IRVisitor::visit;
    void visit(const ForNode* n) override {
      depth += n->kind == ForKind::Parallel;
      IRVisitor::visit(n);
      depth -= n->kind == ForKind::Parallel;
    }
    void visit(const AllocateNode* n) override {
      found += depth > 0;
      IRVisitor::visit(n);
    }
  } v;
  v.visitStmt(f->body);
  return v.found;
}
}  // namespace

class TestX86Schedules : public QObject {
  Q_OBJECT
private slots:
  void keepMeaning_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("script");
    QTest::addColumn<int>("perThreadAllocs");
    // K below the 1024 block: the k split gets a predicate.
    QTest::newRow("matmul") << "matmul:M=12,N=128,K=40" << "matmul_x86.py" << 2;
    QTest::newRow("conv2d") << "conv2d:N=1,C=3,H=6,W=8,K=64,R=3,S=3,pad=1,stride=1" << "conv2d_x86.py" << 1;
  }

  void keepMeaning() {
    QFETCH(QString, spec);
    QFETCH(QString, script);
    QFETCH(int, perThreadAllocs);
    topi::WorkloadSpec ws = topi::parseWorkloadSpec(spec.toStdString());
    PrimFunc f = topi::buildWorkload(ws);
    std::string text = example(script.toStdString());
    QVERIFY(!text.empty());
    Schedule sch(f);
    ScriptResult r = runScript(sch, text, script.toStdString());
    QVERIFY2(r.ok, r.message.c_str());
    PassContext ctx;
    PrimFunc g = lower(sch.func(), ctx);
    QVERIFY(allFlat(g));
    // The packed B panel and the C tile (matmul) / the output tile (conv2d) are per thread.
    QCOMPARE(allocsUnderParallel(g), perThreadAllocs);
    EXPECT_SAME_MEANING(f, g);
    auto args = randomArgs(f, 5), want = randomArgs(f, 5);
    interpret(g, asArgs(args));
    topi::runReference(ws, want);
    for (size_t i = size_t(ws.workload->numInputs); i < args.size(); ++i) {
      std::string m = mismatchReport(args[i], want[i], 1e-4, 1e-5);
      QVERIFY2(m.empty(), m.c_str());
    }
  }
};

QTEST_APPLESS_MAIN(TestX86Schedules)
#include "test_x86_schedules.moc"
