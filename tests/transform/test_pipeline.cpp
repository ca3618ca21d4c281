// The whole lowering pipeline: pass order, lowered structure, meaning on every hand-built
// program and every workload preset (interpreter before/after, and the preset's C++ reference).
#include <QtTest>

#include "core/topi/Workloads.h"
#include "core/transform/Instruments.h"
#include "core/transform/Pipeline.h"
#include "tests/transform/Meaning.h"
#include "tests/transform/Programs.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {
/// What every lowered function must look like: no blocks, 1-D accesses, only serial, parallel
/// (and on GPUs, thread_extent) loops.
std::string loweredProblems(const PrimFunc& f) {
  std::string p;
  if (countNodes(f, NodeKind::Block) || countNodes(f, NodeKind::BlockRealize)) p += "blocks left; ";
  if (!allFlat(f)) p += "multi-dimensional access left; ";
  if (countLoops(f, ForKind::Vectorized)) p += "vectorized loop left; ";
  if (countLoops(f, ForKind::Unrolled)) p += "unroll loop left; ";
  if (countLoops(f, ForKind::ThreadBinding)) p += "thread_binding loop left; ";
  return p;
}

std::string notes(const PassContext& ctx) {
  std::string s;
  for (auto& d : ctx.diagnostics) s += d.str() + "\n";
  return s;
}

/// Runs GPU thread_extent regions as serial loops over their thread var (the grid, emulated),
/// so the interpreter can check the GPU pipeline's meaning.
class ThreadsAsLoops : public IRMutator {
protected:
  using IRMutator::visit;
  Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
    if (n->key != "thread_extent") return IRMutator::visit(n, self);
    return forLoop(Var(n->node.as<VarNode>()), 0, n->value, ForKind::Serial, mutate(n->body));
  }
};
}  // namespace

class TestPipeline : public QObject {
  Q_OBJECT
private slots:
  void passOrder() {
    auto cpu = loweringPassNames();
    QCOMPARE(cpu.front(), std::string("lower-blocks"));
    QVERIFY(std::find(cpu.begin(), cpu.end(), "lower-thread-binding") == cpu.end());
    auto gpu = loweringPassNames({.gpu = true});
    QCOMPARE(gpu[1], std::string("lower-thread-binding"));
    auto pos = [&](const char* n) { return std::find(cpu.begin(), cpu.end(), n) - cpu.begin(); };
    QVERIFY(pos("flatten-buffers") < pos("loop-partition"));
    QVERIFY(pos("loop-partition") < pos("vectorize"));
    QVERIFY(pos("vectorize") < pos("storage-rewrite"));
    // Symbolic kernels' unrolled copies of a padded load are shared before the simplify after
    // unroll folds their bounds tests (once per load, not once per copy: a dynamic ResNet-18's
    // Winograd transforms 1.35 -> 0.3 s of lowering each).
    const auto unroll = pos("unroll");
    const auto share = std::find(cpu.begin() + unroll, cpu.end(), "share-loads") - cpu.begin();
    const auto simplify = std::find(cpu.begin() + unroll, cpu.end(), "simplify") - cpu.begin();
    QVERIFY(share < simplify);
    QVERIFY(std::find(gpu.begin(), gpu.end(), "share-loads") == gpu.end());
  }

  void programs_data() {
    QTest::addColumn<int>("which");
    QTest::newRow("matmul") << 0;
    QTest::newRow("matmul split tail, vectorized") << 1;
    QTest::newRow("matmul vectorized, parallel") << 2;
    QTest::newRow("elementwise split tail, vectorized") << 3;
    QTest::newRow("three stages") << 4;
    QTest::newRow("row sum unrolled") << 5;
    QTest::newRow("row sum auto-unrolled") << 6;
    QTest::newRow("intrinsics") << 7;
    QTest::newRow("elementwise parallel, unrolled tail") << 8;
  }
  void programs() {
    QFETCH(int, which);
    PrimFunc f;
    switch (which) {
    case 0: f = matmulSplit(5, 12, 7, 4); break;
    case 1: f = matmulSplit(5, 20, 7, 8, ForKind::Vectorized); break;
    case 2: f = matmulSplit(4, 32, 6, 16, ForKind::Vectorized, ForKind::Parallel); break;
    case 3: f = elementwiseSplit(100, 16, ForKind::Serial, ForKind::Vectorized); break;
    case 4: f = threeStages(5, 6); break;
    case 5: f = rowSumUnrolled(4, 6, 0); break;
    case 6: f = rowSumUnrolled(4, 6, 64); break;
    case 7: f = intrinsicsProgram(33); break;
    case 8: f = elementwiseSplit(30, 4, ForKind::Parallel, ForKind::Unrolled); break;
    }
    PassContext ctx;
    PrimFunc g = lower(f, ctx);
    std::string problems = loweredProblems(g);
    QVERIFY2(problems.empty(), (problems + "\n" + printFunc(g)).c_str());
    // Split tails are peeled and resolved, so every vectorized loop really vectorizes.
    QVERIFY2(ctx.diagnostics.empty(), (notes(ctx) + printFunc(g)).c_str());
    if (which >= 1 && which <= 3) QVERIFY2(countNodes(g, NodeKind::Ramp) > 0, printFunc(g).c_str());
    if (which == 2) QCOMPARE(countLoops(g, ForKind::Parallel), 1);
    if (which == 4) QCOMPARE(countNodes(g, NodeKind::Allocate), 2);
    EXPECT_SAME_MEANING(f, g);
  }

  void nonDivisibleVectorTailHasNoCondition() {
    PassContext ctx;
    PrimFunc g = lower(elementwiseSplit(100, 16, ForKind::Serial, ForKind::Vectorized), ctx);
    // Main part: 6 full vectors with no if; tail: one 4-lane vector, also without an if.
    QCOMPARE(countNodes(g, NodeKind::IfThenElse), 0);
    std::vector<int> lanes;
    postOrderVisit(g->body, [&](const IRNode* n) {
      if (auto* s = dynamic_cast<const BufferStoreNode*>(n)) lanes.push_back(s->value.dtype().lanes());
    });
    QCOMPARE(lanes, (std::vector<int>{16, 4}));
  }

  void symbolicShape() {
    // B[i] = A[i] * 2 + 1 for i < n, split by 8 with the inner loop vectorized; n is only known
    // at run time, so the split point and the tail stay symbolic.
    Var n = makeVar("n");
    Buffer A = makeBuffer("A", f32, {n}), B = makeBuffer("B", f32, {n});
    Var io = makeVar("i_0"), ii = makeVar("i_1");
    IterVar vi = spatial("vi", n);
    Expr iv = Expr(io) * 8 + Expr(ii);
    Stmt br = blockRealize({iv}, iv < Expr(n), makeBlock("B", {vi}, bufferStore(B, bufferLoad(A, {vi.var}) * 2.0f + 1.0f, {vi.var})));
    PrimFunc f = rootFunc({A, B}, nest({{io, floordiv(Expr(n) + 7, 8)}, {ii, 8, ForKind::Vectorized}}, br));
    PassContext ctx;
    PrimFunc g = lower(f, ctx);
    QVERIFY2(loweredProblems(g).empty(), printFunc(g).c_str());
    QVERIFY2(countNodes(g, NodeKind::Ramp) > 0, printFunc(g).c_str());  // the main part vectorizes
    for (int64_t len : {1, 8, 21, 64}) {
      auto a = runtime::NDArray::empty({len}, runtime::DType::f32());
      auto b1 = runtime::NDArray::empty({len}, runtime::DType::f32());
      auto b2 = runtime::NDArray::empty({len}, runtime::DType::f32());
      fillRandom(a, 3);
      interpret(f, {a, b1});
      interpret(g, {a, b2});
      QVERIFY2(mismatchReport(b2, b1).empty(), printFunc(g).c_str());
    }
  }

  void paddingIsPeeled() {
    // P[i] = if_then_else(1 <= i && i < 17, A[i - 1], 0) over i in [0, 18), split by 4 with the
    // inner loop vectorized: the head and tail with padding are peeled, the middle vectorizes
    // without any condition.
    Buffer A = makeBuffer("A", f32, {16}), P = makeBuffer("P", f32, {18});
    Var io = makeVar("i_0"), ii = makeVar("i_1");
    IterVar vi = spatial("vi", 18);
    Expr iv = Expr(io) * 4 + Expr(ii);
    Expr x = vi.var;
    Expr value = ifThenElse(1 <= x && x < 17, bufferLoad(A, {x - 1}), floatImm(f32, 0));
    Stmt br = blockRealize({iv}, iv < 18, makeBlock("P", {vi}, bufferStore(P, value, {vi.var})));
    PrimFunc f = rootFunc({A, P}, nest({{io, 5}, {ii, 4, ForKind::Vectorized}}, br));
    PassContext ctx;
    PrimFunc g = lower(f, ctx);
    QVERIFY2(ctx.diagnostics.empty(), (notes(ctx) + printFunc(g)).c_str());
    QCOMPARE(countNodes(g, NodeKind::IfThenElse), 0);
    bool anyCall = false;
    postOrderVisit(g->body, [&](const IRNode* n) { anyCall |= n->nodeKind == NodeKind::Call; });
    QVERIFY2(!anyCall, printFunc(g).c_str());
    QVERIFY(countNodes(g, NodeKind::Ramp) > 0);
    EXPECT_SAME_MEANING(f, g);
  }

  void gpuPipeline() {
    PrimFunc f = elementwiseSplit(100, 32, ForKind::ThreadBinding, ForKind::ThreadBinding, "blockIdx.x", "threadIdx.x");
    PassContext ctx;
    PrimFunc g = lower(f, ctx, {.gpu = true});
    QVERIFY(loweredProblems(g).empty());
    QCOMPARE(countNodes(g, NodeKind::AttrStmt), 2);
    PrimFunc emulated = withBody(g, ThreadsAsLoops().mutate(g->body));
    EXPECT_SAME_MEANING(f, emulated);
    // The CPU pipeline refuses nothing: thread_binding loops just run in order there.
    PassContext cpu;
    PrimFunc h = lower(f, cpu);
    EXPECT_SAME_MEANING(f, h);
  }

  void recorderSeesEveryPass() {
    PassContext ctx;
    auto rec = std::make_shared<PassRecorder>();
    ctx.instruments = {rec};
    PrimFunc g = lower(matmulSplit(3, 20, 4, 8, ForKind::Vectorized), ctx);
    auto names = loweringPassNames();
    QCOMPARE(rec->steps().size(), names.size());
    for (size_t i = 0; i < names.size(); ++i) QCOMPARE(rec->steps()[i].pass, names[i]);
    QVERIFY(rec->steps().back().after.same_as(g));
  }

  void workloadPresets() {
    int count = 0;
    for (const topi::Workload& w : topi::allWorkloads()) {
      topi::ParamMap small;
      for (auto& p : w.params) small[p.name] = std::max(p.minValue, std::min<int64_t>(p.defaultValue, 6));
      topi::WorkloadSpec spec;
      try {
        spec = topi::makeWorkloadSpec(w.name, small);
        topi::buildWorkload(spec);
      } catch (const topi::WorkloadError&) {
        spec = topi::makeWorkloadSpec(w.name);
      }
      PrimFunc f = topi::buildWorkload(spec);
      PassContext ctx;
      PrimFunc g = lower(f, ctx);
      std::string problems = loweredProblems(g);
      QVERIFY2(problems.empty(), (spec.str() + ": " + problems).c_str());
      std::string diff = meaningDiff(f, g, 1e-5, 1);
      QVERIFY2(diff.empty(), (spec.str() + ": " + diff).c_str());
      // And against the preset's own C++ reference.
      auto args = randomArgs(f, 5);
      auto want = randomArgs(f, 5);
      interpret(g, asArgs(args));
      topi::runReference(spec, want);
      for (size_t i = size_t(w.numInputs); i < args.size(); ++i) {
        std::string r = mismatchReport(args[i], want[i], 1e-4, 1e-5);
        QVERIFY2(r.empty(), (spec.str() + ": " + r).c_str());
      }
      ++count;
    }
    QVERIFY(count >= 5);
  }
};

QTEST_APPLESS_MAIN(TestPipeline)
#include "test_pipeline.moc"
