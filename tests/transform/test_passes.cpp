// Each lowering pass on hand-built scheduled programs: structure after the pass, and meaning
// (the reference interpreter gives the same results before and after on random inputs).
#include <QtTest>

#include <set>

#include "core/transform/FlattenBuffers.h"
#include "core/transform/LoopPartition.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/LowerIntrinsics.h"
#include "core/transform/LowerThreadBinding.h"
#include "core/transform/Pass.h"
#include "core/transform/Pipeline.h"
#include "core/transform/RemoveNoOp.h"
#include "core/transform/ShareLoads.h"
#include "core/transform/Simplify.h"
#include "core/transform/StorageRewrite.h"
#include "core/transform/Unroll.h"
#include "core/transform/Vectorize.h"
#include "tests/transform/Meaning.h"
#include "tests/transform/Programs.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {
PrimFunc lowered(const PrimFunc& f) { return flattenBuffers(lowerBlocks(f)); }

bool hasCall(const PrimFunc& f, const std::string& op) {
  bool found = false;
  postOrderVisit(f->body, [&](const IRNode* n) {
    if (auto* c = dynamic_cast<const CallNode*>(n)) found |= c->op == op;
  });
  return found;
}

std::string notes(const PassContext& ctx) {
  std::string s;
  for (auto& d : ctx.diagnostics) s += d.str() + "\n";
  return s;
}
}  // namespace

class TestPasses : public QObject {
  Q_OBJECT
private slots:
  void harnessDetectsDifference() {
    // The meaning check itself must fail on a wrong rewrite (an off-by-one in a store).
    PrimFunc f = lowered(elementwiseSplit(16, 4, ForKind::Serial, ForKind::Serial));
    Var i = makeVar("i");
    PrimFunc wrong = withBody(f, seq({f->body, forLoop(i, 0, 1, ForKind::Serial, bufferStore(f->paramBuffer(1), 0.0f, {i}))}));
    QVERIFY(!meaningDiff(f, wrong).empty());
    QVERIFY(meaningDiff(f, f).empty());
  }

  void lowerBlocksMatmulWithInitAndPredicate() {
    PrimFunc f = matmulSplit(6, 20, 5, 8);
    PrimFunc g = lowerBlocks(f);
    QCOMPARE(countNodes(g, NodeKind::Block), 0);
    QCOMPARE(countNodes(g, NodeKind::BlockRealize), 0);
    QCOMPARE(countNodes(g, NodeKind::IfThenElse), 2);  // the predicate and the init guard
    EXPECT_SAME_MEANING(f, g);
    // Nothing to lower: the same node comes back.
    QVERIFY(lowerBlocks(g).same_as(g));
  }

  void lowerBlocksAllocAndPragma() {
    PrimFunc f = rowSumUnrolled(3, 4, 16);
    PrimFunc g = lowerBlocks(f);
    QCOMPARE(countNodes(g, NodeKind::Allocate), 1);
    QCOMPARE(countNodes(g, NodeKind::DeclBuffer), 1);
    auto* attr = g->body.as<AttrStmtNode>();
    QVERIFY(attr);
    QCOMPARE(QString::fromStdString(attr->key), QString("pragma_auto_unroll_max_step"));
    EXPECT_SAME_MEANING(f, g);
  }

  void lowerBlocksBindsNestedIterVars() {
    // An outer block's iter var used inside an inner block's binding.
    Buffer A = makeBuffer("A", f32, {4, 3}), B = makeBuffer("B", f32, {4, 3});
    Var i = makeVar("i"), j = makeVar("j");
    IterVar vo = spatial("vo", 4), vi = spatial("vi", 3);
    Stmt inner = forLoop(j, 0, 3, ForKind::Serial,
                         blockRealize({Expr(vo.var) * 0 + Expr(j)}, Expr(),
                                      makeBlock("inner", {vi}, bufferStore(B, bufferLoad(A, {vo.var, vi.var}) + 1.0f, {vo.var, vi.var}))));
    Stmt outer = forLoop(i, 0, 4, ForKind::Serial, blockRealize({i}, Expr(), makeBlock("outer", {vo}, inner)));
    PrimFunc f = rootFunc({A, B}, outer);
    PrimFunc g = lowerBlocks(f);
    QCOMPARE(countNodes(g, NodeKind::Block), 0);
    EXPECT_SAME_MEANING(f, g);
  }

  void lowerBlocksOpaqueAndOffsetDomain() {
    // An opaque block (no iter vars) inside a loop, and a reduction whose domain starts at 2:
    // init must run when the reduce value equals 2, not 0.
    Buffer A = makeBuffer("A", f32, {4, 6}), S = makeBuffer("S", f32, {4}), T = makeBuffer("T", f32, {4});
    Var i = makeVar("i"), k = makeVar("k"), j = makeVar("j");
    IterVar vi = spatial("vi", 4);
    IterVar vk(makeVar("vk"), Range(2, 4), IterType::CommReduce);
    Stmt upd = bufferStore(S, bufferLoad(S, {vi.var}) + bufferLoad(A, {vi.var, vk.var}), {vi.var});
    Stmt red = nest({{i, 4}, {k, 4}}, blockRealize({i, Expr(k) + 2}, Expr(),
                                                   makeBlock("S", {vi, vk}, upd, bufferStore(S, makeZero(f32), {vi.var}))));
    Stmt opaque = forLoop(j, 0, 4, ForKind::Serial,
                          blockRealize({}, Expr(), makeBlock("copy", {}, bufferStore(T, bufferLoad(S, {j}) * 2.0f, {j}))));
    PrimFunc f = rootFunc({A, S, T}, seq({red, opaque}));
    PrimFunc g = lowerBlocks(f);
    QCOMPARE(countNodes(g, NodeKind::BlockRealize), 0);
    EXPECT_SAME_MEANING(f, g);
  }

  void badInputIsAUserError() {
    // A block binding the wrong number of values, a buffer with strides for the wrong rank.
    Buffer A = makeBuffer("A", f32, {4});
    Var i = makeVar("i");
    IterVar vi = spatial("vi", 4), vj = spatial("vj", 4);
    PrimFunc f = rootFunc({A}, forLoop(i, 0, 4, ForKind::Serial,
                                       blockRealize({i}, Expr(), makeBlock("A", {vi, vj}, bufferStore(A, 1.0f, {vi.var})))));
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, lowerBlocks(f));
    Buffer S = makeBuffer("S", f32, {2, 3});
    const_cast<BufferNode*>(S.get())->strides = {3};
    PrimFunc g = makePrimFunc("main", {S->data}, {{S->data, S}}, bufferStore(S, 1.0f, {0, 1}));
    try {
      flattenBuffers(g);
      QFAIL("no error");
    } catch (const loom::ValueError& e) {
      QVERIFY(std::string(e.what()).find("'S'") != std::string::npos);
    }
  }

  void loopPartitionNeverHoistsLoads() {
    // N[0] = 5; for i in [0, 10): if (i < N[0]) { N[0] = N[0] - 2; B[i] = 1 }: the bound is
    // written inside the loop, so it must not be read once before it.
    Buffer N = makeBuffer("N", DataType::Int(32), {1}), B = makeBuffer("B", f32, {10});
    Var i = makeVar("i");
    Stmt body = seq({bufferStore(N, 5, {0}),
                     forLoop(i, 0, 10, ForKind::Serial,
                             ifThen(Expr(i) < bufferLoad(N, {0}),
                                    seq({bufferStore(N, bufferLoad(N, {0}) - 2, {0}), bufferStore(B, 1.0f, {i})})))});
    PrimFunc f = makePrimFunc("main", {N->data, B->data}, {{N->data, N}, {B->data, B}}, body);
    PrimFunc g = partitionLoops(f);
    EXPECT_SAME_MEANING(f, g);
    QVERIFY(g.same_as(f));
  }

  void loopPartitionThroughWideningCast() {
    // An int64 index built from int32 loop vars: the condition is read through the casts.
    Buffer A = makeBuffer("A", f32, {20}), B = makeBuffer("B", f32, {20});
    Var io = makeVar("io"), ii = makeVar("ii");
    DataType i64 = DataType::Int(64);
    Expr idx = cast(i64, Expr(io) * 8) + cast(i64, ii);
    Stmt body = forLoop(io, 0, 3, ForKind::Serial,
                        forLoop(ii, 0, 8, ForKind::Serial, ifThen(idx < intImm(i64, 20), bufferStore(B, bufferLoad(A, {idx}) + 1.0f, {idx}))));
    PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    PrimFunc g = partitionLoops(f);
    QVERIFY(!g.same_as(f));
    EXPECT_SAME_MEANING(f, g);
  }

  void flattenBuffers_() {
    PrimFunc f = lowerBlocks(threeStages(3, 5));
    PrimFunc g = flattenBuffers(f);
    QVERIFY(allFlat(g));
    // Params keep their N-d buffers; the body sees flat views.
    QCOMPARE(g->bufferMap[0].second->shape.size(), size_t(2));
    postOrderVisit(g->body, [&](const IRNode* n) {
      if (auto* a = dynamic_cast<const AllocateNode*>(n)) QCOMPARE(a->extents.size(), size_t(1));
    });
    QCOMPARE(countNodes(g, NodeKind::DeclBuffer), 2 + 3);
    EXPECT_SAME_MEANING(f, g);
    QVERIFY(flattenBuffers(g).same_as(g));
  }

  void flattenHonoursStridesAndOffset() {
    PrimFunc g = lowered(stridedCopy(3, 4, 7, 5));
    QVERIFY(allFlat(g));
    // The load of In at (i, j) reads element i*7 + j + 5 of a view of 5 + 2*7 + 3 + 1 elements.
    bool checked = false;
    postOrderVisit(g->body, [&](const IRNode* n) {
      auto* l = dynamic_cast<const BufferLoadNode*>(n);
      if (!l || l->buffer->name != "In") return;
      QCOMPARE(*asConstInt(l->buffer->shape[0]), int64_t(23));
      QVERIFY(isZero(l->buffer->elemOffset));
      Var i, j;
      postOrderVisit(l->indices[0], [&](const IRNode* x) {
        if (auto* v = dynamic_cast<const VarNode*>(x)) (v->name == "i" ? i : j) = Var(v);
      });
      std::string text = printExpr(substitute(l->indices[0], [&](const Var& v) {
        return v.same_as(i) ? Expr(2) : v.same_as(j) ? Expr(3) : Expr();
      }));
      QCOMPARE(QString::fromStdString(text), QString("2 * 7 + 3 + 5"));
      checked = true;
    });
    QVERIFY(checked);
  }

  void loopPartitionPeelsTail() {
    PrimFunc f = lowered(elementwiseSplit(100, 32, ForKind::Serial, ForKind::Serial));
    PrimFunc g = partitionLoops(f);
    // Main loop i_0 in [0, 3) without the if; tail keeps it.
    int loopsWithoutIf = 0, ifs = countNodes(g, NodeKind::IfThenElse);
    postOrderVisit(g->body, [&](const IRNode* n) {
      auto* l = dynamic_cast<const ForNode*>(n);
      if (!l || l->loopVar->name != "i_0") return;
      QVERIFY(isConstInt(l->extent, 3));
      int inner = 0;
      postOrderVisit(l->body, [&](const IRNode* x) { inner += x->nodeKind == NodeKind::IfThenElse; });
      loopsWithoutIf += inner == 0;
    });
    QCOMPARE(loopsWithoutIf, 1);
    QVERIFY(ifs >= 1);
    EXPECT_SAME_MEANING(f, g);
  }

  void loopPartitionKeepsParallelLoopsParallel() {
    // for b in parallel(2): for r in [0, 5): if (1 <= b * 4 + r && b * 4 + r < 9) B[b*4+r] = A[b*4+r-1]
    // (each band pads its rows): band 0 has a head row, band 1 a tail row, so peeling would leave
    // no middle and run both bands one after the other. In place, the loop stays one parallel
    // loop of 2 and each iteration chooses its body.
    Buffer A = makeBuffer("A", f32, {8}), B = makeBuffer("B", f32, {10});
    Var b = makeVar("b"), r = makeVar("r");
    for (int bands : {2, 4}) {
      Expr row2 = Expr(b) * (8 / bands) + Expr(r);
      Stmt body = forLoop(b, 0, bands, ForKind::Parallel,
                          forLoop(r, 0, 8 / bands + 1, ForKind::Serial,
                                  ifThen(Expr(1) <= row2 && row2 < Expr(9), bufferStore(B, bufferLoad(A, {row2 - 1}) + 1.0f, {row2}))));
      PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
      PrimFunc g = partitionLoops(f);
      QVERIFY(!g.same_as(f));
      EXPECT_SAME_MEANING(f, g);
      int parallelLoops = 0;
      postOrderVisit(g->body, [&](const IRNode* n) {
        auto* l = dynamic_cast<const ForNode*>(n);
        if (!l || l->kind != ForKind::Parallel) return;
        ++parallelLoops;
        QVERIFY(isConstInt(l->min, 0));
        QVERIFY(isConstInt(l->extent, bands));
      });
      QCOMPARE(parallelLoops, 1);
      // The middle bands (4 bands: 1 and 2) run without a row condition.
      if (bands == 4) {
        auto* loop = g->body.as<ForNode>();
        QVERIFY(loop);
        auto* choice = loop->body.as<IfThenElseNode>();
        QVERIFY2(choice, printFunc(g).c_str());
        int conditions = 0;
        postOrderVisit(choice->thenCase, [&](const IRNode* n) { conditions += n->nodeKind == NodeKind::IfThenElse; });
        QCOMPARE(conditions, 0);
      }
    }
  }

  void loopPartitionMatmulVectorTail() {
    PrimFunc f = lowered(matmulSplit(3, 20, 4, 8, ForKind::Vectorized));
    PrimFunc g = partitionLoops(f);
    QVERIFY(!g.same_as(f));
    EXPECT_SAME_MEANING(f, g);
    // Divisible: nothing to peel.
    PrimFunc d = lowered(matmulSplit(3, 16, 4, 8));
    PrimFunc e = partitionLoops(d);
    EXPECT_SAME_MEANING(d, e);
  }

  void loopPartitionSymbolicBound() {
    // for i in [0, 10): for j in [0, 4): if (i * 4 + j < n) B[i*4+j] = ... with n a param.
    Var n = makeVar("n");
    Buffer A = makeBuffer("A", f32, {40}), B = makeBuffer("B", f32, {40});
    Var i = makeVar("i"), j = makeVar("j");
    Expr idx = Expr(i) * 4 + Expr(j);
    Stmt body = forLoop(i, 0, 10, ForKind::Serial,
                        forLoop(j, 0, 4, ForKind::Serial, ifThen(idx < Expr(n), bufferStore(B, bufferLoad(A, {idx}) + 1.0f, {idx}))));
    PrimFunc f = makePrimFunc("main", {A->data, B->data, n}, {{A->data, A}, {B->data, B}}, body);
    PrimFunc g = partitionLoops(f);
    QVERIFY(!g.same_as(f));
    for (int64_t nv : {0, 13, 16, 40}) {
      auto a = randomArgs(PrimFunc(makePrimFunc("x", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body)), 3);
      auto b = randomArgs(PrimFunc(makePrimFunc("x", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body)), 3);
      interpret(f, {a[0], a[1], nv});
      interpret(g, {b[0], b[1], nv});
      QVERIFY2(mismatchReport(b[1], a[1]).empty(), printFunc(g).c_str());
    }
  }

  void simplifyResolvesPartitionedTails() {
    PrimFunc f = partitionLoops(lowered(matmulSplit(3, 20, 4, 8, ForKind::Vectorized)));
    QVERIFY(countNodes(f, NodeKind::IfThenElse) > 0);
    PrimFunc g = simplifyFunc(f);
    // The tail's split point folds to a constant and its dead part (no j satisfies j < 20) goes.
    QCOMPARE(countNodes(g, NodeKind::LetStmt), 0);
    int predicateIfs = 0;
    postOrderVisit(g->body, [&](const IRNode* n) {
      if (auto* i = dynamic_cast<const IfThenElseNode*>(n)) predicateIfs += printExpr(i->condition).find("20") != std::string::npos;
    });
    QCOMPARE(predicateIfs, 0);
    EXPECT_SAME_MEANING(f, g);
    QVERIFY(simplifyFunc(g).same_as(g));
  }

  void simplifyWithReusedLoopVar() {
    // One Var bound by two sequential loops with different ranges (as partition and unroll
    // produce): each if must be decided under its own loop's range.
    Buffer A = makeBuffer("A", f32, {8});
    Var i = makeVar("i");
    Stmt first = forLoop(i, 0, 4, ForKind::Serial, ifThen(Expr(i) < 4, bufferStore(A, 1.0f, {i}), bufferStore(A, 5.0f, {i})));
    Stmt second = forLoop(i, 4, 4, ForKind::Serial, ifThen(Expr(i) < 4, bufferStore(A, 2.0f, {i}), bufferStore(A, 3.0f, {i})));
    Stmt third = forLoop(i, 2, 1, ForKind::Serial, bufferStore(A, bufferLoad(A, {i}) + 1.0f, {i}));
    Stmt fourth = forLoop(i, 6, 2, ForKind::Serial, ifThen(eq(i, 2), bufferStore(A, 7.0f, {i})));
    PrimFunc f = makePrimFunc("main", {A->data}, {{A->data, A}}, seq({first, second, third, fourth}));
    PrimFunc g = simplifyFunc(f);
    QCOMPARE(countNodes(g, NodeKind::IfThenElse), 0);
    EXPECT_SAME_MEANING(f, g);
  }

  void simplifyKeepsConditionsOnMemory() {
    // if (A[0] > 0) { A[0] = -1; if (A[0] > 0) B[0] = 7 }: the inner test reads the new A[0].
    Buffer A = makeBuffer("A", f32, {1}), B = makeBuffer("B", f32, {1});
    Expr cond = bufferLoad(A, {0}) > 0.0f;
    Stmt inner = ifThen(cond, bufferStore(B, 7.0f, {0}));
    Stmt body = seq({bufferStore(A, 1.0f, {0}), ifThen(cond, seq({bufferStore(A, -1.0f, {0}), inner}))});
    PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    PrimFunc g = simplifyFunc(f);
    QCOMPARE(countNodes(g, NodeKind::IfThenElse), 2);
    EXPECT_SAME_MEANING(f, g);
  }

  void simplifyLeavesHugeUnrolledValuesOfSymbolicKernelsToUnroll() {
    // B[i] = A[(i + 0 + k) % 64] summed over 700 k (4.9 thousand nodes) under `for i in
    // T.unroll(4)`: in a kernel with a shape symbol (a scalar param) the value waits for the
    // simplify after unroll (a dynamic Winograd transform spent 2 s per kernel on it before);
    // in a serial loop, or in a kernel without symbols, it is simplified as always. The whole
    // pipeline still computes what the program says.
    auto build = [](bool symbolic, ForKind kind) {
      Buffer A = makeBuffer("A", f32, {64}), B = makeBuffer("B", f32, {64});
      Var i = makeVar("i"), n = makeVar("n");
      Expr sum;
      for (int64_t k = 0; k < 700; ++k) {
        Expr term = bufferLoad(A, {floormod(Expr(i) + 0 + k, 64)});
        sum = sum.defined() ? sum + term : term;
      }
      Stmt body = forLoop(i, 0, 4, kind, bufferStore(B, sum, {Expr(i) + n * 0}));
      std::vector<Var> params{A->data, B->data};
      if (symbolic) params.push_back(n);
      return makePrimFunc("main", params, {{A->data, A}, {B->data, B}}, body);
    };
    auto storedValue = [](const PrimFunc& f) {
      Expr v;
      postOrderVisit(f->body, [&](const IRNode* x) {
        if (auto* st = dynamic_cast<const BufferStoreNode*>(x)) v = st->value;
      });
      return v;
    };
    PrimFunc f = build(true, ForKind::Unrolled);
    PrimFunc g = simplifyFunc(f);
    QVERIFY(storedValue(g).same_as(storedValue(f)));
    QVERIFY(!g.same_as(f));  // the index (n * 0) is simplified all the same
    PrimFunc serial = build(true, ForKind::Serial);
    QVERIFY(!storedValue(simplifyFunc(serial)).same_as(storedValue(serial)));
    PrimFunc fixed = build(false, ForKind::Unrolled);
    QVERIFY(!storedValue(simplifyFunc(fixed)).same_as(storedValue(fixed)));
    // Lowered whole against the program, with the symbol at 3.
    PassContext ctx;
    PrimFunc low = lower(f, ctx);
    runtime::DType dt{2, 32, 1};
    std::vector<runtime::NDArray> want, got;
    for (auto* out : {&want, &got}) {
      for (uint64_t b = 0; b < 2; ++b) {
        out->push_back(runtime::NDArray::empty({64}, dt));
        fillRandom(out->back(), 5 + b);
      }
    }
    interpret(f, {want[0], want[1], int64_t(3)});
    interpret(low, {got[0], got[1], int64_t(3)});
    QVERIFY2(mismatchReport(got[1], want[1], 1e-5, 1e-5).empty(), qPrintable(QString::fromStdString(printFunc(low))));
  }

  void vectorizeDivisible() {
    PrimFunc f = lowered(elementwiseSplit(64, 8, ForKind::Serial, ForKind::Vectorized));
    PassContext ctx;
    PrimFunc g = vectorizeLoops(f, ctx);
    QVERIFY2(ctx.diagnostics.empty(), notes(ctx).c_str());
    QCOMPARE(countLoops(g, ForKind::Vectorized), 0);
    QVERIFY(countNodes(g, NodeKind::Ramp) >= 1);
    EXPECT_SAME_MEANING(f, g);
  }

  void vectorizeMatmulInner() {
    PrimFunc f = lowered(matmulSplit(3, 16, 5, 8, ForKind::Vectorized));
    PassContext ctx;
    PrimFunc g = vectorizeLoops(f, ctx);
    QVERIFY2(ctx.diagnostics.empty(), notes(ctx).c_str());
    QCOMPARE(countLoops(g, ForKind::Vectorized), 0);
    EXPECT_SAME_MEANING(f, g);
  }

  void vectorizeMasksALaneCondition() {
    // 100 = 12 x 8 + 4: the guard `i_0 * 8 + i_1 < 100` depends on the lane, so the store and
    // the load of A become masked (a vector if, a lane-guarded load): the interpreter's bounds
    // check fails on lanes 100..103 of the last vector if the load is not masked.
    PrimFunc f = lowered(elementwiseSplit(100, 8, ForKind::Serial, ForKind::Vectorized));
    PassContext ctx;
    PrimFunc g = vectorizeLoops(f, ctx);
    QVERIFY2(ctx.diagnostics.empty(), notes(ctx).c_str());
    QCOMPARE(countLoops(g, ForKind::Vectorized), 0);
    QCOMPARE(countLoops(g, ForKind::Serial), 1);
    const std::string text = printFunc(g);
    QVERIFY2(text.find("T.if_then_else") != std::string::npos, text.c_str());
    EXPECT_SAME_MEANING(f, g);
  }

  void vectorizeFallsBackOnLaneConditionWithElse() {
    // An else branch under a lane-dependent condition has no masked form: serial, with a note.
    Buffer A = makeBuffer("A", f32, {16});
    Var i = makeVar("i");
    Stmt body = ifThen(Expr(i) < 5, bufferStore(A, 1.0f, {i}), bufferStore(A, 2.0f, {i}));
    PrimFunc f = makePrimFunc("main", {A->data}, {{A->data, A}}, forLoop(i, 0, 16, ForKind::Vectorized, body));
    PassContext ctx;
    PrimFunc g = vectorizeLoops(f, ctx);
    QCOMPARE(ctx.diagnostics.size(), size_t(1));
    QVERIFY(ctx.diagnostics[0].message.find("else") != std::string::npos);
    QCOMPARE(countLoops(g, ForKind::Serial), 1);
    EXPECT_SAME_MEANING(f, g);
  }

  void vectorizeFallsBackOnReduction() {
    // Vectorizing the reduction loop: every lane would store to S[i].
    Buffer A = makeBuffer("A", f32, {3, 8}), S = makeBuffer("S", f32, {3});
    Var i = makeVar("i"), k = makeVar("k");
    IterVar vi = spatial("vi", 3), vk = reduce("vk", 8);
    Stmt upd = bufferStore(S, bufferLoad(S, {vi.var}) + bufferLoad(A, {vi.var, vk.var}), {vi.var});
    PrimFunc f = lowered(rootFunc({A, S}, nest({{i, 3}, {k, 8, ForKind::Vectorized}},
                                               blockRealize({i, k}, Expr(), makeBlock("S", {vi, vk}, upd, bufferStore(S, makeZero(f32), {vi.var}))))));
    PassContext ctx;
    PrimFunc g = vectorizeLoops(f, ctx);
    QCOMPARE(ctx.diagnostics.size(), size_t(1));
    QCOMPARE(countLoops(g, ForKind::Vectorized), 0);
    EXPECT_SAME_MEANING(f, g);
  }

  void vectorizeFallsBackOnLaneDependence() {
    // B[i + 1] = B[i] + A[i]: lane i reads lane i-1's result in serial order.
    Buffer A = makeBuffer("A", f32, {9}), B = makeBuffer("B", f32, {9});
    Var i = makeVar("i");
    Stmt body = forLoop(i, 0, 8, ForKind::Vectorized,
                        bufferStore(B, bufferLoad(B, {i}) + bufferLoad(A, {i}), {Expr(i) + 1}));
    PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    PassContext ctx;
    PrimFunc g = vectorizeLoops(f, ctx);
    QCOMPARE(ctx.diagnostics.size(), size_t(1));
    QVERIFY(ctx.diagnostics[0].message.find("each other") != std::string::npos);
    EXPECT_SAME_MEANING(f, g);
  }

  void vectorizeFallsBackOnInvariantLoadOfStoredBuffer() {
    // B[i] = A[i] + B[0]: in serial order lanes 1.. read the B[0] lane 0 just wrote.
    Buffer A = makeBuffer("A", f32, {8}), B = makeBuffer("B", f32, {8});
    Var i = makeVar("i");
    for (Expr at : {Expr(0), Expr(3)}) {
      Stmt body = forLoop(i, 0, 8, ForKind::Vectorized, bufferStore(B, bufferLoad(A, {i}) + bufferLoad(B, {at}), {i}));
      PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
      PassContext ctx;
      PrimFunc g = vectorizeLoops(f, ctx);
      QCOMPARE(ctx.diagnostics.size(), size_t(1));
      EXPECT_SAME_MEANING(f, g);
    }
  }

  void unrollExplicit() {
    PrimFunc f = lowered(rowSumUnrolled(3, 5, 0));
    PassContext ctx;
    PrimFunc g = unrollLoops(f, ctx);
    QCOMPARE(countLoops(g, ForKind::Unrolled), 0);
    QCOMPARE(countLoops(g, ForKind::Serial), 2);  // i and i2 stay loops
    QCOMPARE(countNodes(g, NodeKind::BufferStore), 5 * 2 + 1);  // init and update per copy
    EXPECT_SAME_MEANING(f, g);
  }

  void unrollAuto() {
    PrimFunc f = lowered(rowSumUnrolled(3, 5, 16));
    PassContext ctx;
    PrimFunc g = unrollLoops(f, ctx);
    QCOMPARE(countNodes(g, NodeKind::AttrStmt), 0);
    // i2 (3 steps) is unrolled under the 16-step budget; i (3 * 7 steps) is not.
    QCOMPARE(countLoops(g, ForKind::Serial), 1);
    QCOMPARE(countNodes(g, NodeKind::BufferStore), 5 * 2 + 3);
    EXPECT_SAME_MEANING(f, g);
  }

  void unrollCopiesBindTheirOwnVars() {
    // Unrolling a loop around a loop and a let: each copy gets its own loop and let vars.
    Buffer A = makeBuffer("A", f32, {3, 4});
    Var i = makeVar("i"), j = makeVar("j"), t = makeVar("t");
    Stmt inner = forLoop(j, 0, 4, ForKind::Serial, letStmt(t, Expr(i) * 4 + Expr(j), bufferStore(A, cast(f32, Expr(t)), {i, j})));
    PrimFunc f = makePrimFunc("main", {A->data}, {{A->data, A}}, forLoop(i, 0, 3, ForKind::Unrolled, inner));
    PassContext ctx;
    PrimFunc g = unrollLoops(f, ctx);
    std::set<const VarNode*> loopVars, letVars;
    postOrderVisit(g->body, [&](const IRNode* n) {
      if (auto* l = dynamic_cast<const ForNode*>(n)) loopVars.insert(l->loopVar.get());
      if (auto* l = dynamic_cast<const LetStmtNode*>(n)) letVars.insert(l->var.get());
    });
    QCOMPARE(loopVars.size(), size_t(3));
    QCOMPARE(letVars.size(), size_t(3));
    EXPECT_SAME_MEANING(f, g);
  }

  void unrollFoldsSelectsOnTheLoopVariables() {
    // A[x, y] = select(x == 0 && y == 0, B[0] * 2, select(x == 1 && y == 0, B[1] + B[2],
    // if_then_else(y == 1, B[x + 3], B[7]))) over unrolled x and y: each copy keeps only the
    // branch its constants pick (the dropped sums never reach the simplifier), same results.
    Buffer A = makeBuffer("A", f32, {2, 2}), B = makeBuffer("B", f32, {8});
    Var x = makeVar("x"), y = makeVar("y");
    Expr z = Expr(0);
    Expr v = select(eq(Expr(x), z) && eq(Expr(y), z), bufferLoad(B, {Expr(0)}) * 2.0f,
                    select(eq(Expr(x), Expr(1)) && eq(Expr(y), z), bufferLoad(B, {Expr(1)}) + bufferLoad(B, {Expr(2)}),
                           call(f32, "if_then_else", {eq(Expr(y), Expr(1)), bufferLoad(B, {Expr(x) + 3}), bufferLoad(B, {Expr(7)})})));
    Stmt body = forLoop(x, 0, 2, ForKind::Unrolled, forLoop(y, 0, 2, ForKind::Unrolled, bufferStore(A, v, {x, y})));
    PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, body);
    PassContext ctx;
    PrimFunc g = unrollLoops(f, ctx);
    QCOMPARE(countNodes(g, NodeKind::BufferStore), 4);
    QCOMPARE(countNodes(g, NodeKind::Select), 0);
    QCOMPARE(countNodes(g, NodeKind::Call), 0);
    QCOMPARE(countNodes(g, NodeKind::BufferLoad), 1 + 2 + 1 + 1);
    EXPECT_SAME_MEANING(f, g);
    // A condition on something else stays a select (of the picked branches only).
    Expr w = select(eq(Expr(y), z) && bufferLoad(B, {Expr(5)}) > 0.0f, bufferLoad(B, {Expr(0)}), bufferLoad(B, {Expr(1)}));
    PrimFunc h = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}},
                              forLoop(y, 0, 2, ForKind::Unrolled, bufferStore(A, w, {Expr(0), y})));
    PrimFunc k = unrollLoops(h, ctx);
    QCOMPARE(countNodes(k, NodeKind::Select), 1);  // y == 0 keeps it, y == 1 takes B[1]
    EXPECT_SAME_MEANING(h, k);
  }

  void shareLoadsLoadsEachPositionOnce() {
    // Three stores of an unrolled block read B[i] (padded: select(i < 3, B[i], 0)) and B[i + 1]
    // several times; A is written, so A[0] is never shared. Each shared read becomes one let.
    Buffer A = makeBuffer("A", f32, {4, 3}), B = makeBuffer("B", f32, {5});
    Var i = makeVar("i");
    Expr pad = select(Expr(i) < 3, bufferLoad(B, {Expr(i)}), Expr(0.0f));
    Expr next = bufferLoad(B, {Expr(i) + 1}), a0 = bufferLoad(A, {Expr(0), Expr(0)});
    Stmt block = seq({bufferStore(A, pad + next, {Expr(i), Expr(0)}), bufferStore(A, pad * next + a0, {Expr(i), Expr(1)}),
                      bufferStore(A, pad - a0, {Expr(i), Expr(2)})});
    PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, forLoop(i, 0, 4, ForKind::Serial, block));
    PrimFunc g = shareLoads(f);
    QCOMPARE(countNodes(g, NodeKind::LetStmt), 2);
    QCOMPARE(countNodes(g, NodeKind::Select), 1);
    QCOMPARE(countNodes(g, NodeKind::BufferLoad), 2 + 2);  // B[i], B[i + 1] once; A[0] twice
    EXPECT_SAME_MEANING(f, g);
    // A block with something other than stores (a loop) is left alone; so is a single read.
    Var j = makeVar("j");
    PrimFunc h = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}},
                              seq({bufferStore(A, bufferLoad(B, {Expr(1)}) + bufferLoad(B, {Expr(1)}), {Expr(0), Expr(0)}),
                                   forLoop(j, 0, 2, ForKind::Serial, bufferStore(A, bufferLoad(B, {Expr(2)}), {Expr(1), Expr(j)}))}));
    QVERIFY(shareLoads(h).same_as(h));
    // In the lowering pipeline only kernels with a symbolic shape share loads: a static one is
    // left as it is (its Winograd kernels ran slower with the lets), a symbolic one is not.
    QVERIFY(shareLoadsOfSymbolicKernels(f).same_as(f));
    Var n = makeVar("n");
    Buffer Bs = makeBuffer("B", f32, {Expr(n)});
    Expr padS = select(Expr(i) < 3, bufferLoad(Bs, {Expr(i)}), Expr(0.0f));
    Expr nextS = bufferLoad(Bs, {Expr(i) + 1});
    Stmt blockS = seq({bufferStore(A, padS + nextS, {Expr(i), Expr(0)}), bufferStore(A, padS * nextS + a0, {Expr(i), Expr(1)}),
                       bufferStore(A, padS - a0, {Expr(i), Expr(2)})});
    PrimFunc fs = makePrimFunc("main", {A->data, Bs->data}, {{A->data, A}, {Bs->data, Bs}}, forLoop(i, 0, 4, ForKind::Serial, blockS));
    QCOMPARE(countNodes(shareLoadsOfSymbolicKernels(fs), NodeKind::LetStmt), 2);
  }

  void shareLoadsKeepsLoadsOfDifferentBuffersApart() {
    // Regression (the dyn21 merge's 11 failing suites, e.g. a skip layer norm's x + skip): B[i]
    // and C[i] of two same-shaped buffers are structurally equal (a buffer met at a use is
    // defined there), and the pass shared one let for both, so every C[i] read B[i].
    Buffer A = makeBuffer("A", f32, {4, 2}), B = makeBuffer("B", f32, {4}), C = makeBuffer("C", f32, {4});
    Var i = makeVar("i");
    Expr b = bufferLoad(B, {Expr(i)}), c = bufferLoad(C, {Expr(i)});
    Stmt block = seq({bufferStore(A, b + c, {Expr(i), Expr(0)}), bufferStore(A, b * c, {Expr(i), Expr(1)})});
    PrimFunc f = makePrimFunc("main", {A->data, B->data, C->data}, {{A->data, A}, {B->data, B}, {C->data, C}},
                              forLoop(i, 0, 4, ForKind::Serial, block));
    PrimFunc g = shareLoads(f);
    QCOMPARE(countNodes(g, NodeKind::LetStmt), 2);  // one for B[i], one for C[i]
    QCOMPARE(countNodes(g, NodeKind::BufferLoad), 2);
    EXPECT_SAME_MEANING(f, g);
  }

  void shareLoadsLeavesGuardedLoadsInPlace() {
    // Regression: a load in an if_then_else branch runs only when its condition holds (here
    // B[i - 1] is out of bounds at i = 0); sharing it would load it unconditionally.
    Buffer A = makeBuffer("A", f32, {4, 2}), B = makeBuffer("B", f32, {4});
    Var i = makeVar("i");
    Expr prev = bufferLoad(B, {Expr(i) - 1});
    auto guarded = [&](float other) { return call(f32, "if_then_else", {Expr(i) > 0, prev, floatImm(f32, other)}); };
    Stmt block = seq({bufferStore(A, guarded(0.0f), {Expr(i), Expr(0)}), bufferStore(A, guarded(1.0f), {Expr(i), Expr(1)})});
    PrimFunc f = makePrimFunc("main", {A->data, B->data}, {{A->data, A}, {B->data, B}}, forLoop(i, 0, 4, ForKind::Serial, block));
    PrimFunc g = shareLoads(f);
    QCOMPARE(countNodes(g, NodeKind::LetStmt), 0);
    EXPECT_SAME_MEANING(f, g);
  }

  void unrollSymbolicExtentNotes() {
    Var n = makeVar("n");
    Buffer A = makeBuffer("A", f32, {8});
    Var i = makeVar("i");
    PrimFunc f = makePrimFunc("main", {A->data, n}, {{A->data, A}},
                              forLoop(i, 0, n, ForKind::Unrolled, bufferStore(A, bufferLoad(A, {i}) + 1.0f, {i})));
    PassContext ctx;
    PrimFunc g = unrollLoops(f, ctx);
    QCOMPARE(countLoops(g, ForKind::Unrolled), 0);
    QCOMPARE(countLoops(g, ForKind::Serial), 1);
    QCOMPARE(ctx.diagnostics.size(), size_t(1));
    QVERIFY(ctx.diagnostics[0].message.find("loop i not unrolled") != std::string::npos);
  }

  void storageRewriteMergesDisjointLifetimes() {
    PrimFunc f = lowered(threeStages(3, 4));
    QCOMPARE(countNodes(f, NodeKind::Allocate), 3);
    PrimFunc g = rewriteStorage(f);
    QCOMPARE(countNodes(g, NodeKind::Allocate), 2);
    EXPECT_SAME_MEANING(f, g);
    QVERIFY(rewriteStorage(g).same_as(g));
  }

  void lowerIntrinsics_() {
    PrimFunc f = lowered(intrinsicsProgram(16));
    PrimFunc g = lowerIntrinsics(f);
    for (const char* op : {"rsqrt", "fmod", "pow"}) QVERIFY2(!hasCall(g, op), op);
    QVERIFY(hasCall(g, "sigmoid"));  // kept: codegen has a fast vector form
    QVERIFY(hasCall(g, "sqrt"));
    QVERIFY(hasCall(g, "fabs"));  // on floats it stays
    EXPECT_SAME_MEANING(f, g);
  }

  void removeNoOps_() {
    Buffer A = makeBuffer("A", f32, {4});
    Var i = makeVar("i"), j = makeVar("j"), t = makeVar("t");
    Stmt real = forLoop(i, 0, 4, ForKind::Serial, bufferStore(A, bufferLoad(A, {i}) * 3.0f, {i}));
    Stmt body = seq({forLoop(j, 0, 0, ForKind::Serial, bufferStore(A, 1.0f, {j})), ifThen(boolImm(false), bufferStore(A, 2.0f, {0})),
                     evaluate(0), bufferStore(A, bufferLoad(A, {1}), {1}), letStmt(t, 5, real)});
    PrimFunc f = makePrimFunc("main", {A->data}, {{A->data, A}}, body);
    PrimFunc g = removeNoOps(f);
    QVERIFY2(g->body.same_as(real), printFunc(g).c_str());
    EXPECT_SAME_MEANING(f, g);
    QVERIFY(removeNoOps(g).same_as(g));
  }

  void lowerThreadBinding_() {
    PrimFunc f = lowerBlocks(elementwiseSplit(64, 16, ForKind::ThreadBinding, ForKind::ThreadBinding, "blockIdx.x", "threadIdx.x"));
    PrimFunc g = lowerThreadBinding(f);
    QCOMPARE(countLoops(g, ForKind::ThreadBinding), 0);
    std::vector<std::string> tags;
    postOrderVisit(g->body, [&](const IRNode* n) {
      if (auto* a = dynamic_cast<const AttrStmtNode*>(n)) {
        QCOMPARE(QString::fromStdString(a->key), QString("thread_extent"));
        tags.push_back(a->node.as<VarNode>()->name);
      }
    });
    QCOMPARE(tags, (std::vector<std::string>{"threadIdx.x", "blockIdx.x"}));
    // A loop without a tag is a user error, named.
    Buffer A = makeBuffer("A", f32, {4});
    Var i = makeVar("i");
    PrimFunc bad = makePrimFunc("main", {A->data}, {{A->data, A}}, forLoop(i, 0, 4, ForKind::ThreadBinding, bufferStore(A, 1.0f, {i})));
    QVERIFY_THROWS_EXCEPTION(loom::ValueError, lowerThreadBinding(bad));
  }
};

QTEST_APPLESS_MAIN(TestPasses)
#include "test_passes.moc"
