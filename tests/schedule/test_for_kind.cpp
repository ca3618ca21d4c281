// parallel, vectorize, unroll, bind: golden text, meaning, and TVM's legality refusals.
#include "ScheduleTestUtil.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {
const char* kNonAffine = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 4), "float32"), B: T.Buffer((16, 4), "float32")):
    for x in range(4):
        for y in range(4):
            with T.block("sq"):
                vx = T.axis.spatial(16, x * x)
                vy = T.axis.spatial(4, y)
                T.reads(A[vx, vy])
                T.writes(B[vx, vy])
                B[vx, vy] = A[vx, vy]
)";
} // namespace

class TestForKind : public QObject {
  Q_OBJECT
private slots:
  void golden() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    std::string got =
        applyAndPrint(printFunc(f), std::string(kGetLoops) +
                                        "io, ii = sch.split(i, factors=[None, 4])\n"
                                        "sch.parallel(io)\nsch.unroll(ii)\nsch.vectorize(j)\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i_0 in T.parallel(4):
        for i_1 in T.unroll(4):
            for j in T.vectorized(16):
                for k in range(8):
                    with T.block("C"):
                        v_i = T.axis.spatial(16, i_0 * 4 + i_1)
                        v_j, v_k = T.axis.remap("SR", [j, k])
                        T.reads(A[v_i, v_k], B[v_k, v_j])
                        T.writes(C[v_i, v_j])
                        with T.init():
                            C[v_i, v_j] = T.float32(0)
                        C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  }
  void bindGolden() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    std::string got = applyAndPrint(
        printFunc(f),
        std::string(kGetLoops) + "sch.bind(i, \"blockIdx.x\")\nsch.bind(j, \"threadIdx.x\")\n");
    QVERIFY2(got.find("for i in T.thread_binding(16, thread=\"blockIdx.x\"):") != std::string::npos,
             got.c_str());
    QVERIFY2(got.find("for j in T.thread_binding(16, thread=\"threadIdx.x\"):") !=
                 std::string::npos,
             got.c_str());
    // The interpreter runs bound loops in order: the meaning is unchanged.
    Schedule sch(f);
    ScriptResult r = runScript(sch, std::string(kGetLoops) + "sch.bind(i, \"blockIdx.x\")\n"
                                                             "sch.bind(j, \"threadIdx.x\")\n");
    QVERIFY2(r.ok, r.message.c_str());
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
  }
  void kindsKeepMeaning() {
    PrimFunc f = workload("matmul:M=12,N=10,K=6");
    Schedule sch(f);
    ScriptResult r = runScript(
        sch, std::string(kGetLoops) +
                 "io, ii = sch.split(i, factors=[None, 5])\nsch.parallel(io)\n"
                 "jo, ji = sch.split(j, factors=[None, 4])\nsch.vectorize(ji)\nsch.unroll(k)\n");
    QVERIFY2(r.ok, r.message.c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-6);
    // The loop RVs still name the (rebuilt) loops.
    QCOMPARE(sch.trace().insts.size(), size_t(7));
  }
  void reduceLoopRefused() {
    PrimFunc f = workload("matmul:M=16,N=16,K=8");
    for (const char* prim : {"parallel", "vectorize"}) {
      auto [kind, msg] = scriptError(f, std::string(kGetLoops) + "sch." + prim + "(k)\n");
      QCOMPARE(QString::fromStdString(kind), QString("WrongBlockIterTypeError"));
      QVERIFY2(msg.find("it binds the reduce iter var 'v_k' of block 'C'") != std::string::npos,
               msg.c_str());
    }
    // A loop over a fused spatial+reduce iteration is refused as well.
    auto [kind, msg] =
        scriptError(f, std::string(kGetLoops) + "f = sch.fuse(j, k)\nsch.parallel(f)\n");
    QCOMPARE(QString::fromStdString(kind), QString("WrongBlockIterTypeError"));
    // bind: blockIdx refuses a reduce loop, threadIdx takes it (cross-thread reduction).
    auto [kind2, msg2] = scriptError(f, std::string(kGetLoops) + "sch.bind(k, \"blockIdx.x\")\n");
    QCOMPARE(QString::fromStdString(kind2), QString("WrongBlockIterTypeError"));
    auto [kind3, msg3] = scriptError(f, std::string(kGetLoops) + "sch.bind(k, \"threadIdx.x\")\n");
    QCOMPARE(QString::fromStdString(kind3), QString(""));
    // unroll is always legal.
    auto [kind4, msg4] = scriptError(f, std::string(kGetLoops) + "sch.unroll(k)\n");
    QCOMPARE(QString::fromStdString(kind4), QString(""));
  }
  void wrongThreadTag() {
    auto [kind, msg] = scriptError(workload("matmul:M=16,N=16,K=8"),
                                   std::string(kGetLoops) + "sch.bind(i, \"threadIdx.w\")\n");
    QCOMPARE(QString::fromStdString(kind), QString("WrongThreadTagError"));
    QVERIFY2(msg.find("s.py:3:5: error: bind: 'threadIdx.w' is not a thread axis") == 0,
             msg.c_str());
  }
  void nonAffineRefused() {
    auto [kind, msg] =
        scriptError(parseFunc(kNonAffine),
                    "b = sch.get_block(\"sq\")\nx, y = sch.get_loops(b)\nsch.parallel(x)\n");
    QCOMPARE(QString::fromStdString(kind), QString("NotAffineBindingError"));
    QVERIFY2(
        msg.find("cannot parallelize loop 'x': block 'sq' does not bind its iter vars affinely") !=
            std::string::npos,
        msg.c_str());
    // A loop the block does not depend on non-affinely is fine.
    auto [kind2, msg2] =
        scriptError(parseFunc(kNonAffine),
                    "b = sch.get_block(\"sq\")\nx, y = sch.get_loops(b)\nsch.unroll(x)\n");
    QCOMPARE(QString::fromStdString(kind2), QString(""));
  }
  void errorMarksLoopAndBlock() {
    Schedule sch(workload("matmul:M=16,N=16,K=8"));
    auto loops = getLoops(sch, getBlock(sch, "C"));
    try {
      parallel(sch, loops[2]);
      QFAIL("no error");
    } catch (const WrongBlockIterTypeError& e) {
      std::string d = e.detailedMessage();
      QVERIFY2(d.find("with T.block(\"C\"):\n        ^^^^^^^^^^^^^^^^^^\n") != std::string::npos,
               d.c_str());
      QCOMPARE(QString(e.kind()), QString("WrongBlockIterTypeError"));
    }
  }
};

QTEST_APPLESS_MAIN(TestForKind)
#include "test_for_kind.moc"
