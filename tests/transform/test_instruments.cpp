// The pass context and its instruments: print-after-all, time-passes, the recorder, disabled
// passes and diagnostics.
#include <QtTest>

#include <sstream>

#include "core/transform/FlattenBuffers.h"
#include "core/transform/Instruments.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/LowerIntrinsics.h"
#include "core/transform/Pass.h"
#include "core/transform/RemoveNoOp.h"
#include "core/transform/Vectorize.h"
#include "tests/transform/Meaning.h"
#include "tests/transform/Programs.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {
Pass simple(std::string name, PrimFunc (*fn)(const PrimFunc&)) {
  return Pass{std::move(name), [fn](const PrimFunc& f, PassContext&) { return fn(f); }};
}
std::vector<Pass> fourPasses() {
  return {simple("lower-blocks", lowerBlocks), simple("flatten-buffers", flattenBuffers),
          simple("remove-no-op", removeNoOps), simple("lower-intrinsics", lowerIntrinsics)};
}
}  // namespace

class TestInstruments : public QObject {
  Q_OBJECT
private slots:
  void recorderAndPrintAfterAll() {
    PrimFunc f = matmulSplit(4, 16, 3, 8, ForKind::Serial, ForKind::Parallel);
    PassContext ctx;
    auto rec = std::make_shared<PassRecorder>();
    std::ostringstream os;
    ctx.instruments = {rec, std::make_shared<PrintAfterAll>(os)};
    PrimFunc g = ctx.run(fourPasses(), f);
    QVERIFY(rec->input().same_as(f));
    QCOMPARE(rec->steps().size(), size_t(4));
    std::vector<bool> changed;
    for (auto& s : rec->steps()) changed.push_back(s.changed);
    QCOMPARE(changed, (std::vector<bool>{true, true, false, false}));
    QVERIFY(rec->steps().back().after.same_as(g));
    QCOMPARE(rec->steps()[0].pass, std::string("lower-blocks"));
    std::string text = os.str();
    QVERIFY(text.find("// after lower-blocks\n") == 0);
    QVERIFY(text.find("// after flatten-buffers\n") != std::string::npos);
    QVERIFY(text.find("// after remove-no-op") == std::string::npos);  // unchanged: skipped
    QVERIFY(text.find(printFunc(g)) != std::string::npos);
    EXPECT_SAME_MEANING(f, g);
  }

  void timePasses() {
    PassContext ctx;
    auto timer = std::make_shared<TimePasses>();
    ctx.instruments = {timer};
    ctx.run(fourPasses(), matmulSplit(8, 8, 8, 4));
    QCOMPARE(timer->entries().size(), size_t(4));
    double sum = 0;
    for (auto& e : timer->entries()) {
      QVERIFY(e.seconds >= 0);
      sum += e.seconds;
    }
    QCOMPARE(timer->totalSeconds(), sum);
    std::string r = timer->report();
    for (const char* name : {"lower-blocks", "flatten-buffers", "remove-no-op (unchanged)", "total"})
      QVERIFY2(r.find(name) != std::string::npos, r.c_str());
  }

  void disabledPassIsSkipped() {
    PassContext ctx;
    ctx.disabledPasses = {"flatten-buffers"};
    auto rec = std::make_shared<PassRecorder>();
    ctx.instruments = {rec};
    PrimFunc g = ctx.run(fourPasses(), threeStages(2, 3));
    QCOMPARE(rec->steps().size(), size_t(3));
    QVERIFY(!allFlat(g));
  }

  void diagnosticsNameThePass() {
    // A lane-dependent if with an else branch has no vector form: a note, the loop serial.
    Buffer A = makeBuffer("A", f32, {8});
    Var i = makeVar("i_1");
    PrimFunc f = makePrimFunc("main", {A->data}, {{A->data, A}},
                              forLoop(i, 0, 8, ForKind::Vectorized,
                                      ifThen(Expr(i) < 3, bufferStore(A, 1.0f, {i}), bufferStore(A, 2.0f, {i}))));
    PassContext ctx;
    ctx.run(Pass{"vectorize", vectorizeLoops}, f);
    QCOMPARE(ctx.diagnostics.size(), size_t(1));
    QCOMPARE(ctx.diagnostics[0].pass, std::string("vectorize"));
    std::string s = ctx.diagnostics[0].str();
    QVERIFY2(s.find("note: [vectorize] loop i_1 not vectorized") != std::string::npos, s.c_str());
    QCOMPARE(ctx.currentPass(), std::string());
  }

  void passErrorsPropagate() {
    PassContext ctx;
    std::string seen;
    Pass bad{"bad", [&seen](const PrimFunc& f, PassContext& c) -> PrimFunc {
               seen = c.currentPass();
               if (f.defined()) LOOM_THROW(ValueError) << "nope";
               return f;
             }};
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, ctx.run(bad, elementwiseSplit(8, 4, ForKind::Serial, ForKind::Serial)));
    QCOMPARE(seen, std::string("bad"));
    QCOMPARE(ctx.currentPass(), std::string());
  }
};

QTEST_APPLESS_MAIN(TestInstruments)
#include "test_instruments.moc"
