// The trace: printed script re-runs to the same IR, JSON round trip, replay with new decisions.
#include <nlohmann/json.hpp>

#include "ScheduleTestUtil.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {
const char* kScript = R"(b = sch.get_block("C")
i, j, k = sch.get_loops(b)
t0, t1 = sch.sample_perfect_tile(i, n=2, max_innermost_factor=4)
io, ii = sch.split(i, factors=[t0, t1])
jo, ji = sch.split(j, factors=[None, 3], preserve_unit_iters=False)
sch.reorder(io, jo, k, ii, ji)
f = sch.fuse(io, jo)
sch.parallel(f)
sch.unroll(ii)
sch.vectorize(ji)
c = sch.sample_categorical(candidates=[0, 16, 64], probs=[0.2, 0.3, 0.5])
sch.annotate(b, "pragma_auto_unroll_max_step", c)
sch.annotate(f, "note", "tiled")
u = sch.add_unit_loop(b)
)";
} // namespace

class TestTrace : public QObject {
  Q_OBJECT
private slots:
  void printedForm() {
    Schedule sch(workload("matmul:M=12,N=10,K=6"), 3);
    ScriptResult r = runScript(sch, kScript);
    QVERIFY2(r.ok, r.message.c_str());
    std::string t = sch.trace().str();
    QStringList lines = QString::fromStdString(t).split('\n');
    QCOMPARE(lines[0], QString("b0 = sch.get_block(\"C\")"));
    QCOMPARE(lines[1], QString("l1, l2, l3 = sch.get_loops(b0)"));
    QVERIFY2(lines[2].startsWith(
                 "v4, v5 = sch.sample_perfect_tile(l1, n=2, max_innermost_factor=4, decision=["),
             t.c_str());
    QCOMPARE(lines[3], QString("l6, l7 = sch.split(l1, factors=[v4, v5])"));
    QCOMPARE(lines[4],
             QString("l8, l9 = sch.split(l2, factors=[None, 3], preserve_unit_iters=False)"));
    QCOMPARE(lines[5], QString("sch.reorder(l6, l8, l3, l7, l9)"));
    QCOMPARE(lines[6], QString("l10 = sch.fuse(l6, l8)"));
    QVERIFY2(lines[10].startsWith("v11 = sch.sample_categorical(candidates=[0, 16, 64], "
                                  "probs=[0.2, 0.3, 0.5], decision="),
             t.c_str());
    QCOMPARE(lines[11], QString("sch.annotate(b0, \"pragma_auto_unroll_max_step\", v11)"));
    QCOMPARE(lines[13], QString("l12 = sch.add_unit_loop(b0)"));
  }
  void printedTraceReplaysAsScript() {
    PrimFunc f = workload("matmul:M=12,N=10,K=6");
    for (uint64_t seed = 1; seed <= 5; ++seed) {
      Schedule sch(f, seed);
      ScriptResult r = runScript(sch, kScript);
      QVERIFY2(r.ok, r.message.c_str());
      std::string t = sch.trace().str();
      Schedule again(f, 1000 + seed); // another seed: the decisions in the text must win
      ScriptResult r2 = runScript(again, t, "trace.py");
      QVERIFY2(r2.ok, (r2.message + "\n" + t).c_str());
      QVERIFY2(structuralEqual(sch.func(), again.func()), t.c_str());
      QCOMPARE(again.trace().str(), t); // printing is a fixed point
      QVERIFY(maxErrorBetween(f, again.func()) < 1e-5);
    }
  }
  void jsonRoundTrip() {
    PrimFunc f = workload("matmul:M=12,N=10,K=6");
    Schedule sch(f, 9);
    QVERIFY(runScript(sch, kScript).ok);
    nlohmann::json j = sch.trace().toJson();
    std::string text = j.dump();
    Trace back = Trace::fromJson(nlohmann::json::parse(text));
    QCOMPARE(back.toJson().dump(), text);
    QCOMPARE(back.str(), sch.trace().str());
    Schedule fresh(f, 77);
    back.apply(fresh);
    QVERIFY(structuralEqual(fresh.func(), sch.func()));
    QCOMPARE(fresh.trace().str(), sch.trace().str());
    // The JSON names instructions and RVs plainly.
    QCOMPARE(
        QString::fromStdString(j["insts"][3].dump()),
        QString(
            R"({"inputs":[{"rv":"l1"},[{"rv":"v4"},{"rv":"v5"}],true],"kind":"split","outputs":["l6","l7"]})"));
  }
  void replayWithNewDecisions() {
    PrimFunc f = workload("matmul:M=12,N=10,K=6");
    Schedule sch(f, 4);
    QVERIFY(runScript(sch, kScript).ok);
    auto sampling = sch.trace().samplingInstructions();
    QCOMPARE(sampling, (std::vector<size_t>{2, 10}));
    // Tile i (extent 12) as 6 x 2 and pick candidate 0 instead.
    Schedule other(f);
    sch.trace().apply(other, {{2, Value(std::vector<Value>{Value(6), Value(2)})}, {10, Value(0)}});
    std::string text = printFunc(other.func());
    QVERIFY2(text.find("\"pragma_auto_unroll_max_step\": 0") != std::string::npos, text.c_str());
    QVERIFY2(other.trace().str().find("decision=[6, 2]") != std::string::npos,
             other.trace().str().c_str());
    QVERIFY(maxErrorBetween(f, other.func()) < 1e-5);
    // A decision that does not fit is refused with its own error.
    Schedule bad(f);
    QVERIFY_THROWS_EXCEPTION(
        InvalidDecisionError,
        sch.trace().apply(bad, {{2, Value(std::vector<Value>{Value(5), Value(2)})}}));
  }
  void replayOnOtherWorkloadFails() {
    Schedule sch(workload("matmul:M=12,N=10,K=6"));
    QVERIFY(runScript(sch, kScript).ok);
    Schedule conv(workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3"));
    QVERIFY_THROWS_EXCEPTION(BlockNotFoundError, sch.trace().apply(conv));
  }
  void fromJsonErrors() {
    auto bad = [](const char* text) {
      try {
        Trace::fromJson(nlohmann::json::parse(text));
      } catch (const Error& e) {
        return std::string(e.kind()) + ": " + e.what();
      }
      return std::string("no error");
    };
    QCOMPARE(bad(R"([1])"),
             std::string("ParseError: trace JSON must be an object with an array \"insts\""));
    QCOMPARE(bad(R"({"insts":[{"kind":"spilt","inputs":[]}]})"),
             std::string("ParseError: trace JSON: unknown instruction kind 'spilt'"));
    QCOMPARE(bad(R"({"insts":[{"kind":"get_loops","inputs":[{"rv":"b0"}]}]})"),
             std::string("ParseError: trace JSON uses 'b0' before defining it"));
    QCOMPARE(bad(R"({"insts":[{"kind":"get_block","inputs":[3],"outputs":["b0"]}]})"),
             std::string("TypeError: argument 'name' of get_block() must be str, got int"));
    QCOMPARE(bad(R"({"insts":[{"kind":"get_block","inputs":[],"outputs":["b0"]}]})"),
             std::string("TypeError: get_block() missing required argument 'name'"));
  }
  void simplifiedDropsUnusedLookups() {
    PrimFunc f = workload("matmul:M=12,N=10,K=6");
    Schedule sch(f);
    ScriptResult r = runScript(
        sch, "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n"
             "again = sch.get_loops(b)\nkids = sch.get_child_blocks(i)\n"
             "io, ii = sch.split(i, factors=[None, 4])\nv = sch.sample_categorical([1], [1.0])\n");
    QVERIFY2(r.ok, r.message.c_str());
    Trace t = sch.trace().simplified();
    QCOMPARE(t.str(),
             std::string("b0 = sch.get_block(\"C\")\nl1, l2, l3 = sch.get_loops(b0)\n"
                         "l4, l5 = sch.split(l1, factors=[None, 4])\n"
                         "v6 = sch.sample_categorical(candidates=[1], probs=[1.0], decision=0)\n"));
    Schedule again(f);
    t.apply(again);
    QVERIFY(structuralEqual(again.func(), sch.func()));
  }
  void scheduleCopiesAreIndependent() {
    PrimFunc f = workload("matmul:M=12,N=10,K=6");
    Schedule a(f);
    auto loops = getLoops(a, getBlock(a, "C"));
    Schedule b = a; // fork
    split(b, loops[0], {nullptr, 4});
    QVERIFY(a.isValid(Value(loops[0])));
    QVERIFY(!b.isValid(Value(loops[0])));
    QCOMPARE(a.trace().insts.size(), size_t(2));
    QCOMPARE(b.trace().insts.size(), size_t(3));
    QVERIFY(structuralEqual(a.func(), f));
  }
};

QTEST_APPLESS_MAIN(TestTrace)
#include "test_trace.moc"
