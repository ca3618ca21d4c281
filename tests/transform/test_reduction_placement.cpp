// compact-buffers never moves a buffer written by a reduction into a loop its reduce iter values
// use: the accumulator lives across that loop (reverse_compute_at under a reduction loop).
#include <QtTest>

#include "codegen/CodeGenLLVM.h"
#include "codegen/JITModule.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/te/CreatePrimFunc.h"
#include "core/topi/Workloads.h"
#include "core/topi/Ops.h"
#include "core/transform/CompactBuffers.h"
#include "core/transform/LowerBlocks.h"
#include "core/transform/MakePackedAPI.h"
#include "core/transform/Pipeline.h"
#include "runtime/PackedFunc.h"
#include "tests/transform/CompiledMeaning.h"
#include "tests/transform/Meaning.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {

/// relu(A * B) for 16 x 16 x 16 float32: blocks "C" (with init) and "T_relu".
PrimFunc matmulRelu() {
  te::Tensor a = te::placeholder({intImm(DataType::Int(32), 16), intImm(DataType::Int(32), 16)}, DataType::Float(32), "A");
  te::Tensor b = te::placeholder({intImm(DataType::Int(32), 16), intImm(DataType::Int(32), 16)}, DataType::Float(32), "B");
  te::Tensor c = topi::matmul(a, b, "C");
  return te::createPrimFunc({a, b, topi::relu(c)});
}

/// sum over the middle axis of a 16 x 16 x 16 tensor: block "A_red" (with init).
PrimFunc middleAxisSum() {
  auto n = intImm(DataType::Int(32), 16);
  te::Tensor a = te::placeholder({n, n, n}, DataType::Float(32), "A");
  return te::createPrimFunc({a, topi::sum(a, 1)});
}

/// sum_j A[i, j] then relu: blocks "A_red" (with init) and "T_relu".
PrimFunc rowSumRelu() {
  te::Tensor a = te::placeholder({intImm(DataType::Int(32), 8), intImm(DataType::Int(32), 24)}, DataType::Float(32), "A");
  te::Tensor s = topi::sum(a, 1);
  return te::createPrimFunc({a, topi::relu(s)});
}

PrimFunc scheduled(const PrimFunc& f, const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script);
  if (!r.ok) throw std::runtime_error(r.message);
  return sch.func();
}

/// Names of the loop variables around the Allocate of the buffer named `name` (outermost first).
std::vector<std::string> loopsAroundAlloc(const PrimFunc& f, const std::string& name) {
  struct V : IRVisitor {
    std::string name;
    std::vector<std::string> loops, found;
    bool seen = false;
    using IRVisitor::visit;
    void visit(const ForNode* n) override {
      loops.push_back(n->loopVar->name);
      IRVisitor::visit(n);
      loops.pop_back();
    }
    void visit(const AllocateNode* n) override {
      if (auto* d = n->body.as<DeclBufferNode>(); d && d->buffer->name == name) {
        found = loops;
        seen = true;
      }
      IRVisitor::visit(n);
    }
  } v;
  v.name = name;
  v.visitStmt(f->body);
  if (!v.seen) return {"<no allocation of " + name + ">"};
  return v.found;
}

/// A GPU-lowered function with every `thread_extent` attr run as a serial loop over its thread
/// index: what the kernel computes when it needs no barrier (no shared memory), in a form the
/// interpreter runs.
PrimFunc serializeThreads(const PrimFunc& f) {
  struct M : IRMutator {
    using IRMutator::visit;
    Stmt visit(const AttrStmtNode* n, const Stmt& self) override {
      Stmt s = IRMutator::visit(n, self);
      auto* a = s.as<AttrStmtNode>();
      auto* v = a->node.as<VarNode>();
      if (a->key != "thread_extent" || !v) return s;
      return forLoop(Var(v), intImm(v->dtype, 0), a->value, ForKind::Serial, a->body);
    }
  } m;
  return updateBody(f, m.mutate(f->body));
}

/// The scheduled function, then its lowering at every step, all mean the same on random inputs,
/// and so does the compiled code.
void checkEverywhere(const PrimFunc& f) {
  PrimFunc lowered = lowerBlocks(f);
  EXPECT_SAME_MEANING(f, lowered);
  PrimFunc compacted = compactBuffers(lowered);
  EXPECT_SAME_MEANING(f, compacted);
  PassContext ctx;
  EXPECT_SAME_MEANING(f, lower(f, ctx));
  std::string c = compiledDiff(f);
  QVERIFY2(c.empty(), c.c_str());
}

}  // namespace

class TestReductionPlacement : public QObject {
  Q_OBJECT
private slots:
  // relu moved under the outer part of the split reduction loop: C is read after every k0
  // iteration (the last one wins) and must keep its partial sums across k0.
  void reverseComputeAtUnderReductionLoop_data() {
    QTest::addColumn<QString>("loop");
    QTest::addColumn<bool>("decompose");
    QTest::newRow("under k0") << "k0" << false;
    QTest::newRow("under k1") << "k1" << false;
    QTest::newRow("under k0, decomposed") << "k0" << true;
  }
  void reverseComputeAtUnderReductionLoop() {
    QFETCH(QString, loop);
    QFETCH(bool, decompose);
    std::string script = R"(
c = sch.get_block("C")
r = sch.get_block("T_relu")
i, j, k = sch.get_loops(c)
k0, k1 = sch.split(k, factors=[None, 4])
sch.reverse_compute_at(r, )" + loop.toStdString() + ")\n";
    if (decompose) script += "sch.decompose_reduction(c, k0)\n";
    PrimFunc f = scheduled(matmulRelu(), script);
    checkEverywhere(f);
    // C stays above k0 (one element per (i, j)), never inside the reduction loops.
    PrimFunc g = compactBuffers(lowerBlocks(f));
    auto loops = loopsAroundAlloc(g, "C");
    QCOMPARE(loops, (std::vector<std::string>{"i", "j"}));
  }

  // The reduction's own loop is the only one around both accesses of the row sum.
  void rowSumConsumerUnderItsReductionLoop() {
    PrimFunc f = scheduled(rowSumRelu(), R"(
s = sch.get_block("A_red")
r = sch.get_block("T_relu")
i, k = sch.get_loops(s)
sch.reverse_compute_at(r, k)
)");
    checkEverywhere(f);
    auto loops = loopsAroundAlloc(compactBuffers(lowerBlocks(f)), "A_red");
    QCOMPARE(int(loops.size()), 1);
  }

  // The producer with its init computed at the consumer's loop: its reduction loop is inside
  // that loop, so C still shrinks to one element per (i, j) iteration of the consumer.
  void computeAtInitCarryingProducerStillCompacts() {
    PrimFunc f = scheduled(matmulRelu(), R"(
c = sch.get_block("C")
r = sch.get_block("T_relu")
i, j = sch.get_loops(r)
sch.compute_at(c, j)
)");
    checkEverywhere(f);
    PrimFunc g = compactBuffers(lowerBlocks(f));
    QCOMPARE(int(loopsAroundAlloc(g, "C").size()), 2);
  }

  // TVM's case (apache/tvm#17799): spatial-reduce-spatial outer tiling, the cache_write copy
  // moved under the outer spatial loop inside the reduction's outer loop: the accumulator tile
  // is accessed only under (i0, k0, j0) but must live across k0 (k is the reduced axis).
  void cacheWriteUnderOuterReductionLoop() {
    PrimFunc f = scheduled(middleAxisSum(), R"(
b = sch.get_block("A_red")
i, j, k = sch.get_loops(b)
# i, j spatial (axes 0 and 2 of A), k the reduced axis 1
i0, i1 = sch.split(i, factors=[4, 4])
j0, j1 = sch.split(j, factors=[4, 4])
k0, k1 = sch.split(k, factors=[4, 4])
sch.reorder(i0, k0, j0, i1, k1, j1)
cw = sch.cache_write(b, 0, "global")
sch.reverse_compute_at(cw, j0)
)");
    checkEverywhere(f);
    PrimFunc g = compactBuffers(lowerBlocks(f));
    auto loops = loopsAroundAlloc(g, "A_red_global");
    QVERIFY2(loops == (std::vector<std::string>{"i_0"}), printFunc(g).c_str());
    // Relaxed over every loop inside the allocation, k0 and j0 included: 4 rows x all 16 columns.
    std::vector<int64_t> extents;
    postOrderVisit(g->body, [&](const IRNode* x) {
      if (auto* a = dynamic_cast<const AllocateNode*>(x))
        for (auto& e : a->extents) extents.push_back(asConstInt(e) ? *asConstInt(e) : -1);
    });
    QCOMPARE(extents, (std::vector<int64_t>{4, 16}));
  }

  // GPU: a per-thread "local" accumulator whose copy-out is moved under the outer reduction loop
  // ko. It must stay per thread (inside the threadIdx attrs) but outside ko.
  void gpuLocalAccumulatorUnderReductionLoop() {
    PrimFunc f = scheduled(topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=16,N=16,K=16")), R"(
b = sch.get_block("C")
i, j, k = sch.get_loops(b)
by, ty = sch.split(i, factors=[None, 4])
bx, tx = sch.split(j, factors=[None, 4])
ko, ki = sch.split(k, factors=[None, 4])
sch.reorder(by, bx, ty, tx, ko, ki)
sch.bind(by, "blockIdx.y")
sch.bind(bx, "blockIdx.x")
sch.bind(ty, "threadIdx.y")
sch.bind(tx, "threadIdx.x")
cl = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(cl, ko)
)");
    PassContext ctx;
    LowerOptions gpu;
    gpu.gpu = true;
    PrimFunc g = lower(f, ctx, gpu);
    EXPECT_SAME_MEANING(f, serializeThreads(g));
    QVERIFY2(loopsAroundAlloc(g, "C_local").empty(), printFunc(g).c_str());
    int locals = 0;
    postOrderVisit(g->body, [&](const IRNode* x) {
      if (auto* a = dynamic_cast<const AllocateNode*>(x); a && a->scope == "local") {
        ++locals;
        QCOMPARE(int(a->extents.size()), 1);
        QVERIFY(isConstInt(a->extents[0], 1));
      }
    });
    QCOMPARE(locals, 1);
  }

  // A cache_write accumulator with the reduction loop inside its loop still sinks there.
  void accumulatorAboveItsReductionLoopStillSinks() {
    PrimFunc f = scheduled(matmulRelu(), R"(
c = sch.get_block("C")
i, j, k = sch.get_loops(c)
j0, j1 = sch.split(j, factors=[None, 4])
sch.reorder(i, j0, k, j1)
cw = sch.cache_write(c, 0, "global")
sch.reverse_compute_at(cw, j0)
)");
    checkEverywhere(f);
    PrimFunc g = compactBuffers(lowerBlocks(f));
    QVERIFY2(loopsAroundAlloc(g, "C_global") == (std::vector<std::string>{"i", "j_0"}), printFunc(g).c_str());
  }
};

QTEST_APPLESS_MAIN(TestReductionPlacement)
#include "test_reduction_placement.moc"
