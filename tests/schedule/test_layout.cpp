// transform_layout and pad_einsum: golden text, meaning on random inputs, traces, refusals.
#include "ScheduleTestUtil.h"
#include "TraceRoundTrip.h"
#include "core/schedule/Analysis.h"
#include "core/tir/Op.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

/// B = A * 2 (an intermediate), C = B + 1.
const char* kChain = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 12), "float32"), C: T.Buffer((8, 12), "float32")):
    B = T.alloc_buffer((8, 12))
    for i, j in T.grid(8, 12):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 12):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + T.float32(1)
)";

/// A sliding-window sum (index v_i + v_k is no single iter var) and a max reduction.
const char* kNotEinsum = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((20,), "float32"), B: T.Buffer((10,), "float32"), M: T.Buffer((10, 6), "float32"), N: T.Buffer((10,), "float32")):
    for i, k in T.grid(10, 5):
        with T.block("win"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(A[v_i + v_k])
            T.writes(B[v_i])
            with T.init():
                B[v_i] = T.float32(0)
            B[v_i] = B[v_i] + A[v_i + v_k]
    for i, k in T.grid(10, 6):
        with T.block("mx"):
            v_i, v_k = T.axis.remap("SR", [i, k])
            T.reads(M[v_i, v_k])
            T.writes(N[v_i])
            with T.init():
                N[v_i] = T.float32(-3.4028234663852886e+38)
            N[v_i] = T.max(N[v_i], M[v_i, v_k])
)";

/// `src` re-laid out through `map` into an array of `shape` (dst[map(i)] = src[i]).
runtime::NDArray relayout(const runtime::NDArray& src, const std::vector<int64_t>& shape,
                          const std::function<std::vector<int64_t>(std::vector<int64_t>)>& map) {
  runtime::NDArray dst = runtime::NDArray::empty(shape, src.dtype());
  std::vector<int64_t> srcShape = src.shape();
  int64_t n = 1;
  for (int64_t s : srcShape)
    n *= s;
  for (int64_t flat = 0; flat < n; ++flat) {
    std::vector<int64_t> idx(srcShape.size());
    for (size_t k = srcShape.size(), rest = size_t(flat); k-- > 0;) {
      idx[k] = int64_t(rest % size_t(srcShape[k]));
      rest /= size_t(srcShape[k]);
    }
    std::vector<int64_t> to = map(idx);
    int64_t t = 0;
    for (size_t d = 0; d < to.size(); ++d)
      t = t * shape[d] + to[d];
    setElement(dst, t, getElement(src, flat));
  }
  return dst;
}

} // namespace

class TestLayout : public QObject {
  Q_OBJECT
private slots:
  // --- transform_layout ------------------------------------------------------------------
  void transformParamGolden() {
    std::string got = applyAndPrint(
        kMatmul, "b = sch.get_block(\"C\")\n"
                 "sch.transform_layout(b, (\"read\", 1), lambda k, j: (j // 4, k, j % 4))\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((4, 8, 4), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    # with T.block("root"):
    for i, j, k in T.grid(16, 16, 8):
        with T.block("C"):
            v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
            T.reads(A[v_i, v_k], B[v_j // 4, v_k, v_j % 4])
            T.writes(C[v_i, v_j])
            with T.init():
                C[v_i, v_j] = T.float32(0)
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_k] * B[v_j // 4, v_k, v_j % 4]
)");
  }
  void transformIntermediateGolden() {
    std::string got = applyAndPrint(
        kChain, "b = sch.get_block(\"B\")\nsch.transform_layout(b, \"B\", lambda i, j: (j, i))\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 12), "float32"), C: T.Buffer((8, 12), "float32")):
    with T.block("root"):
        B = T.alloc_buffer((12, 8), "float32")
        for i, j in T.grid(8, 12):
            with T.block("B"):
                vi, vj = T.axis.remap("SS", [i, j])
                T.reads(A[vi, vj])
                T.writes(B[vj, vi])
                B[vj, vi] = A[vi, vj] * T.float32(2)
        for i_1, j_1 in T.grid(8, 12):
            with T.block("C"):
                vi_1, vj_1 = T.axis.remap("SS", [i_1, j_1])
                T.reads(B[vj_1, vi_1])
                T.writes(C[vi_1, vj_1])
                C[vi_1, vj_1] = B[vj_1, vi_1] + T.float32(1)
)");
  }
  void transformMatmulBMeaning() {
    // Packing matmul's B into (N/16, K, 16) panels: the function then takes B packed; fed the
    // packed B it computes the same C.
    PrimFunc f = workload("matmul:M=8,N=32,K=12");
    Schedule sch(f);
    ScriptResult r = runScript(sch, "b = sch.get_block(\"C\")\n"
                                    "sch.transform_layout(b, (\"read\", 1), lambda k, n: "
                                    "(n // 16, k, n % 16))\n"
                                    "i, j, k = sch.get_loops(b)\n"
                                    "jo, ji = sch.split(j, factors=[None, 16])\n"
                                    "sch.reorder(i, jo, k, ji)\n");
    QVERIFY2(r.ok, r.message.c_str());
    auto before = topi::makeParamArrays(f);
    for (size_t k = 0; k < before.size(); ++k)
      fillRandom(before[k], 11 + k);
    runtime::NDArray packed = relayout(before[1], {2, 12, 16}, [](std::vector<int64_t> i) {
      return std::vector<int64_t>{i[1] / 16, i[0], i[1] % 16};
    });
    runtime::NDArray c2 = runtime::NDArray::empty(before[2].shape(), before[2].dtype());
    interpret(f, {before[0], before[1], before[2]});
    interpret(sch.func(), {before[0], packed, c2});
    QVERIFY(maxRelError(c2, before[2]) < 1e-6);
    QVERIFY(printFunc(sch.func()).find("B: T.Buffer((2, 12, 16), \"float32\")") !=
            std::string::npos);
  }
  void transformIntermediateMeaning() {
    PrimFunc f = parseFunc(kChain);
    for (const char* map : {"lambda i, j: (j, i)", "lambda i, j: (i // 4, j, i % 4)",
                            "lambda i, j: (j % 3, i, j // 3)", "lambda i, j: (i * 12 + j,)"}) {
      Schedule sch(f);
      ScriptResult r = runScript(sch, std::string("b = sch.get_block(\"C\")\n"
                                                  "sch.transform_layout(b, (\"read\", 0), ") +
                                          map + ")\n");
      QVERIFY2(r.ok, r.message.c_str());
      QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
    }
  }
  void transformTraceRoundTrip() {
    std::string err = traceRoundTripError(
        parseFunc(kChain), "b = sch.get_block(\"B\")\n"
                           "sch.transform_layout(b, (\"write\", 0), lambda i, j: (j // 4, i, j % 4))\n"
                           "c = sch.get_block(\"C\")\n"
                           "sch.transform_layout(c, \"C\", lambda i, j: (j, i))\n");
    QVERIFY2(err.empty(), err.c_str());
    Schedule sch(parseFunc(kChain));
    runScript(sch, "b = sch.get_block(\"B\")\n"
                   "sch.transform_layout(b, (\"write\", 0), lambda i, j: (j // 4, i, j % 4))\n");
    QCOMPARE(QString::fromStdString(sch.trace().str()).split('\n')[1],
             QString("sch.transform_layout(b0, [\"write\", 0], lambda i, j: (j // 4, i, j % 4))"));
  }
  void transformRefusals() {
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, (\"read\", 2), lambda i, j: (j, i))\n",
               "BufferIndexError",
               "transform_layout: block 'C' has 2 read buffer(s), index 2 is out of range");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, \"X\", lambda i, j: (j, i))\n",
               "BufferIndexError", "transform_layout: block 'C' reads and writes no buffer named 'X'");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, (\"sideways\", 0), lambda i, j: (j, i))\n",
               "BufferIndexError", "buffer must be a name or");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, \"B\", lambda i: (i,))\n",
               "IndexMapError",
               "the index map `lambda i: (i,)` takes 1 indices but buffer 'B' has rank 2");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, \"B\", lambda i, j: (i, i * j % 16))\n",
               "IndexMapError",
               "sends two elements of buffer 'B' to the same place; it must be a bijection");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, \"B\", lambda i, j: (i * 2, j))\n",
               "IndexMapError",
               "maps the 128 elements of buffer 'B' into a shape of 240 elements; it must be a "
               "bijection (padding is not supported)");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, \"B\", lambda i, j: (i - 4, j))\n",
               "IndexMapError", "gives index -4 in dimension 0");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.transform_layout(b, \"B\", lambda i, j: (i / 2, j))\n",
               "IndexMapError", "operator '/' is not allowed in an index map");
    checkError(R"(# from tvm.script import tir as T

@T.prim_func
def main(a: T.handle, c: T.handle):
    n = T.int32()
    A = T.match_buffer(a, (n,))
    C = T.match_buffer(c, (n,))
    for i in range(n):
        with T.block("C"):
            vi = T.axis.remap("S", [i])
            T.reads(A[vi])
            T.writes(C[vi])
            C[vi] = A[vi]
)",
               "b = sch.get_block(\"C\")\nsch.transform_layout(b, \"A\", lambda i: (i,))\n",
               "UnsupportedBufferError", "transform_layout: buffer 'A' has a symbolic shape");
  }

  // --- pad_einsum ---------------------------------------------------------------------------
  void padEinsumGolden() {
    std::string got = applyAndPrint(kMatmul, "b = sch.get_block(\"C\")\nsch.pad_einsum(b, [1, 32, 1])\n");
    LOOM_COMPARE_TEXT(got, R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((16, 8), "float32"), B: T.Buffer((8, 16), "float32"), C: T.Buffer((16, 16), "float32")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    with T.block("root"):
        B_pad = T.alloc_buffer((8, 32), "float32")
        C_pad = T.alloc_buffer((16, 32), "float32")
        for ax0, ax1 in T.grid(8, 32):
            with T.block("B_pad"):
                v0, v1 = T.axis.remap("SS", [ax0, ax1])
                T.reads(B[0:8, 0:16])
                T.writes(B_pad[v0, v1])
                B_pad[v0, v1] = T.if_then_else(v0 < 8 and v1 < 16, B[v0, v1], T.float32(0))
        for i, j, k in T.grid(16, 32, 8):
            with T.block("C"):
                v_i, v_j, v_k = T.axis.remap("SSR", [i, j, k])
                T.reads(A[v_i, v_k], B_pad[v_k, v_j])
                T.writes(C_pad[v_i, v_j])
                with T.init():
                    C_pad[v_i, v_j] = T.float32(0)
                C_pad[v_i, v_j] = C_pad[v_i, v_j] + A[v_i, v_k] * B_pad[v_k, v_j]
        for ax0_1, ax1_1 in T.grid(16, 16):
            with T.block("C_unpad"):
                v0_1, v1_1 = T.axis.remap("SS", [ax0_1, ax1_1])
                T.reads(C_pad[v0_1, v1_1])
                T.writes(C[v0_1, v1_1])
                C[v0_1, v1_1] = C_pad[v0_1, v1_1]
)");
  }
  void padEinsumThenTileEvenly() {
    // 13x10x7 does not tile by 8/8/4; padded it does, with no predicate.
    PrimFunc f = workload("matmul:M=13,N=10,K=7");
    Schedule sch(f);
    ScriptResult r = runScript(sch, "b = sch.get_block(\"C\")\n"
                                    "sch.pad_einsum(b, [8, 8, 4])\n"
                                    "i, j, k = sch.get_loops(b)\n"
                                    "io, ii = sch.split(i, factors=[None, 8])\n"
                                    "jo, ji = sch.split(j, factors=[None, 8])\n"
                                    "ko, ki = sch.split(k, factors=[None, 4])\n"
                                    "sch.reorder(io, jo, ko, ii, ki, ji)\n"
                                    "sch.vectorize(ji)\n");
    QVERIFY2(r.ok, (r.message + r.detail).c_str());
    std::string text = printFunc(sch.func());
    QVERIFY2(text.find("T.where") == std::string::npos, text.c_str());
    QVERIFY2(text.find("for i_0, j_0, k_0, i_1, k_1 in T.grid(2, 2, 2, 8, 4):") != std::string::npos,
             text.c_str());
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-5);
    for (const char* pad : {"[1, 1, 8]", "[16, 1, 1]", "[3, 4, 5]", "[1, 1, 1]"}) {
      Schedule s(f);
      ScriptResult r2 =
          runScript(s, std::string("b = sch.get_block(\"C\")\nsch.pad_einsum(b, ") + pad + ")\n");
      QVERIFY2(r2.ok, r2.message.c_str());
      QVERIFY2(maxErrorBetween(f, s.func()) < 1e-5, pad);
    }
  }
  void padEinsumTraceRoundTrip() {
    std::string err = traceRoundTripError(workload("matmul:M=13,N=10,K=7"),
                                          "b = sch.get_block(\"C\")\nsch.pad_einsum(b, [8, 8, 4])\n"
                                          "i, j, k = sch.get_loops(b)\n"
                                          "jo, ji = sch.split(j, factors=[None, 8])\n");
    QVERIFY2(err.empty(), err.c_str());
  }
  void padEinsumRefusals() {
    checkError(kNotEinsum, "b = sch.get_block(\"win\")\nsch.pad_einsum(b, [4, 4])\n",
               "NotEinsumError",
               "pad_einsum: block 'win' is not an einsum: the index `v_i + v_k` of buffer 'A' is "
               "not a single iter var");
    checkError(kNotEinsum, "b = sch.get_block(\"mx\")\nsch.pad_einsum(b, [1, 4])\n", "NotEinsumError",
               "padding a reduce iter var needs a sum reduction");
    checkError(kMatmul, "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\n"
                        "ko, ki = sch.split(k, factors=[None, 4])\nsch.pad_einsum(b, [4, 4, 4])\n",
               "NotEinsumError",
               "iter var 'v_k' is not bound to a loop of its own with the same range");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.pad_einsum(b, [4, 4])\n", "ScheduleValueError",
               "pad_einsum: block 'C' has 3 iter vars but 2 paddings were given");
    checkError(kMatmul, "b = sch.get_block(\"C\")\nsch.pad_einsum(b, [4, 0, 1])\n", "ScheduleValueError",
               "pad_einsum: paddings must be positive, got 0");
    checkError(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((10, 6), "float32"), C: T.Buffer((10, 6), "float32")):
    for i, j in T.grid(10, 6):
        with T.block("acc"):
            v_i, v_j = T.axis.remap("SS", [i, j])
            T.reads(C[v_i, v_j], A[v_i, v_j])
            T.writes(C[v_i, v_j])
            C[v_i, v_j] = C[v_i, v_j] + A[v_i, v_j]
)",
               "b = sch.get_block(\"acc\")\nsch.pad_einsum(b, [4, 4])\n", "NotEinsumError",
               "it reads its output buffer 'C' without an init");
    // The max reduction pads fine along its spatial axis (garbage only lands in the padding).
    PrimFunc f = parseFunc(kNotEinsum);
    Schedule sch(f);
    QVERIFY(runScript(sch, "b = sch.get_block(\"mx\")\nsch.pad_einsum(b, [4, 1])\n").ok);
    QVERIFY(maxErrorBetween(f, sch.func()) < 1e-6);
  }
};

QTEST_APPLESS_MAIN(TestLayout)
#include "test_layout.moc"
