// Scheduled IR (split loops, T.where guards, fused and annotated loops) round-trips through text.
#include <QtTest>

#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/support/Error.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"

using namespace loom;
using namespace loom::tir;

class TestScheduled : public QObject {
  Q_OBJECT
private slots:
  void scriptsRoundTrip_data() {
    QTest::addColumn<QString>("workload");
    QTest::addColumn<QString>("script");
    QTest::newRow("tiled matmul") << "matmul:M=64,N=64,K=64"
                                  << "b = sch.get_block(\"C\")\n"
                                     "i, j, k = sch.get_loops(b)\n"
                                     "io, ii = sch.split(i, factors=[None, 16])\n"
                                     "jo, ji = sch.split(j, factors=[None, 8])\n"
                                     "sch.reorder(io, jo, k, ii, ji)\n"
                                     "sch.vectorize(ji)\n"
                                     "sch.parallel(io)\n";
    QTest::newRow("uneven split") << "matmul:M=30,N=30,K=30"
                                  << "b = sch.get_block(\"C\")\n"
                                     "i, j, k = sch.get_loops(b)\n"
                                     "io, ii = sch.split(i, factors=[None, 8])\n"
                                     "f = sch.fuse(io, ii)\n"
                                     "ko, ki = sch.split(k, factors=[4, None])\n"
                                     "sch.unroll(ki)\n";
  }

  void scriptsRoundTrip() {
    QFETCH(QString, workload);
    QFETCH(QString, script);
    PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec(workload.toStdString()));
    Schedule sch(f);
    ScriptResult r = runScript(sch, script.toStdString(), "sched.py");
    QVERIFY2(r.ok, r.message.c_str());
    PrimFunc s = sch.func();
    if (qEnvironmentVariableIsSet("LOOM_SHOW")) qInfo("%s", printFunc(s).c_str());
    std::string text = printFunc(s);
    QVERIFY2(text != printFunc(f), "the schedule changed nothing");
    PrimFunc g;
    try {
      g = parseFunc(text, "scheduled.py");
    } catch (const Error& e) {
      QFAIL((e.formatted() + "\n" + text).c_str());
    }
    QVERIFY2(printFunc(g) == text, (text + "\n---\n" + printFunc(g)).c_str());
    QVERIFY2(structuralEqual(s, g), (structuralDiff(s, g) + "\n" + text).c_str());
  }
};

QTEST_APPLESS_MAIN(TestScheduled)
#include "test_scheduled.moc"
