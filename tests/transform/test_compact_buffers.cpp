// compact-buffers: cache buffers sink to the loop around their uses and shrink to one iteration's
// region; the meaning is checked by the interpreter on random inputs before and after.
#include <QtTest>

#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/topi/Workloads.h"
#include "core/transform/CompactBuffers.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/Pipeline.h"
#include "tests/transform/Meaning.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {

PrimFunc scheduled(const std::string& spec, const std::string& script) {
  PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec(spec));
  Schedule sch(f);
  ScriptResult r = runScript(sch, script);
  if (!r.ok) throw std::runtime_error(r.message);
  return sch.func();
}

/// The Allocate nodes and the loops (outermost first) around each.
struct AllocSite {
  const AllocateNode* alloc;
  std::vector<const ForNode*> loops;
};
std::vector<AllocSite> allocSites(const PrimFunc& f) {
  struct V : IRVisitor {
    std::vector<AllocSite> out;
    std::vector<const ForNode*> loops;
    using IRVisitor::visit;
    void visit(const ForNode* n) override {
      loops.push_back(n);
      IRVisitor::visit(n);
      loops.pop_back();
    }
    void visit(const AllocateNode* n) override {
      out.push_back({n, loops});
      IRVisitor::visit(n);
    }
  } v;
  v.visitStmt(f->body);
  return v.out;
}

/// A function already out of block form, taking `params`.
PrimFunc plainFunc(const std::vector<Buffer>& params, Stmt body) {
  std::vector<Var> ps;
  std::vector<std::pair<Var, Buffer>> map;
  for (auto& b : params) {
    ps.push_back(b->data);
    map.emplace_back(b->data, b);
  }
  return makePrimFunc("main", ps, map, body);
}

std::vector<int64_t> constExtents(const AllocateNode* a) {
  std::vector<int64_t> out;
  for (auto& e : a->extents) out.push_back(asConstInt(e) ? *asConstInt(e) : -1);
  return out;
}

// B packed per (j0, k0) panel under a parallel loop: the matmul_x86 recipe at a small size.
const char* kPackB = R"(
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
i0, i1, i2 = sch.split(i, factors=[2, None, 4])
j0, j1, j2 = sch.split(j, factors=[None, 2, 8])
k0, k1 = sch.split(k, factors=[None, 8])
sch.reorder(i0, j0, k0, i1, k1, i2, j1, j2)
bp = sch.cache_read(b, 1, "global")
sch.compute_at(bp, k0)
sch.decompose_reduction(b, k0)
sch.parallel(i0)
)";

}  // namespace

class TestCompactBuffers : public QObject {
  Q_OBJECT
private slots:
  void packedPanelSinksIntoParallelLoopAndShrinks() {
    PrimFunc f = scheduled("matmul:M=16,N=32,K=24", kPackB);
    PrimFunc before = lowerBlocks(f);
    auto sitesBefore = allocSites(before);
    QCOMPARE(int(sitesBefore.size()), 1);
    QVERIFY(sitesBefore[0].loops.empty());
    QCOMPARE(constExtents(sitesBefore[0].alloc), (std::vector<int64_t>{24, 32}));

    PrimFunc g = compactBuffers(before);
    auto sites = allocSites(g);
    QCOMPARE(int(sites.size()), 1);
    // Under i0 (parallel), j0 and k0: one 8 x 16 panel per iteration, per thread.
    QCOMPARE(int(sites[0].loops.size()), 3);
    QCOMPARE(sites[0].loops[0]->kind, ForKind::Parallel);
    QCOMPARE(constExtents(sites[0].alloc), (std::vector<int64_t>{8, 16}));
    EXPECT_SAME_MEANING(before, g);
    EXPECT_SAME_MEANING(f, g);
    // Nothing left to do: the same function comes back.
    QVERIFY(compactBuffers(g).same_as(g));
  }

  void wholePipelineKeepsMeaning() {
    PrimFunc f = scheduled("matmul:M=16,N=32,K=24", kPackB);
    PassContext ctx;
    PrimFunc g = lower(f, ctx);
    QVERIFY(allFlat(g));
    auto sites = allocSites(g);
    QCOMPARE(int(sites.size()), 1);
    QCOMPARE(constExtents(sites[0].alloc), (std::vector<int64_t>{128}));
    EXPECT_SAME_MEANING(f, g);
  }

  void cacheWriteTileShrinksToTheTile() {
    // A C accumulator tile (cache_write + reverse_compute_at) with a split tail (M=10 by 4).
    PrimFunc f = scheduled("matmul:M=10,N=32,K=8", R"(
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
i0, i1 = sch.split(i, factors=[None, 4])
j0, j1 = sch.split(j, factors=[None, 16])
sch.reorder(i0, j0, k, i1, j1)
cw = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(cw, j0)
)");
    PrimFunc before = lowerBlocks(f);
    PrimFunc g = compactBuffers(before);
    auto sites = allocSites(g);
    QCOMPARE(int(sites.size()), 1);
    QCOMPARE(int(sites[0].loops.size()), 2);
    QCOMPARE(constExtents(sites[0].alloc), (std::vector<int64_t>{4, 16}));
    EXPECT_SAME_MEANING(before, g);
    PassContext ctx;
    EXPECT_SAME_MEANING(f, lower(f, ctx));
  }

  void neverEntersVectorLoops() {
    // The only loop around the uses is vectorized: the buffer stays outside it, but shrinks.
    Buffer A = makeBuffer("A", DataType::Float(32), {64}), B = makeBuffer("B", DataType::Float(32), {64});
    Buffer T = makeBuffer("T", DataType::Float(32), {64});
    Var i = makeVar("i"), v = makeVar("v");
    Stmt body = forLoop(i, 0, 4, ForKind::Serial,
                        forLoop(v, 0, 16, ForKind::Vectorized,
                                seq({bufferStore(T, bufferLoad(A, {i * 16 + v}) * 2.0f, {v}),
                                     bufferStore(B, bufferLoad(T, {v}) + 1.0f, {i * 16 + v})})));
    body = Stmt(new AllocateNode(T->data, T->dtype, T->shape, boolImm(true), declBuffer(T, body)));
    PrimFunc f = plainFunc({A, B}, body);
    PrimFunc g = compactBuffers(f);
    auto sites = allocSites(g);
    QCOMPARE(int(sites.size()), 1);
    QCOMPARE(int(sites[0].loops.size()), 1);  // inside i, outside v
    QCOMPARE(sites[0].loops[0]->kind, ForKind::Serial);
    QCOMPARE(constExtents(sites[0].alloc), (std::vector<int64_t>{16}));
    EXPECT_SAME_MEANING(f, g);
  }

  void escapedOrSymbolicBuffersStay() {
    Buffer A = makeBuffer("A", DataType::Float(32), {64});
    Buffer T = makeBuffer("T", DataType::Float(32), {64});
    Var i = makeVar("i"), j = makeVar("j"), n = makeVar("n");
    // The handle used as a value (passed to a call): left alone.
    Stmt use = forLoop(i, 0, 4, ForKind::Serial,
                       seq({bufferStore(T, bufferLoad(A, {i}), {i}),
                            evaluate(call(DataType::Int(32), "opaque_use", {Expr(T->data)}))}));
    Stmt escaped = Stmt(new AllocateNode(T->data, T->dtype, T->shape, boolImm(true), declBuffer(T, use)));
    PrimFunc f = plainFunc({A}, escaped);
    QVERIFY(compactBuffers(f).same_as(f));
    // A region whose extent depends on a parameter: that dimension keeps its size, but the
    // buffer still moves into the loop around its uses.
    Var j2 = makeVar("j2");
    Stmt sym = forLoop(i, 0, 4, ForKind::Serial,
                       seq({forLoop(j, 0, n, ForKind::Serial, bufferStore(T, bufferLoad(A, {j}), {j})),
                            forLoop(j2, 0, n, ForKind::Serial, bufferStore(A, bufferLoad(T, {j2}) + 1.0f, {j2}))}));
    Stmt alloc = Stmt(new AllocateNode(T->data, T->dtype, T->shape, boolImm(true), declBuffer(T, sym)));
    PrimFunc h = compactBuffers(plainFunc({A}, alloc));
    auto sites = allocSites(h);
    QCOMPARE(int(sites.size()), 1);
    QCOMPARE(int(sites[0].loops.size()), 1);
    QCOMPARE(constExtents(sites[0].alloc), (std::vector<int64_t>{64}));
  }

  void gpuSharedCoversEveryThreadLocalIsPerThread() {
    // Inside `attr [tx] "thread_extent" = 4`, each thread touches T[tx*4 .. tx*4+3]: memory the
    // threads share keeps all 16 elements; a "local" buffer (one per thread) shrinks to 4.
    Buffer A = makeBuffer("A", DataType::Float(32), {16});
    auto kernel = [&](const std::string& scope) {
      Buffer T = makeBuffer("T", DataType::Float(32), {16}, scope);
      Var tx = makeVar("threadIdx.x"), i = makeVar("i"), j = makeVar("j");
      Stmt body = seq({forLoop(i, 0, 4, ForKind::Serial, bufferStore(T, bufferLoad(A, {tx * 4 + i}), {tx * 4 + i})),
                       forLoop(j, 0, 4, ForKind::Serial,
                               bufferStore(A, bufferLoad(T, {tx * 4 + j}) * 2.0f, {tx * 4 + j}))});
      body = Stmt(new AllocateNode(T->data, T->dtype, T->shape, boolImm(true), declBuffer(T, body), scope));
      return plainFunc({A}, attrStmt(Expr(tx), "thread_extent", 4, body));
    };
    PrimFunc shared = compactBuffers(kernel("shared"));
    auto s = allocSites(shared);
    QCOMPARE(int(s.size()), 1);
    QCOMPARE(constExtents(s[0].alloc), (std::vector<int64_t>{16}));
    PrimFunc local = compactBuffers(kernel("local"));
    auto l = allocSites(local);
    QCOMPARE(int(l.size()), 1);
    QCOMPARE(constExtents(l[0].alloc), (std::vector<int64_t>{4}));
  }
  void looselyBoundedSymbolicRegionsStayInTheirDimension() {
    // T has ((n + 1) // 2 + 3) // 4 * 4 + 2 rows and columns (a Winograd pad_temp over a
    // stride-2 conv's output) and is read at (p // m % m * 4 + 5, p % m * 4 + 5) (a tile's last
    // position): a floormod by a symbolic divisor, whose set is only the index type's range. Compaction gave T 2^31 - 2
    // rows and columns, a constant whose product overflowed the flattened index (a kernel that
    // wrote past its allocation); the dimensions now keep their symbolic size.
    Var n = makeVar("n"), i = makeVar("i"), j = makeVar("j"), p = makeVar("p");
    Expr m = floordiv(floordiv(n + 1, 2) + 3, 4), side = m * 4 + 2;
    Buffer A = makeBuffer("A", DataType::Float(32), {n});
    Buffer C = makeBuffer("C", DataType::Float(32), {m * m});
    Buffer T = makeBuffer("T", DataType::Float(32), {side, side});
    auto clampN = [&](Expr x) { return min(x, n - 1); };
    Stmt fill = forLoop(i, 0, side, ForKind::Serial,
                        forLoop(j, 0, side, ForKind::Serial,
                                bufferStore(T, bufferLoad(A, {clampN(i)}) * 2.0f + bufferLoad(A, {clampN(j)}), {i, j})));
    Stmt read = forLoop(p, 0, m * m, ForKind::Serial,
                        bufferStore(C, bufferLoad(T, {floormod(floordiv(p, m), m) * 4 + 5, floormod(p, m) * 4 + 5}), {p}));
    Stmt body = Stmt(new AllocateNode(T->data, T->dtype, T->shape, boolImm(true), declBuffer(T, seq({fill, read}))));
    PrimFunc f = makePrimFunc("main", {A->data, C->data, n}, {{A->data, A}, {C->data, C}}, body);
    PrimFunc g = compactBuffers(f);
    auto sites = allocSites(g);
    QCOMPARE(int(sites.size()), 1);
    QVERIFY2(constExtents(sites[0].alloc) == (std::vector<int64_t>{-1, -1}), printFunc(g).c_str());
    // And the compacted program computes what the program does (the interpreter).
    for (int64_t nv : {9, 17}) {
      const int64_t mv = ((nv + 1) / 2 + 3) / 4;
      runtime::NDArray a = runtime::NDArray::empty({nv}, runtime::DType{2, 32, 1});
      fillRandom(a, 3);
      runtime::NDArray want = runtime::NDArray::empty({mv * mv}, runtime::DType{2, 32, 1});
      runtime::NDArray got = runtime::NDArray::empty({mv * mv}, runtime::DType{2, 32, 1});
      interpret(f, {a, want, nv});
      interpret(g, {a, got, nv});
      std::string r = mismatchReport(got, want, 0, 0);
      QVERIFY2(r.empty(), r.c_str());
    }
  }

  void bigUnprovenConstantRegionsAreNarrowed() {
    // T[n, n] written and read at (i % 8192, j % 8192): the set of each index is [0, 8191], a
    // constant not provably within n. A 64 Mi-element constant is no tile: each dimension becomes
    // min(n, 8192), never more than T had.
    Var n = makeVar("n"), i = makeVar("i"), j = makeVar("j");
    Buffer A = makeBuffer("A", DataType::Float(32), {n, n});
    Buffer T = makeBuffer("T", DataType::Float(32), {n, n});
    Stmt fill = forLoop(i, 0, n, ForKind::Serial,
                        forLoop(j, 0, n, ForKind::Serial,
                                bufferStore(T, bufferLoad(A, {i, j}) + 1.0f, {floormod(i, 8192), floormod(j, 8192)})));
    Stmt read = forLoop(i, 0, n, ForKind::Serial,
                        forLoop(j, 0, n, ForKind::Serial,
                                bufferStore(A, bufferLoad(T, {floormod(i, 8192), floormod(j, 8192)}) * 2.0f, {i, j})));
    Stmt body = Stmt(new AllocateNode(T->data, T->dtype, T->shape, boolImm(true), declBuffer(T, seq({fill, read}))));
    PrimFunc f = makePrimFunc("main", {A->data, n}, {{A->data, A}}, body);
    PrimFunc g = compactBuffers(f);
    auto sites = allocSites(g);
    QCOMPARE(int(sites.size()), 1);
    const std::string text = printFunc(g);
    QVERIFY2(constExtents(sites[0].alloc) == (std::vector<int64_t>{-1, -1}), text.c_str());
    QVERIFY2(text.find("8192") != std::string::npos, text.c_str());
    runtime::NDArray a = runtime::NDArray::empty({5, 5}, runtime::DType{2, 32, 1}), b = runtime::NDArray::empty({5, 5}, runtime::DType{2, 32, 1});
    fillRandom(a, 4);
    b.copyFrom(a);
    interpret(f, {a, int64_t(5)});
    interpret(g, {b, int64_t(5)});
    std::string r = mismatchReport(b, a, 0, 0);
    QVERIFY2(r.empty(), r.c_str());
  }
};

QTEST_APPLESS_MAIN(TestCompactBuffers)
#include "test_compact_buffers.moc"
