// hoist-symbolic-terms: arithmetic over a kernel's shape symbols becomes lets at the top, sums of
// products regrouped by their loop-variable factors; the results stay the interpreter's before
// the pass at several symbol values (0 included, where a guard kept a division from running).
#include <QtTest>

#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/Visitor.h"
#include "core/transform/HoistSymbolicTerms.h"
#include "core/transform/Pipeline.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;

namespace {

// A flattened index over a symbolic [2, H, W] buffer as flattening and the simplifier write it
// (strides as sums of products of the symbols), an offset with constants, and a bound.
const char* kProgram = R"(
@T.prim_func
def f(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"), H: T.int32, W: T.int32):
    for c in range(2):
        for y in range(4):
            for x in range(4):
                if x < (W + 1) // 2 - 1:
                    B[c * ((H + 1) // 2) * ((W + 1) // 2) + y * ((W + 1) // 2) + x + c * 16] = A[c * ((H + 1) // 2) * ((W + 1) // 2) + y * ((W + 1) // 2) + c * 16 + x + (H + 1) // 2 * 3 + 5] + A[c * ((H + 1) // 2) * ((W + 1) // 2) + y * ((W + 1) // 2) + c * 16 + x + (H + 1) // 2 * 3 + 6]
)";

std::vector<runtime::NDArray> run(const PrimFunc& f, int64_t h, int64_t w) {
  runtime::DType f32{2, 32, 1};
  auto a = runtime::NDArray::empty({4096}, f32), b = runtime::NDArray::empty({4096}, f32);
  fillRandom(a, 7);
  fillRandom(b, 8);
  interpret(f, {a, b, h, w});
  return {a, b};
}

int count(const PrimFunc& f, NodeKind k) {
  int n = 0;
  postOrderVisit(f->body, [&](const IRNode* x) { n += x->nodeKind == k; });
  return n;
}

/// Floor divisions inside loops.
int divisionsInLoops(const PrimFunc& f) {
  int n = 0;
  postOrderVisit(f->body, [&](const IRNode* x) {
    auto* loop = dynamic_cast<const ForNode*>(x);
    if (!loop) return;
    postOrderVisit(loop->body, [&](const IRNode* y) {
      auto* b = dynamic_cast<const BinaryNode*>(y);
      n += b && b->op == BinOp::FloorDiv;
    });
  });
  return n;
}

}  // namespace

class TestHoistSymbolicTerms : public QObject {
  Q_OBJECT
private slots:
  void stridesBecomeLetsAndKeepTheResults() {
    PrimFunc f = parseFunc(kProgram);
    PrimFunc g = hoistSymbolicTerms(f);
    QVERIFY(divisionsInLoops(f) > 0);
    QCOMPARE(divisionsInLoops(g), 0);
    // The lets come first, outside every loop.
    auto* let = g->body.as<LetStmtNode>();
    QVERIFY2(let, printFunc(g).c_str());
    // One let per stride and offset: c's ((H+1)//2 * ((W+1)//2) + 16), y's (W+1)//2, the
    // offset (H+1)//2 * 3 and the bound's (W+1)//2; the offsets' constants 5 and 6 stay at the
    // loads (one let for both), equal ones share a let.
    const int lets = count(g, NodeKind::LetStmt);
    QVERIFY2(lets >= 3 && lets <= 5, printFunc(g).c_str());
    for (auto [h, w] : std::vector<std::pair<int64_t, int64_t>>{{1, 1}, {7, 9}, {16, 16}, {31, 2}, {3, 40}}) {
      auto before = run(f, h, w), after = run(g, h, w);
      QVERIFY2(mismatchReport(after[1], before[1], 0, 0).empty(),
               ("H = " + std::to_string(h) + ", W = " + std::to_string(w) + "\n" + printFunc(g)).c_str());
    }
  }

  void hoistedDivisionByASymbolDoesNotTrap() {
    // The division runs only where W > 0; hoisted to the top it must not trap at W = 0.
    const char* text = R"(
@T.prim_func
def f(A: T.Buffer((4096,), "float32"), B: T.Buffer((4096,), "float32"), H: T.int32, W: T.int32):
    for i in range(8):
        if W > 0:
            B[i] = A[i + H // W % 8]
)";
    PrimFunc f = parseFunc(text), g = hoistSymbolicTerms(f);
    QCOMPARE(count(g, NodeKind::LetStmt), 1);
    for (int64_t w : {0, 1, 3}) {
      auto before = run(f, 13, w), after = run(g, 13, w);
      QVERIFY2(mismatchReport(after[1], before[1], 0, 0).empty(), ("W = " + std::to_string(w)).c_str());
    }
  }

  void staticKernelsAndLoopOnlySumsStay() {
    const char* text = R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32")):
    for i in range(8):
        for j in range(8):
            B[i * 8 + j] = A[j * 8 + i]
)";
    PrimFunc f = parseFunc(text);
    QVERIFY(hoistSymbolicTerms(f).same_as(f));
    // With a symbol the function does not use in arithmetic, nothing changes either.
    const char* text2 = R"(
@T.prim_func
def f(A: T.Buffer((64,), "float32"), B: T.Buffer((64,), "float32"), n: T.int32):
    for i in range(n):
        B[i] = A[i * 3 + 1]
)";
    PrimFunc f2 = parseFunc(text2), g2 = hoistSymbolicTerms(f2);
    QVERIFY(g2->body.same_as(f2->body));
    // A kernel over symbols is marked for nsw arithmetic in codegen.
    QVERIFY(g2->attrs.count("loom.signed_no_wrap"));
    QVERIFY(!f->attrs.count("loom.signed_no_wrap"));
  }

  void pipelineHoistsOnCpuOnly() {
    auto cpu = loweringPassNames();
    QVERIFY(std::find(cpu.begin(), cpu.end(), "hoist-symbolic-terms") != cpu.end());
    auto gpu = loweringPassNames({.gpu = true});
    QVERIFY(std::find(gpu.begin(), gpu.end(), "hoist-symbolic-terms") == gpu.end());
  }
};

QTEST_APPLESS_MAIN(TestHoistSymbolicTerms)
#include "test_hoist_symbolic_terms.moc"
