// The schedule state: replacement with path copying, RV following, tree queries, affine bindings.
#include "ScheduleTestUtil.h"
#include "core/schedule/Analysis.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

class TestState : public QObject {
  Q_OBJECT
private slots:
  void replaceCopiesPathAndSharesTheRest() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3");
    Schedule sch(f);
    BlockRV conv = getBlock(sch, "conv2d_nchw");
    BlockRV pad = getBlock(sch, "pad_temp");
    BlockRV root = getBlock(sch, "root");
    auto padLoops = getLoops(sch, pad);
    const BlockNode* padBlock = sch.get(pad);
    const ForNode* padOuter = sch.get(padLoops[0]);
    auto convLoops = getLoops(sch, conv);
    const ForNode* inner = sch.get(convLoops[6]);
    // Replace the innermost conv loop by a copy marked unrolled.
    auto* n = new ForNode(*inner);
    n->kind = ForKind::Unrolled;
    sch.replace(inner, Stmt(n), {{inner, n}});
    QVERIFY(sch.get(convLoops[6]) == n);
    // Ancestors were copied and their RVs follow; the other nest is shared untouched.
    QVERIFY(sch.get(convLoops[0]) != nullptr && sch.contains(sch.get(convLoops[0])));
    QVERIFY(sch.get(root) != nullptr && sch.contains(sch.get(root)));
    QVERIFY(sch.get(pad) == padBlock);
    QVERIFY(sch.get(padLoops[0]) == padOuter);
    QVERIFY(!structuralEqual(f, sch.func()));
    QVERIFY(structuralEqual(f, sch.original()));
    // Parent relations of the new tree.
    QVERIFY(sch.parentOf(n) == sch.get(convLoops[5]));
    QVERIFY(sch.realizeOf(sch.get(conv)) != nullptr);
    QVERIFY(sch.parentOf(sch.get(root)) != nullptr); // the root block's realize
    QCOMPARE(QString::fromStdString(printFunc(sch.func())).count("T.unroll(3)"), 1);
  }
  void removingAStatementDropsEmptyLoops() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3");
    Schedule sch(f);
    BlockRV conv = getBlock(sch, "conv2d_nchw");
    auto loops = getLoops(sch, conv);
    sch.replace(sch.realizeOf(sch.get(conv)), Stmt());
    sch.record("get_block", {Value("x"), Value("main")}, {}); // settles RVs (any kind will do)
    QVERIFY(!sch.isValid(Value(conv)));
    QVERIFY(!sch.isValid(Value(loops[0])));
    QCOMPARE(QString::fromStdString(sch.describe(Value(loops[0]))), QString("loop 'nn'"));
    try {
      sch.get(conv);
      QFAIL("no error");
    } catch (const InvalidRVError& e) {
      QCOMPARE(QString(e.what()),
               QString("block 'conv2d_nchw' was removed by get_block (instruction 3)"));
    }
    QCOMPARE(allBlocks(sch.func()).size(), size_t(2)); // root and pad_temp
  }
  void rvsRecoverByLoopVarAndBlockName() {
    // A primitive that rebuilds nodes without a follow map: RVs find them by var / name.
    Schedule sch(workload("matmul:M=8,N=8,K=8"));
    BlockRV b = getBlock(sch, "C");
    auto loops = getLoops(sch, b);
    const ForNode* i = sch.get(loops[0]);
    auto* n = new ForNode(*i);
    n->body = forLoop(static_cast<const ForNode*>(i->body.get())->loopVar, 0, 8, ForKind::Serial,
                      static_cast<const ForNode*>(i->body.get())->body);
    sch.replace(i, Stmt(n));
    sch.record("get_block", {Value("C"), Value("main")}, {});
    QVERIFY(sch.get(loops[0]) == n);
    QVERIFY(sch.get(loops[1]) == n->body.get());
    QVERIFY(sch.contains(sch.get(b)));
  }
  void silentPrimitivesDoNotRecord() {
    Schedule sch(workload("matmul:M=8,N=8,K=8"));
    BlockRV b = getBlock(sch, "C");
    {
      Schedule::Silent guard(sch);
      auto loops = getLoops(sch, b);
      split(sch, loops[0], {nullptr, 2});
    }
    QCOMPARE(sch.trace().insts.size(), size_t(1));
    QCOMPARE(getLoops(sch, b).size(), size_t(4));
    QCOMPARE(sch.trace().insts.size(), size_t(2));
  }
  void foreignAndWrongKindRVs() {
    Schedule sch(workload("matmul:M=8,N=8,K=8"));
    QVERIFY_THROWS_EXCEPTION(InvalidRVError, sch.get(LoopRV{0}));
    BlockRV b = getBlock(sch, "C");
    QVERIFY_THROWS_EXCEPTION(InvalidRVError, sch.get(LoopRV{b.id}));
    QVERIFY_THROWS_EXCEPTION(InvalidRVError, sch.get(BlockRV{42}));
    QVERIFY(!sch.isValid(Value(5)));
  }
  void affineBindings() {
    Var i = makeVar("i"), j = makeVar("j"), k = makeVar("k");
    auto check = [&](std::vector<Expr> values) {
      std::vector<Stmt> loops;
      Stmt s = blockRealize(values, Expr(), Block(new BlockNode()));
      Stmt kk = forLoop(k, 0, 4, ForKind::Serial, s);
      Stmt jj = forLoop(j, 0, 4, ForKind::Serial, kk);
      Stmt ii = forLoop(i, 0, 4, ForKind::Serial, jj);
      std::vector<const ForNode*> ls{ii.as<ForNode>(), jj.as<ForNode>(), kk.as<ForNode>()};
      return isAffineBinding(static_cast<const BlockRealizeNode*>(s.get()), ls);
    };
    QVERIFY(check({i, j * 4 + k}));
    QVERIFY(check({floordiv(Expr(i) * 16 + j * 4 + k, 8), floormod(Expr(i) * 16 + j * 4 + k, 8)}));
    QVERIFY(check({Expr(i) + 1, 2 * Expr(j)}));
    QVERIFY(!check({Expr(i) * j}));
    QVERIFY(!check({i, i}));
    QVERIFY(!check({floordiv(i, j)}));
    QVERIFY(!check({Expr(makeVar("other"))}));
    QVERIFY(!check({select(Expr(i) < 2, i, j)}));
  }
  void treeQueries() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3");
    Schedule sch(f);
    BlockRV conv = getBlock(sch, "conv2d_nchw");
    const BlockNode* c = sch.get(conv);
    auto loops = loopsAbove(sch, c);
    QCOMPARE(loops.size(), size_t(7));
    QVERIFY(isAncestor(sch, loops[0], loops[6]));
    QVERIFY(!isAncestor(sch, loops[6], loops[0]));
    QVERIFY(isAncestor(sch, loops[2], c));
    QCOMPARE(QString::fromStdString(enclosingBlock(sch, c)->name), QString("root"));
    QVERIFY(enclosingBlock(sch, enclosingBlock(sch, c)) == nullptr);
    QVERIFY(onlyChildLoop(loops[0]) == loops[1]);
    QVERIFY(onlyChildLoop(loops[6]) == nullptr);
    QCOMPARE(realizesUnder(f->body.get()).size(), size_t(3));
    const BlockRealizeNode* r = sch.realizeOf(c);
    const IterVar* bad =
        iterVarUsingVarOfOtherType(r, loops[4]->loopVar.get(), {IterType::DataPar});
    QVERIFY(bad && bad->iterType == IterType::CommReduce);
    QVERIFY(iterVarUsingVarOfOtherType(r, loops[1]->loopVar.get(), {IterType::DataPar}) == nullptr);
    QCOMPARE(readBuffers(c).size(), size_t(2));
    QCOMPARE(writeBuffers(c).size(), size_t(1));
  }
  void constantFolding() {
    Var x = makeVar("x");
    QCOMPARE(*constIntValue(Expr(3) * 4 + floordiv(Expr(-7), 2)), int64_t(8));
    QCOMPARE(*constIntValue(floormod(Expr(-7), 3)), int64_t(2));
    QVERIFY(foldConstants(Expr(x) * 1 + 0).same_as(x));
    QVERIFY(isZero(foldConstants(Expr(x) * 0)));
    QVERIFY(!constIntValue(Expr(x) + 1));
    QVERIFY(!constIntValue(floordiv(Expr(1), 0)));
  }
  void checkerCatchesAChangedMeaning() {
    // The equivalence harness itself: a wrong binding (v_k always 0) must show up.
    PrimFunc f = workload("matmul:M=8,N=8,K=8");
    Schedule sch(f);
    const BlockNode* b = sch.get(getBlock(sch, "C"));
    const BlockRealizeNode* r = sch.realizeOf(b);
    Stmt swapped =
        blockRealize({r->iterValues[0], r->iterValues[1], Expr(0)}, r->predicate, r->block);
    sch.replace(r, swapped);
    QVERIFY(maxErrorBetween(f, sch.func()) > 1e-3);
  }
};

QTEST_APPLESS_MAIN(TestState)
#include "test_state.moc"
