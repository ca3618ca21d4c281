// compute_at, reverse_compute_at: golden text, meaning on random inputs, every refusal, traces.
#include <random>

#include "CacheInlineTestUtil.h"
#include "ScheduleTestUtil.h"
#include "core/schedule/Analysis.h"
#include "core/transform/CompactBuffers.h"
#include "core/transform/LowerBlocks.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

const char* kHeader = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        B = T.alloc_buffer((16, 16), "float32")
)";

/// kTwo with the `n`-th (0: B, 1: C) `T.axis.remap("SS", [i, j])` replaced by `axes`.
std::string twoWith(int n, const std::string& axes) {
  std::string s = kTwo;
  const std::string pat = "vi, vj = T.axis.remap(\"SS\", [i, j])";
  size_t at = s.find(pat);
  if (n == 1) at = s.find(pat, at + 1);
  return s.replace(at, pat.size(), axes);
}

const char* kOpaque = "vi = T.axis.opaque(16, i)\n            vj = T.axis.spatial(16, j)";

/// B is read by C in a nested block scope ("wrap"), by D after C, and A is rewritten by A2.
const char* kScopes = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32"), D: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    with T.block("wrap"):
        T.reads(B[0:16, 0:16])
        T.writes(C[0:16, 0:16])
        for i, j in T.grid(16, 16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1)
    for i, j in T.grid(16, 16):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = B[vi, vj] * B[vi, vj]
    for i, j in T.grid(16, 16):
        with T.block("A2"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(D[vi, vj])
            T.writes(A[vi, vj])
            A[vi, vj] = D[vi, vj]
)";

/// B is written at B[2 * vi]: its iter range cannot be read off the index.
const char* kStrided = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((32,))
    for i in range(16):
        with T.block("B"):
            vi = T.axis.spatial(16, i)
            T.reads(A[vi])
            T.writes(B[vi * 2])
            B[vi * 2] = A[vi]
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi * 2])
            T.writes(C[vi])
            C[vi] = B[vi * 2]
)";

/// Loop i of C also holds E, which neither reads nor writes B: B can go before or after it.
const char* kUnrelated = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32"), E: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i in range(16):
        for j in range(16):
            with T.block("E"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(E[vi, vj])
                E[vi, vj] = A[vi, vj] + T.float32(5)
        for j in range(16):
            with T.block("C"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(B[vi, vj])
                T.writes(C[vi, vj])
                C[vi, vj] = B[vi, vj] + T.float32(1)
)";

/// C sums the rows of B (a reduction consumer).
/// C = A + 1 over 6 x 9: 54 elements, a fused loop that 12 does not split evenly.
const char* kCopy6x9 = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6, 9), "float32"), C: T.Buffer((6, 9), "float32")):
    for i, j in T.grid(6, 9):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] + T.float32(1)
)";

const char* kRowSum = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 6), "float32"), C: T.Buffer((8,), "float32")):
    B = T.alloc_buffer((8, 6))
    for i, j in T.grid(8, 6):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, k in T.grid(8, 6):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            T.reads(B[vi, vk])
            T.writes(C[vi])
            with T.init():
                C[vi] = T.float32(0)
            C[vi] = C[vi] + B[vi, vk]
)";

const char* kGet = "b = sch.get_block(\"B\")\nc = sch.get_block(\"C\")\n";

} // namespace

class TestComputeAt : public QObject {
  Q_OBJECT
private slots:
  // --- Golden text --------------------------------------------------------------------------
  void computeAtGolden() {
    std::string got =
        applyAndPrint(kTwo, std::string(kGet) + "i, j = sch.get_loops(c)\nsch.compute_at(b, i)\n");
    LOOM_COMPARE_TEXT(got, std::string(kHeader) + R"(        for i in range(16):
            for ax0 in range(16):
                with T.block("B"):
                    vi, vj = T.axis.remap("SS", [i, ax0])
                    T.reads(A[vi, vj])
                    T.writes(B[vi, vj])
                    B[vi, vj] = A[vi, vj] * T.float32(2)
            for j in range(16):
                with T.block("C"):
                    vi_1, vj_1 = T.axis.remap("SS", [i, j])
                    T.reads(B[vi_1, vj_1])
                    T.writes(C[vi_1, vj_1])
                    C[vi_1, vj_1] = B[vi_1, vj_1] + T.float32(1)
)");
  }
  void reverseComputeAtGolden() {
    std::string got = applyAndPrint(
        kTwo, std::string(kGet) + "i, j = sch.get_loops(b)\nsch.reverse_compute_at(c, j)\n");
    LOOM_COMPARE_TEXT(got, std::string(kHeader) + R"(        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A[vi, vj] * T.float32(2)
            with T.block("C"):
                vi_1, vj_1 = T.axis.remap("SS", [i, j])
                T.reads(B[vi_1, vj_1])
                T.writes(C[vi_1, vj_1])
                C[vi_1, vj_1] = B[vi_1, vj_1] + T.float32(1)
)");
  }
  void preserveUnitLoops() {
    std::string got = applyAndPrint(
        kTwo, std::string(kGet) +
                  "i, j = sch.get_loops(c)\nsch.compute_at(b, j, preserve_unit_loops=True)\n");
    QVERIFY2(got.find("for ax0, ax1 in T.grid(1, 1):") != std::string::npos, got.c_str());
    QVERIFY2(got.find("vi = T.axis.spatial(16, i + ax0)") != std::string::npos, got.c_str());
  }
  void computeAtConvGolden() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3");
    Schedule s = scheduled(f, "p = sch.get_block(\"pad_temp\")\nc = "
                              "sch.get_block(\"conv2d_nchw\")\nl = sch.get_loops(c)\n"
                              "sch.compute_at(p, l[3])\n");
    std::string got = printFunc(s.func());
    QVERIFY2(got.find(R"(        for nn, ff, yy, xx in T.grid(1, 4, 6, 6):
            for ax0, ax1, ax2 in T.grid(3, 3, 3):
                with T.block("pad_temp"):
                    v_i0 = T.axis.spatial(1, 0)
                    v_i1 = T.axis.remap("S", [ax0])
                    v_i2 = T.axis.spatial(8, yy + ax1)
                    v_i3 = T.axis.spatial(8, xx + ax2)
)") != std::string::npos,
             got.c_str());
    QCOMPARE(maxErrorBetween(f, s.func()), 0.0);
  }

  void overhangGetsPredicate() {
    // C's rows split 4 x 5 = 20 > 16: under io the consumer asks for rows io*5 .. io*5+4, past
    // B's domain in the last tile, so the moved block is guarded.
    PrimFunc f = parseFunc(kTwo);
    Schedule sch = scheduled(f, std::string(kGet) + "i, j = sch.get_loops(c)\n"
                                                    "io, ii = sch.split(i, factors=[None, 5])\n"
                                                    "sch.compute_at(b, io)\n");
    std::string t = printFunc(sch.func());
    QVERIFY2(t.find(R"(            for ax0, ax1 in T.grid(5, 16):
                with T.block("B"):
                    vi = T.axis.spatial(16, i_0 * 5 + ax0)
                    vj = T.axis.remap("S", [ax1])
                    T.where(i_0 * 5 + ax0 < 16)
)") != std::string::npos,
             t.c_str());
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
  }

  // --- Meaning --------------------------------------------------------------------------------
  void convPadComputeAtRandom() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=7,W=6,K=4,R=3,S=3");
    std::mt19937 rng(17);
    for (int trial = 0; trial < 24; ++trial) {
      Schedule sch(f);
      BlockRV c = getBlock(sch, "conv2d_nchw");
      auto l = getLoops(sch, c);
      split(sch, l[2], {nullptr, int64_t(1 + rng() % 4)});
      split(sch, l[3], {int64_t(1 + rng() % 4), nullptr});
      auto loops = getLoops(sch, c);
      LoopRV at = loops[rng() % loops.size()];
      computeAt(sch, getBlock(sch, "pad_temp"), at, rng() % 2 == 0);
      double err = maxErrorBetween(f, sch.func(), trial);
      QVERIFY2(err < 1e-5, (sch.trace().str() + printFunc(sch.func())).c_str());
    }
  }
  void elementwiseChainRandom() {
    PrimFunc f = parseFunc(kTwo);
    std::mt19937 rng(23);
    for (int trial = 0; trial < 40; ++trial) {
      Schedule sch(f);
      BlockRV b = getBlock(sch, "B"), c = getBlock(sch, "C");
      bool reverse = trial % 2 == 1;
      BlockRV host = reverse ? b : c;
      auto l = getLoops(sch, host);
      split(sch, l[rng() % 2], {nullptr, int64_t(1 + rng() % 6)});
      auto loops = getLoops(sch, host);
      LoopRV at = loops[rng() % loops.size()];
      if (reverse)
        reverseComputeAt(sch, c, at, rng() % 2 == 0);
      else
        computeAt(sch, b, at, rng() % 2 == 0);
      double err = maxErrorBetween(f, sch.func(), trial);
      QVERIFY2(err == 0, (sch.trace().str() + printFunc(sch.func())).c_str());
    }
  }
  void computeAtTwiceMovesDeeper() {
    PrimFunc f = parseFunc(kTwo);
    Schedule sch = scheduled(f, std::string(kGet) + "i, j = sch.get_loops(c)\n"
                                                    "sch.compute_at(b, i)\nsch.compute_at(b, j)\n");
    std::string got = printFunc(sch.func());
    QVERIFY2(got.find("for i, j in T.grid(16, 16):") != std::string::npos, got.c_str());
    QVERIFY2(got.find("vi, vj = T.axis.remap(\"SS\", [i, j])") != std::string::npos, got.c_str());
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
  }
  void traceRoundTrip() {
    checkTraceRoundTrip(parseFunc(kTwo), std::string(kGet) +
                                             "i, j = sch.get_loops(c)\nio, ii = sch.split(i, "
                                             "factors=[None, 3])\nsch.compute_at(b, ii, "
                                             "preserve_unit_loops=True)\n");
    checkTraceRoundTrip(parseFunc(kTwo),
                        std::string(kGet) +
                            "i, j = sch.get_loops(b)\nsch.reverse_compute_at(c, i)\n");
    Schedule sch = scheduled(parseFunc(kTwo), std::string(kGet) + "i, j = sch.get_loops(c)\n"
                                                                  "sch.compute_at(b, i, True)\n");
    QVERIFY2(sch.trace().str().find("sch.compute_at(b0, l2, preserve_unit_loops=True)") !=
                 std::string::npos,
             sch.trace().str().c_str());
  }

  void insertionIndex() {
    PrimFunc f = parseFunc(kUnrelated);
    auto order = [&](const std::string& idx) {
      Schedule sch = scheduled(f, std::string(kGet) +
                                      "i, j = sch.get_loops(c)\nsch.compute_at(b, i" + idx + ")\n");
      std::string t = printFunc(sch.func());
      size_t b = t.find("T.block(\"B\")"), e = t.find("T.block(\"E\")");
      if (maxErrorBetween(f, sch.func()) != 0) return std::string("wrong");
      return std::string(b < e ? "BE" : "EB");
    };
    QCOMPARE(QString::fromStdString(order("")), QString("EB"));           // -1: last place
    QCOMPARE(QString::fromStdString(order(", index=-2")), QString("BE")); // first place
    QCOMPARE(QString::fromStdString(order(", index=0")), QString("BE"));
    QCOMPARE(QString::fromStdString(order(", index=1")), QString("EB"));
    expectError(kUnrelated,
                std::string(kGet) + "i, j = sch.get_loops(c)\nsch.compute_at(b, i, index=2)\n",
                "ScheduleValueError",
                "compute_at: index 2 is not -1 (last), -2 (first) or a position in [0, 1] of the "
                "body of loop 'i' where block 'B' can go");
    // The index is kept in the trace when it is not the default.
    Schedule sch = scheduled(f, std::string(kGet) + "i, j = sch.get_loops(c)\n"
                                                    "sch.compute_at(b, i, index=-2)\n");
    QVERIFY2(sch.trace().str().find("sch.compute_at(b0, l2, index=-2)") != std::string::npos,
             sch.trace().str().c_str());
  }
  void detailedMessageMarksBlocks() {
    Schedule sch(parseFunc(kScopes));
    try {
      computeAt(sch, getBlock(sch, "B"), getLoops(sch, getBlock(sch, "D"))[0]);
      QFAIL("no error");
    } catch (const NotAllRequiredBlocksUnderLoopError& e) {
      std::string d = e.detailedMessage();
      QVERIFY2(d.find("        with T.block(\"wrap\"):\n        ^^^^^^^^^^^^^^^^^^^^^\n") !=
                   std::string::npos,
               d.c_str());
    }
  }

  void reductionConsumerReverseComputeAt() {
    // Under B's row loop the whole row is produced: the row sum can follow it there.
    PrimFunc f = parseFunc(kRowSum);
    Schedule sch = scheduled(f, std::string(kGet) + "i, j = sch.get_loops(b)\n"
                                                    "sch.reverse_compute_at(c, i)\n");
    std::string t = printFunc(sch.func());
    QVERIFY2(t.find("for ax0 in range(6):") != std::string::npos, t.c_str());
    QVERIFY2(t.find("vi_1, vk = T.axis.remap(\"SR\", [i, ax0])") != std::string::npos, t.c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-6);
    // Under the column loop only one element is produced: the reduction would be split.
    expectError(kRowSum,
                std::string(kGet) + "i, j = sch.get_loops(b)\nsch.reverse_compute_at(c, j)\n",
                "UnsupportedAccessPatternError",
                "reverse_compute_at: in one iteration of loop 'j', block 'C' would cover only part "
                "of the domain of its reduce iter var 'vk', splitting the reduction");
  }

  void computeAtKeepsAPredicateTyingIterVars() {
    // fuzz_difftest TIR seeds 102982 and 103568: rfactor's block gets one reduce iter var per loop,
    // each over its loop's range; over a split that does not divide (6 x 1 for 5) only the
    // predicate keeps the iter var in the buffer. compute_at rebuilt the loops from the iter var
    // domains and dropped the predicate: the block read A[.., 5] of 5. It now keeps a conjunct it
    // can rewrite in the new loops and refuses one it cannot.
    PrimFunc f = parseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((2, 3, 5), "float32"), B: T.Buffer((2,), "float32")):
    for i, k, l in T.grid(2, 3, 5):
        with T.block("s"):
            v, w0, w1 = T.axis.remap("SRR", [i, k, l])
            with T.init():
                B[v] = T.float32(0)
            B[v] = B[v] + A[v, w0, w1]
)");
    for (const char* split : {"[6, None]", "[None, 2]", "[4, 2]"}) {
      Schedule sch(f);
      ScriptResult r = runScript(sch, loopsOf("s", "i, k, l") + "lo, li = sch.split(l, factors=" + split +
                                              ")\nrf = sch.rfactor(k)\n"
                                              "w0, w1 = sch.get_loops(b)\nsch.compute_at(rf, w0)\n",
                                 "s.py");
      QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
      double err = maxErrorBetween(f, sch.func());
      QVERIFY2(err < 1e-5, (std::to_string(err) + "\n" + printFunc(sch.func())).c_str());
    }
  }
  void unevenFusedSplitWriteBackCopiesItsOwnElements() {
    // Fuzz seed 100530: C's loops fused (54) and split by 12, a cache_write and the write-back
    // moved under the outer loop. One iteration writes out 12 elements, which do not fill the
    // rows they lie in: a write-back over rows (the box of the produced region) copied elements of
    // other iterations, and compact-buffers, which gives C_local one copy per iteration of that
    // loop, made them uninitialized (wrong numbers from -O3 code). The write-back now runs over
    // the producer's own inner loop, one instance per element it wrote.
    PrimFunc f = parseFunc(kCopy6x9);
    Schedule sch = scheduled(f, "b = sch.get_block(\"C\")\n"
                                "i, j = sch.get_loops(b)\n"
                                "fused = sch.fuse(i, j)\n"
                                "fo, fi = sch.split(fused, factors=[None, 12])\n"
                                "cw = sch.cache_write(b, 0, \"local\")\n"
                                "sch.reverse_compute_at(cw, fo)\n");
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
    // The interpreter poisons every allocation (NaN): after lower-blocks and compact-buffers
    // C_local lives in one iteration of the outer loop, and the write-back reads only what that
    // iteration wrote.
    PrimFunc lowered = transform::compactBuffers(transform::lowerBlocks(sch.func()));
    QCOMPARE(maxErrorBetween(f, lowered), 0.0);
    std::string t = printFunc(sch.func());
    QVERIFY2(t.find(R"(            for ax0 in range(12):
                with T.block("C_local"):
                    v0 = T.axis.spatial(6, (i_j_fused_0 * 12 + ax0) // 9)
                    v1 = T.axis.spatial(9, (i_j_fused_0 * 3 + ax0) % 9)
                    T.where(i_j_fused_0 * 12 + ax0 < 54)
)") != std::string::npos,
             t.c_str());
    // A split that fills whole rows (18 = 2 rows) keeps the write-back over the box.
    Schedule even = scheduled(f, "b = sch.get_block(\"C\")\n"
                                 "i, j = sch.get_loops(b)\n"
                                 "fused = sch.fuse(i, j)\n"
                                 "fo, fi = sch.split(fused, factors=[None, 18])\n"
                                 "cw = sch.cache_write(b, 0, \"local\")\n"
                                 "sch.reverse_compute_at(cw, fo)\n");
    std::string te = printFunc(even.func());
    QVERIFY2(te.find("for ax0, ax1 in T.grid(2, 9):") != std::string::npos, te.c_str());
    QCOMPARE(maxErrorBetween(f, transform::compactBuffers(transform::lowerBlocks(even.func()))), 0.0);
  }

  void rfactorWriteBackUnderAnUnevenFusedSplitIsRefused() {
    // fuzz_difftest TIR seed 126273: rfactor over k, the rf block's loops (i, k) fused (45) and
    // split by 3, the write-back (a min over k) moved under the outer loop. One iteration writes 3
    // elements of rf, which straddle rows; the write-back there covered whole rows, reading
    // elements that other iterations write. Right while rf lives at the root, but compact-buffers
    // gives rf one copy per iteration, and the lowered program read elements its copy never held
    // (wrong minima in the interpreter on the lowered program, whose allocations are NaN). Refused
    // now; an even split (by 5: one row per iteration) is still taken and stays right lowered.
    const char* rowMin = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((9, 5), "float32"), C: T.Buffer((9,), "float32")):
    for i, k in T.grid(9, 5):
        with T.block("C"):
            vi, vk = T.axis.remap("SR", [i, k])
            with T.init():
                C[vi] = T.float32("inf")
            C[vi] = T.min(C[vi], A[vi, vk])
)";
    auto script = [](int factor) {
      return loopsOf("C", "i, k") + "rf = sch.rfactor(k)\n"
             "a, b = sch.get_loops(rf)\nf = sch.fuse(a, b)\n"
             "fo, fi = sch.split(f, factors=[None, " + std::to_string(factor) + "])\n"
             "c = sch.get_block(\"C\")\nsch.reverse_compute_at(c, fo)\n";
    };
    expectError(rowMin, script(3), "UnsupportedAccessPatternError",
                "reverse_compute_at: the region of buffer 'C_rf' that block 'C' would read in one iteration of "
                "loop 'i_k_fused_0' overlaps the next iteration's");
    PrimFunc f = parseFunc(rowMin);
    Schedule even = scheduled(f, script(5));
    QCOMPARE(maxErrorBetween(f, even.func()), 0.0);
    QCOMPARE(maxErrorBetween(f, transform::compactBuffers(transform::lowerBlocks(even.func()))), 0.0);
  }

  void consumerRunsOnlyWhereItsProducerRuns() {
    // fuzz_difftest TIR seed 145338 (minimised): a loop split into (6, 1), its inner loop of
    // extent 1 split by 2 (the producer's binding is i0_0 alone, `T.where(i0_1_0 + i0_1_1 < 1)`
    // skips the second iteration), the consumer moved under the innermost loop, then i0_1_0 and
    // i0_1_1 fused. The consumer ran in both iterations of the fused loop, the second rereading
    // what the first wrote: right while t0 lives at the root, but compact-buffers gives t0 one
    // copy per iteration of the fused loop, so the second store read a copy nothing wrote (NaN in
    // the interpreter on the lowered program, garbage compiled). The consumer now carries the
    // producer's predicate on the loops they share.
    const char* twoStage = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), out: T.Buffer((6,), "float32")):
    t0 = T.alloc_buffer((6,), "float32")
    for i0 in T.grid(6):
        with T.block("s0"):
            v0 = T.axis.remap("S", [i0])
            t0[v0] = A[v0] + T.float32(1)
    for i1 in T.grid(6):
        with T.block("s1"):
            v0 = T.axis.remap("S", [i1])
            out[v0] = t0[v0] * T.float32(2)
)";
    const std::string script = "b0 = sch.get_block(\"s0\")\nl1, = sch.get_loops(b0)\n"
                               "l2, l3 = sch.split(l1, factors=[None, 1])\n"
                               "l4, l5 = sch.split(l3, factors=[2, None])\n"
                               "b6 = sch.get_block(\"s1\")\n"
                               "sch.reverse_compute_at(b6, l5, preserve_unit_loops=True)\n"
                               "l7, l8, l9, l10 = sch.get_loops(b6)\nl11 = sch.fuse(l8, l9)\n";
    PrimFunc f = parseFunc(twoStage);
    Schedule sch = scheduled(f, script);
    QCOMPARE(sch.trace().insts.size(), size_t(8));
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
    QCOMPARE(maxErrorBetween(f, transform::compactBuffers(transform::lowerBlocks(sch.func()))), 0.0);
    QVERIFY2(printFunc(sch.func()).find("T.where(i0_1_0_i0_1_1_fused < 1)") != std::string::npos,
             printFunc(sch.func()).c_str());
  }

  void producerPredicateOnAParameterIsNotInherited() {
    // The producer writes only out[0:3] of a parameter; the consumer reads all of it (elements 3-5
    // are the caller's). Limiting the consumer to the producer's iterations would leave C[3:6]
    // unwritten; a parameter is never allocated per iteration, so nothing is inherited.
    const char* partial = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((6,), "float32"), B: T.Buffer((6,), "float32"), C: T.Buffer((6,), "float32")):
    for i in T.grid(6):
        with T.block("P"):
            v = T.axis.remap("S", [i])
            T.where(i < 3)
            B[v] = A[v] + T.float32(1)
    for i in T.grid(6):
        with T.block("Q"):
            v = T.axis.remap("S", [i])
            C[v] = B[v] * T.float32(2)
)";
    PrimFunc f = parseFunc(partial);
    Schedule sch = scheduled(f, "p = sch.get_block(\"P\")\ni, = sch.get_loops(p)\n"
                                "q = sch.get_block(\"Q\")\nsch.reverse_compute_at(q, i)\n");
    QCOMPARE(sch.trace().insts.size(), size_t(4));
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
  }

  void tvmPrintedForm() {
    // The form TVM prints traces in: every argument by keyword.
    PrimFunc f = parseFunc(kTwo);
    Schedule sch =
        scheduled(f, "b0 = sch.get_block(name=\"B\", func_name=\"main\")\n"
                     "b1 = sch.get_block(name=\"C\", func_name=\"main\")\n"
                     "l2, l3 = sch.get_loops(block=b1)\n"
                     "sch.compute_at(block=b0, loop=l2, preserve_unit_loops=True, index=-1)\n"
                     "sch.reverse_compute_inline(block=b1)\n");
    QCOMPARE(sch.trace().insts.size(), size_t(5));
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
  }

  // --- Refusals -------------------------------------------------------------------------------
  void rootBlock() {
    expectError(kTwo,
                "r = sch.get_block(\"root\")\nc = sch.get_block(\"C\")\ni, j = "
                "sch.get_loops(c)\nsch.compute_at(r, i)\n",
                "ScheduleValueError", "compute_at: block 'root' is the function's root block");
  }
  void notInSameScope() {
    expectError(kScopes, std::string(kGet) + "i, j = sch.get_loops(c)\nsch.compute_at(b, i)\n",
                "NotInSameScopeError",
                "compute_at: loop 'i' and block 'B' are not in the same block scope");
  }
  void notCompleteOrReduction() {
    expectError(twoWith(0, kOpaque),
                std::string(kGet) + "i, j = sch.get_loops(c)\nsch.compute_at(b, i)\n",
                "NotCompleteOrReductionBlockError",
                "compute_at: block 'B' is neither a complete block (its iter var 'vi' is opaque, "
                "not spatial) nor a reduction block (its iter var 'vi' is opaque)");
  }
  void notCompactDataFlow() {
    expectError(twoWith(1, kOpaque),
                std::string(kGet) + "i, j = sch.get_loops(c)\nsch.compute_at(b, i)\n",
                "NotCompactDataFlowError",
                "compute_at: block 'C' under loop 'i' is neither a complete block");
  }
  void noConsumer() {
    expectError(kTwo, std::string(kGet) + "i, j = sch.get_loops(b)\nsch.compute_at(c, i)\n",
                "NoRequiredBlockError", "compute_at: block 'C' has no consumer in its scope");
    expectError(kTwo, std::string(kGet) + "i, j = sch.get_loops(c)\nsch.reverse_compute_at(b, i)\n",
                "NoRequiredBlockError",
                "reverse_compute_at: block 'B' has no producer in its scope");
  }
  void consumerNotUnderLoop() {
    expectError(kScopes,
                "b = sch.get_block(\"B\")\nd = sch.get_block(\"D\")\ni, j = "
                "sch.get_loops(d)\nsch.compute_at(b, i)\n",
                "NotAllRequiredBlocksUnderLoopError",
                "compute_at: consumer block 'wrap' of block 'B' is not under loop 'i'");
  }
  void brokenDependency() {
    // A2 rewrites A after B read it: computing B inside C's loop would still read the old A, but
    // the order check refuses the move because the dependency runs against program order.
    std::string war = std::string(kTwo) + R"(    for i, j in T.grid(16, 16):
        with T.block("A2"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(C[vi, vj])
            T.writes(A[vi, vj])
            A[vi, vj] = C[vi, vj]
)";
    expectError(war, std::string(kGet) + "i, j = sch.get_loops(c)\nsch.compute_at(b, i)\n",
                "BrokenDependencyError",
                "compute_at: block 'A2' writes buffer 'A' that block 'B' reads, but 'B' runs "
                "first in the program");
  }
  void unsupportedAccess() {
    expectError(kStrided, std::string(kGet) + "(i,) = sch.get_loops(c)\nsch.compute_at(b, i)\n",
                "UnsupportedAccessPatternError",
                "compute_at: block 'B' accesses buffer 'B' in dimension 0 with an index that is "
                "not one of its iter vars plus a constant");
  }
  void failedLeavesStateAlone() {
    Schedule sch(parseFunc(kStrided));
    PrimFunc before = sch.func();
    auto loops = getLoops(sch, getBlock(sch, "C"));
    size_t n = sch.trace().insts.size();
    QVERIFY_THROWS_EXCEPTION(UnsupportedAccessPatternError,
                             computeAt(sch, getBlock(sch, "B"), loops[0]));
    QVERIFY(sch.func().same_as(before));
    QCOMPARE(sch.trace().insts.size(), n + 1); // only the get_block above
  }
};

QTEST_APPLESS_MAIN(TestComputeAt)
#include "test_compute_at.moc"
