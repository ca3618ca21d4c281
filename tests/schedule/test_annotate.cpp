// annotate / unannotate on loops and blocks: text, value types, trace, refusals.
#include "ScheduleTestUtil.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

class TestAnnotate : public QObject {
  Q_OBJECT
private slots:
  void loopAndBlock() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    Schedule sch(f);
    ScriptResult r = runScript(sch, R"(b = sch.get_block("C")
i, j, k = sch.get_loops(b)
sch.annotate(i, "pragma_auto_unroll_max_step", 16)
sch.annotate(b, "meta_schedule.tiling_structure", "SSRSRS")
sch.annotate(b, ann_key="scale", ann_val=0.5)
sch.annotate(j, "flag", True)
sch.annotate(j, "flag", False)
)");
    QVERIFY2(r.ok, r.message.c_str());
    std::string text = printFunc(sch.func());
    QVERIFY2(
        text.find("for i in T.serial(16, annotations={\"pragma_auto_unroll_max_step\": 16}):") !=
            std::string::npos,
        text.c_str());
    QVERIFY2(text.find("T.block_attr({\"meta_schedule.tiling_structure\": \"SSRSRS\", \"scale\": "
                       "T.float32(0.5)})") != std::string::npos,
             text.c_str());
    const ForNode* j = sch.get(LoopRV{2});
    QVERIFY(j->annotations.count("flag"));
    QVERIFY(isZero(j->annotations.at("flag")));
    // Annotations do not change meaning; the RVs still name the rebuilt nodes.
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
    QCOMPARE(QString::fromStdString(sch.trace().str()).split('\n')[2],
             QString("sch.annotate(l1, \"pragma_auto_unroll_max_step\", 16)"));
    r = runScript(sch, "b = sch.get_block(\"C\")\nsch.unannotate(b, \"scale\")\ni, j, k = "
                       "sch.get_loops(b)\nsch.unannotate(i, \"pragma_auto_unroll_max_step\")\n");
    QVERIFY2(r.ok, r.message.c_str());
    text = printFunc(sch.func());
    QVERIFY2(text.find("\"scale\"") == std::string::npos, text.c_str());
    QVERIFY2(text.find("pragma_auto_unroll_max_step") == std::string::npos, text.c_str());
  }
  void sampledValue() {
    Schedule sch(workload("matmul:M=16,N=16,K=8"));
    ScriptResult r = runScript(sch, "v = sch.sample_categorical([4, 8], [0.5, 0.5], decision=1)\nb "
                                    "= sch.get_block(\"C\")\nsch.annotate(b, \"unroll\", v)\n");
    QVERIFY2(r.ok, r.message.c_str());
    QCOMPARE(*asConstInt(sch.get(BlockRV{1})->annotations.at("unroll")), int64_t(8));
  }
  void missingKey() {
    auto [kind, msg] = scriptError(
        workload("matmul:M=16,N=16,K=8"),
        "b = sch.get_block(\"C\")\nsch.annotate(b, \"a\", 1)\nsch.unannotate(b, \"x\")\n");
    QCOMPARE(QString::fromStdString(kind), QString("AnnotationNotFoundError"));
    QCOMPARE(QString::fromStdString(msg),
             QString("s.py:3:5: error: unannotate: block 'C' has no annotation 'x' (it has 'a')"));
  }
  void wrongValueType() {
    auto [kind, msg] = scriptError(workload("matmul:M=16,N=16,K=8"),
                                   "b = sch.get_block(\"C\")\nsch.annotate(b, \"a\", [1, 2])\n");
    QCOMPARE(QString::fromStdString(kind), QString("TypeError"));
    QCOMPARE(QString::fromStdString(msg),
             QString("s.py:2:22: error: argument 'ann_val' of annotate() must be bool or float or "
                     "str or ExprRV, got list"));
  }
};

QTEST_APPLESS_MAIN(TestAnnotate)
#include "test_annotate.moc"
