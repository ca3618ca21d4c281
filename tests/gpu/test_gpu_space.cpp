// The GPU search space (SpaceGenerator::forTarget("opencl")): sampled schedules bind blocks,
// virtual threads and threads, use local and shared memory and cross-thread reductions, and run
// correctly on PoCL.
#include <QtTest>

#include "GPUTestUtil.h"
#include "codegen/CodeGenOpenCL.h"
#include "core/schedule/Trace.h"
#include "core/tir/Visitor.h"
#include "core/tune/SpaceGenerator.h"

using namespace loom;
using namespace loom::tune;

namespace {

/// Thread tags bound in `f`, and storage scopes allocated.
struct Shape {
  std::set<std::string> tags, scopes;
};
Shape shapeOf(const tir::PrimFunc& f) {
  Shape s;
  tir::postOrderVisit(f->body, [&](const tir::IRNode* n) {
    if (n->nodeKind == tir::NodeKind::For) {
      auto* l = static_cast<const tir::ForNode*>(n);
      if (l->kind == tir::ForKind::ThreadBinding) s.tags.insert(l->threadTag);
    }
    if (n->nodeKind == tir::NodeKind::Block)
      for (auto& b : static_cast<const tir::BlockNode*>(n)->allocBuffers) s.scopes.insert(b->scope);
  });
  return s;
}

}  // namespace

class TestGPUSpace : public QObject {
  Q_OBJECT
  std::string m_unavailable;

  /// Samples the GPU space of `spec` with seeds 1..n; checks every candidate that lowers on
  /// OpenCL against the interpreter; returns the union of their shapes and how many ran.
  std::pair<Shape, int> sampleAndRun(const std::string& spec, int n) {
    SpaceGenerator space = SpaceGenerator::forTarget("opencl");
    Shape all;
    int ran = 0;
    for (uint64_t seed = 1; seed <= uint64_t(n); ++seed) {
      gputest::GPUCase c;
      c.spec = topi::parseWorkloadSpec(spec);
      c.input = topi::buildWorkload(c.spec);
      std::optional<SpacePoint> p = space.sample(c.input, seed);
      if (!p) continue;
      c.scheduled = p->final.func();
      Shape s = shapeOf(c.scheduled);
      all.tags.insert(s.tags.begin(), s.tags.end());
      all.scopes.insert(s.scopes.begin(), s.scopes.end());
      try {
        transform::PassContext ctx;
        transform::LowerOptions lo;
        lo.gpu = true;
        c.lowered = transform::lower(transform::lowerCrossThreadReduction(c.scheduled), ctx, lo);
      } catch (const GPUThreadLimitError&) {
        continue;  // sampled tiles over 1024 threads: the verifier's to refuse, the tuner skips them
      } catch (const GPUSharedMemoryError&) {
        continue;
      }
      codegen::OpenCLModule mod(c.lowered);
      auto args = gputest::randomArgs(c, seed);
      auto want = gputest::interpreterResult(c, args);
      mod.run(args);
      std::string diff = gputest::compareOutputs(c, args, want);
      if (!diff.empty()) {
        QWARN((p->final.trace().str() + "\n" + mod.source()).c_str());
        return {all, -1};
      }
      ++ran;
    }
    return {all, ran};
  }

private slots:
  void initTestCase() {
    gputest::usePluginsOfThisBuild();
    m_unavailable = gputest::openclUnavailable();
  }

  void cpuTargetsKeepTheCpuSpace() {
    QCOMPARE(SpaceGenerator::forTarget("llvm").rules().size(), SpaceGenerator::defaultCpu().rules().size());
    std::vector<std::string> names;
    SpaceGenerator gpu = SpaceGenerator::forTarget("cuda -arch=sm_80");
    for (auto& r : gpu.rules()) names.push_back(r->name());
    QCOMPARE(names, (std::vector<std::string>{"auto-inline", "gpu-multi-level-tiling", "gpu-cross-thread-reduction",
                                              "gpu-auto-bind"}));
  }

  void matmulSpaceRunsOnOpenCL() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    auto [shape, ran] = sampleAndRun("matmul:M=64,N=32,K=48", 12);
    QVERIFY2(ran >= 6, qPrintable(QString::number(ran)));
    QVERIFY(shape.tags.count("blockIdx.x") && shape.tags.count("vthread.x") && shape.tags.count("threadIdx.x"));
    QVERIFY(shape.scopes.count("local"));
    QVERIFY(shape.scopes.count("shared"));
  }

  void reductionSpacesRunOnOpenCL() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    for (const char* spec : {"reduce_sum:M=12,N=80", "softmax:M=6,N=40", "conv2d:N=1,C=4,H=8,W=8,K=8,R=3,S=3"}) {
      auto [shape, ran] = sampleAndRun(spec, 5);
      QVERIFY2(ran >= 4, (std::string(spec) + ": " + std::to_string(ran)).c_str());
      QVERIFY2(shape.tags.count("threadIdx.x"), spec);
    }
  }

};

QTEST_APPLESS_MAIN(TestGPUSpace)
#include "test_gpu_space.moc"
