// hoist-divisions: divisions by a run-time value become lets at the top of the loop body whose
// variable they use, out of guarded loads; the results stay the interpreter's before the pass, at
// every divisor (0 included, where only a guard kept the original from dividing). Also: the
// simplifier keeps a load's index clamp under a select's condition (both branches are loaded).
#include <QtTest>

#include "core/arith/Analyzer.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/Visitor.h"
#include "core/transform/HoistDivisions.h"
#include "core/transform/Pipeline.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;

namespace {

// Zero padding over a width W inlined into an unrolled transform (as in a dynamic Winograd
// kernel): every load is guarded and indexed by `t // W` and `t % W`; `i // W` reads only the
// outer loop's variable; the last statement divides only where W > 0.
const char* kProgram = R"(
@T.prim_func
def f(A: T.Buffer((256,), "float32"), B: T.Buffer((256,), "float32"), W: T.int32):
    for i in range(4):
        for t in range(64):
            B[i * 64 + t] = T.if_then_else(t // W % 2 == 1, A[i * 64 + t // W * W + t % W], T.float32(0)) + T.if_then_else(t % W >= 1, A[i // W * 64 + t % W], T.float32(0)) * T.float32(2) + T.if_then_else(t % W < 3, A[i * 64 + t % W + t // W], T.float32(0))
        for u in range(3):
            B[i * 64 + u] = T.if_then_else(W > 0, A[i * 64 + (u + i) % W], T.float32(-1))
)";

std::vector<runtime::NDArray> run(const PrimFunc& f, int64_t w) {
  runtime::DType f32{2, 32, 1};
  auto a = runtime::NDArray::empty({256}, f32), b = runtime::NDArray::empty({256}, f32);
  fillRandom(a, 7);
  fillRandom(b, 8);
  interpret(f, {a, b, w});
  return {a, b};
}

int countLets(const PrimFunc& f) {
  int n = 0;
  postOrderVisit(f->body, [&](const IRNode* x) { n += x->nodeKind == NodeKind::LetStmt; });
  return n;
}

/// Divisions and modulos by a non-constant divisor inside if_then_else calls.
int guardedDivisions(const PrimFunc& f) {
  int n = 0;
  postOrderVisit(f->body, [&](const IRNode* x) {
    auto* c = dynamic_cast<const CallNode*>(x);
    if (!c || c->op != "if_then_else") return;
    postOrderVisit(Expr(const_cast<CallNode*>(c)), [&](const IRNode* y) {
      auto* b = dynamic_cast<const BinaryNode*>(y);
      if (b && (b->op == BinOp::FloorDiv || b->op == BinOp::FloorMod) && !asConstInt(b->b)) ++n;
    });
  });
  return n;
}

}  // namespace

class TestHoistDivisions : public QObject {
  Q_OBJECT
private slots:
  void divisionsLeaveTheGuardsAndKeepTheResults() {
    PrimFunc f = parseFunc(kProgram);
    PrimFunc g = hoistDivisions(f);
    QVERIFY(guardedDivisions(f) > 0);
    QCOMPARE(guardedDivisions(g), 0);
    // One let per distinct division: t // W, t % W (inner loop); i // W, (u + i) % W.
    QCOMPARE(countLets(g), 4);
    // i // W reads only the outer loop's variable: a let at the top of its body.
    auto* outer = g->body.as<ForNode>();
    QVERIFY(outer);
    auto* let = outer->body.as<LetStmtNode>();
    QVERIFY2(let, printFunc(g).c_str());
    QVERIFY(usesVar(let->value, outer->loopVar));
    for (int64_t w : {1, 2, 3, 5, 64, 100}) {
      auto before = run(f, w), after = run(g, w);
      QVERIFY2(mismatchReport(after[1], before[1], 0, 0).empty(), ("W = " + std::to_string(w)).c_str());
    }
  }

  void zeroDivisorDoesNotTrapWhereTheGuardHeld() {
    // With W = 0 the first loop's divisions have no defined value (the interpreter refuses
    // them), so only the guarded loop runs: the hoisted division must not trap there either.
    const char* text = R"(
@T.prim_func
def f(A: T.Buffer((8,), "float32"), B: T.Buffer((8,), "float32"), W: T.int32):
    for i in range(8):
        B[i] = T.if_then_else(W > 0, A[i // W % 8], T.float32(-1))
)";
    PrimFunc f = parseFunc(text), g = hoistDivisions(f);
    QCOMPARE(countLets(g), 1);
    runtime::DType f32{2, 32, 1};
    for (int64_t w : {0, 1, 3}) {
      auto a = runtime::NDArray::empty({8}, f32), b1 = runtime::NDArray::empty({8}, f32), b2 = runtime::NDArray::empty({8}, f32);
      fillRandom(a, 3);
      interpret(f, {a, b1, w});
      interpret(g, {a, b2, w});
      QVERIFY2(mismatchReport(b2, b1, 0, 0).empty(), ("W = " + std::to_string(w)).c_str());
    }
  }

  void constantDivisorsAndLoadsStay() {
    const char* text = R"(
@T.prim_func
def f(A: T.Buffer((64,), "int32"), B: T.Buffer((64,), "int32"), W: T.int32):
    for i in range(64):
        B[i] = T.if_then_else(i % 4 == 0, i // 4 + i // A[i], 0)
)";
    PrimFunc f = parseFunc(text), g = hoistDivisions(f);
    // i // 4 divides by a constant; i // A[i] reads memory: neither is hoisted.
    QCOMPARE(countLets(g), 0);
  }

  void pipelineHoistsOnCpuOnly() {
    auto cpu = loweringPassNames();
    QVERIFY(std::find(cpu.begin(), cpu.end(), "hoist-divisions") != cpu.end());
    auto gpu = loweringPassNames({.gpu = true});
    QVERIFY(std::find(gpu.begin(), gpu.end(), "hoist-divisions") == gpu.end());
  }

  void selectKeepsTheClampOfALoad() {
    // select(i < n, x[min(i, n - 1)], 0): both branches are evaluated, so the clamp must stay
    // even though it is redundant under the condition.
    Var i = makeVar("i"), n = makeVar("n");
    Buffer x = makeBuffer("x", DataType::Float(32), {n});
    Expr e = select(i < n, bufferLoad(x, {min(i, n - 1)}), makeConst(DataType::Float(32), 0));
    arith::Analyzer an;
    an.bind(i, Range(intImm(DataType::Int(32), 0), n + 8));
    std::string s = printExpr(an.simplify(e));
    QVERIFY2(s.find("min") != std::string::npos, s.c_str());
    // A branch without loads still uses the condition.
    Expr f = select(i < n, min(i, n - 1), i);
    std::string t = printExpr(an.simplify(f));
    QVERIFY2(t.find("min") == std::string::npos, t.c_str());
  }
};

QTEST_APPLESS_MAIN(TestHoistDivisions)
#include "test_hoist_divisions.moc"
