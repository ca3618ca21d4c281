// compute_inline, reverse_compute_inline: golden text, meaning on random inputs, every refusal,
// traces.
#include <fstream>
#include <random>
#include <sstream>

#include "CacheInlineTestUtil.h"
#include "core/schedule/Analysis.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

const char* kHeader = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
)";

/// Three stages: B = A * 2, D = B[j, i] (transposed) - A, C = D * D + B; B has two readers.
const char* kThree = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((12, 12), "float32"), C: T.Buffer((12, 12), "float32")):
    B = T.alloc_buffer((12, 12))
    D = T.alloc_buffer((12, 12))
    for i, j in T.grid(12, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(12, 12):
        with T.block("D"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vj, vi], A[vi, vj])
            T.writes(D[vi, vj])
            D[vi, vj] = B[vj, vi] - A[vi, vj]
    for i, j in T.grid(12, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(D[vi, vj], B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = D[vi, vj] * D[vi, vj] + B[vi, vj]
)";

/// Odd producers: "W2" writes two buffers, "S" stores at a strided index, "P1"/"P2" both write P.
const char* kOdd = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8,), "float32"), C: T.Buffer((8,), "float32")):
    X = T.alloc_buffer((8,))
    Y = T.alloc_buffer((8,))
    S = T.alloc_buffer((16,))
    P = T.alloc_buffer((8,))
    for i in range(8):
        with T.block("W2"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(X[vi], Y[vi])
            X[vi] = A[vi]
            Y[vi] = A[vi]
    for i in range(8):
        with T.block("S"):
            vi = T.axis.spatial(8, i)
            T.reads(X[vi])
            T.writes(S[vi * 2])
            S[vi * 2] = X[vi]
    for i in range(8):
        with T.block("P1"):
            vi = T.axis.spatial(8, i)
            T.reads(Y[vi])
            T.writes(P[vi])
            P[vi] = Y[vi]
    for i in range(8):
        with T.block("P2"):
            vi = T.axis.spatial(8, i)
            T.reads(S[vi * 2])
            T.writes(P[vi])
            P[vi] = P[vi] + S[vi * 2]
    for i in range(8):
        with T.block("C"):
            vi = T.axis.spatial(8, i)
            T.reads(P[vi], S[vi * 2])
            T.writes(C[vi])
            C[vi] = P[vi] + S[vi * 2]
)";

int countBlocks(const PrimFunc& f) {
  return int(allBlocks(f).size());
}

} // namespace

class TestComputeInline : public QObject {
  Q_OBJECT
private slots:
  // --- Golden text --------------------------------------------------------------------------
  void computeInlineGolden() {
    std::string got = applyAndPrint(kTwo, "b = sch.get_block(\"B\")\nsch.compute_inline(b)\n");
    LOOM_COMPARE_TEXT(got, std::string(kHeader) + R"(    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
)");
  }
  void reverseComputeInlineGolden() {
    std::string got =
        applyAndPrint(kTwo, "c = sch.get_block(\"C\")\nsch.reverse_compute_inline(c)\n");
    LOOM_COMPARE_TEXT(got, std::string(kHeader) + R"(    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = A[vi, vj] * T.float32(2) + T.float32(1)
)");
  }
  void convPadInline() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3");
    Schedule s = scheduled(f, "p = sch.get_block(\"pad_temp\")\nsch.compute_inline(p)\n");
    std::string got = printFunc(s.func());
    QVERIFY2(got.find("pad_temp") == std::string::npos, got.c_str());
    QVERIFY2(got.find("T.reads(data[v_nn, v_rc, v_ry + v_yy - 1, v_rx + v_xx - 1], "
                      "weight[v_ff, v_rc, v_ry, v_rx])") != std::string::npos,
             got.c_str());
    QVERIFY2(got.find("T.if_then_else(v_yy + v_ry >= 1 and v_yy + v_ry < 7") != std::string::npos,
             got.c_str());
    QCOMPARE(maxErrorBetween(f, s.func()), 0.0);
  }
  void transposedConsumerGolden() {
    // D reads B[vj, vi]: the inlined value is A[vj, vi] * 2; its region of A is merged with the
    // one D already reads (their bounding box), and C now reads A directly.
    std::string got = applyAndPrint(kThree, "b = sch.get_block(\"B\")\nsch.compute_inline(b)\n");
    QVERIFY2(got.find("T.reads(A[T.min(vj, vi):T.min(vj, vi) + (T.max(vj, vi) - T.min(vj, vi) + "
                      "1), T.min(vi, vj):T.min(vi, vj) + (T.max(vi, vj) - T.min(vi, vj) + 1)])") !=
                 std::string::npos,
             got.c_str());
    QVERIFY2(got.find("T.reads(D[vi_1, vj_1], A[vi_1, vj_1])") != std::string::npos, got.c_str());
    QCOMPARE(maxErrorBetween(parseFunc(kThree), parseFunc(got)), 0.0);
    QVERIFY2(got.find("D[vi, vj] = A[vj, vi] * T.float32(2) - A[vi, vj]") != std::string::npos,
             got.c_str());
  }

  // --- Meaning --------------------------------------------------------------------------------
  void softmaxInlineExp() {
    PrimFunc f = workload("softmax:M=5,N=9");
    Schedule s = scheduled(f, "e = sch.get_block(\"T_softmax_exp\")\nsch.compute_inline(e)\n");
    QCOMPARE(countBlocks(s.func()), countBlocks(f) - 1);
    QVERIFY(maxErrorBetween(f, s.func()) < 1e-6);
  }
  void randomInlineChains() {
    PrimFunc f = parseFunc(kThree);
    std::mt19937 rng(31);
    for (int trial = 0; trial < 30; ++trial) {
      Schedule sch(f);
      // Random splits first (the inlined value must follow the consumer's bindings), then inline
      // D into C (reverse: C into D is refused, D's producer B is not its only producer) and/or B.
      for (const char* name : {"B", "D", "C"}) {
        auto l = getLoops(sch, getBlock(sch, name));
        split(sch, l[rng() % 2], {nullptr, int64_t(1 + rng() % 5)});
      }
      int mode = int(rng() % 3);
      if (mode == 0 || mode == 2) computeInline(sch, getBlock(sch, "D"));
      if (mode == 1 || mode == 2) computeInline(sch, getBlock(sch, "B"));
      double err = maxErrorBetween(f, sch.func(), trial);
      QVERIFY2(err < 1e-6, (sch.trace().str() + printFunc(sch.func())).c_str());
    }
  }
  void reverseInlineAfterSplits() {
    PrimFunc f = parseFunc(kTwo);
    std::mt19937 rng(5);
    for (int trial = 0; trial < 20; ++trial) {
      Schedule sch(f);
      auto l = getLoops(sch, getBlock(sch, "B"));
      split(sch, l[rng() % 2], {int64_t(1 + rng() % 6), nullptr});
      // The consumer's splits divide its loops: a predicate on it would be dropped (refused).
      auto lc = getLoops(sch, getBlock(sch, "C"));
      split(sch, lc[rng() % 2], {nullptr, int64_t(1) << (rng() % 5)});
      reverseComputeInline(sch, getBlock(sch, "C"));
      QCOMPARE(countBlocks(sch.func()), 2); // root and B
      QCOMPARE(maxErrorBetween(f, sch.func(), trial), 0.0);
    }
  }
  void traceRoundTrip() {
    checkTraceRoundTrip(parseFunc(kThree), "b = sch.get_block(\"B\")\nd = sch.get_block(\"D\")\n"
                                           "sch.compute_inline(d)\nsch.compute_inline(b)\n");
    checkTraceRoundTrip(parseFunc(kTwo),
                        "c = sch.get_block(\"C\")\nsch.reverse_compute_inline(c)\n");
  }
  void rvsAfterInline() {
    Schedule sch(parseFunc(kTwo));
    BlockRV b = getBlock(sch, "B"), c = getBlock(sch, "C");
    computeInline(sch, b);
    QVERIFY(!sch.isValid(Value(b)));
    QCOMPARE(QString::fromStdString(sch.get(c)->name), QString("C"));
    QCOMPARE(getLoops(sch, c).size(), size_t(2));
  }

  void softmaxExampleScript() {
    PrimFunc f = workload("softmax:M=6,N=10");
    std::string script = exampleScript("softmax_inline.py");
    QVERIFY(!script.empty());
    Schedule sch(f);
    ScriptResult r = runScript(sch, script, "softmax_inline.py");
    QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
    std::string text = printFunc(sch.func());
    QVERIFY2(text.find("T_softmax_exp[") == std::string::npos, text.c_str());
    QVERIFY2(text.find("T.block(\"T_softmax_exp\")") == std::string::npos, text.c_str());
    QVERIFY2(text.find("scope=\"local\"") != std::string::npos, text.c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-5);
  }

  // --- Refusals -------------------------------------------------------------------------------
  void root() {
    expectError(kTwo, "r = sch.get_block(\"root\")\nsch.compute_inline(r)\n", "ScheduleValueError",
                "compute_inline: block 'root' is the function's root block");
  }
  void reduction() {
    auto [k, msg] =
        scriptError(workload("softmax:M=4,N=8"),
                    "m = sch.get_block(\"T_softmax_maxelem\")\nsch.compute_inline(m)\n");
    QCOMPARE(QString::fromStdString(k), QString("InlineReductionError"));
    QVERIFY2(msg.find("compute_inline: block 'T_softmax_maxelem' is a reduction (it has an init "
                      "statement)") != std::string::npos,
             msg.c_str());
  }
  void outputBlock() {
    expectError(kTwo, "c = sch.get_block(\"C\")\nsch.compute_inline(c)\n", "OutputBlockError",
                "compute_inline: block 'C' writes buffer 'C', a parameter of the function");
  }
  void multipleWrites() {
    expectError(kOdd, "w = sch.get_block(\"W2\")\nsch.compute_inline(w)\n", "MultipleWritesError",
                "compute_inline: block 'W2' writes 2 buffers");
  }
  void notInlinableBody() {
    expectError(
        kOdd, "s = sch.get_block(\"S\")\nsch.compute_inline(s)\n", "NotInlinableBodyError",
        "compute_inline: block 'S' stores to 'S' at index 0 that is not a distinct iter var");
    expectError(kOdd, "p = sch.get_block(\"P2\")\nsch.compute_inline(p)\n", "NotInlinableBodyError",
                "compute_inline: block 'P2' reads the buffer 'P' it writes");
    expectError(kTwo,
                "c = sch.get_block(\"C\")\ni, j = sch.get_loops(c)\nsch.split(i, [None, 5])\n"
                "sch.reverse_compute_inline(c)\n",
                "NotInlinableBodyError",
                "reverse_compute_inline: block 'C' has a predicate, which inlining would drop");
  }
  void notSingleWriter() {
    expectError(kOdd, "p = sch.get_block(\"P1\")\nsch.compute_inline(p)\n", "NotSingleWriterError",
                "compute_inline: block 'P2' also writes buffer 'P' that block 'P1' produces");
  }
  void notSingleProducer() {
    auto [k, msg] =
        scriptError(workload("softmax:M=4,N=8"),
                    "n = sch.get_block(\"T_softmax_norm\")\nsch.reverse_compute_inline(n)\n");
    QCOMPARE(QString::fromStdString(k), QString("NotSingleProducerError"));
    QVERIFY2(msg.find("block 'T_softmax_norm' has 2 producer blocks in its scope") !=
                 std::string::npos,
             msg.c_str());
  }
  void multipleReaders() {
    expectError(
        kThree, "d = sch.get_block(\"D\")\nsch.reverse_compute_inline(d)\n", "MultipleReadersError",
        "reverse_compute_inline: block 'C' also reads buffer 'B' that block 'D' would absorb");
  }
  void notInvertibleLoad() {
    std::string strided = std::string(kTwo);
    auto rep = [&](const std::string& a, const std::string& b) {
      size_t at = strided.rfind(a);
      strided.replace(at, a.size(), b);
    };
    // C reads only the first half of B's rows, twice: no one-to-one map from B's index to C's.
    rep("C[vi, vj] = B[vi, vj] + T.float32(1)", "C[vi, vj] = B[vi // 2, vj] + T.float32(1)");
    rep("T.reads(B[vi, vj])", "T.reads(B[vi // 2, vj])");
    expectError(
        strided, "c = sch.get_block(\"C\")\nsch.reverse_compute_inline(c)\n",
        "NotInvertibleLoadError",
        "reverse_compute_inline: block 'C' loads buffer 'B' at index 0 with something other "
        "than a distinct iter var spanning the buffer's dimension");
  }
  void notInvertibleLoadVariants() {
    std::string twice = std::string(kTwo);
    auto rep = [&](const std::string& a, const std::string& b) {
      size_t at = twice.rfind(a);
      twice.replace(at, a.size(), b);
    };
    // B read at two different indices: no single map from B's index to C's iter vars.
    rep("C[vi, vj] = B[vi, vj] + T.float32(1)", "C[vi, vj] = B[vi, vj] + B[vj, vi]");
    rep("T.reads(B[vi, vj])", "T.reads(B[0:16, 0:16])");
    expectError(twice, "c = sch.get_block(\"C\")\nsch.reverse_compute_inline(c)\n",
                "NotInvertibleLoadError",
                "reverse_compute_inline: block 'C' loads buffer 'B' at different indices");
    // A consumer that reads B only in its signature, not in its value.
    std::string unused = std::string(kTwo);
    size_t at = unused.rfind("C[vi, vj] = B[vi, vj] + T.float32(1)");
    unused.replace(at, 36, "C[vi, vj] = T.float32(1)");
    expectError(unused, "c = sch.get_block(\"C\")\nsch.reverse_compute_inline(c)\n",
                "NotInvertibleLoadError",
                "reverse_compute_inline: block 'C' does not load buffer 'B' in its value");
  }
  /// A chain of n LeakyRelu-like blocks, each reading its input three times
  /// (select(x >= 0, x, x * 0.1)): inlining them all would copy the first one 3^(n-1) times.
  static std::string leakyChain(int n) {
    std::string t = "# from tvm.script import tir as T\n\n@T.prim_func\n"
                    "def main(A: T.Buffer((8,), \"float32\"), C: T.Buffer((8,), \"float32\")):\n";
    auto name = [&](int k) {
      return k == 0 ? std::string("A") : k == n ? std::string("C") : "B" + std::to_string(k);
    };
    for (int k = 1; k < n; ++k)
      t += "    " + name(k) + " = T.alloc_buffer((8,))\n";
    for (int k = 1; k <= n; ++k) {
      std::string x = name(k - 1) + "[vi]";
      t += "    for i in range(8):\n        with T.block(\"" + name(k) +
           "\"):\n"
           "            vi = T.axis.spatial(8, i)\n            T.reads(" +
           x + ")\n            T.writes(" + name(k) + "[vi])\n            " + name(k) +
           "[vi] = T.Select(" + x + " >= T.float32(0), " + x + ", " + x + " * T.float32(0.1))\n";
    }
    return t;
  }
  // Graph seed 68698 (Asinh(Asinh(...)), about 170 reads of x each) compiled for minutes: each
  // inline copied a value that reads its input many times into each of those reads, so the
  // fused value grew exponentially. Past maxInlinedNodes() nodes the primitive refuses.
  void inlineTooLarge() {
    PrimFunc f = parseFunc(leakyChain(12));
    Schedule sch(f);
    int inlined = 0;
    std::string refusal;
    for (int k = 1; k < 12 && refusal.empty(); ++k) {
      try {
        computeInline(sch, getBlock(sch, "B" + std::to_string(k)));
        ++inlined;
      } catch (const InlineTooLargeError& e) {
        refusal = e.what();
      }
    }
    // Three reads per level, about four nodes per read of A (a load and its index, a select, a
    // multiply, a constant): B8's value (3^7 reads of A, about 29000 nodes) is not copied 3 times.
    QVERIFY2(!refusal.empty(), "all 11 producers were inlined");
    QCOMPARE(inlined, 7);
    QVERIFY2(
        refusal.find(
            "compute_inline: inlining block 'B8' into block 'B9' would copy its value (") !=
                std::string::npos &&
            refusal.find("into 3 loads of buffer 'B8', over the limit of 65536 copied nodes") !=
                std::string::npos,
        refusal.c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-6);
    // reverse_compute_inline copies the producer's value the same way.
    Schedule rev(parseFunc(leakyChain(12)));
    for (int k = 1; k < 6; ++k)
      computeInline(rev, getBlock(rev, "B" + std::to_string(k)));
    for (int k = 7; k < 12; ++k)
      computeInline(rev, getBlock(rev, "B" + std::to_string(k)));
    auto [kind, msg] =
        scriptError(rev.func(), "c = sch.get_block(\"C\")\nsch.reverse_compute_inline(c)\n");
    QCOMPARE(QString::fromStdString(kind), QString("InlineTooLargeError"));
    QVERIFY2(msg.find("reverse_compute_inline: inlining block 'B6' into block 'C' would copy its "
                      "value (3278 nodes) into 729 loads") != std::string::npos,
             msg.c_str());
  }
  void reverseProducerReduction() {
    auto [k, msg] =
        scriptError(workload("matmul:M=4,N=4,K=4"), "c = sch.get_block(\"C\")\n"
                                                    "w = sch.cache_write(c, 0, \"local\")\n"
                                                    "sch.reverse_compute_inline(w)\n");
    QCOMPARE(QString::fromStdString(k), QString("InlineReductionError"));
    QVERIFY2(msg.find("reverse_compute_inline: producer block 'C' is a reduction") !=
                 std::string::npos,
             msg.c_str());
  }
};

QTEST_APPLESS_MAIN(TestComputeInline)
#include "test_compute_inline.moc"
