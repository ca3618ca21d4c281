// blockize and tensorize: golden text, meaning on random inputs, the AVX-512 FMA micro-kernel on a
// GEMM tile, traces and every refusal.
#include "ScheduleTestUtil.h"
#include "TraceRoundTrip.h"
#include "core/schedule/TensorIntrin.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

} // namespace

class TestTensorize : public QObject {
  Q_OBJECT
private slots:
  // --- blockize ------------------------------------------------------------------------------
  void blockizeGolden() {
    std::string got = applyAndPrint(kMatmul, loopsOf("C", "i, j, k") +
                                                 "jo, ji = sch.split(j, factors=[None, 4])\n"
                                                 "o = sch.blockize(ji)\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j_0 in T.grid(16, 4):
        with T.block("C_o"):
            v_i_o, v_j_o = T.axis.remap("SS", [i, j_0])
            T.reads(A[v_i_o, 0:8], B[0:8, v_j_o * 4:v_j_o * 4 + 4])
            T.writes(C[v_i_o, v_j_o * 4:v_j_o * 4 + 4])
            for j_1, k in T.grid(4, 8):
                with T.block("C"):
                    v_i = T.axis.spatial(16, v_i_o)
                    v_j = T.axis.spatial(16, v_j_o * 4 + j_1)
                    v_k = T.axis.remap("R", [k])
                    T.reads(A[v_i, v_k], B[v_k, v_j])
                    T.writes(C[v_i, v_j])
                    with T.init():
                        C[v_i, v_j] = T.float32(0)
                    C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_k, v_j]
)");
  }
  void blockizeOuterReductionMovesInit() {
    std::string got = applyAndPrint(kMatmul, loopsOf("C", "i, j, k") +
                                                 "ko, ki = sch.split(k, factors=[None, 4])\n"
                                                 "o = sch.blockize(ki)\n");
    QVERIFY2(got.find(R"(        with T.block("C_o"):
            v_i_o, v_j_o, v_k_o = T.axis.remap("SSR", [i, j, k_0])
            T.reads(A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], B[v_k_o * 4:v_k_o * 4 + 4, v_j_o])
            T.writes(C[v_i_o, v_j_o])
            with T.init():
                with T.block("C_init"):
                    v_i_init = T.axis.spatial(16, v_i_o)
                    v_j_init = T.axis.spatial(16, v_j_o))") != std::string::npos,
             got.c_str());
    // The inner block lost its init: it now accumulates across the outer reduction.
    QVERIFY2(got.find("                with T.block(\"C\"):\n                    v_i = T.axis.spatial(16, v_i_o)") != std::string::npos, got.c_str());
    QCOMPARE(int(QString::fromStdString(got).count("T.init()")), 1);
  }
  void blockizeMeaning() {
    PrimFunc f = workload("matmul:M=12,N=20,K=8");
    const std::string tile = loopsOf("C", "i, j, k") +
                             "io, ii = sch.split(i, factors=[None, 4])\n"
                             "jo, ji = sch.split(j, factors=[None, 5])\n"
                             "ko, ki = sch.split(k, factors=[None, 2])\n"
                             "sch.reorder(io, jo, ko, ii, ji, ki)\n";
    for (const char* at : {"ii", "ko", "jo", "io", "ki"}) {
      Schedule sch(f);
      ScriptResult r = runScript(sch, tile + "o = sch.blockize(" + at + ")\n");
      QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
      QVERIFY2(maxErrorBetween(f, sch.func()) < 1e-6, at);
    }
    // Blockize twice (nested outer blocks); blockize then decompose the outer reduction.
    Schedule sch(f);
    ScriptResult r = runScript(sch, tile + "o = sch.blockize(ii)\no2 = sch.blockize(ko)\n");
    QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-6);
    Schedule sch2(f);
    r = runScript(sch2, tile + "o = sch.blockize(ii)\nini = sch.decompose_reduction(o, ko)\n");
    QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
    QVERIFY(maxErrorBetween(f, sch2.func()) < 1e-6);
  }

  // --- tensorize -----------------------------------------------------------------------------
  void registry() {
    auto names = tensorIntrinNames();
    for (int k : {1, 2, 4, 8, 16})
      QVERIFY(std::find(names.begin(), names.end(),
                        "x86_avx512_fma_f32x16_k" + std::to_string(k)) != names.end());
    const TensorIntrin* in = findTensorIntrin("x86_avx512_fma_f32x16_k4");
    QVERIFY(in);
    QCOMPARE(in->desc->bufferMap.size(), size_t(3));
    QVERIFY2(printFunc(in->impl).find("C[T.Ramp(0, 1, 16)] = C[T.Ramp(0, 1, 16)] + "
                                      "T.Broadcast(A[k], 16) * B[k, T.Ramp(0, 1, 16)]") !=
                 std::string::npos,
             printFunc(in->impl).c_str());
    bool threw = false;
    try {
      registerTensorIntrin("bad", avx512FmaDesc(4), avx512FmaImpl(8));
    } catch (const ValueError& e) {
      threw = std::string(e.what()).find("tensor intrinsic 'bad': buffer 0 is float32[4] in desc "
                                         "but float32[8] in impl") != std::string::npos;
    }
    QVERIFY(threw);
    QVERIFY(!findTensorIntrin("bad"));
  }
  void tensorizeGemmTile() {
    std::string got = applyAndPrint(kMatmul, loopsOf("C", "i, j, k") +
                                                 "ko, ki = sch.split(k, factors=[None, 4])\n"
                                                 "sch.reorder(i, ko, ki, j)\n"
                                                 "sch.tensorize(ki, \"x86_avx512_fma_f32x16_k4\")\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, k_0 in T.grid(16, 2):
        with T.block("C_o"):
            v_i_o, v_k_o = T.axis.remap("SR", [i, k_0])
            T.reads(A[v_i_o, v_k_o * 4:v_k_o * 4 + 4], B[v_k_o * 4:v_k_o * 4 + 4, 0:16])
            T.writes(C[v_i_o, 0:16])
            T.block_attr({"tensorized": "x86_avx512_fma_f32x16_k4"})
            with T.init():
                for j_init in range(16):
                    with T.block("C_init"):
                        v_i_init = T.axis.spatial(16, v_i_o)
                        v_j_init = T.axis.remap("S", [j_init])
                        T.reads()
                        T.writes(C[v_i_init, v_j_init])
                        C[v_i_init, v_j_init] = T.float32(0)
            for k in range(4):
                C[v_i_o, T.Ramp(0, 1, 16)] = C[v_i_o, T.Ramp(0, 1, 16)] + T.Broadcast(A[v_i_o, v_k_o * 4 + k], 16) * B[v_k_o * 4 + k, T.Ramp(0, 1, 16)]
)");
  }
  void tensorizeGemmMeaning() {
    // A GEMM inner tile (1 row x 16 columns x K4 of k) mapped to the micro-kernel, for several
    // shapes and kernel depths; then the same after decompose_reduction, tensorizing the block.
    for (auto [spec, kk] : std::vector<std::pair<const char*, int>>{
             {"matmul:M=8,N=32,K=8", 4}, {"matmul:M=3,N=48,K=16", 8}, {"matmul:M=5,N=16,K=6", 2},
             {"matmul:M=4,N=32,K=32", 16}, {"matmul:M=2,N=16,K=3", 1}}) {
      PrimFunc f = workload(spec);
      std::string intrin = "x86_avx512_fma_f32x16_k" + std::to_string(kk);
      Schedule sch(f);
      ScriptResult r = runScript(
          sch, loopsOf("C", "i, j, k") + "jo, ji = sch.split(j, factors=[None, 16])\n" +
                   "ko, ki = sch.split(k, factors=[None, " + std::to_string(kk) + "])\n" +
                   "sch.reorder(jo, i, ko, ki, ji)\n" + "sch.tensorize(ki, \"" + intrin + "\")\n");
      QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
      QVERIFY2(printFunc(sch.func()).find("T.Broadcast(A[") != std::string::npos, spec);
      QVERIFY2(maxErrorBetween(f, sch.func()) < 1e-5, spec);

      Schedule sch2(f);
      r = runScript(sch2, loopsOf("C", "i, j, k") + "jo, ji = sch.split(j, factors=[None, 16])\n" +
                              "ko, ki = sch.split(k, factors=[None, " + std::to_string(kk) +
                              "])\n" + "sch.reorder(jo, i, ko, ki, ji)\n" +
                              "o = sch.blockize(ki)\n" + "l = sch.get_loops(o)\n" +
                              "ini = sch.decompose_reduction(o, l[0])\n" +
                              "sch.tensorize(o, \"" + intrin + "\")\n");
      QVERIFY2(r.ok, (r.message + "\n" + r.detail).c_str());
      QVERIFY2(maxErrorBetween(f, sch2.func()) < 1e-5, spec);
    }
  }
  void tensorizeTraceRoundTrip() {
    std::string err = traceRoundTripError(
        workload("matmul:M=4,N=32,K=8"),
        loopsOf("C", "i, j, k") + "jo, ji = sch.split(j, factors=[None, 16])\n"
                                  "ko, ki = sch.split(k, factors=[None, 4])\n"
                                  "sch.reorder(jo, i, ko, ki, ji)\n"
                                  "sch.tensorize(ki, \"x86_avx512_fma_f32x16_k4\")\n"
                                  "sch.parallel(jo)\n");
    QVERIFY2(err.empty(), err.c_str());
    err = traceRoundTripError(workload("matmul:M=4,N=32,K=8"),
                              loopsOf("C", "i, j, k") + "ko, ki = sch.split(k, factors=[None, 4])\n"
                                                        "o = sch.blockize(ki)\n");
    QVERIFY2(err.empty(), err.c_str());
  }

  // --- Refusals ------------------------------------------------------------------------------
  void unknownIntrin() {
    auto [k, m] = scriptError(parseFunc(kMatmul), loopsOf("C", "i, j, k") +
                                                      "sch.tensorize(k, \"x86_amx_tile\")\n");
    QCOMPARE(QString::fromStdString(k), QString("TensorIntrinNotFoundError"));
    QVERIFY2(m.find("tensorize: no tensor intrinsic named 'x86_amx_tile' (known: "
                    "x86_avx512_fma_f32x16_k1, ") != std::string::npos,
             m.c_str());
  }
  void loopOrderMismatch() {
    auto [k, m] = scriptError(parseFunc(kMatmul), loopsOf("C", "i, j, k") +
                                                      "io, ii = sch.split(i, factors=[None, 4])\n"
                                                      "sch.reorder(io, k, ii, j)\n"
                                                      "sch.tensorize(ii, \"x86_avx512_fma_f32x16_k4\")\n");
    QCOMPARE(QString::fromStdString(k), QString("TensorizeMismatchError"));
    QVERIFY2(m.find("tensorize: block 'C_o' does not match tensor intrinsic "
                    "'x86_avx512_fma_f32x16_k4': loop 'i_1' is a spatial loop but the intrinsic's "
                    "loop 'k' is a reduce loop") != std::string::npos,
             m.c_str());
    auto [k2, m2] = scriptError(parseFunc(kMatmul), loopsOf("C", "i, j, k") +
                                                        "ko, ki = sch.split(k, factors=[None, 2])\n"
                                                        "sch.reorder(i, ko, ki, j)\n"
                                                        "sch.tensorize(ki, \"x86_avx512_fma_f32x16_k4\")\n");
    QCOMPARE(QString::fromStdString(k2), QString("TensorizeMismatchError"));
    QVERIFY2(m2.find("its loops have extents (2, 16) but the intrinsic's have (4, 16)") !=
                 std::string::npos,
             m2.c_str());
  }
  void initStillInside() {
    auto [k, m] = scriptError(parseFunc(kMatmul), loopsOf("C", "i, j, k") +
                                                      "sch.reorder(i, k, j)\n"
                                                      "sch.tensorize(k, \"x86_avx512_fma_f32x16_k8\")\n");
    QCOMPARE(QString::fromStdString(k), QString("TensorizeMismatchError"));
    QVERIFY2(m.find("block 'C' still has its init (the reduction is entirely inside the tile); "
                    "decompose_reduction first") != std::string::npos,
             m.c_str());
  }
  void computationMismatch() {
    std::string scaled = kMatmul;
    scaled.replace(scaled.find("A[v_i, v_k] * B[v_k, v_j]\n"), 26,
                   "B[v_k, v_j] * A[v_i, v_k]\n");
    auto [k, m] = scriptError(parseFunc(scaled), loopsOf("C", "i, j, k") +
                                                     "ko, ki = sch.split(k, factors=[None, 4])\n"
                                                     "sch.reorder(i, ko, ki, j)\n"
                                                     "sch.tensorize(ki, \"x86_avx512_fma_f32x16_k4\")\n");
    QCOMPARE(QString::fromStdString(k), QString("TensorizeMismatchError"));
    QVERIFY2(m.find("has rank") != std::string::npos || m.find("does not") != std::string::npos,
             m.c_str());
    std::string f64 = kMatmul;
    for (size_t at; (at = f64.find("float32")) != std::string::npos;)
      f64.replace(at, 7, "float64");
    auto [k2, m2] = scriptError(parseFunc(f64), loopsOf("C", "i, j, k") +
                                                    "ko, ki = sch.split(k, factors=[None, 4])\n"
                                                    "sch.reorder(i, ko, ki, j)\n"
                                                    "sch.tensorize(ki, \"x86_avx512_fma_f32x16_k4\")\n");
    QCOMPARE(QString::fromStdString(k2), QString("TensorizeMismatchError"));
    QVERIFY2(m2.find("does not match") != std::string::npos, m2.c_str());
    // Accumulating along the columns (j) instead of the 16 lanes: indices do not follow.
    auto [k3, m3] = scriptError(parseFunc(kMatmul), loopsOf("C", "i, j, k") +
                                                        "ko, ki = sch.split(k, factors=[None, 4])\n"
                                                        "jo, ji = sch.split(j, factors=[None, 16])\n"
                                                        "sch.reorder(jo, ko, ki, i)\n"
                                                        "sch.tensorize(ki, \"x86_avx512_fma_f32x16_k4\")\n");
    QCOMPARE(QString::fromStdString(k3), QString("TensorizeMismatchError"));
  }
  void failedTensorizeLeavesScheduleAlone() {
    Schedule sch(parseFunc(kMatmul));
    auto loops = getLoops(sch, getBlock(sch, "C"));
    PrimFunc before = sch.func();
    size_t n = sch.trace().insts.size();
    QVERIFY_THROWS_EXCEPTION(TensorizeMismatchError,
                             tensorize(sch, loops[2], "x86_avx512_fma_f32x16_k8"));
    QVERIFY(sch.func().same_as(before));
    QCOMPARE(sch.trace().insts.size(), n);
  }
  void blockizeRefusals() {
    auto [k, m] = scriptError(parseFunc(kMatmul), loopsOf("C", "i, j, k") +
                                                      "f = sch.fuse(j, k)\n"
                                                      "fo, fi = sch.split(f, factors=[None, 3])\n"
                                                      "o = sch.blockize(fi)\n");
    QCOMPARE(QString::fromStdString(k), QString("BlockizeError"));
    QVERIFY2(m.find("blockize: the binding `") != std::string::npos &&
                 m.find("cannot be divided at loop 'j_k_fused_1'") != std::string::npos,
             m.c_str());
    auto [k2, m2] = scriptError(parseFunc(kMatmul), loopsOf("C", "i, j, k") +
                                                        "jo, ji = sch.split(j, factors=[None, 3])\n"
                                                        "o = sch.blockize(ji)\n");
    QCOMPARE(QString::fromStdString(k2), QString("BlockizeError"));
    QVERIFY2(m2.find("uses loops inside and outside loop 'j_1'") != std::string::npos, m2.c_str());
  }
};

QTEST_APPLESS_MAIN(TestTensorize)
#include "test_tensorize.moc"
