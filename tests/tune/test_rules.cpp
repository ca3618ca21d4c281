// The register-tiled rules of the CPU space (multi-level-tiling-register, multi-level-tiling-with-intrin,
// the tensorize postprocessor): on matmul, batch_matmul, conv2d (NCHW and channel-blocked NCHWc with a
// fused bias/relu epilogue) every sampled candidate computes what the unscheduled program does
// (interpreter on random inputs) and has the structure: a register-sized "local" accumulator (or the
// epilogue) under the tile, 16 vector lanes innermost, the AVX-512 micro-kernel when tensorized, a
// packed panel when packing; mutating any decision replays to another valid candidate.
#include <QtTest>
#include <set>

#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/CompileModel.h"
#include "core/graph/Expr.h"
#include "core/schedule/Analysis.h"
#include "core/schedule/Primitives.h"
#include "core/schedule/Trace.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/topi/Workloads.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RegisterTiling.h"

using namespace loom;
using namespace loom::tune;

namespace {

double maxErrorBetween(const tir::PrimFunc& before, const tir::PrimFunc& after) {
  auto a = topi::makeParamArrays(before);
  auto b = topi::makeParamArrays(after);
  std::vector<tir::Arg> argsA, argsB;
  for (size_t i = 0; i < a.size(); ++i) {
    tir::fillRandom(a[i], 11 + i);
    tir::fillRandom(b[i], 11 + i);
    argsA.push_back(a[i]);
    argsB.push_back(b[i]);
  }
  tir::interpret(before, argsA);
  tir::interpret(after, argsB);
  double err = 0;
  for (size_t i = 0; i < a.size(); ++i) err = std::max(err, tir::maxRelError(b[i], a[i]));
  return err;
}

/// What the scheduled program looks like: vectorized loop extents, allocations by scope.
class Shape : public tir::IRVisitor {
public:
  std::multiset<int64_t> vectorExtents;
  std::set<std::string> allocScopes;
  using IRVisitor::visit;
  void visit(const tir::ForNode* n) override {
    if (n->kind == tir::ForKind::Vectorized)
      if (auto e = tir::constIntValue(n->extent)) vectorExtents.insert(*e);
    IRVisitor::visit(n);
  }
  void visit(const tir::BlockNode* n) override {
    for (auto& b : n->allocBuffers) allocScopes.insert(b->scope);
    IRVisitor::visit(n);
  }
};

/// The largest "local" allocation of the lowered program (elements): the accumulator once
/// compact-buffers has shrunk it to the register tile.
int64_t largestLocalAllocation(const tir::PrimFunc& scheduled) {
  transform::PassContext ctx;
  driver::LoweredOperator op = driver::lowerOperator(scheduled, driver::OperatorOptions{}, ctx);
  int64_t largest = 0;
  tir::postOrderVisit(op.lowered->body, [&](const tir::IRNode* n) {
    if (n->nodeKind != tir::NodeKind::Allocate) return;
    auto* a = static_cast<const tir::AllocateNode*>(n);
    if (a->scope != "local") return;
    int64_t count = 1;
    for (auto& e : a->extents) count *= tir::constIntValue(e).value_or(1 << 30);
    largest = std::max(largest, count);
  });
  return largest;
}

/// Vector accesses of the lowered program whose index is not a plain Ramp (gathers/scatters for the
/// code generator); flattening a tensorized tile gives `broadcast(row) + ramp`, which the simplifier folds.
int nonRampVectorAccesses(const tir::PrimFunc& scheduled) {
  transform::PassContext ctx;
  driver::LoweredOperator op = driver::lowerOperator(scheduled, driver::OperatorOptions{}, ctx);
  int bad = 0;
  auto check = [&](const std::vector<tir::Expr>& idx) {
    for (auto& i : idx)
      if (i.dtype().lanes() > 1 && !i.as<tir::RampNode>()) ++bad;
  };
  tir::postOrderVisit(op.lowered->body, [&](const tir::IRNode* n) {
    if (n->nodeKind == tir::NodeKind::BufferStore) check(static_cast<const tir::BufferStoreNode*>(n)->indices);
    if (n->nodeKind == tir::NodeKind::BufferLoad) check(static_cast<const tir::BufferLoadNode*>(n)->indices);
  });
  return bad;
}

Shape shapeOf(const tir::PrimFunc& f) {
  Shape s;
  s.visitStmt(f->body);
  return s;
}

size_t countKind(const tir::Trace& t, const std::string& kind) {
  size_t n = 0;
  for (auto& inst : t.insts) n += inst.kind->name == kind;
  return n;
}

std::string str(const tir::Trace& t) { return t.str(); }

/// Only the rule under test claims the reduction blocks.
SpaceGenerator registerSpace() {
  return SpaceGenerator({makeAutoInline(), makeMultiLevelTilingRegister(1.0), makeRandomComputeLocation(),
                         makeParallelVectorizeUnroll()});
}
SpaceGenerator intrinSpace() {
  return SpaceGenerator({makeAutoInline(), makeMultiLevelTilingWithIntrin(1.0), makeRandomComputeLocation(),
                         makeParallelVectorizeUnroll()});
}

/// Checks `n` samples of `space` on `f`: valid, correct, replayable, claimed by the rule.
void checkSamples(const SpaceGenerator& space, const tir::PrimFunc& f, uint64_t n, const QString& what,
                  const std::function<void(const SpacePoint&)>& structure) {
  std::set<std::string> distinct;
  for (uint64_t seed = 1; seed <= n; ++seed) {
    auto p = space.sample(f, seed);
    QVERIFY2(p.has_value(), qPrintable(what + " seed " + QString::number(seed)));
    double err = maxErrorBetween(f, p->final.func());
    if (!(err <= 1e-4)) qWarning("%s", str(p->final.trace()).c_str());
    QVERIFY2(err <= 1e-4, qPrintable(what + " seed " + QString::number(seed) + " err " + QString::number(err)));
    tir::Schedule again(f);
    tir::Trace::fromJson(p->finalJson()).apply(again);
    QVERIFY(tir::structuralEqual(again.func(), p->final.func()));
    structure(*p);
    distinct.insert(p->key());
  }
  QVERIFY2(distinct.size() >= std::min<uint64_t>(n, 3), qPrintable(what));
}

runtime::NDArray randomArray(const std::vector<int64_t>& shape, uint64_t seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType::f32());
  tir::fillRandom(a, seed);
  return a;
}

/// conv2d(3x3, pad 1) -> bias_add -> relu on (1, c, hw, hw) with k output channels, as a model.
graph::Module convBiasRelu(int64_t c, int64_t hw, int64_t k) {
  auto f32 = DataType::Float(32);
  graph::Var x = graph::makeVar("data", graph::tensorType(std::vector<int64_t>{1, c, hw, hw}, f32));
  graph::Constant w = graph::makeConstant(randomArray({k, c, 3, 3}, 5), "w");
  graph::Constant b = graph::makeConstant(randomArray({k}, 6), "b");
  graph::Attrs attrs;
  attrs.set("padding", std::vector<int64_t>{1, 1, 1, 1});
  graph::Expr y = graph::makeCall("nn.bias_add", {graph::makeCall("nn.conv2d", {x, w}, attrs), b});
  y = graph::makeCall("nn.relu", {y});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, y);
  return m;
}

/// conv2d(3x3, pad 1, `groups`) -> bias_add -> relu on (1, c, hw, hw) with k output channels:
/// depthwise when groups == c == k.
graph::Module groupedConvBiasRelu(int64_t c, int64_t hw, int64_t k, int64_t groups) {
  auto f32 = DataType::Float(32);
  graph::Var x = graph::makeVar("data", graph::tensorType(std::vector<int64_t>{1, c, hw, hw}, f32));
  graph::Constant w = graph::makeConstant(randomArray({k, c / groups, 3, 3}, 5), "w");
  graph::Constant b = graph::makeConstant(randomArray({k}, 6), "b");
  graph::Attrs attrs;
  attrs.set("padding", std::vector<int64_t>{1, 1, 1, 1});
  attrs.set("groups", groups);
  graph::Expr y = graph::makeCall("nn.bias_add", {graph::makeCall("nn.conv2d", {x, w}, attrs), b});
  y = graph::makeCall("nn.relu", {y});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, y);
  return m;
}

/// Depthwise and grouped convs (bias + relu fused) and channel counts that are not multiples of
/// 16, as ConvertLayout blocks them (20 -> NCHW10c, 12 -> NCHW12c; 24 is padded to NCHW16c): the
/// register rule claims each, every candidate vectorizes the lane axis with the lanes vectorLanes
/// gives (10; 4 for 12), has a parallel loop and computes what the unscheduled kernel does
/// (interpreter), and a compiled candidate (LLVM, odd vector widths included) matches too.
struct ConvCase {
  const char* what;
  int64_t c, hw, k, groups;
  const char* layout;
  int64_t lanes;
};

/// The kernel with op `conv` (nn.conv2d: direct, winograd-conv disabled; nn.conv2d_winograd) of
/// the model compiled with `layout`.
tir::PrimFunc convKernel(const graph::Module& m, const std::string& layout, const std::string& conv = "nn.conv2d") {
  driver::CompileModelOptions o;
  o.optLevel = 3;
  o.desiredLayout = layout;
  if (conv == "nn.conv2d") o.disabledPasses = {"winograd-conv"};
  for (auto& g : driver::extractGroups(m, {}, o))
    for (auto& op : g.ops)
      if (op == conv) return g.func;
  return {};
}

/// The loops around each block of `f`, outermost first.
std::map<std::string, std::vector<const tir::ForNode*>> loopsOfBlocks(const tir::PrimFunc& f) {
  struct Walker : tir::IRVisitor {
    std::vector<const tir::ForNode*> stack;
    std::map<std::string, std::vector<const tir::ForNode*>> loops;
    using IRVisitor::visit;
    void visit(const tir::ForNode* n) override {
      stack.push_back(n);
      IRVisitor::visit(n);
      stack.pop_back();
    }
    void visit(const tir::BlockNode* n) override {
      loops[n->name] = stack;
      IRVisitor::visit(n);
    }
  } w;
  w.visitStmt(f->body);
  return w.loops;
}

} // namespace

class TestRules : public QObject {
  Q_OBJECT

  void checkConvCases(const std::vector<ConvCase>& cases) {
    for (const ConvCase& cs : cases) {
      tir::PrimFunc f = convKernel(groupedConvBiasRelu(cs.c, cs.hw, cs.k, cs.groups), cs.layout);
      QVERIFY2(f.defined(), cs.what);
      checkSamples(registerSpace(), f, 2, cs.what, [&](const SpacePoint& p) {
        std::string t = str(p.final.trace());
        QVERIFY2(t.find("\"SSRS\"") != std::string::npos, qPrintable(QString(cs.what) + ": " + t.c_str()));
        QVERIFY2(shapeOf(p.final.func()).vectorExtents.count(cs.lanes) >= 1, cs.what);
        bool parallel = false;
        tir::postOrderVisit(p.final.func()->body, [&](const tir::IRNode* n) {
          parallel |= n->nodeKind == tir::NodeKind::For && static_cast<const tir::ForNode*>(n)->kind == tir::ForKind::Parallel;
        });
        QVERIFY2(parallel, cs.what);
      });
      // One candidate compiled.
      auto p = registerSpace().sample(f, 5);
      QVERIFY(p.has_value());
      transform::PassContext ctx;
      driver::LoweredOperator op = driver::lowerOperator(p->final.func(), driver::OperatorOptions{}, ctx);
      auto jit = driver::jitOperator(op);
      auto arrays = topi::makeParamArrays(f), expect = topi::makeParamArrays(f);
      std::vector<tir::Arg> args;
      for (size_t i = 0; i < arrays.size(); ++i) {
        tir::fillRandom(arrays[i], 3 + i);
        tir::fillRandom(expect[i], 3 + i);
        args.push_back(expect[i]);
      }
      tir::interpret(f, args);
      std::vector<runtime::PackedArg> packedArgs(arrays.begin(), arrays.end());
      jit->getFunction(op.lowered->name).call(packedArgs);
      double err = tir::maxRelError(arrays.back(), expect.back());
      QVERIFY2(err <= 1e-4, qPrintable(QString(cs.what) + " compiled: err " + QString::number(err)));
    }
  }

private slots:
  void registerTilingOnMatmul() {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=16,N=64,K=24"));
    int packed = 0;
    checkSamples(registerSpace(), f, 12, "matmul", [&](const SpacePoint& p) {
      std::string t = str(p.final.trace());
      QVERIFY2(t.find("\"SSRS\"") != std::string::npos, t.c_str());
      QVERIFY2(t.find("cache_write(b0, 0, \"local\")") != std::string::npos, t.c_str());
      QCOMPARE(countKind(p.final.trace(), "decompose_reduction"), size_t(1));
      // 16 fp32 lanes innermost in the micro-kernel, the accumulator is "local".
      Shape s = shapeOf(p.final.func());
      QVERIFY(s.vectorExtents.count(16) >= 1);
      QVERIFY(s.allocScopes.count("local"));
      packed += s.allocScopes.count("global") > 0;
    });
    QVERIFY(packed > 0); // some candidates pack the panel of B
  }

  void registerTilingCompiles() {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=32,N=64,K=32"));
    auto p = registerSpace().sample(f, 2);
    QVERIFY(p.has_value());
    QVERIFY(largestLocalAllocation(p->final.func()) <= 8 * 64);
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(p->final.func(), driver::OperatorOptions{}, ctx);
    auto jit = driver::jitOperator(op);
    QVERIFY(jit != nullptr);
    // The compiled kernel gives the interpreter's answer.
    auto arrays = topi::makeParamArrays(f);
    auto expect = topi::makeParamArrays(f);
    std::vector<tir::Arg> args;
    for (size_t i = 0; i < arrays.size(); ++i) {
      tir::fillRandom(arrays[i], 3 + i);
      tir::fillRandom(expect[i], 3 + i);
      args.push_back(expect[i]);
    }
    tir::interpret(f, args);
    std::vector<runtime::PackedArg> packedArgs(arrays.begin(), arrays.end());
    jit->getFunction(op.lowered->name).call(packedArgs);
    if (qEnvironmentVariableIsSet("LOOM_TEST_VERBOSE")) qInfo("%s", str(p->final.trace()).c_str());
    QVERIFY(tir::maxRelError(arrays[2], expect[2]) <= 1e-4); // FMA contraction rounds differently
  }

  void intrinTilingTensorizesMatmul() {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=8,N=32,K=16"));
    int tensorized = 0;
    checkSamples(intrinSpace(), f, 10, "matmul intrin", [&](const SpacePoint& p) {
      std::string t = str(p.final.trace());
      QVERIFY2(t.find("\"SSRS-intrin\"") != std::string::npos, t.c_str());
      // The postprocessor tensorized the k-tile x 16 lanes with the intrinsic of that k-tile.
      QCOMPARE(countKind(p.final.trace(), "tensorize"), size_t(1));
      QVERIFY2(t.find("x86_avx512_fma_f32x16_k") != std::string::npos, t.c_str());
      // The tensorized accumulator (vector indices) still shrinks to the register tile: at most
      // 8 rows x 4 vectors.
      if (tensorized < 3) {
        QVERIFY(largestLocalAllocation(p.final.func()) <= 8 * 64);
        QCOMPARE(nonRampVectorAccesses(p.final.func()), 0);
      }
      tensorized++;
    });
    QCOMPARE(tensorized, 10);
  }

  void intrinFallsBackToVectorsOnMismatch() {
    // batch_matmul's innermost tile matches the structure, not necessarily the 2-D intrinsic: whatever
    // the postprocessor does, the candidate stays correct and has 16 lanes.
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("batch_matmul:B=2,M=4,N=16,K=8"));
    checkSamples(intrinSpace(), f, 6, "batch_matmul intrin", [&](const SpacePoint& p) {
      size_t tz = countKind(p.final.trace(), "tensorize");
      Shape s = shapeOf(p.final.func());
      QVERIFY2(tz == 1 || s.vectorExtents.count(16) >= 1, str(p.final.trace()).c_str());
    });
  }

  void mutationReplaysRegisterTiling() {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=16,N=32,K=8"));
    for (const SpaceGenerator& space : {registerSpace(), intrinSpace()}) {
      auto p = space.sample(f, 4);
      QVERIFY(p.has_value());
      auto sampling = p->design.samplingInstructions();
      QVERIFY(sampling.size() >= 3);
      size_t changed = 0;
      for (size_t idx : sampling)
        for (uint64_t s = 1; s <= 4; ++s) {
          auto q = space.replay(f, p->design, {{idx, tir::Value()}}, s);
          QVERIFY2(q.has_value(), qPrintable(QString::number(idx) + " " + QString::fromStdString(str(p->design))));
          QVERIFY(maxErrorBetween(f, q->final.func()) <= 1e-4);
          changed += q->key() != p->key();
        }
      QVERIFY(changed > 0);
    }
  }

  void convNchwWithEpilogue() {
    // NCHW conv with bias + relu fused: output width 16 fills the lanes; the epilogue is computed
    // under the tile (no separate write cache).
    tir::PrimFunc f = convKernel(convBiasRelu(4, 16, 8), "NCHW");
    QVERIFY(f.defined());
    int epilogueUnderTile = 0;
    checkSamples(registerSpace(), f, 6, "conv NCHW", [&](const SpacePoint& p) {
      std::string t = str(p.final.trace());
      QVERIFY2(t.find("\"SSRS\"") != std::string::npos, t.c_str());
      epilogueUnderTile += t.find("cache_write") == std::string::npos && t.find("reverse_compute_at") != std::string::npos;
      QVERIFY(shapeOf(p.final.func()).vectorExtents.count(16) >= 1);
    });
    QCOMPARE(epilogueUnderTile, 6);
  }

  void convNchwcWithEpilogue() {
    // Channel-blocked conv: 16 output channels in the lanes; the default space (all rules) stays
    // correct on it and the register rules claim it in some candidates.
    tir::PrimFunc f = convKernel(convBiasRelu(16, 8, 32), "NCHWc");
    QVERIFY(f.defined());
    checkSamples(registerSpace(), f, 4, "conv NCHWc register", [&](const SpacePoint& p) {
      QVERIFY(shapeOf(p.final.func()).vectorExtents.count(16) >= 1);
    });
    checkSamples(intrinSpace(), f, 4, "conv NCHWc intrin", [&](const SpacePoint&) {});
    int claimed = 0;
    checkSamples(SpaceGenerator::defaultCpu(), f, 8, "conv NCHWc default", [&](const SpacePoint& p) {
      claimed += str(p.final.trace()).find("\"SSRS") != std::string::npos;
    });
    QVERIFY(claimed > 0);
  }

  void winogradTransformsUnrolled() {
    // A Winograd conv (8x8 output: F(4x4)): every candidate of the default space is correct, and
    // the winograd-transform rule unrolls both tile transforms' position loops (the two loops
    // above the lanes) over whole tiles (6x6 input positions, 4x4 output positions: the
    // transforms stay at the root, never under a consumer's loop), so their selects fold to one
    // sum per position.
    tir::PrimFunc f = convKernel(convBiasRelu(16, 8, 32), "NCHWc", "nn.conv2d_winograd");
    QVERIFY(f.defined());
    checkSamples(SpaceGenerator::defaultCpu(), f, 8, "winograd default", [&](const SpacePoint& p) {
      auto loops = loopsOfBlocks(p.final.func());
      for (auto [t, positions] : {std::pair<const char*, int64_t>{"data_pack", 6}, {"inverse", 4}}) {
        QVERIFY2(loops.count(t) && loops[t].size() >= 3, t);
        const auto& l = loops[t];
        const tir::ForNode* x = l[l.size() - 3];
        const tir::ForNode* y = l[l.size() - 2];
        QVERIFY2(x->kind == tir::ForKind::Unrolled && y->kind == tir::ForKind::Unrolled, str(p.final.trace()).c_str());
        QVERIFY2(tir::constIntValue(x->extent) == positions && tir::constIntValue(y->extent) == positions,
                 str(p.final.trace()).c_str());
      }
    });
  }

  void depthwiseConvs() {
    checkConvCases({{"depthwise 32", 32, 4, 32, 32, "NCHWc", 16},
                    {"depthwise 24 (padded to 32)", 24, 4, 24, 24, "NCHWc", 16},
                    {"depthwise 20 (NCHW10c)", 20, 4, 20, 20, "NCHWc", 10},
                    {"depthwise 12 (NCHW12c)", 12, 4, 12, 12, "NCHWc", 4},
                    {"depthwise NCHW, 14 wide", 8, 14, 8, 8, "NCHW", 14}});
  }

  void groupedConvs() {
    checkConvCases({{"grouped 64/4 (16-channel groups)", 64, 4, 64, 4, "NCHWc", 16},
                    {"grouped 32/4 (8-channel groups)", 32, 4, 32, 4, "NCHWc", 16},
                    {"grouped NCHW, 24 wide", 8, 24, 8, 2, "NCHW", 8}});
  }

  void oddChannelConvs() {
    checkConvCases({{"conv 20 (NCHW10c)", 20, 4, 20, 1, "NCHWc", 10}, {"conv 12 (NCHW12c)", 12, 4, 12, 1, "NCHWc", 4}});
  }

  void notClaimedWithoutLanes() {
    // N = 18 (wider than a vector, not a multiple of 4 fp32) and N = 3 (narrower than 4 lanes) fill
    // no vector: the rules leave the block to multi-level-tiling.
    for (const char* spec : {"matmul:M=8,N=18,K=8", "matmul:M=8,N=3,K=8"}) {
      tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec(spec));
      for (const SpaceGenerator& space : {registerSpace(), intrinSpace()}) {
        auto p = space.sample(f, 1);
        QVERIFY(p.has_value());
        QVERIFY2(str(p->final.trace()).find("SSRS") == std::string::npos, spec);
      }
    }
    // N = 12 is not a multiple of 16 but of 4: register-tiled with 4-lane vectors (not the
    // 16-lane intrinsic).
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=8,N=12,K=8"));
    checkSamples(registerSpace(), f, 4, "matmul N=12", [&](const SpacePoint& p) {
      QVERIFY2(str(p.final.trace()).find("\"SSRS\"") != std::string::npos, str(p.final.trace()).c_str());
      QVERIFY(shapeOf(p.final.func()).vectorExtents.count(4) >= 1);
    });
    auto p = intrinSpace().sample(f, 1);
    QVERIFY(p.has_value());
    QVERIFY(str(p->final.trace()).find("SSRS-intrin") == std::string::npos);
  }

  void vectorLanesOfOddExtents() {
    QCOMPARE(rule::vectorLanes(64, 32), int64_t(16));
    QCOMPARE(rule::vectorLanes(56, 32), int64_t(8));
    QCOMPARE(rule::vectorLanes(28, 32), int64_t(4));
    QCOMPARE(rule::vectorLanes(12, 32), int64_t(4));
    QCOMPARE(rule::vectorLanes(10, 32), int64_t(10));
    QCOMPARE(rule::vectorLanes(7, 32), int64_t(7));
    QCOMPARE(rule::vectorLanes(3, 32), int64_t(0));
    QCOMPARE(rule::vectorLanes(58, 32), int64_t(0));
    QCOMPARE(rule::vectorLanes(64, 8), int64_t(64));
  }
};

QTEST_APPLESS_MAIN(TestRules)
#include "test_rules.moc"
