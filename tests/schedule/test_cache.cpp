// cache_read, cache_write, set_scope, storage_align: golden text, meaning on random inputs
// (matmul cache_write + reverse_compute_at under random splits), every refusal, traces.
#include <fstream>
#include <random>
#include <sstream>

#include "CacheInlineTestUtil.h"
#include "core/schedule/Analysis.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

/// Two blocks write B (its halves).
const char* kTwoWriters = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16,), "float32"), C: T.Buffer((16,), "float32")):
    B = T.alloc_buffer((16,))
    for i in range(8):
        with T.block("B1"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi])
            T.writes(B[vi])
            B[vi] = A[vi]
    for i in range(8):
        with T.block("B2"):
            vi = T.axis.spatial(8, i)
            T.reads(A[vi + 8])
            T.writes(B[vi + 8])
            B[vi + 8] = A[vi + 8] * T.float32(3)
    for i in range(16):
        with T.block("C"):
            vi = T.axis.spatial(16, i)
            T.reads(B[vi])
            T.writes(C[vi])
            C[vi] = B[vi]
)";

/// A is read by B and by C.
const char* kSharedInput = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    B = T.alloc_buffer((16, 16))
    for i, j in T.grid(16, 16):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(16, 16):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj], A[vj, vi])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + A[vj, vi]
)";

} // namespace

class TestCache : public QObject {
  Q_OBJECT
private slots:
  // --- Golden text --------------------------------------------------------------------------
  void cacheReadGolden() {
    std::string got =
        applyAndPrint(kTwo, "b = sch.get_block(\"B\")\nr = sch.cache_read(b, 0, \"shared\")\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        B = T.alloc_buffer((16, 16), "float32")
        A_shared = T.alloc_buffer((16, 16), "float32", scope="shared")
        for ax0, ax1 in T.grid(16, 16):
            with T.block("A_shared"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(A[v0, v1])
                T.writes(A_shared[v0, v1])
                A_shared[v0, v1] = A[v0, v1]
        for i, j in T.grid(16, 16):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A_shared[vi, vj])
                T.writes(B[vi, vj])
                B[vi, vj] = A_shared[vi, vj] * T.float32(2)
        for i_1, j_1 in T.grid(16, 16):
            with T.block("C"):
                vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
                T.reads(B[vi_1, vj_1])
                T.writes(C[vi_1, vj_1])
                C[vi_1, vj_1] = B[vi_1, vj_1] + T.float32(1)
)");
  }
  void cacheReadAfterProducer() {
    // C reads B, produced in the scope: the copy goes right after B's loop nest.
    std::string got =
        applyAndPrint(kTwo, "c = sch.get_block(\"C\")\nr = sch.cache_read(c, 0, \"local\")\n");
    size_t b = got.find("with T.block(\"B\")"), copy = got.find("with T.block(\"B_local\")"),
           c = got.find("with T.block(\"C\")");
    QVERIFY2(b < copy && copy < c && c != std::string::npos, got.c_str());
    QVERIFY2(got.find("C[vi_1, vj_1] = B_local[vi_1, vj_1] + T.float32(1)") != std::string::npos,
             got.c_str());
  }
  void cacheWriteGolden() {
    std::string got =
        applyAndPrint(kMatmul, "c = sch.get_block(\"C\")\nw = sch.cache_write(c, 0, \"local\")\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        C_local = T.alloc_buffer((16, 16), "float32", scope="local")
        for i, j, k in T.grid(16, 16, 8):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B[v_k, v_j])
                T.writes(C_local[v_i, v_j])
                with T.init():
                    C_local[v_i, v_j] = T.float32(0)
                C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
        for ax0, ax1 in T.grid(16, 16):
            with T.block("C_local"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(C_local[v0, v1])
                T.writes(C[v0, v1])
                C[v0, v1] = C_local[v0, v1]
)");
  }
  void cacheWriteReverseComputeAtGolden() {
    std::string got = applyAndPrint(kMatmul, "c = sch.get_block(\"C\")\n"
                                             "w = sch.cache_write(c, 0, \"local\")\n"
                                             "i, j, k = sch.get_loops(c)\n"
                                             "io, ii = sch.split(i, factors=[None, 4])\n"
                                             "sch.reverse_compute_at(w, io)\n");
    QVERIFY2(got.find(R"(        for i_0 in range(4):
            for i_1, j, k in T.grid(4, 16, 8):
                with T.block("C"):
                    v_i = T.axis.spatial(16, i_0 * 4 + i_1)
                    v_j, v_k = T.axis.remap("SR", [j, k])
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C_local[v_i, v_j])
                    with T.init():
                        C_local[v_i, v_j] = T.float32(0)
                    C_local[v_i, v_j] = C_local[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
            for ax0, ax1 in T.grid(4, 16):
                with T.block("C_local"):
                    v0 = T.axis.spatial(16, i_0 * 4 + ax0)
                    v1 = T.axis.remap("S", [ax1])
)") != std::string::npos,
             got.c_str());
  }
  void setScopeGolden() {
    std::string got =
        applyAndPrint(kTwo, "b = sch.get_block(\"B\")\nsch.set_scope(b, 0, \"shared.dyn\")\n");
    QVERIFY2(got.find("B = T.alloc_buffer((16, 16), \"float32\", scope=\"shared.dyn\")") !=
                 std::string::npos,
             got.c_str());
    QCOMPARE(maxErrorBetween(parseFunc(kTwo), parseFunc(got)), 0.0);
  }
  void storageAlignGolden() {
    std::string got = applyAndPrint(kTwo, "b = sch.get_block(\"B\")\n"
                                          "sch.storage_align(b, 0, 1, 16, 3)\n"
                                          "sch.storage_align(b, 0, -2, 32, 1)\n"
                                          "sch.storage_align(b, 0, 1, 8, 0)\n");
    const char* want =
        "T.block_attr({\"buffer_dim_align\": T.call_intrin(\"handle\", \"tvm_tuple\", "
        "T.call_intrin(\"handle\", \"tvm_tuple\", T.call_intrin(\"handle\", "
        "\"tvm_tuple\", 0, 32, 1), T.call_intrin(\"handle\", \"tvm_tuple\", 1, 8, "
        "0)))})";
    QVERIFY2(got.find(want) != std::string::npos, got.c_str());
    // The annotated function parses back (the tuples are plain calls).
    PrimFunc back = parseFunc(got);
    QVERIFY(structuralEqual(back, parseFunc(printFunc(back))));
  }

  void cacheReadConsumers() {
    // By default every reader of A in the scope reads the copy.
    PrimFunc f = parseFunc(kSharedInput);
    std::string all =
        applyAndPrint(kSharedInput, "b = sch.get_block(\"B\")\nsch.cache_read(b, 0, \"shared\")\n");
    QVERIFY2(all.find("B[vi, vj] = A_shared[vi, vj] * T.float32(2)") != std::string::npos,
             all.c_str());
    QVERIFY2(all.find("= B[vi_1, vj_1] + A_shared[vj_1, vi_1]") != std::string::npos, all.c_str());
    QCOMPARE(maxErrorBetween(f, parseFunc(all)), 0.0);
    // consumer_blocks limits it to the given blocks (and the block itself).
    Schedule sch = scheduled(f, "b = sch.get_block(\"B\")\n"
                                "r = sch.cache_read(b, 0, \"shared\", consumer_blocks=[b])\n");
    std::string one = printFunc(sch.func());
    QVERIFY2(one.find("= B[vi_1, vj_1] + A[vj_1, vi_1]") != std::string::npos, one.c_str());
    QVERIFY2(
        sch.trace().str().find("b1 = sch.cache_read(b0, 0, \"shared\", consumer_blocks=[b0])") !=
            std::string::npos,
        sch.trace().str().c_str());
    QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
    checkTraceRoundTrip(f, "b = sch.get_block(\"B\")\nc = sch.get_block(\"C\")\n"
                           "r = sch.cache_read(c, 1, \"local\", consumer_blocks=[b])\n");
    expectError(
        kSharedInput,
        "b = sch.get_block(\"B\")\nc = sch.get_block(\"C\")\n"
        "sch.cache_read(c, 0, \"local\", consumer_blocks=[b])\n",
        "ScheduleValueError",
        "cache_read: consumer block 'B' does not read buffer 'B' in the scope of block 'C'");
  }

  // --- Meaning --------------------------------------------------------------------------------
  void matmulCacheWriteReverseComputeAtRandom() {
    PrimFunc f = workload("matmul:M=13,N=10,K=6");
    std::mt19937 rng(41);
    for (int trial = 0; trial < 30; ++trial) {
      Schedule sch(f);
      BlockRV c = getBlock(sch, "C");
      BlockRV w = cacheWrite(sch, c, 0, trial % 3 == 0 ? "global" : "local");
      auto l = getLoops(sch, c);
      auto is = split(sch, l[0], {nullptr, int64_t(1 + rng() % 5)});
      auto js = split(sch, l[1], {int64_t(1 + rng() % 4), nullptr});
      reorder(sch, {is[0], js[0], is[1], js[1]});
      std::vector<LoopRV> spots{is[0], js[0], is[1], js[1]};
      reverseComputeAt(sch, w, spots[rng() % spots.size()], rng() % 2 == 0);
      if (trial % 2 == 0) {
        BlockRV r = cacheRead(sch, c, int64_t(rng() % 2), "shared");
        auto cl = getLoops(sch, c);
        computeAt(sch, r, cl[rng() % 3]);
        storageAlign(sch, r, 0, 0, 16, 1);
      }
      double err = maxErrorBetween(f, sch.func(), trial);
      QVERIFY2(err < 1e-5, (sch.trace().str() + printFunc(sch.func())).c_str());
    }
  }
  void convCacheWriteComputeAt() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=8,W=8,K=4,R=3,S=3");
    Schedule sch = scheduled(f, R"(conv = sch.get_block("conv2d_nchw")
pad = sch.get_block("pad_temp")
out = sch.cache_write(conv, 0, "local")
n, ff, y, x, rc, ry, rx = sch.get_loops(conv)
yo, yi = sch.split(y, factors=[None, 3])
xo, xi = sch.split(x, factors=[None, 4])
sch.reorder(yo, xo, ff, yi, xi)
sch.reverse_compute_at(out, xo)
sch.compute_at(pad, xo)
)");
    QCOMPARE(sch.trace().insts.size(), size_t(9));
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-5);
  }
  void traceRoundTrip() {
    checkTraceRoundTrip(parseFunc(kMatmul), "c = sch.get_block(\"C\")\n"
                                            "w = sch.cache_write(c, 0, \"local\")\n"
                                            "r = sch.cache_read(c, 1, \"shared\")\n"
                                            "i, j, k = sch.get_loops(c)\n"
                                            "sch.reverse_compute_at(w, i)\n"
                                            "sch.compute_at(r, j)\n"
                                            "sch.storage_align(r, 0, 0, 8, 2)\n"
                                            "sch.set_scope(r, 0, \"local\")\n");
  }

  void convExampleScript() {
    PrimFunc f = workload("conv2d:N=1,C=3,H=10,W=9,K=4,R=3,S=3");
    std::string script = exampleScript("conv2d_cache_compute_at.py");
    QVERIFY(!script.empty());
    Schedule sch(f);
    ScriptResult r = runScript(sch, script, "conv2d_cache_compute_at.py");
    QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
    std::string text = printFunc(sch.func());
    QVERIFY2(
        text.find(
            "conv2d_nchw_local = T.alloc_buffer((1, 4, 10, 9), \"float32\", scope=\"local\")") !=
            std::string::npos,
        text.c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-5);
  }

  // --- Refusals -------------------------------------------------------------------------------
  void indexOutOfRange() {
    expectError(kTwo, "b = sch.get_block(\"B\")\nsch.cache_read(b, 1, \"shared\")\n",
                "BufferIndexOutOfRangeError",
                "cache_read: block 'B' reads 1 buffer, index 1 is out of range");
    expectError(kTwo, "b = sch.get_block(\"B\")\nsch.cache_write(b, -1, \"shared\")\n",
                "BufferIndexOutOfRangeError",
                "cache_write: block 'B' writes 1 buffer, index -1 is out of range");
  }
  void invalidScope() {
    expectError(kTwo, "b = sch.get_block(\"B\")\nsch.cache_read(b, 0, \"sharde\")\n",
                "InvalidStorageScopeError", "cache_read: 'sharde' is not a storage scope");
    expectError(kTwo, "b = sch.get_block(\"B\")\nsch.set_scope(b, 0, \"local.\")\n",
                "InvalidStorageScopeError", "set_scope: 'local.' is not a storage scope");
  }
  void cachePosition() {
    const char* fused = "b = sch.get_block(\"B\")\nc = sch.get_block(\"C\")\n"
                        "i, j = sch.get_loops(b)\nsch.reverse_compute_at(c, j)\n";
    expectError(kTwo, std::string(fused) + "sch.cache_read(c, 0, \"local\")\n",
                "CachePositionError",
                "cache_read: block 'B' writes buffer 'B' inside the same loop nest as block 'C'");
    expectError(kTwo, std::string(fused) + "sch.cache_write(b, 0, \"local\")\n",
                "CachePositionError",
                "cache_write: block 'C' reads buffer 'B' inside the same loop nest as block 'B'");
  }
  void cacheWriteSecondWriter() {
    expectError(
        kTwoWriters, "b = sch.get_block(\"B1\")\nsch.cache_write(b, 0, \"local\")\n",
        "NotSingleWriterError",
        "cache_write: block 'B2' also writes buffer 'B'; only the single writer can be cached");
  }
  void notAllocated() {
    expectError(kTwo, "c = sch.get_block(\"C\")\nsch.set_scope(c, 0, \"shared\")\n",
                "NotAllocatedBufferError",
                "set_scope: buffer 'C' written by block 'C' is a parameter of the function");
    expectError(kTwo, "c = sch.get_block(\"C\")\nsch.storage_align(c, 0, 0, 16, 1)\n",
                "NotAllocatedBufferError",
                "storage_align: buffer 'C' written by block 'C' is a parameter of the function");
  }
  void invalidStorageAlign() {
    const char* get = "b = sch.get_block(\"B\")\n";
    expectError(kTwo, std::string(get) + "sch.storage_align(b, 0, 2, 16, 1)\n",
                "InvalidStorageAlignError",
                "storage_align: axis 2 is outside buffer 'B' of 2 dimensions");
    expectError(kTwo, std::string(get) + "sch.storage_align(b, 0, 0, 0, 0)\n",
                "InvalidStorageAlignError", "storage_align: factor 0 must be positive");
    expectError(kTwo, std::string(get) + "sch.storage_align(b, 0, 0, 16, 16)\n",
                "InvalidStorageAlignError", "storage_align: offset 16 must be in [0, factor 16)");
  }
  void failedLeavesStateAlone() {
    Schedule sch(parseFunc(kTwo));
    BlockRV b = getBlock(sch, "B");
    PrimFunc before = sch.func();
    QVERIFY_THROWS_EXCEPTION(InvalidStorageScopeError, cacheRead(sch, b, 0, "nowhere"));
    QVERIFY_THROWS_EXCEPTION(InvalidStorageAlignError, storageAlign(sch, b, 0, 5, 16, 0));
    QVERIFY(sch.func().same_as(before));
    QCOMPARE(sch.trace().insts.size(), size_t(1));
  }
};

QTEST_APPLESS_MAIN(TestCache)
#include "test_cache.moc"
