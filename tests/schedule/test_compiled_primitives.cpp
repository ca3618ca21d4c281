// rfactor, decompose_reduction, pad_einsum, transform_layout and tensorize through the whole
// pipeline: `loom verify` runs the scheduled program compiled for the host against the
// interpreter, and the tensorized GEMM tile becomes AVX-512 FMAs.
#include "ScheduleTestUtil.h"

using namespace loom::tir::testing;

namespace {
const char* kTensorize = R"(b = sch.get_block("C")
i, j, k = sch.get_loops(b)
jo, ji = sch.split(j, factors=[None, 16])
ko, ki = sch.split(k, factors=[None, 4])
sch.reorder(jo, i, ko, ki, ji)
sch.tensorize(ki, "x86_avx512_fma_f32x16_k4")
sch.parallel(jo)
)";

const char* kPadded = R"(b = sch.get_block("C")
sch.pad_einsum(b, [8, 16, 4])
i, j, k = sch.get_loops(b)
io, ii = sch.split(i, factors=[None, 8])
jo, ji = sch.split(j, factors=[None, 16])
sch.reorder(io, jo, k, ii, ji)
sch.vectorize(ji)
ini = sch.decompose_reduction(b, k)
)";

const char* kMatmulRfactor = R"(b = sch.get_block("C")
i, j, k = sch.get_loops(b)
ko, ki = sch.split(k, factors=[None, 8])
rf = sch.rfactor(ki, factor_axis=2)
a, c, d, e = sch.get_loops(rf)
sch.vectorize(e)
ini = sch.decompose_reduction(rf, d)
)";

/// A register tile (4 rows x 16 lanes) accumulated over a reduction split in two, in a local
/// buffer written back per row band: at N=2048 the local buffer is 32 KB, so it lives on the
/// heap (a workspace), and the tile loop runs in a parallel task.
const char* kParallelLocalTile = R"(b = sch.get_block("C")
i, j, k = sch.get_loops(b)
io, ii = sch.split(i, factors=[None, 4])
jo, ji = sch.split(j, factors=[None, 16])
ko, ki = sch.split(k, factors=[None, 32])
sch.reorder(io, ko, jo, ki, ii, ji)
cw = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(cw, io)
sch.parallel(io)
sch.unroll(ii)
sch.vectorize(ji)
ini = sch.decompose_reduction(b, ko)
)";

/// A two-stage chain whose intermediate gets a blocked layout.
const char* kChainTir = R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((8, 32), "float32"), C: T.Buffer((8, 32), "float32")):
    B = T.alloc_buffer((8, 32))
    for i, j in T.grid(8, 32):
        with T.block("B"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(A[vi, vj])
            T.writes(B[vi, vj])
            B[vi, vj] = A[vi, vj] * T.float32(2)
    for i, j in T.grid(8, 32):
        with T.block("C"):
            vi, vj = T.axis.remap("SS", [i, j])
            T.reads(B[vi, vj])
            T.writes(C[vi, vj])
            C[vi, vj] = B[vi, vj] + T.float32(1)
)";
} // namespace

class TestCompiledPrimitives : public QObject {
  Q_OBJECT
private slots:
  void verifyCompiled_data() {
    QTest::addColumn<QString>("workload");
    QTest::addColumn<QString>("script");
    QTest::newRow("tensorize") << "matmul:M=64,N=64,K=64" << QString(kTensorize);
    QTest::newRow("pad_einsum") << "matmul:M=37,N=50,K=19" << QString(kPadded);
    QTest::newRow("rfactor") << "matmul:M=6,N=10,K=64" << QString(kMatmulRfactor);
  }
  void verifyCompiled() {
    QFETCH(QString, workload);
    QFETCH(QString, script);
    QTemporaryDir dir;
    LoomRun r = runLoom(
        {"verify", "--workload", workload, "--schedule", writeTempFile(dir, "s.py", script)});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("compiled: equivalent"), qPrintable(r.out));
  }
  void rfactorExampleCompiled() {
    LoomRun r = runLoom({"verify", "--workload", "reduce_sum:M=64,N=4096", "--schedule",
                         QStringLiteral(LOOM_SOURCE_DIR "/examples/schedules/rfactor_reduce.py")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("compiled: equivalent"), qPrintable(r.out));
  }
  void tensorizeExampleCompiled() {
    LoomRun r =
        runLoom({"verify", "--workload", "matmul:M=32,N=64,K=32", "--schedule",
                 QStringLiteral(LOOM_SOURCE_DIR "/examples/schedules/matmul_tensorize_avx512.py")});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("compiled: equivalent"), qPrintable(r.out));
  }
  void parallelTileAccumulatorsStayInRegisters() {
    // Inside a parallel task every buffer is a pointer loaded from the closure; only the
    // buffers' alias tags tell the local accumulator from A and B. Without a tag on the
    // kernel's own allocation LLVM stored the tile back after every FMA (GoogLeNet's 1x1 convs
    // at half speed): no block of the task may store a vector between two of its FMAs.
    QTemporaryDir dir;
    QString script = writeTempFile(dir, "s.py", kParallelLocalTile);
    LoomRun v = runLoom({"verify", "--workload", "matmul:M=16,N=2048,K=64", "--schedule", script});
    QVERIFY2(v.exitCode == 0 && v.out.contains("compiled: equivalent"), qPrintable(v.out + v.err));
    LoomRun r = runLoom({"lower", "-w", "matmul:M=16,N=2048,K=64", "-s", script, "--emit", "asm", "-t",
                         "llvm -mcpu=znver3"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QStringList lines = r.out.split('\n');
    qsizetype start = lines.indexOf(QRegularExpression("^\\w*parallel\\w*:.*"));
    QVERIFY2(start >= 0, "no parallel task in the assembly");
    QRegularExpression fma("^\\s*vfmadd\\d+ps\\b"), store("^\\s*vmov[au]ps\\s+%[xyz]mm\\d+, [^%]*\\(");
    QRegularExpression blockEnd("^(\\.LBB|\\s*j[a-z]+\\s|\\s*ret)");
    int fmas = 0, storesBetween = 0, pendingStores = 0;
    bool seenFma = false;
    for (qsizetype l = start + 1; l < lines.size() && !lines[l].startsWith(".Lfunc_end"); ++l) {
      const QString& line = lines[l];
      if (blockEnd.match(line).hasMatch()) {
        seenFma = false;
        pendingStores = 0;
      } else if (fma.match(line).hasMatch()) {
        ++fmas;
        storesBetween += pendingStores;
        pendingStores = 0;
        seenFma = true;
      } else if (seenFma && store.match(line).hasMatch()) {
        ++pendingStores;
      }
    }
    QVERIFY2(fmas >= 8, qPrintable(r.out.left(4000)));
    QVERIFY2(storesBetween == 0, qPrintable(QString("%1 vector stores between FMAs of one block").arg(storesBetween)));
  }
  void transformLayoutCompiled() {
    QTemporaryDir dir;
    QString tir = writeTempFile(dir, "chain.tir", kChainTir);
    QString s = writeTempFile(dir, "s.py",
                              "b = sch.get_block(\"B\")\n"
                              "sch.transform_layout(b, \"B\", lambda i, j: (j // 16, i, j % 16))\n"
                              "c = sch.get_block(\"C\")\n"
                              "i, j = sch.get_loops(c)\n"
                              "jo, ji = sch.split(j, factors=[None, 16])\n"
                              "sch.vectorize(ji)\n");
    LoomRun r = runLoom({"verify", tir, "--schedule", s});
    QVERIFY2(r.exitCode == 0, qPrintable(r.out + r.err));
    QVERIFY2(r.out.contains("compiled: equivalent"), qPrintable(r.out));
  }
  void tensorizedTileIsAvx512Fma() {
    QTemporaryDir dir;
    LoomRun r = runLoom({"lower", "-w", "matmul:M=64,N=64,K=64", "-s",
                         writeTempFile(dir, "s.py", kTensorize), "--emit", "asm", "-t",
                         "llvm -mcpu=skylake-avx512"});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QRegularExpression fma("vfmadd\\d+ps[^\\n]*zmm");
    QVERIFY2(r.out.count(fma) >= 4, qPrintable(r.out.left(4000)));
  }
};

QTEST_APPLESS_MAIN(TestCompiledPrimitives)
#include "test_compiled_primitives.moc"
