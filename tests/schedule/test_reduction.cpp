// decompose_reduction and rfactor: golden text, meaning on random inputs, trace round trip and
// every refusal.
#include "ScheduleTestUtil.h"
#include "TraceRoundTrip.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

const char* kRowSum = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, k in T.grid(8, 32):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i, v_k]
)";

/// A max reduction, a product, an unrecognized update (subtraction), an elementwise block and
/// two blocks under one loop.
const char* kOddities = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32"), D: T.Buffer((8, 32), "float32"), E: T.Buffer((8,), "float32")):
    for i, k in T.grid(8, 32):
        with T.block("mx"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(-3.4028234663852886e+38)
            B[v_i] = T.max(B[v_i], A[v_i, v_k])
    for i, k in T.grid(8, 32):
        with T.block("sub"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(C[v_i])
            with T.init():
                C[v_i] = T.float32(0)
            C[v_i] = C[v_i] - A[v_i, v_k]
    for i, k in T.grid(8, 32):
        with T.block("ew"):
            v_i, v_k = T.axis.remap("SS", [i, k])
            T.reads(A[v_i, v_k])
            T.writes(D[v_i, v_k])
            D[v_i, v_k] = A[v_i, v_k] * T.float32(2)
    for i in range(8):
        for k in range(32):
            with T.block("s1"):
                v_i, v_k = T.axis.remap("SR", [i, k])
                T.reads(A[v_i, v_k])
                T.writes(E[v_i])
                with T.init():
                    E[v_i] = T.float32(0)
                E[v_i] = E[v_i] + A[v_i, v_k]
        for k in range(32):
            with T.block("s2"):
                v_i, v_k = T.axis.remap("SS", [i, k])
                T.reads(E[v_i])
                T.writes(D[v_i, v_k])
                D[v_i, v_k] = E[v_i]
)";

const char* kHeader = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
)";

/// Runs `script` on `f` and checks the result means the same as `f` on random inputs.
void checkMeaning(const PrimFunc& f, const std::string& script) {
  Schedule sch(f);
  ScriptResult r = runScript(sch, script, "s.py");
  QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
  double err = maxErrorBetween(f, sch.func());
  QVERIFY2(err < 1e-5, (std::to_string(err) + "\n" + printFunc(sch.func())).c_str());
}

} // namespace

class TestReduction : public QObject {
  Q_OBJECT
private slots:
  // --- Golden text --------------------------------------------------------------------------
  void decomposeGolden() {
    std::string got = applyAndPrint(kMatmul, loopsOf("C", "i, j, k") +
                                                 "jo, ji = sch.split(j, factors=[None, 4])\n"
                                                 "ini = sch.decompose_reduction(b, ji)\n");
    LOOM_COMPARE_TEXT(got, std::string(kHeader) + R"(    # with T.block("root"):
    for i, j_0 in T.grid(16, 4):
        for j_1_init in range(4):
            with T.block("C_init"):
                v_i = T.axis.remap("S", [i])
                v_j = T.axis.spatial(16, j_0 * 4 + j_1_init)
                T.reads()
                T.writes(C[v_i, v_j])
                C[v_i, v_j] = T.float32(0)
        for j_1, k in T.grid(4, 8):
            with T.block("C"):
                v_i_1 = T.axis.remap("S", [i])
                v_j_1 = T.axis.spatial(16, j_0 * 4 + j_1)
                v_k = T.axis.remap("R", [k])
                T.reads(A[v_i_1, v_k], B[v_k, v_j_1])
                T.writes(C[v_i_1, v_j_1])
                C[v_i_1, v_j_1] = C[v_i_1, v_j_1] + A[v_i_1, v_k] * B[v_k, v_j_1]
)");
  }
  void decomposeAtReduceLoop() {
    // At the k loop itself no loop is copied: the init sits right before k.
    std::string got =
        applyAndPrint(kMatmul, loopsOf("C", "i, j, k") + "ini = sch.decompose_reduction(b, k)\n");
    QVERIFY2(got.find(R"(    for i, j in T.grid(16, 16):
        with T.block("C_init"):
            v_i, v_j = T.axis.remap("SS", [i, j]))") != std::string::npos,
             got.c_str());
    QVERIFY2(got.find("        for k in range(8):\n            with T.block(\"C\"):") !=
                 std::string::npos,
             got.c_str());
  }
  void rfactorGolden() {
    std::string got = applyAndPrint(kRowSum, loopsOf("B", "i, k") +
                                                 "ko, ki = sch.split(k, factors=[None, 4])\n"
                                                 "rf = sch.rfactor(ki, factor_axis=0)\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), B: T.Buffer((8,), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        B_rf = T.alloc_buffer((4, 8), "float32")
        for i, k_0, k_1 in T.grid(8, 8, 4):
            with T.block("B_rf"):
                vk_1, v_i, vk_0 = T.axis.remap("SSR", [k_1, i, k_0])
                T.reads(A[v_i, vk_0 * 4 + vk_1])
                T.writes(B_rf[vk_1, v_i])
                with T.init():
                    B_rf[vk_1, v_i] = T.float32(0)
                B_rf[vk_1, v_i] = B_rf[vk_1, v_i] + A[v_i, vk_0 * 4 + vk_1]
        for i_1, k_1_1 in T.grid(8, 4):
            with T.block("B"):
                v_i_1, vk_1_1 = T.axis.remap("SR", [i_1, k_1_1])
                T.reads(B_rf[vk_1_1, v_i_1])
                T.writes(B[v_i_1])
                with T.init():
                    B[v_i_1] = T.float32(0)
                B[v_i_1] = B[v_i_1] + B_rf[vk_1_1, v_i_1]
)");
  }
  void rfactorAxisLast() {
    std::string got =
        applyAndPrint(kMatmul, loopsOf("C", "i, j, k") + "ko, ki = sch.split(k, factors=[2, 4])\n"
                                                         "rf = sch.rfactor(ko, factor_axis=-1)\n");
    QVERIFY2(got.find("C_rf = T.alloc_buffer((16, 16, 2), \"float32\")") != std::string::npos,
             got.c_str());
    QVERIFY2(got.find("C_rf[v_i, v_j, vk_0] = C_rf[v_i, v_j, vk_0] + A[v_i, vk_0 * 4 + vk_1] * "
                      "B[vk_0 * 4 + vk_1, v_j]") != std::string::npos,
             got.c_str());
    QVERIFY2(got.find("for i_1, j_1, k_0_1 in T.grid(16, 16, 2):") != std::string::npos,
             got.c_str());
  }

  // --- Meaning ------------------------------------------------------------------------------
  void decomposeUnderTiledLoops() {
    PrimFunc f = workload("matmul:M=24,N=20,K=12");
    const std::string tile = loopsOf("C", "i, j, k") +
                             "io, ii = sch.split(i, factors=[None, 8])\n"
                             "jo, ji = sch.split(j, factors=[None, 5])\n"
                             "ko, ki = sch.split(k, factors=[None, 4])\n"
                             "sch.reorder(io, jo, ko, ii, ki, ji)\n";
    checkMeaning(f, tile + "ini = sch.decompose_reduction(b, ko)\n");
    checkMeaning(f, tile + "ini = sch.decompose_reduction(b, jo)\n");
    checkMeaning(f, tile + "ini = sch.decompose_reduction(b, io)\n");
    // A non-divisible split: the predicate goes with the init.
    checkMeaning(f, loopsOf("C", "i, j, k") + "io, ii = sch.split(i, factors=[None, 7])\n"
                                              "ini = sch.decompose_reduction(b, ii)\n");
  }
  void rfactorMeaning() {
    PrimFunc sum = workload("reduce_sum:M=6,N=48");
    for (int axis : {0, 1, -1, -2})
      checkMeaning(sum, loopsOf("A_red", "i, k") + "ko, ki = sch.split(k, factors=[None, 8])\n" +
                            "rf = sch.rfactor(ki, factor_axis=" + std::to_string(axis) + ")\n");
    checkMeaning(sum, loopsOf("A_red", "i, k") + "rf = sch.rfactor(k)\n");
    PrimFunc mm = workload("matmul:M=12,N=10,K=16");
    checkMeaning(mm, loopsOf("C", "i, j, k") + "ko, ki = sch.split(k, factors=[4, 4])\n"
                                               "rf = sch.rfactor(ko, factor_axis=2)\n");
    // rfactor a parallel reduction, then decompose both reductions.
    checkMeaning(mm, loopsOf("C", "i, j, k") + "ko, ki = sch.split(k, factors=[None, 4])\n"
                                               "sch.reorder(ko, i, j, ki)\n"
                                               "rf = sch.rfactor(ko)\n"
                                               "sch.parallel(ko)\n"
                                               "l0, l1, l2, l3 = sch.get_loops(rf)\n"
                                               "ini = sch.decompose_reduction(rf, l3)\n"
                                               "w0, w1, w2 = sch.get_loops(b)\n"
                                               "ini2 = sch.decompose_reduction(b, w0)\n");
  }
  void rfactorPredicatedSplit() {
    // Found by fuzz_schedule_script (tests/fuzz/regressions/schedule_script): rfactor of the inner
    // loop of a split that does not divide the extent left partial sums 8..15 uninitialized, and
    // the write-back summed them (NaN in the interpreter, garbage compiled). The write-back now
    // keeps the predicate's bound (the unit outer loop at 0), so it reads only partial sums that
    // were computed; where a bound cannot be kept, rfactor refuses (ScheduleValueError).
    PrimFunc f = workload("reduce_sum:M=4,N=8");
    checkMeaning(f, loopsOf("A_red", "i, k") + "ko, ki = sch.split(k, factors=[None, 16])\nrf = sch.rfactor(ki)\n");
    checkMeaning(f, loopsOf("A_red", "i, k") + "ko, ki = sch.split(k, factors=[None, 3])\nrf = sch.rfactor(ko)\n");
    checkMeaning(f, loopsOf("A_red", "i, k") + "ko, ki = sch.split(k, factors=[None, 3])\nrf = sch.rfactor(ki)\n");
  }
  void rfactorGuardedSplitOfSymbolicExtent() {
    // A row max over a symbolic length n (a softmax over a dynamic sequence), split by 16 lanes:
    // the guard `k_0 * 16 + k_1 < n` cannot hold at k_0 = 0 for every lane when n may be below
    // 16, so rfactor of k_1 and decompose_reduction at k_0 refused, and the reduction stayed
    // scalar. Since the guard only tightens as k_0 grows, a lane that runs at all runs at k_0 = 0:
    // the lanes' init and the write-back keep `k_1 < n`. Interpreted against the unscheduled
    // function at n below, at and above one vector, after each step.
    PrimFunc f = parseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4, n), "float32"), B: T.Buffer((4,), "float32"), n: T.int32):
    for i, k in T.grid(4, n):
        with T.block("B"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            with T.init():
                B[v_i] = T.float32("-inf")
            B[v_i] = T.max(B[v_i], A[v_i, v_k])
)");
    Schedule sch(f);
    std::vector<LoopRV> loops = getLoops(sch, getBlock(sch, "B"));
    auto parts = split(sch, loops[1], {nullptr, 16});
    BlockRV rf;
    try {
      rf = rfactor(sch, parts[1], 1);
    } catch (const Error& e) {
      QFAIL(e.what());
    }
    auto check = [&](const PrimFunc& g, const char* step) {
      for (int64_t len : {1, 5, 16, 21, 40}) {
        auto a = runtime::NDArray::empty({4, len}, runtime::DType::f32());
        auto b1 = runtime::NDArray::empty({4}, runtime::DType::f32());
        auto b2 = runtime::NDArray::empty({4}, runtime::DType::f32());
        fillRandom(a, 1);
        fillRandom(b1, 2);
        fillRandom(b2, 3);
        interpret(f, {a, b1, len});
        interpret(g, {a, b2, len});
        QVERIFY2(maxRelError(b2, b1) == 0.0, qPrintable(QString("%1, n = %2\n%3").arg(step).arg(len).arg(printFunc(g).c_str())));
      }
    };
    check(sch.func(), "rfactor");
    std::vector<LoopRV> rfLoops = getLoops(sch, rf);
    QCOMPARE(rfLoops.size(), size_t(3));
    BlockRV init = decomposeReduction(sch, rf, rfLoops[1]);
    check(sch.func(), "decompose_reduction");
    const std::string text = printFunc(sch.func());
    // The lanes' init and the write-back each test the lane against n.
    QVERIFY2(text.find("< n") != std::string::npos, text.c_str());
    (void)init;
  }

  void decomposeUnitOuterSplit() {
    // Found by fuzz_difftest (seed 1565): split(i, [None, 10]) of an extent-9 loop leaves an outer
    // loop of extent 1, the binding `v = i_1` and the predicate `i_0 * 10 + i_1 < 9`; the init
    // dropped the predicate with the unused unit loop and stored t0[9], out of bounds.
    PrimFunc f = workload("reduce_sum:M=9,N=5");
    checkMeaning(f, loopsOf("A_red", "i, k") + "io, ii = sch.split(i, factors=[None, 10])\n"
                                               "ini = sch.decompose_reduction(b, io)\n");
    checkMeaning(f, loopsOf("A_red", "i, k") + "io, ii = sch.split(i, factors=[None, 10])\n"
                                               "rf = sch.rfactor(k)\n");
  }
  void decomposeKeepsTheGuardOfAnOuterLoop() {
    // fuzz_difftest TIR seed 313678: a row sum's loops (9 x 4) fused and split by 10, so the
    // outer loop runs 10 times under the guard `i_0 * 4 + i_1 < 36`; decompose_reduction at the
    // inner loop put the init under the outer loop only, dropped the guard with the inner loop,
    // and stored A_red[9] of 9. The init keeps the guard at i_1 = 0 (`i_0 * 4 < 36`).
    PrimFunc f = workload("reduce_sum:M=9,N=4");
    checkMeaning(f, loopsOf("A_red", "i, k") + "f = sch.fuse(i, k)\n"
                                               "a, c = sch.split(f, factors=[10, None])\n"
                                               "ini = sch.decompose_reduction(b, c)\n");
  }
  void rfactorKeepsUnboundLoopsInWriteBack() {
    // fuzz_difftest TIR seed 102913: split(i, [None, 10]) of an extent-9 loop leaves a unit outer
    // loop the binding drops (`v_i = i_1`); splitting that loop by [2, None] gives a loop of
    // extent 2 bound to no iter var, which only the predicate `(i_0_0 + i_0_1) * 10 + i_1 < 9 and
    // i_0_0 + i_0_1 < 1` ties to i_1. The write-back dropped it with every conjunct naming it and
    // stored A_red[9] of 9. It now keeps such a loop, as TVM does, with the predicate.
    PrimFunc f = workload("reduce_sum:M=9,N=8");
    const std::string pre = loopsOf("A_red", "i, k") + "io, ii = sch.split(i, factors=[None, 10])\n"
                                                       "a, c = sch.split(io, factors=[2, None])\n";
    checkMeaning(f, pre + "rf = sch.rfactor(k)\n");
    checkMeaning(f, pre + "ko, ki = sch.split(k, factors=[None, 3])\nrf = sch.rfactor(ki)\n");
    // Under a reduce loop such a loop would repeat updates between two inits: refused (TVM too).
    std::string err = scriptError(f, pre + "sch.reorder(k, a)\nrf = sch.rfactor(k)\n").first;
    QCOMPARE(QString::fromStdString(err), QString("RFactorLoopError"));
  }
  void decomposeRefusesARerunningLoop() {
    // fuzz_difftest TIR seed 110903: a sum over a max's result, moved by reverse_compute_at under
    // the max's reduce loop, reruns its whole reduction at each iteration of it (right: the init
    // restarts it each time); decompose_reduction above that loop hoisted the init out, and the
    // reruns added up. Refused now; decomposing under it keeps the meaning.
    PrimFunc f = parseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(R1: T.Buffer((5, 6), "float32"), R2: T.Buffer((5, 4), "float32"), out: T.Buffer((5,), "float32")):
    t1 = T.alloc_buffer((5,), "float32")
    for i, k in T.grid(5, 6):
        with T.block("s1"):
            v, w = T.axis.remap("SR", [i, k])
            with T.init():
                t1[v] = T.float32("-inf")
            t1[v] = T.max(t1[v], R1[v, w])
    for i, k in T.grid(5, 4):
        with T.block("s2"):
            v, w = T.axis.remap("SR", [i, k])
            with T.init():
                out[v] = T.float32(0)
            out[v] = out[v] + R2[v, w] * t1[v]
)");
    const std::string pre = "b = sch.get_block(\"s2\")\np = sch.get_block(\"s1\")\ni, k = sch.get_loops(p)\n"
                            "sch.reverse_compute_at(b, k)\nl0, l1, l2 = sch.get_loops(b)\n";
    checkMeaning(f, pre);
    checkMeaning(f, pre + "x = sch.decompose_reduction(b, l2)\n");
    QCOMPARE(QString::fromStdString(scriptError(f, pre + "x = sch.decompose_reduction(b, l0)\n").first),
             QString("LoopPositionError"));
  }
  void rfactorOtherReducers() {
    PrimFunc f = parseFunc(kOddities);
    checkMeaning(f, loopsOf("mx", "i, k") + "ko, ki = sch.split(k, factors=[None, 8])\n"
                                            "rf = sch.rfactor(ki, factor_axis=1)\n");
    Schedule sch(f);
    auto loops = getLoops(sch, getBlock(sch, "mx"));
    BlockRV rf = rfactor(sch, loops[1]);
    QCOMPARE(QString::fromStdString(sch.get(rf)->name), QString("mx_rf"));
    QVERIFY(printFunc(sch.func()).find("B_rf[vk, v_i] = T.max(B_rf[vk, v_i], A[v_i, vk])") !=
            std::string::npos);
  }
  void rvsAfterRfactor() {
    Schedule sch(workload("reduce_sum:M=4,N=16"));
    BlockRV b = getBlock(sch, "A_red");
    auto loops = getLoops(sch, b);
    BlockRV rf = rfactor(sch, loops[1]);
    // The block RV now names the write-back block; the loops stay with the rfactor block.
    QCOMPARE(QString::fromStdString(sch.get(b)->name), QString("A_red"));
    QVERIFY(sch.get(b)->iterVars.back().iterType == IterType::CommReduce);
    QCOMPARE(getLoops(sch, rf).size(), size_t(2));
    QVERIFY(sch.get(loops[1])->body->nodeKind == NodeKind::BlockRealize);
    QCOMPARE(maxErrorBetween(sch.original(), sch.func()), 0.0);
  }

  // --- Trace ----------------------------------------------------------------------------------
  void traceRoundTrip() {
    std::string err = traceRoundTripError(
        workload("matmul:M=12,N=10,K=16"),
        loopsOf("C", "i, j, k") + "ko, ki = sch.split(k, factors=[None, 4])\n"
                                  "rf = sch.rfactor(ki, factor_axis=1)\n"
                                  "l0, l1, l2, l3 = sch.get_loops(rf)\n"
                                  "ini = sch.decompose_reduction(rf, l2)\n");
    QVERIFY2(err.empty(), err.c_str());
    Schedule sch(workload("reduce_sum:M=4,N=16"));
    runScript(sch, loopsOf("A_red", "i, k") + "rf = sch.rfactor(k, factor_axis=1)\n"
                                          "w0, w1 = sch.get_loops(b)\n"
                                          "ini = sch.decompose_reduction(b, w0)\n");
    QStringList lines = QString::fromStdString(sch.trace().str()).split('\n');
    QCOMPARE(lines[2], QString("b3 = sch.rfactor(l2, factor_axis=1)"));
    QCOMPARE(lines[3], QString("l4, l5 = sch.get_loops(b0)"));
    QCOMPARE(lines[4], QString("b6 = sch.decompose_reduction(b0, l4)"));
  }

  void exampleScript() {
    // examples/schedules/rfactor_reduce.py runs and keeps the meaning.
    QFile file(QStringLiteral(LOOM_SOURCE_DIR "/examples/schedules/rfactor_reduce.py"));
    QVERIFY(file.open(QIODevice::ReadOnly));
    std::string script = file.readAll().toStdString();
    PrimFunc f = workload("reduce_sum:M=6,N=64");
    Schedule sch(f);
    ScriptResult r = runScript(sch, script, "rfactor_reduce.py");
    QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
    std::string text = printFunc(sch.func());
    QVERIFY2(text.find("for k_1 in T.parallel(16):") != std::string::npos, text.c_str());
    QVERIFY2(text.find("with T.block(\"A_red_rf_init\"):") != std::string::npos, text.c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-5);
  }

  // --- Refusals ------------------------------------------------------------------------------
  void notReductionBlock() {
    checkError(kOddities, loopsOf("ew", "i, k") + "x = sch.decompose_reduction(b, i)\n",
               "NotReductionBlockError",
               "decompose_reduction: block 'ew' is not a reduction block: it has no reduce iter "
               "var");
    checkError(kOddities, loopsOf("ew", "i, k") + "x = sch.rfactor(k)\n", "NotReductionBlockError",
               "rfactor: block 'ew' is not a reduction block");
  }
  void loopNotAncestor() {
    checkError(kOddities, loopsOf("mx", "i, k") + "c = sch.get_block(\"sub\")\n"
                                                  "x = sch.decompose_reduction(c, k)\n",
               "LoopPositionError",
               "decompose_reduction: loop 'k' is not an ancestor of block 'sub'");
  }
  void reduceLoopOutside() {
    checkError(kMatmul, loopsOf("C", "i, j, k") + "sch.reorder(k, i)\n"
                                                  "x = sch.decompose_reduction(b, j)\n",
               "LoopPositionError",
               "decompose_reduction: loop 'k' of reduce iter var 'v_k' of block 'C' is outside "
               "loop 'j', so the init would rerun at each of its iterations");
  }
  void unrecognizedReducer() {
    checkError(kOddities, loopsOf("sub", "i, k") + "x = sch.rfactor(k)\n",
               "UnrecognizedReducerError",
               "rfactor: block 'sub' is not `B[idx] = B[idx] op value`");
  }
  void spatialLoop() {
    checkError(kMatmul, loopsOf("C", "i, j, k") + "x = sch.rfactor(j)\n", "RFactorLoopError",
               "rfactor: loop 'j' is bound to spatial iter var 'v_j' of block 'C'");
  }
  void fusedSpatialReduceLoop() {
    // fuzz_difftest TIR seed 101521: a loop fused from a spatial and a reduce loop became one
    // reduce iter var of the rfactor block, whose init then ran only at the fused loop's 0, not
    // once per spatial value (garbage partial results, compiled; NaN-hidden in the interpreter).
    checkError(kMatmul,
               loopsOf("C", "i, j, k") +
                   "k0, k1 = sch.split(k, factors=[None, 2])\nf = sch.fuse(j, k0)\nx = sch.rfactor(k1)\n",
               "RFactorLoopError", "binds both spatial iter var 'v_j' and reduce iter var 'v_k' of block 'C'");
  }
  void unboundLoop() {
    checkError(kMatmul, loopsOf("C", "i, j, k") + "u = sch.add_unit_loop(b)\nx = sch.rfactor(u)\n",
               "RFactorLoopError", "rfactor: loop 'u' is not bound to any iter var of block 'C'");
  }
  void factorAxisOutOfRange() {
    checkError(kMatmul, loopsOf("C", "i, j, k") + "x = sch.rfactor(k, factor_axis=3)\n",
               "FactorAxisOutOfRangeError",
               "rfactor: factor_axis 3 is out of range [-3, 2] for buffer 'C' of rank 2");
    checkError(kMatmul, loopsOf("C", "i, j, k") + "x = sch.rfactor(k, factor_axis=-4)\n",
               "FactorAxisOutOfRangeError", "factor_axis -4 is out of range");
  }
  void severalBlocks() {
    checkError(kOddities, loopsOf("s1", "i, k") + "x = sch.rfactor(i)\n", "NotSingleChildError",
               "rfactor: loop 'i' must have exactly one block under it, found 2 ('s1', 's2')");
    checkError(kOddities, loopsOf("s1", "i, k") + "x = sch.rfactor(k)\n", "NotSingleChildError",
               "rfactor: loop 'i' above block 's1' holds other blocks too");
  }
  void failedPrimitiveLeavesIRAlone() {
    Schedule sch(parseFunc(kMatmul));
    auto loops = getLoops(sch, getBlock(sch, "C"));
    PrimFunc before = sch.func();
    QVERIFY_THROWS_EXCEPTION(RFactorLoopError, rfactor(sch, loops[0]));
    QVERIFY(sch.func().same_as(before));
  }
};

QTEST_APPLESS_MAIN(TestReduction)
#include "test_reduction.moc"
