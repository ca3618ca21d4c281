// GPU lowering without a device: thread-sync barriers, the host/device split, and the verifier's
// two refusals (threads per block, shared memory per block), each with its own error.
#include <QtTest>

#include "GPUTestUtil.h"
#include "codegen/CodeGenCUDA.h"
#include "codegen/Target.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/Visitor.h"
#include "core/transform/GPUKernels.h"
#include "core/transform/GPUSchedules.h"

using namespace loom;

namespace {
/// The element counts of the allocations of `scope` in `s`.
std::vector<int64_t> allocationSizes(const tir::Stmt& s, const std::string& scope) {
  std::vector<int64_t> out;
  tir::postOrderVisit(s, [&](const tir::IRNode* node) {
    if (node->nodeKind != tir::NodeKind::Allocate) return;
    auto* a = static_cast<const tir::AllocateNode*>(node);
    if (a->scope != scope) return;
    int64_t n = 1;
    for (auto& e : a->extents) n *= *tir::asConstInt(e);
    out.push_back(n);
  });
  return out;
}

/// Matmul with 2x2 virtual threads per thread whose local accumulators live across the vthread
/// loops (ko outside them) and are written back under the same thread bindings.
const char* kVThreadLocal = R"(b = sch.get_block("C")
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

int countSyncs(const tir::Stmt& s) {
  int n = 0;
  tir::postOrderVisit(s, [&](const tir::IRNode* node) {
    if (node->nodeKind != tir::NodeKind::Call) return;
    if (static_cast<const tir::CallNode*>(node)->op == transform::kThreadSync) ++n;
  });
  return n;
}
}  // namespace

class TestGPULowering : public QObject {
  Q_OBJECT
private slots:
  void targetsParse() {
    QCOMPARE(codegen::Target::parse("cuda").arch, std::string("sm_90"));
    QCOMPARE(codegen::Target::parse("cuda -arch=sm_80").arch, std::string("sm_80"));
    QCOMPARE(codegen::Target::parse("cuda -arch=sm_80").str(), std::string("cuda -arch=sm_80"));
    QVERIFY(codegen::Target::parse("opencl").isGPU());
    QVERIFY(!codegen::Target::parse("llvm").isGPU());
    QVERIFY_THROWS_EXCEPTION(TargetError, codegen::Target::parse("cuda -arch=compute"));
    QVERIFY_THROWS_EXCEPTION(TargetError, codegen::Target::parse("opencl -arch=sm_80"));
  }

  void threadSyncPlacesBarriers() {
    auto c = gputest::lowerForGPU("matmul:M=16,N=16,K=16", transform::gpuScheduleMatmulShared(8));
    // Fetch then use (read after write), and the loop's next fetch after this use (write after read).
    QCOMPARE(countSyncs(c.lowered->body), 2);
    // No shared memory: no barrier.
    auto flat = gputest::lowerForGPU("relu:M=16,N=16", transform::gpuScheduleFlat(topi::buildWorkload(topi::parseWorkloadSpec("relu:M=16,N=16")), 32));
    QCOMPARE(countSyncs(flat.lowered->body), 0);
  }

  void splitMakesOneKernelPerBlock() {
    auto spec = topi::parseWorkloadSpec("softmax:M=8,N=16");
    auto c = gputest::lowerForGPU("softmax:M=8,N=16", transform::gpuScheduleFlat(topi::buildWorkload(spec), 16));
    transform::DeviceProgram p = transform::splitHostDevice(c.lowered);
    QCOMPARE(int(p.kernels.size()), 4);
    int allocs = 0;
    for (auto& s : p.steps) allocs += s.kind == transform::HostStep::Kind::Alloc;
    QVERIFY(allocs >= 1);  // the row statistics live in device memory between kernels
    for (auto& k : p.kernels) QCOMPARE(k.block[0], int64_t(16));
  }

  void unboundLoopIsRefused() {
    auto c = gputest::lowerForGPU("relu:M=16,N=16", "");
    try {
      transform::splitHostDevice(c.lowered);
      QFAIL("an unbound loop nest was split");
    } catch (const GPUSplitError& e) {
      QVERIFY2(std::string(e.what()).find("outside any kernel") != std::string::npos, e.what());
    }
  }

  /// A local (per-thread) buffer whose uses are in two kernels is refused: the lowering placed it
  /// outside both, where it became one device buffer of the size compact-buffers gave one thread,
  /// so 25 threads wrote element 0 and the next kernel read it (fuzz_difftest seed 20006: a
  /// random primitive sequence with two cache_writes "local", then the space's auto-bind).
  void localBufferAcrossKernelsIsRefused() {
    const std::string name = "seed_20006_gpu_local_cache_across_kernels";
    tir::PrimFunc f = tir::parseFunc(gputest::difftestRegression(name + ".py"), name + ".py");
    const std::string script = gputest::difftestRegression(name + ".sched.py");
    transform::PassContext ctx;
    driver::OperatorOptions o;
    o.target = "opencl";
    o.schedule = script;
    driver::LoweredOperator op = driver::lowerOperator(f, o, ctx);
    try {
      transform::splitHostDevice(op.lowered);
      QFAIL("a local buffer used by two kernels was split");
    } catch (const GPUSplitError& e) {
      QVERIFY2(std::string(e.what()).find("buffer 'out_local' of scope local is used by more than one kernel") !=
                   std::string::npos,
               e.what());
    }
  }

  void verifierRefuses2048Threads() {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("relu:M=64,N=64"));
    try {
      gputest::lowerForGPU("relu:M=64,N=64", transform::gpuScheduleFlat(f, 2048));
      QFAIL("2048 threads per block were accepted");
    } catch (const GPUThreadLimitError& e) {
      QVERIFY2(std::string(e.what()).find("2048 threads per block") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("at most 1024") != std::string::npos, e.what());
    }
    // 1024 is fine.
    gputest::lowerForGPU("relu:M=64,N=64", transform::gpuScheduleFlat(f, 1024));
  }

  void sharedTilesArePerBlock() {
    // Each shared buffer is one block's tile (tile x kTile), whatever the matrix size: blockIdx
    // stays a symbol in compact-buffers, only the thread indices are relaxed.
    for (const char* spec : {"matmul:M=32,N=24,K=32", "matmul:M=512,N=256,K=64"}) {
      auto c = gputest::lowerForGPU(spec, transform::gpuScheduleMatmulShared(8));
      QCOMPARE(allocationSizes(c.lowered->body, "shared"), (std::vector<int64_t>{64, 64}));
      auto p = transform::splitHostDevice(c.lowered);
      QCOMPARE(int(p.kernels.size()), 1);
      QCOMPARE(p.kernels[0].sharedBytes, int64_t(2 * 64 * 4));
      QVERIFY(p.steps.size() == 1);  // no device buffer on the host side: the tiles live in the kernel
    }
    auto wide = gputest::lowerForGPU("matmul:M=64,N=64,K=64", transform::gpuScheduleMatmulShared(8, 32));
    QCOMPARE(allocationSizes(wide.lowered->body, "shared"), (std::vector<int64_t>{256, 256}));
    QCOMPARE(transform::splitHostDevice(wide.lowered).kernels[0].sharedBytes, int64_t(2 * 256 * 4));
  }

  void localBuffersArePerThread() {
    // A cache_write "local" accumulator under the thread loops is one element per thread.
    std::string script = transform::gpuScheduleMatmulShared(8) +
                         "Cl = sch.cache_write(b, 0, \"local\")\n"
                         "sch.reverse_compute_at(Cl, tj)\n";
    auto c = gputest::lowerForGPU("matmul:M=32,N=32,K=32", script);
    QCOMPARE(allocationSizes(c.lowered->body, "local"), (std::vector<int64_t>{1}));
  }

  void virtualThreadsBecomeSerialLoops() {
    auto c = gputest::lowerForGPU("matmul:M=64,N=48,K=32", transform::gpuScheduleMatmulVThread(8, 2, 8));
    int vthreadLoops = 0, vthreadAttrs = 0;
    tir::postOrderVisit(c.lowered->body, [&](const tir::IRNode* node) {
      if (node->nodeKind == tir::NodeKind::For) {
        auto* f = static_cast<const tir::ForNode*>(node);
        QVERIFY(f->kind != tir::ForKind::ThreadBinding);
        if (f->loopVar->name == "i_1" || f->loopVar->name == "j_1") {
          QCOMPARE(f->kind, tir::ForKind::Serial);
          QCOMPARE(*tir::asConstInt(f->extent), int64_t(2));
          ++vthreadLoops;
        }
      }
      if (node->nodeKind == tir::NodeKind::AttrStmt) {
        auto* a = static_cast<const tir::AttrStmtNode*>(node);
        if (auto* v = a->node.as<tir::VarNode>()) vthreadAttrs += v->name.rfind("vthread", 0) == 0;
      }
    });
    QCOMPARE(vthreadLoops, 2);
    QCOMPARE(vthreadAttrs, 0);
    auto p = transform::splitHostDevice(c.lowered);
    QCOMPARE(int(p.kernels.size()), 1);
    // 16x16 outputs per block over 8x8 threads: each thread does 2x2 of them.
    QCOMPARE(p.kernels[0].block, (std::array<int64_t, 3>{8, 8, 1}));
    QCOMPARE(p.kernels[0].grid, (std::array<int64_t, 3>{3, 4, 1}));
    // The block's 16x8 tiles of A and B (every virtual thread's rows).
    QCOMPARE(allocationSizes(c.lowered->body, "shared"), (std::vector<int64_t>{128, 128}));
  }

  void localBuffersPerVirtualThread() {
    // The accumulator lives across the vthread loops: one element per virtual thread, per thread.
    auto c = gputest::lowerForGPU("matmul:M=32,N=32,K=16", kVThreadLocal);
    if (std::getenv("LOOM_GPU_TEST_DUMP")) qWarning("%s\n%s", tir::printFunc(c.scheduled).c_str(), tir::printFunc(c.lowered).c_str());
    QCOMPARE(allocationSizes(c.lowered->body, "local"), (std::vector<int64_t>{4}));
    QCOMPARE(transform::splitHostDevice(c.lowered).steps.size(), size_t(1));  // nothing on the host
  }

  void defaultMatmulScheduleBySize() {
    // Matmuls with at least 32 blocks of 64x64 outputs get them accumulated in registers; smaller
    // ones and odd sizes keep the 8x8 shared tiles / the flat schedule.
    auto kernelOf = [](const std::string& spec) {
      topi::WorkloadSpec s = topi::parseWorkloadSpec(spec);
      auto c = gputest::lowerForGPU(spec, transform::defaultGPUSchedule("matmul", topi::buildWorkload(s)));
      auto p = transform::splitHostDevice(c.lowered);
      [&] { QCOMPARE(int(p.kernels.size()), 1); }();
      return std::make_pair(p.kernels.at(0), c);
    };
    auto [large, lc] = kernelOf("matmul:M=1024,N=512,K=48");
    QCOMPARE(large.block, (std::array<int64_t, 3>{16, 16, 1}));
    QCOMPARE(large.grid, (std::array<int64_t, 3>{8, 16, 1}));  // 128 blocks of 64x64
    auto [mid, mc] = kernelOf("matmul:M=384,N=384,K=384");  // 36 blocks: enough
    QCOMPARE(mid.block, (std::array<int64_t, 3>{16, 16, 1}));
    QCOMPARE(allocationSizes(lc.lowered->body, "local"), (std::vector<int64_t>{16}));
    QCOMPARE(large.sharedBytes, int64_t(2 * 64 * 16 * 4));
    auto [small, sc] = kernelOf("matmul:M=256,N=256,K=256");  // 16 blocks of 64x64: too few
    QCOMPARE(small.block, (std::array<int64_t, 3>{8, 8, 1}));
    QVERIFY(allocationSizes(sc.lowered->body, "local").empty());
    auto [odd, oc] = kernelOf("matmul:M=1024,N=1024,K=20");  // K not a multiple of 8: flat
    QCOMPARE(odd.block, (std::array<int64_t, 3>{64, 1, 1}));
  }

  void verifierRefusesTooMuchSharedMemory() {
    // 8 x 1024 tiles of A and B: 64 KiB of shared memory per block.
    try {
      gputest::lowerForGPU("matmul:M=16,N=16,K=2048", transform::gpuScheduleMatmulShared(8, 1024));
      QFAIL("64 KiB of shared memory was accepted");
    } catch (const GPUSharedMemoryError& e) {
      QVERIFY2(std::string(e.what()).find("65536 bytes of shared memory") != std::string::npos, e.what());
      QVERIFY2(std::string(e.what()).find("at most 49152") != std::string::npos, e.what());
    }
    // Half of that (32 KiB) fits.
    gputest::lowerForGPU("matmul:M=16,N=16,K=2048", transform::gpuScheduleMatmulShared(8, 512));
    // The same limits through the API, with a smaller shared-memory budget.
    auto c = gputest::lowerForGPU("matmul:M=16,N=16,K=16", transform::gpuScheduleMatmulShared(8));
    auto p = transform::splitHostDevice(c.lowered);
    transform::GPULimits small;
    small.maxSharedMemoryBytes = 511;
    QVERIFY_THROWS_EXCEPTION(GPUSharedMemoryError, transform::verifyGPULimits(p, small));
    small.maxSharedMemoryBytes = 512;
    transform::verifyGPULimits(p, small);
    transform::GPULimits fewThreads;
    fewThreads.maxThreadsPerBlock = 32;
    QVERIFY_THROWS_EXCEPTION(GPUThreadLimitError, transform::verifyGPULimits(p, fewThreads));
  }

  void crossThreadReductionRefusals() {
    // The outer part of k stays outside the thread loop: the tree would sum only one slice.
    std::string outside = "b = sch.get_block(\"A_red\")\n"
                          "i, k = sch.get_loops(b)\n"
                          "ko, ki = sch.split(k, factors=[None, 8])\n"
                          "sch.bind(i, \"blockIdx.x\")\n"
                          "sch.bind(ki, \"threadIdx.x\")\n";
    try {
      gputest::lowerForGPU("reduce_sum:M=4,N=32", outside);
      QFAIL("a reduction loop outside the thread loop was accepted");
    } catch (const CrossThreadReductionError& e) {
      QVERIFY2(std::string(e.what()).find("reduction loop 'k_0' is outside it") != std::string::npos, e.what());
    }
    // 12 threads: not a power of two.
    try {
      gputest::lowerForGPU("reduce_sum:M=4,N=36", transform::gpuScheduleReduceCrossThread(12));
      QFAIL("a 12-thread tree was accepted");
    } catch (const CrossThreadReductionError& e) {
      QVERIFY2(std::string(e.what()).find("power of two") != std::string::npos, e.what());
    }
    // The tree: log2(32) halving steps, each followed by a barrier, plus the one after the fill.
    auto c = gputest::lowerForGPU("reduce_sum:M=4,N=64", transform::gpuScheduleReduceCrossThread(32));
    QCOMPARE(countSyncs(c.lowered->body), 6);
  }

  /// A kernel that reads back a buffer it stores to has no restrict on the buffers it only reads
  /// (they are const); the buffers it stores to keep it. NVRTC 13.0 loaded `c ? t0[i] : B[i]`
  /// through the selected pointer with ld.global.nc when B was a read-only restrict parameter, so
  /// the thread could read t0[i] as it was before its own store (fuzz_difftest seeds 1100071 and
  /// 1230077 on the H200; gpu.test_cuda_ptx checks the PTX where NVRTC is installed). A kernel
  /// that reads back nothing keeps restrict on its read-only buffers (the read-only cache).
  void readOnlyBuffersOfAReadBackKernelAreNotRestrict() {
    const std::string name = "seed_1230077_gpu_nc_load_of_written_buffer";
    for (auto dialect : {codegen::GPUDialect::CUDA, codegen::GPUDialect::OpenCL}) {
      bool cuda = dialect == codegen::GPUDialect::CUDA;
      tir::PrimFunc lowered = gputest::difftestAutoBoundVariant(name, 1230077, cuda ? "cuda" : "opencl");
      std::string src = codegen::emitGPUSource(transform::splitHostDevice(lowered), dialect);
      std::string g = cuda ? "" : "__global ", r = cuda ? "__restrict__" : "restrict";
      // t0 (the row sums) is written, then read by the same thread: `B != t0 ? t0 : B`.
      for (std::string want : {g + "loom_i32* " + r + " t0", g + "const loom_i32* R0", g + "loom_i32* " + r + " out",
                               g + "const loom_i32* B)"})
        QVERIFY2(src.find(want) != std::string::npos, (want + " not in:\n" + src.substr(src.find(cuda ? "extern" : "__kernel"))).c_str());
    }
    auto flat = gputest::lowerForGPU("relu:M=16,N=16", transform::gpuScheduleFlat(topi::buildWorkload(topi::parseWorkloadSpec("relu:M=16,N=16")), 32));
    std::string src = codegen::emitGPUSource(transform::splitHostDevice(flat.lowered), codegen::GPUDialect::CUDA);
    std::string sig = src.substr(src.find("extern \"C\""));
    sig = sig.substr(0, sig.find('{'));
    QVERIFY2(sig.find("(float* __restrict__ T_relu, const float* __restrict__ A)") != std::string::npos, sig.c_str());
  }

  void cudaDialect() {
    auto c = gputest::lowerForGPU("matmul:M=16,N=16,K=16", transform::gpuScheduleMatmulShared(8));
    std::string src = codegen::emitGPUSource(transform::splitHostDevice(c.lowered), codegen::GPUDialect::CUDA);
    QVERIFY2(src.find("extern \"C\" __global__") != std::string::npos, src.c_str());
    QVERIFY2(src.find("__shared__ float") != std::string::npos, src.c_str());
    QVERIFY2(src.find("__syncthreads();") != std::string::npos, src.c_str());
    QVERIFY2(src.find("threadIdx.x") != std::string::npos, src.c_str());
    QVERIFY2(src.find("__launch_bounds__(64)") != std::string::npos, src.c_str());
  }
};

QTEST_APPLESS_MAIN(TestGPULowering)
#include "test_gpu_lowering.moc"
