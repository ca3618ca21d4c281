// Every workload preset under several GPU schedules, emitted as OpenCL C and run on the OpenCL
// device (PoCL on the CPU), matches the reference interpreter on random inputs.
#include <QtTest>

#include "GPUTestUtil.h"
#include "codegen/CodeGenOpenCL.h"
#include "core/tir/Parser.h"
#include "core/transform/GPUSchedules.h"

using namespace loom;

namespace {

/// Small parameters of each preset (every one of them, so a new preset is noticed).
std::string smallSpec(const std::string& name) {
  if (name == "add") return "add:M=24,N=40";
  if (name == "batch_matmul") return "batch_matmul:B=2,M=16,N=24,K=16";
  if (name == "conv2d") return "conv2d:N=1,C=4,H=8,W=8,K=8,R=3,S=3";
  if (name == "depthwise_conv2d") return "depthwise_conv2d:N=1,C=4,H=8,W=8";
  if (name == "layernorm") return "layernorm:M=12,N=40";
  if (name == "matmul") return "matmul:M=32,N=24,K=40";
  if (name == "reduce_sum") return "reduce_sum:M=20,N=48";
  if (name == "relu") return "relu:M=24,N=40";
  if (name == "softmax") return "softmax:M=12,N=40";
  if (name == "transpose") return "transpose:M=24,N=40";
  return name;
}

}  // namespace

class TestOpenCLPresets : public QObject {
  Q_OBJECT

  std::string m_unavailable;

  /// Lowers `spec` under `script`, runs it on OpenCL and checks it; returns the kernel source.
  std::string check(const std::string& spec, const std::string& script, const char* scheduleName) {
    gputest::GPUCase c = gputest::lowerForGPU(spec, script);
    codegen::OpenCLModule mod(c.lowered);
    auto args = gputest::randomArgs(c, 7);
    auto want = gputest::interpreterResult(c, args);
    // Outputs start from garbage so a kernel that skips elements cannot pass.
    for (size_t i = size_t(c.spec.workload->numInputs); i < args.size(); ++i) tir::fillRandom(args[i], 99 + i);
    mod.run(args);
    std::string diff = gputest::compareOutputs(c, args, want);
    if (!diff.empty() || std::getenv("LOOM_GPU_TEST_DUMP")) qWarning("%s\n%s", scheduleName, mod.source().c_str());
    [&] { QVERIFY2(diff.empty(), (std::string(scheduleName) + ": " + diff).c_str()); }();
    return mod.source();
  }

private slots:
  void initTestCase() {
    gputest::usePluginsOfThisBuild();
    m_unavailable = gputest::openclUnavailable();
    if (!m_unavailable.empty()) qWarning("no OpenCL device: %s", m_unavailable.c_str());
  }

  void flatAndTwoDimensional_data() {
    QTest::addColumn<QString>("spec");
    for (auto& w : topi::allWorkloads()) QTest::newRow(w.name.c_str()) << QString::fromStdString(smallSpec(w.name));
  }
  void flatAndTwoDimensional() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    QFETCH(QString, spec);
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec(spec.toStdString()));
    check(spec.toStdString(), transform::gpuScheduleFlat(f, 64), "flat 64 threads");
    check(spec.toStdString(), transform::gpuScheduleFlat(f, 7), "flat 7 threads (ragged tail)");
    check(spec.toStdString(), transform::gpuSchedule2D(f, 4, 8), "2-D 4x8 threads");
  }

  void matmulSharedMemoryTiling() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    std::string src = check("matmul:M=32,N=24,K=40", transform::gpuScheduleMatmulShared(8), "shared 8x8");
    QVERIFY2(src.find("__local float") != std::string::npos, src.c_str());
    QVERIFY2(src.find("barrier(CLK_LOCAL_MEM_FENCE)") != std::string::npos, src.c_str());
    check("matmul:M=16,N=16,K=16", transform::gpuScheduleMatmulShared(4), "shared 4x4");
    // Per-block tiles: many blocks, each with its own 8x16 tiles (a tile shared across blocks
    // would be overwritten by the other blocks' fetches).
    check("matmul:M=64,N=48,K=64", transform::gpuScheduleMatmulShared(8, 16), "shared 8x8, k step 16");
    check("matmul:M=96,N=64,K=32", transform::gpuScheduleMatmulShared(16, 8), "shared 16x16, k step 8");
  }

  void matmulSharedKernelShape() {
    // One kernel of 8x8 threads per 8x8 tile, two shared tiles, a barrier after the fetch and one
    // before the next step's fetch overwrites the tiles.
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    gputest::GPUCase c = gputest::lowerForGPU("matmul:M=32,N=32,K=32", transform::gpuScheduleMatmulShared(8));
    codegen::OpenCLModule mod(c.lowered);
    QCOMPARE(int(mod.program().kernels.size()), 1);
    const auto& k = mod.program().kernels[0];
    QCOMPARE(k.block[0], int64_t(8));
    QCOMPARE(k.block[1], int64_t(8));
    QCOMPARE(k.grid[0], int64_t(4));
    QCOMPARE(k.grid[1], int64_t(4));
    QCOMPARE(k.sharedBytes, int64_t(2 * 8 * 8 * 4));  // one 8x8 tile of A and one of B per block
    size_t barriers = 0;
    for (size_t at = 0; (at = mod.source().find("barrier(CLK_LOCAL_MEM_FENCE)", at)) != std::string::npos; ++at) ++barriers;
    QCOMPARE(barriers, size_t(2));
  }

  void matmulVirtualThreads() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    // The default of large matmuls: 64x64 outputs per block in registers.
    std::string reg = check("matmul:M=128,N=192,K=32", transform::gpuScheduleMatmulLocal(), "local 16x16 threads, 4x4 vthreads");
    QVERIFY2(reg.find("float C_local[16];") != std::string::npos, reg.c_str());
    check("matmul:M=64,N=48,K=40", transform::gpuScheduleMatmulVThread(8, 2, 8), "vthread 2x2, 8x8 threads");
    check("matmul:M=32,N=64,K=16", transform::gpuScheduleMatmulVThread(4, 4, 4), "vthread 4x4, 4x4 threads");
    // Local accumulators per virtual thread, living across the vthread loops.
    std::string local = R"(b = sch.get_block("C")
i, j, k = sch.get_loops(b)
by, vy, ty = sch.split(i, factors=[None, 2, 8])
bx, vx, tx = sch.split(j, factors=[None, 2, 8])
ko, ki = sch.split(k, factors=[None, 4])
sch.reorder(by, bx, ko, vy, vx, ty, tx, ki)
sch.bind(by, "blockIdx.y")
sch.bind(bx, "blockIdx.x")
sch.bind(vy, "vthread.y")
sch.bind(vx, "vthread.x")
sch.bind(ty, "threadIdx.y")
sch.bind(tx, "threadIdx.x")
Cl = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(Cl, bx)
w_by, w_bx, w0, w1 = sch.get_loops(Cl)
wvy, wty = sch.split(w0, factors=[2, 8])
wvx, wtx = sch.split(w1, factors=[2, 8])
sch.reorder(wvy, wvx, wty, wtx)
sch.bind(wvy, "vthread.y")
sch.bind(wvx, "vthread.x")
sch.bind(wty, "threadIdx.y")
sch.bind(wtx, "threadIdx.x")
)";
    std::string src = check("matmul:M=32,N=48,K=24", local, "vthread with local accumulators");
    QVERIFY2(src.find("float C_local[4];") != std::string::npos, src.c_str());
    // k inside the thread loops: the accumulator of each (virtual) thread inside them, and shared
    // tiles of the block's rows fetched under k.
    std::string inner = R"(b = sch.get_block("C")
i, j, k = sch.get_loops(b)
by, vy, ty = sch.split(i, factors=[None, 2, 4])
bx, vx, tx = sch.split(j, factors=[None, 2, 4])
ko, ki = sch.split(k, factors=[None, 8])
sch.reorder(by, bx, vy, vx, ty, tx, ko, ki)
sch.bind(by, "blockIdx.y")
sch.bind(bx, "blockIdx.x")
sch.bind(vy, "vthread.y")
sch.bind(vx, "vthread.x")
sch.bind(ty, "threadIdx.y")
sch.bind(tx, "threadIdx.x")
Cl = sch.cache_write(b, 0, "local")
sch.reverse_compute_at(Cl, tx)
As = sch.cache_read(b, 0, "shared")
Bs = sch.cache_read(b, 1, "shared")
sch.compute_at(As, ko)
sch.compute_at(Bs, ko)
)";
    src = check("matmul:M=32,N=24,K=32", inner, "vthread, shared tiles under k and a local accumulator");
    QVERIFY2(src.find("float C_local[1];") != std::string::npos, src.c_str());
  }

  void reduceSumRfactorTwoKernels() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    std::string src = check("reduce_sum:M=20,N=48", transform::gpuScheduleReduceRfactor(8), "rfactor 8");
    QVERIFY2(src.find("main_kernel1") != std::string::npos, src.c_str());
  }

  void reduceSumCrossThreadTree() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    std::string src = check("reduce_sum:M=20,N=64", transform::gpuScheduleReduceCrossThread(32), "cross-thread 32");
    QVERIFY2(src.find("__local float A_red_red[32]") != std::string::npos, src.c_str());
    // Ragged: 48 columns over 16 threads of 3 each; and 64 threads with 2 rows of 96.
    check("reduce_sum:M=7,N=48", transform::gpuScheduleReduceCrossThread(16), "cross-thread 16");
    check("reduce_sum:M=2,N=96", transform::gpuScheduleReduceCrossThread(32), "cross-thread 32 (96)");
  }

  void defaultSchedules_data() {
    QTest::addColumn<QString>("spec");
    for (auto& w : topi::allWorkloads()) QTest::newRow(w.name.c_str()) << QString::fromStdString(smallSpec(w.name));
  }
  void defaultSchedules() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    QFETCH(QString, spec);
    topi::WorkloadSpec s = topi::parseWorkloadSpec(spec.toStdString());
    tir::PrimFunc f = topi::buildWorkload(s);
    check(spec.toStdString(), transform::defaultGPUSchedule(s.workload->name, f), "default");
  }

  /// A kernel whose block is one thread gets no barriers: PoCL's kernel compiler aborted the
  /// process ("exit != NULL" in ParallelRegion.cc) on the barriers around shared tiles in a loop
  /// of a kernel of one work-item in all (fuzz_difftest, the reuse program of seed 9).
  void oneThreadKernelHasNoBarriers() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    tir::PrimFunc f = tir::parseFunc(gputest::difftestRegression("reuse_seed_9_one_thread_shared_barriers.py"), "matvec.py");
    const char* script = R"(b0 = sch.get_block("r")
l1, l2 = sch.get_loops(b0)
l7, l8, l9, l10 = sch.split(l1, factors=[1, 1, 1, 1])
l13, l14 = sch.split(l2, factors=[2, 11])
sch.reorder(l7, l8, l9, l13, l10, l14)
sch.bind(l7, "blockIdx.x")
sch.bind(l8, "vthread.x")
sch.bind(l9, "threadIdx.x")
b15 = sch.cache_write(b0, 0, "local")
sch.reverse_compute_at(b15, l9, preserve_unit_loops=True)
b16 = sch.cache_read(b0, 0, "shared")
sch.compute_at(b16, l13, preserve_unit_loops=True)
b17 = sch.cache_read(b0, 1, "shared")
sch.compute_at(b17, l13, preserve_unit_loops=True)
)";
    transform::PassContext ctx;
    driver::OperatorOptions o;
    o.target = "opencl";
    o.schedule = script;
    driver::LoweredOperator op = driver::lowerOperator(f, o, ctx);
    codegen::OpenCLModule mod(op.lowered);
    QVERIFY2(mod.source().find("__local") != std::string::npos, mod.source().c_str());
    QVERIFY2(mod.source().find("barrier(") == std::string::npos, mod.source().c_str());
    std::vector<runtime::NDArray> args = topi::makeParamArrays(f);
    tir::fillRandom(args[0], 1);
    tir::fillRandom(args[1], 2);
    std::vector<runtime::NDArray> want = {args[0], args[1], args[2].copy()};
    tir::interpret(f, std::vector<tir::Arg>(want.begin(), want.end()));
    mod.run(args);
    QCOMPARE(int(args[2].as<int8_t>()[0]), int(want[2].as<int8_t>()[0]));
  }

  /// int8 values keep their type in the GPU C: the floor helpers compute in 32 bits and C's ?:
  /// (Select, if_then_else) promotes char to int, so `floordiv(x, -1)` of -128 was 128 (not
  /// int8's -128) and a min of any of them with a char did not build on OpenCL ("call to
  /// '_cl_min' is ambiguous"; fuzz_difftest TIR seeds 3 and 320874 with --gpu-every 1).
  void int8FloorDivAndSelectKeepTheirType() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    tir::PrimFunc f = tir::parseFunc(R"(# from tvm.script import tir as T

@T.prim_func
def main(A: T.Buffer((4,), "int8"), B: T.Buffer((4,), "int8"), D: T.Buffer((4,), "int8"), S: T.Buffer((4,), "int8"), E: T.Buffer((4,), "int8")):
    T.func_attr({"global_symbol": "main", "tir.noalias": T.bool(True)})
    for i in range(4):
        with T.block("d"):
            v = T.axis.spatial(4, i)
            D[v] = T.min(A[v] // T.int8(-1), T.int8(5))
    for i in range(4):
        with T.block("s"):
            v = T.axis.spatial(4, i)
            S[v] = T.max(T.Select(v >= 2, A[v], B[v]), T.int8(-100))
    for i in range(4):
        with T.block("e"):
            v = T.axis.spatial(4, i)
            E[v] = T.min(T.if_then_else(v >= 2, A[v], B[v]), T.int8(5))
)", "int8.py");
    transform::PassContext ctx;
    driver::OperatorOptions o;
    o.target = "opencl";
    driver::LoweredOperator op = driver::lowerOperator(f, o, ctx);
    codegen::OpenCLModule mod(op.lowered);
    std::vector<runtime::NDArray> args;
    for (int i = 0; i < 5; ++i) args.push_back(runtime::NDArray::empty({4}, runtime::DType{runtime::DType::Int, 8, 1}));
    const int8_t a[4] = {-128, -7, 9, -128}, b[4] = {3, -128, 1, 2};
    for (int i = 0; i < 4; ++i) {
      args[0].as<int8_t>()[i] = a[i];
      args[1].as<int8_t>()[i] = b[i];
    }
    mod.run(args);
    const int8_t d[4] = {-128, 5, -9, -128}, sel[4] = {3, -100, 9, -100}, ite[4] = {3, -128, 5, -128};
    for (int i = 0; i < 4; ++i) {
      QCOMPARE(int(args[2].as<int8_t>()[i]), int(d[i]));
      QCOMPARE(int(args[3].as<int8_t>()[i]), int(sel[i]));
      QCOMPARE(int(args[4].as<int8_t>()[i]), int(ite[i]));
    }
  }
};

QTEST_APPLESS_MAIN(TestOpenCLPresets)
#include "test_opencl_presets.moc"
