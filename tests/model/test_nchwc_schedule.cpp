// The default CPU schedule of channel-blocked (NCHW16c) conv groups: on ResNet-like conv shapes
// the scheduled kernel computes what the unscheduled one does (interpreter), the compiled model
// matches the graph evaluator, and the schedule has the NCHWc structure (16 output channels in
// vector lanes, a parallel outer loop, the epilogue under the conv's tile). Dense layers run as
// lane-tiled matmuls the same way.
#include <QtTest>

#include <functional>
#include <sstream>

#include "../transform/Meaning.h"
#include "ModelTestUtil.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/CompileModel.h"
#include "core/driver/DefaultSchedule.h"
#include "core/graph/Evaluator.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/topi/Workloads.h"

using namespace loom;

namespace {

struct ConvCase {
  int64_t c, h, w, k, kh, kw, stride;
  std::vector<int64_t> pad;
  bool residual = false;  ///< adds a second input of the output's shape before the relu
  bool relu = true;
  int64_t groups = 1;
};

/// conv2d -> bias_add [-> add residual] [-> relu] on (1, c, h, w) with weights (k, c, kh, kw).
graph::Module convModule(const ConvCase& cs, int64_t outH, int64_t outW) {
  auto f32 = DataType::Float(32);
  graph::Var x = graph::makeVar("data", graph::tensorType(std::vector<int64_t>{1, cs.c, cs.h, cs.w}, f32));
  graph::Constant wt = graph::makeConstant(test::randomArray({cs.k, cs.c / cs.groups, cs.kh, cs.kw}, 21), "w");
  graph::Constant b = graph::makeConstant(test::randomArray({cs.k}, 22), "b");
  graph::Attrs attrs;
  attrs.set("padding", cs.pad);
  attrs.set("strides", std::vector<int64_t>{cs.stride, cs.stride});
  attrs.set("groups", cs.groups);
  graph::Expr y = graph::makeCall("nn.bias_add", {graph::makeCall("nn.conv2d", {x, wt}, attrs), b});
  std::vector<graph::Var> params{x};
  if (cs.residual) {
    graph::Var r = graph::makeVar("res", graph::tensorType(std::vector<int64_t>{1, cs.k, outH, outW}, f32));
    params.push_back(r);
    y = graph::makeCall("add", {y, r});
  }
  if (cs.relu) y = graph::makeCall("nn.relu", {y});
  graph::Module m;
  m.functions["main"] = graph::makeFunction(params, y);
  return m;
}

int64_t outExtent(int64_t in, int64_t k, int64_t s, int64_t padBefore, int64_t padAfter) {
  return (in + padBefore + padAfter - k) / s + 1;
}

/// NCHWc at opt level 3 with direct convolutions (test_winograd.cpp covers the Winograd ones).
driver::CompileModelOptions blocked() {
  driver::CompileModelOptions o;
  o.optLevel = 3;
  o.desiredLayout = "NCHWc";
  o.disabledPasses = {"winograd-conv"};
  return o;
}

/// `m` compiled with blocked() and run on `inputs`: its first output.
runtime::NDArray runBlocked(const graph::Module& m, const std::vector<runtime::NDArray>& inputs) {
  auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, blocked()));
  for (size_t i = 0; i < inputs.size(); ++i) ex->setInput(i, inputs[i]);
  ex->run();
  return ex->getOutput(0);
}

/// Every node of `f`'s body, visited with the loops around it.
struct LoopWalker : tir::IRVisitor {
  std::vector<const tir::ForNode*> stack;
  std::function<void(const tir::BlockNode*, const std::vector<const tir::ForNode*>&)> onBlock;
  std::function<void(const tir::ForNode*)> onLoop;
  void visit(const tir::ForNode* op) override {
    if (onLoop) onLoop(op);
    stack.push_back(op);
    tir::IRVisitor::visit(op);
    stack.pop_back();
  }
  void visit(const tir::BlockNode* op) override {
    if (onBlock) onBlock(op, stack);
    tir::IRVisitor::visit(op);
  }
};

/// The loops around each block of `f`, by block name.
std::map<std::string, std::vector<const tir::ForNode*>> loopsByBlock(const tir::PrimFunc& f) {
  std::map<std::string, std::vector<const tir::ForNode*>> loopsOf;
  LoopWalker walk;
  walk.onBlock = [&](const tir::BlockNode* blk, const std::vector<const tir::ForNode*>& loops) { loopsOf[blk->name] = loops; };
  walk.visitStmt(f->body);
  return loopsOf;
}

/// The conv group of a compiled-for-NCHWc model (the one kernel with a conv2d op).
driver::ModelGroup convGroup(const graph::Module& m) {
  for (const driver::ModelGroup& g : driver::extractGroups(m, {}, blocked()))
    for (const std::string& op : g.ops)
      if (op == "nn.conv2d") return g;
  throw std::runtime_error("no conv group");
}

}  // namespace

class TestNCHWcSchedule : public QObject {
  Q_OBJECT

private:
  const std::vector<ConvCase> m_cases = {
      {16, 9, 10, 16, 3, 3, 1, {1, 1, 1, 1}, false, true},   // 3x3 stride 1, one block
      {32, 8, 8, 32, 3, 3, 1, {1, 1, 1, 1}, true, true},     // 3x3 with a residual add (basic block)
      {16, 10, 9, 32, 3, 3, 2, {1, 1, 1, 1}, false, true},   // 3x3 stride 2 (downsampling)
      {16, 8, 8, 32, 1, 1, 2, {0, 0, 0, 0}, false, false},   // 1x1 stride 2 (shortcut), no relu
      {32, 7, 7, 16, 1, 1, 1, {0, 0, 0, 0}, false, true},    // 1x1 stride 1
      {3, 16, 15, 16, 7, 7, 2, {3, 3, 3, 3}, false, true},   // the 7x7 stride-2 stem, 3 channels
      {12, 6, 11, 24, 3, 3, 1, {1, 0, 2, 1}, false, true},   // channels not multiples of 16, uneven pad
      {10, 5, 5, 20, 3, 3, 1, {1, 1, 1, 1}, true, false},    // blocks of 10, residual without relu
      {58, 7, 9, 116, 1, 1, 1, {0, 0, 0, 0}, false, true},   // ShuffleNet 1x1: both padded to blocks of 16
      {40, 6, 6, 40, 3, 3, 1, {1, 1, 1, 1}, true, true, 5},  // RegNet groups of 8 (block-diagonal, padded)
      {64, 6, 7, 64, 3, 3, 2, {1, 1, 1, 1}, false, true, 2}, // groups of 32 channels (whole blocks)
  };

  graph::Module caseModule(int index, std::vector<int64_t>* inShape, std::vector<int64_t>* resShape) {
    const ConvCase& cs = m_cases[size_t(index)];
    int64_t oh = outExtent(cs.h, cs.kh, cs.stride, cs.pad[0], cs.pad[2]);
    int64_t ow = outExtent(cs.w, cs.kw, cs.stride, cs.pad[1], cs.pad[3]);
    *inShape = {1, cs.c, cs.h, cs.w};
    *resShape = {1, cs.k, oh, ow};
    return convModule(cs, oh, ow);
  }

  static void addCases() {
    QTest::addColumn<int>("index");
    QTest::newRow("3x3 s1 16->16") << 0;
    QTest::newRow("3x3 s1 32->32 + residual") << 1;
    QTest::newRow("3x3 s2 16->32") << 2;
    QTest::newRow("1x1 s2 16->32 no relu") << 3;
    QTest::newRow("1x1 s1 32->16") << 4;
    QTest::newRow("7x7 s2 pad 3, 3->16 (stem)") << 5;
    QTest::newRow("3x3 12->24 uneven pad") << 6;
    QTest::newRow("3x3 10->20 + residual, no relu") << 7;
    QTest::newRow("1x1 58->116 (padded channels)") << 8;
    QTest::newRow("3x3 40->40 groups of 8 + residual") << 9;
    QTest::newRow("3x3 s2 64->64 groups of 32") << 10;
  }

private slots:
  void scheduledGroupsMeanTheSame_data() { addCases(); }
  void scheduledGroupsMeanTheSame() {
    // Every kernel of the blocked model (layout transforms, the conv group) under the default
    // schedule equals the unscheduled kernel in the interpreter.
    QFETCH(int, index);
    std::vector<int64_t> in, res;
    graph::Module m = caseModule(index, &in, &res);
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, blocked());
    QVERIFY(groups.size() >= 2);
    for (const driver::ModelGroup& g : groups) {
      tir::PrimFunc s = driver::defaultSchedule(g.func, true);
      std::string diff = transform::testing::meaningDiff(g.func, s, 1e-4, 1);
      QVERIFY2(diff.empty(), (g.name + ": " + diff).c_str());
    }
  }

  void compiledMatchesEvaluator_data() { addCases(); }
  void compiledMatchesEvaluator() {
    QFETCH(int, index);
    std::vector<int64_t> in, res;
    graph::Module m = caseModule(index, &in, &res);
    std::vector<runtime::NDArray> inputs{test::randomArray(in, 7)};
    if (m_cases[size_t(index)].residual) inputs.push_back(test::randomArray(res, 8));
    runtime::NDArray want = graph::evaluate(m.main(), inputs).at(0);
    driver::CompiledModel cm = driver::compileModel(m, "llvm", {}, blocked());
    QCOMPARE(cm.layout, std::string("NCHWc"));
    auto ex = driver::createExecutor(cm);
    for (size_t i = 0; i < inputs.size(); ++i) ex->setInput(i, inputs[i]);
    ex->run();
    double d = test::maxDiff(ex->getOutput(0), want);
    QVERIFY2(d < 1e-3, qPrintable(QString("max diff %1").arg(d)));
  }

  void convTileStructure_data() { addCases(); }
  void convTileStructure() {
    // The conv's output-channel block runs in vector lanes (16 when the channels allow), an outer
    // loop is parallel, and the epilogue (bias, residual, relu) or the copy out of a local
    // accumulator runs under a loop of the conv: no separate pass over the output.
    QFETCH(int, index);
    std::vector<int64_t> in, res;
    graph::Module m = caseModule(index, &in, &res);
    driver::ModelGroup g = convGroup(m);
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    const ConvCase& cs = m_cases[size_t(index)];
    // ConvertLayout's channel block: 16, with the channels padded up to a multiple of 16 when
    // that adds at most a third, else the largest divisor.
    int64_t lanes = 1;
    for (int64_t d = 16; d > 1; --d)
      if (cs.k % d == 0) {
        lanes = d;
        break;
      }
    if (cs.k > 16 && cs.k % 16 != 0 && ((cs.k + 15) / 16 * 16 - cs.k) * 3 <= cs.k) lanes = 16;
    if (cs.groups > 1) lanes = 16;
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf;
    bool vectorLanes = false, parallel = false;
    LoopWalker w;
    w.onBlock = [&](const tir::BlockNode* b, const std::vector<const tir::ForNode*>& loops) { loopsOf[b->name] = loops; };
    w.onLoop = [&](const tir::ForNode* f) {
      const int64_t* e = tir::asConstInt(f->extent);
      if (f->kind == tir::ForKind::Vectorized && e && *e == lanes) vectorLanes = true;
      if (f->kind == tir::ForKind::Parallel) parallel = true;
    };
    w.visitStmt(s->body);
    std::string text = tir::printFunc(s);
    QVERIFY2(vectorLanes, text.c_str());
    QVERIFY2(parallel, text.c_str());
    QVERIFY2(loopsOf.count("conv2d_NCHWc"), text.c_str());
    const auto& convLoops = loopsOf["conv2d_NCHWc"];
    // The block that writes the group's output: the last one in program order that is not the
    // conv, its init or the padding.
    std::string outBlock;
    for (const auto& [name, loops] : loopsOf)
      if (name != "root" && name != "conv2d_NCHWc" && name != "conv2d_NCHWc_init" && name.find("pad") == std::string::npos)
        outBlock = name;
    QVERIFY2(!outBlock.empty(), text.c_str());
    const auto& outLoops = loopsOf[outBlock];
    // Shares the conv's loops down to the tile (at least the parallel one, which may be the tile).
    size_t shared = 0;
    while (shared < convLoops.size() && shared < outLoops.size() && convLoops[shared] == outLoops[shared]) ++shared;
    QVERIFY2(shared >= 1, (outBlock + " is not under the conv's tile:\n" + text).c_str());
    // The register tile: the reduction's innermost loop is the vectorized lane loop.
    QVERIFY2(convLoops.back()->kind == tir::ForKind::Vectorized, text.c_str());
  }

  void denseRunsAsLaneTiledMatmul_data() {
    QTest::addColumn<int>("rows");
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("lanes");
    QTest::newRow("64x256 -> 96 (16 lanes, rows in blocks of 16)") << 64 << 256 << 96 << 16;
    // (One-row weights from 1 MiB on split the reduction instead: largeGemvSplitsTheReduction.)
    QTest::newRow("1x256 -> 1000 (8 lanes)") << 1 << 256 << 1000 << 8;
    QTest::newRow("1x160 -> 1280 (16 lanes: MobileNet-v3's head, fewer inputs)") << 1 << 160 << 1280 << 16;
    QTest::newRow("7x40 -> 12 (12 lanes)") << 7 << 40 << 12 << 12;
    QTest::newRow("197x96 -> 64 (a ViT's 197 tokens: partial last row tile)") << 197 << 96 << 64 << 16;
    QTest::newRow("128x256 -> 768 (BERT's QKV projection: packed weight panels)") << 128 << 256 << 768 << 16;
    QTest::newRow("128x1024 -> 256 (BERT's FFN output: input rows 4 KiB apart)") << 128 << 1024 << 256 << 16;
  }
  void denseRunsAsLaneTiledMatmul() {
    // At opt level 3 a dense layer with a constant weight becomes matmul(x, transpose(W)) (the
    // transpose folded): the output columns run in vector lanes under a register tile of rows,
    // with the bias add and relu under the tile; results match the graph evaluator.
    QFETCH(int, rows);
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, lanes);
    auto f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{rows, k}, f32));
    graph::Constant w = graph::makeConstant(test::randomArray({n, k}, 31), "w");
    graph::Constant b = graph::makeConstant(test::randomArray({n}, 32), "b");
    graph::Expr y = graph::makeCall("nn.relu", {graph::makeCall("add", {graph::makeCall("nn.dense", {x, w}), b})});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, y);
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, blocked());
    QCOMPARE(groups.size(), size_t(1));
    QCOMPARE(groups[0].ops.front(), std::string("nn.matmul"));
    tir::PrimFunc s = driver::defaultSchedule(groups[0].func, true);
    // (The interpreter is slow on the largest case; the compiled model is checked below.)
    if (int64_t(rows) * k * n <= 4 << 20) {
      std::string diff = transform::testing::meaningDiff(groups[0].func, s, 1e-4, 1);
      QVERIFY2(diff.empty(), diff.c_str());
    }
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    QVERIFY2(loopsOf.count("T_matmul") && loopsOf.count("T_relu"), text.c_str());
    const tir::ForNode* lane = loopsOf["T_matmul"].back();
    QVERIFY2(lane->kind == tir::ForKind::Vectorized && *tir::asConstInt(lane->extent) == lanes, text.c_str());
    QVERIFY2(loopsOf["T_relu"].front() == loopsOf["T_matmul"].front(), text.c_str());
    // Rows are register-tiled even when no divisor of the row count fits the registers (197 is a
    // prime): an unrolled loop of several rows, not one row per tile.
    std::vector<int64_t> unrolled;
    for (const tir::ForNode* l : loopsOf["T_matmul"])
      if (l->kind == tir::ForKind::Unrolled) unrolled.push_back(*tir::asConstInt(l->extent));
    int64_t tileRows = 1;
    for (int64_t e : unrolled) tileRows *= e;
    // With one register per vector (AVX-512), a GEMM's tile (several rows, output columns in
    // whole pairs of vectors) is rows x two lane chunks: each broadcast of a row feeds two FMAs
    // (ViT-S on one core 26.0 -> 23.7 ms, BERT 5.0 -> 4.7 ms).
    int64_t rowsPerTile = tileRows;
    if (__builtin_cpu_supports("avx512f") && rows > 1 && lanes == 16 && n % 32 == 0) {
      QVERIFY2(unrolled.size() == 2 && unrolled.back() == 2, text.c_str());
      rowsPerTile = unrolled.front();
    }
    if (rows >= 64) QVERIFY2(rowsPerTile >= 4, text.c_str());
    // Input rows a multiple of 4 KiB apart map to one L1 set: at most 8 of them per tile (16, an
    // AVX-512 tile, exceeded the set's ways: BERT's FFN output 113 -> 178 GFLOP/s on one core).
    if (k * 4 % 4096 == 0) QVERIFY2(rowsPerTile <= 8, text.c_str());
    // One row (a GEMV: a classifier head at batch 1): the tile is several lane chunks side by
    // side, so each reduction step reads a strip of contiguous vectors of a weight row, and the
    // epilogue over the strip runs in vector lanes.
    if (rows == 1 && n > lanes) {
      QVERIFY2(tileRows >= 4, text.c_str());
      QVERIFY2(loopsOf["T_relu"].back()->kind == tir::ForKind::Vectorized, text.c_str());
    }
    // With many row tiles and enough column chunks to share among threads, the weight's (K, N)
    // rows being longer than a vector, the K x lanes panel the row tiles read is packed into a
    // contiguous buffer inside the parallel loop (not once per row tile, not before the parallel
    // loop).
    if (rows >= 64 && n / lanes >= 8) {
      std::string packName;
      for (const auto& [name, loops] : loopsOf)
        if (name.size() > 7 && name.compare(name.size() - 7, 7, "_global") == 0) packName = name;
      QVERIFY2(!packName.empty(), text.c_str());
      const auto& pack = loopsOf[packName];
      QVERIFY2(!pack.empty() && pack.front() == loopsOf["T_matmul"].front() &&
                   pack.front()->kind == tir::ForKind::Parallel && pack.back()->kind == tir::ForKind::Vectorized,
               text.c_str());
      for (const tir::ForNode* l : pack) QVERIFY2(l->kind != tir::ForKind::Unrolled, text.c_str());
    }
    runtime::NDArray xv = test::randomArray({rows, k}, 5);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv});
    QVERIFY(test::maxDiff(got, want) < 1e-3);
  }

  void largeGemvSplitsTheReduction_data() {
    QTest::addColumn<int>("k");
    QTest::addColumn<int>("n");
    QTest::addColumn<int>("lanes");
    QTest::newRow("1x512 -> 1000 (ResNet-18's head, 2 MB)") << 512 << 1000 << 8;
    QTest::newRow("1x960 -> 1280 (MobileNet-v3's, 4.9 MB)") << 960 << 1280 << 16;
  }
  void largeGemvSplitsTheReduction() {
    // A dense layer of one row over a weight of 1 MiB or more (a classifier head at batch 1,
    // whose weight comes from memory): the reduction is split into blocks of whole weight rows,
    // one parallel task each summing its contiguous rows into a row of partial sums in vector
    // lanes; the write-back adds the rows and runs the bias and relu in vector lanes under each
    // chunk. Results match the graph evaluator.
    QFETCH(int, k);
    QFETCH(int, n);
    QFETCH(int, lanes);
    auto f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{1, k}, f32));
    graph::Constant w = graph::makeConstant(test::randomArray({n, k}, 31), "w");
    graph::Constant b = graph::makeConstant(test::randomArray({n}, 32), "b");
    graph::Expr y = graph::makeCall("nn.relu", {graph::makeCall("add", {graph::makeCall("nn.dense", {x, w}), b})});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, y);
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, blocked());
    QCOMPARE(groups.size(), size_t(1));
    tir::PrimFunc s = driver::defaultSchedule(groups[0].func, true);
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    QVERIFY2(loopsOf.count("T_matmul_rf") && loopsOf.count("T_matmul") && loopsOf.count("T_relu"), text.c_str());
    const auto& rf = loopsOf["T_matmul_rf"];
    QVERIFY2(rf.front()->kind == tir::ForKind::Parallel && *tir::asConstInt(rf.front()->extent) >= 4, text.c_str());
    QVERIFY2(rf.back()->kind == tir::ForKind::Vectorized && *tir::asConstInt(rf.back()->extent) == lanes, text.c_str());
    // The partial sums' loops: task | rows of its block | output chunks | lanes (each weight row
    // read in order).
    QVERIFY2(rf.size() >= 4 && *tir::asConstInt(rf[rf.size() - 3]->extent) * *tir::asConstInt(rf.front()->extent) == k,
             text.c_str());
    for (const tir::ForNode* l : loopsOf["T_matmul"]) QVERIFY2(l->kind != tir::ForKind::Parallel, text.c_str());
    QVERIFY2(loopsOf["T_relu"].back()->kind == tir::ForKind::Vectorized &&
                 loopsOf["T_relu"].front() == loopsOf["T_matmul"].front(),
             text.c_str());
    runtime::NDArray xv = test::randomArray({1, k}, 33);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv});
    double scale = 0;
    for (int64_t i = 0; i < n; ++i) scale = std::max(scale, double(std::abs(want.as<float>()[i])));
    QVERIFY(scale > 0 && test::maxDiff(got, want) <= 1e-5 * scale);
  }

  void oddChunkCountTakesSeveralChunks() {
    // A 1x1 conv 64 -> 48 over 13x13: three output-channel chunks, no divisor 2. With one register
    // per vector (AVX-512) the tile is 3 chunks x 7 rows (13 = 7 + 6, the last tile partial): 10
    // loads per 21 FMAs instead of one chunk of 13 rows (14 per 13; SqueezeNet's 1000-class head
    // 0.87 -> 0.75 ms). Results match the interpreter and the graph evaluator.
    ConvCase cs{64, 13, 13, 48, 1, 1, 1, {0, 0, 0, 0}, false, true};
    graph::Module m = convModule(cs, 13, 13);
    driver::ModelGroup g = convGroup(m);
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string diff = transform::testing::meaningDiff(g.func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    std::vector<int64_t> unrolled;
    for (const tir::ForNode* l : loopsOf["conv2d_NCHWc"])
      if (l->kind == tir::ForKind::Unrolled) unrolled.push_back(*tir::asConstInt(l->extent));
    if (__builtin_cpu_supports("avx512f")) {
      QVERIFY2(unrolled.size() == 2, text.c_str());
      QVERIFY2(unrolled[0] * unrolled[1] == 21, text.c_str());
    }
    runtime::NDArray xv = test::randomArray({1, cs.c, cs.h, cs.w}, 5);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv});
    QVERIFY(test::maxDiff(got, want) < 1e-3);
  }

  void registerTileFitsTheRegisters_data() {
    QTest::addColumn<int64_t>("size");
    for (int64_t size : {7, 14, 28, 56}) QTest::newRow(qPrintable(QString("1x1 conv, 64 ch, %1x%1").arg(size))) << size;
  }
  void registerTileFitsTheRegisters() {
    // The register tile of a 1x1 conv (rows of output columns x output-channel chunks of 16
    // lanes) keeps its accumulators, one row of weight vectors and a broadcast in the host's
    // vector registers (32 of 16 lanes with AVX-512, 16 of 8 with AVX2), and uses at least half
    // of them for accumulators.
    QFETCH(int64_t, size);
    ConvCase cs{64, size, size, 64, 1, 1, 1, {0, 0, 0, 0}, false, true};
    driver::ModelGroup g = convGroup(convModule(cs, size, size));
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string text = tir::printFunc(s);
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    QVERIFY2(loopsOf.count("conv2d_NCHWc"), text.c_str());
    const auto& conv = loopsOf["conv2d_NCHWc"];
    QVERIFY2(conv.back()->kind == tir::ForKind::Vectorized && tir::isConstInt(conv.back()->extent, 16), text.c_str());
    const bool avx512 = __builtin_cpu_supports("avx512f");
    const int64_t registers = avx512 ? 32 : 16, perVector = avx512 ? 1 : 2;
    int64_t rows = 1, chunks = 1;
    // The unrolled loops right outside the lanes: rows, then (with AVX-512) chunks.
    std::vector<int64_t> unrolled;
    for (size_t k = conv.size() - 1; k-- > 0 && conv[k]->kind == tir::ForKind::Unrolled;)
      unrolled.push_back(*tir::asConstInt(conv[k]->extent));
    QVERIFY2(!unrolled.empty(), text.c_str());
    if (unrolled.size() >= 2) chunks = unrolled[0], rows = unrolled[1];
    else rows = unrolled[0];
    const int64_t accumulators = rows * chunks * perVector;
    QVERIFY2(accumulators + chunks * perVector + 1 <= registers, text.c_str());
    // At least half the registers hold accumulators, unless the tile already spans the whole
    // row and the next chunk count that divides the chunks would not fit (7 columns x 4 chunks
    // of 64 channels: 28 + 4 + 1 > 32 with AVX-512, so 7 x 2).
    const int64_t totalChunks = 64 / 16;
    int64_t nextChunks = chunks + 1;
    while (nextChunks <= totalChunks && totalChunks % nextChunks != 0) ++nextChunks;
    const bool cannotGrow =
        rows == size && (nextChunks > totalChunks || rows * nextChunks * perVector + nextChunks * perVector + 1 > registers);
    QVERIFY2(accumulators * 2 >= registers || cannotGrow, text.c_str());
    // The meaning of the partial tiles (the interpreter is slow on the larger maps, whose tiles
    // divide the rows).
    if (size > 14) return;
    std::string diff = transform::testing::meaningDiff(g.func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
  }

  void halfBudgetDivisorKeepsFullTiles() {
    // A conv with two output-channel chunks over a 147-wide map (Inception-v3's second stem conv,
    // 32 -> 32 3x3 without padding): 147 = 21 x 7, and 7 is half the two-chunk budget of 14 rows.
    // Its tile is 7 rows x 2 chunks, all full: balanced partial tiles of 14 rows ran at half the
    // speed (2.7-4.8 ms against 1.6 on one core).
    if (!__builtin_cpu_supports("avx512f")) QSKIP("the budget of 14 rows is AVX-512's");
    ConvCase cs{32, 149, 149, 32, 3, 3, 1, {0, 0, 0, 0}, false, true};
    driver::ModelGroup g = convGroup(convModule(cs, 147, 147));
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string text = tir::printFunc(s);
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    QVERIFY2(loopsOf.count("conv2d_NCHWc"), text.c_str());
    const auto& conv = loopsOf["conv2d_NCHWc"];
    QVERIFY2(conv.size() >= 3 && conv[conv.size() - 2]->kind == tir::ForKind::Unrolled &&
                 conv[conv.size() - 3]->kind == tir::ForKind::Unrolled,
             text.c_str());
    QVERIFY2(tir::isConstInt(conv[conv.size() - 2]->extent, 2), text.c_str());
    QVERIFY2(tir::isConstInt(conv[conv.size() - 3]->extent, 7), text.c_str());
  }

  void rgbStemTileLeavesRegistersForSharedLoads() {
    // A conv over 3 input channels without padding (Inception-v3's 3 -> 32 3x3 stride-2 stem on
    // 299x299, output 149 wide; ViT's patches): the innermost reduction (3 lanes of NCHW3c) is
    // unrolled, LLVM unrolls the window's columns around it and keeps the broadcast inputs the
    // kernel columns share, so the tile takes at most half the accumulator registers (14 rows x
    // 2 chunks spilled: 0.58 ms on one core against 0.17 at 7 x 2). A padded stem keeps the
    // full tile.
    if (!__builtin_cpu_supports("avx512f")) QSKIP("the rule is for 32 vector registers (AVX-512)");
    for (bool padded : {false, true}) {
      ConvCase cs{3, 299, 299, 32, 3, 3, 2, padded ? std::vector<int64_t>{1, 1, 1, 1} : std::vector<int64_t>{0, 0, 0, 0},
                  false, true};
      const int64_t out = padded ? 150 : 149;
      driver::ModelGroup g = convGroup(convModule(cs, out, out));
      tir::PrimFunc s = driver::defaultSchedule(g.func, true);
      std::string text = tir::printFunc(s);
      std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
      QVERIFY2(loopsOf.count("conv2d_NCHWc"), text.c_str());
      const auto& conv = loopsOf["conv2d_NCHWc"];
      int64_t accumulators = 1;
      for (size_t k = conv.size() - 1; k-- > 0 && conv[k]->kind == tir::ForKind::Unrolled;) {
        // The unrolled reduction over the 3 input lanes sits between the tile loops and the lanes
        // in some orders: count only the tile's spatial loops (rows, chunks).
        if (tir::isConstInt(conv[k]->extent, 3)) continue;
        accumulators *= *tir::asConstInt(conv[k]->extent);
      }
      if (!padded) QVERIFY2(accumulators <= 14, (std::to_string(accumulators) + "\n" + text).c_str());
      else QVERIFY2(accumulators > 14, (std::to_string(accumulators) + "\n" + text).c_str());
    }
  }

  void bigWeightsBlockTheReduction() {
    // A 3x3 conv 240 -> 128 over 6x6, no padding (a late layer with weights beyond half of L2
    // per parallel unit: 4 chunks of 16 output channels read 540 KiB): the input-channel loop is
    // split and its outer part runs outside the output tiles, under the parallel output-channel
    // loop, so each block of weights stays in L1 while every tile uses it; the bias and relu
    // follow once the reduction is complete. Results match the graph evaluator.
    ConvCase cs{240, 6, 6, 128, 3, 3, 1, {0, 0, 0, 0}, false, true};
    graph::Module m = convModule(cs, 4, 4);
    driver::ModelGroup g = convGroup(m);
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string diff = transform::testing::meaningDiff(g.func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    const std::vector<const tir::ForNode*>& conv = loopsOf["conv2d_NCHWc"];
    QVERIFY2(conv.size() > 3, text.c_str());
    QVERIFY2(conv[0]->kind == tir::ForKind::Parallel, text.c_str());
    QCOMPARE(conv[1]->loopVar->name, std::string("rco_0"));
    QVERIFY2(conv.back()->kind == tir::ForKind::Vectorized, text.c_str());
    QVERIFY2(loopsOf["T_relu"].size() >= 2 && loopsOf["T_relu"][0] == conv[0] && loopsOf["T_relu"][1] != conv[1],
             text.c_str());
    // LOOM_NO_KBLOCK is not set here: the rule is on by default.
    runtime::NDArray xv = test::randomArray({1, cs.c, cs.h, cs.w}, 5);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv});
    QVERIFY(test::maxDiff(got, want) < 1e-3);
  }

  void weightsWithinL2DoNotBlockTheReduction() {
    // A 1x1 conv 512 -> 64 over 8x8 (128 KiB of weights, 64 KiB per parallel unit: within L2):
    // no reduction blocking. Each tile runs the whole reduction in its registers and its epilogue
    // right after; blocking it (the rule at 16 KiB) stored and reloaded every accumulator once per
    // block and made ResNeXt-50's 1x1 convs 8-12% slower on one core.
    ConvCase cs{512, 8, 8, 64, 1, 1, 1, {0, 0, 0, 0}, false, true};
    graph::Module m = convModule(cs, 8, 8);
    driver::ModelGroup g = convGroup(m);
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string diff = transform::testing::meaningDiff(g.func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    const std::vector<const tir::ForNode*>& conv = loopsOf["conv2d_NCHWc"];
    QVERIFY2(conv.size() > 3 && conv[0]->kind == tir::ForKind::Parallel, text.c_str());
    for (const tir::ForNode* l : conv) QVERIFY2(l->loopVar->name != "rco_0", text.c_str());
    // The epilogue shares the tile's loops outside the reduction.
    QVERIFY2(loopsOf["T_relu"].size() >= 2 && loopsOf["T_relu"][1] == conv[1], text.c_str());
  }

  void attentionOver197KeysRunsInPartialLaneChunks() {
    // The attention scores of a ViT, (6, 197, 64) x (6, 64, 197): 197 keys are no multiple of 8,
    // so the keys run in 16-lane chunks with a partial last one (12 x 16 + 5) under a register
    // tile of query rows. The chunk loop stays a loop of its own outside the parallel loop (loop
    // partitioning peels the partial chunk; fused into the parallel loop its guard would mask
    // every chunk); results match the graph evaluator.
    auto f32 = DataType::Float(32);
    graph::Var q = graph::makeVar("q", graph::tensorType(std::vector<int64_t>{6, 197, 64}, f32));
    graph::Var k = graph::makeVar("k", graph::tensorType(std::vector<int64_t>{6, 64, 197}, f32));
    graph::Module m;
    m.functions["main"] = graph::makeFunction({q, k}, graph::makeCall("nn.matmul", {q, k}));
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, blocked());
    QCOMPARE(groups.size(), size_t(1));
    tir::PrimFunc s = driver::defaultSchedule(groups[0].func, true);
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    QVERIFY2(loopsOf.count("T_matmul"), text.c_str());
    const auto& loops = loopsOf["T_matmul"];
    QVERIFY2(loops.back()->kind == tir::ForKind::Vectorized && *tir::asConstInt(loops.back()->extent) == 16, text.c_str());
    QVERIFY2(loops.front()->kind == tir::ForKind::Parallel, text.c_str());
    bool chunkLoop = false;
    for (const tir::ForNode* l : loops) chunkLoop |= l->kind == tir::ForKind::Serial && *tir::asConstInt(l->extent) == 13;
    QVERIFY2(chunkLoop, text.c_str());
    int64_t tileRows = 1;
    for (const tir::ForNode* l : loops)
      if (l->kind == tir::ForKind::Unrolled) tileRows *= *tir::asConstInt(l->extent);
    QVERIFY2(tileRows >= 4, text.c_str());
    runtime::NDArray qv = test::randomArray({6, 197, 64}, 7), kv = test::randomArray({6, 64, 197}, 8);
    runtime::NDArray want = graph::evaluate(m.main(), {qv, kv}).at(0);
    runtime::NDArray got = runBlocked(m, {qv, kv});
    QVERIFY(test::maxDiff(got, want) < 1e-3);
  }

  void softmaxRowsRunInVectorLanes() {
    // A softmax over 197 tokens (a ViT's attention): the max and sum reductions along the row
    // run in 16 vector lanes (partial sums reduced afterwards) with a partial last vector, and the
    // exps and the normalization are vectorized too; results match the graph evaluator.
    auto f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{3, 5, 197}, f32));
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, graph::makeCall("nn.softmax", {x}, {{"axis", int64_t(-1)}}));
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, blocked());
    QCOMPARE(groups.size(), size_t(1));
    tir::PrimFunc s = driver::defaultSchedule(groups[0].func, true);
    std::string diff = transform::testing::meaningDiff(groups[0].func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    int vectorizedBlocks = 0;
    for (const auto& [name, loops] : loopsOf)
      if (!loops.empty() && loops.back()->kind == tir::ForKind::Vectorized && *tir::asConstInt(loops.back()->extent) == 16)
        ++vectorizedBlocks;
    QVERIFY2(vectorizedBlocks >= 4, text.c_str());  // max and sum partials, exps, normalization
    // The exps are computed once per row, into a row buffer that the sum and the normalized row
    // read (inlined into both they were computed twice: ViT's six softmaxes 0.71 -> 0.47 ms on
    // one thread); every block runs under the one parallel loop over the rows.
    int exps = 0;
    tir::postOrderVisit(s->body, [&](const tir::IRNode* n) {
      if (n->nodeKind == tir::NodeKind::Call && static_cast<const tir::CallNode*>(n)->op == "exp") ++exps;
    });
    QVERIFY2(exps == 1, text.c_str());
    for (const auto& [name, loops] : loopsOf)
      if (name != "root")
        QVERIFY2(!loops.empty() && loops.front()->kind == tir::ForKind::Parallel && *tir::asConstInt(loops.front()->extent) == 15,
                 (name + ":\n" + text).c_str());
    runtime::NDArray xv = test::randomArray({3, 5, 197}, 6);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv});
    QVERIFY(test::maxDiff(got, want) < 1e-5);
  }

  void layerNormIsOneRowFusedKernel() {
    // A transformer's layer norm over the last axis (residual add first) is one kernel: the
    // row's sum and sum of squared deviations run in 16 vector lanes and the normalized row in
    // vector lanes, all under one parallel loop over the rows. (Decomposed by simplify-inference
    // it was four kernels, mean, subtract, the variance's mean and the normalization, their
    // reductions scalar: 0.19 -> 0.03 ms over transformer_encoder's nine layer norms.)
    auto f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{1, 64, 256}, f32));
    graph::Var r = graph::makeVar("r", graph::tensorType(std::vector<int64_t>{1, 64, 256}, f32));
    graph::Expr ln = graph::makeCall(
        "nn.layer_norm",
        {graph::makeCall("add", {x, r}), graph::makeConstant(test::randomArray({256}, 3), "g"),
         graph::makeConstant(test::randomArray({256}, 4), "b")},
        {{"axis", int64_t(-1)}, {"epsilon", 1e-5}});
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x, r}, ln);
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, blocked());
    const driver::ModelGroup* norm = nullptr;
    for (const driver::ModelGroup& g : groups)
      if (g.name.find("layer_norm") != std::string::npos) norm = &g;
    QVERIFY(norm);
    tir::PrimFunc s = driver::defaultSchedule(norm->func, true);
    std::string diff = transform::testing::meaningDiff(norm->func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    int vectorized = 0;
    for (const auto& [name, loops] : loopsOf) {
      if (name == "root") continue;
      QVERIFY2(!loops.empty() && loops.front()->kind == tir::ForKind::Parallel &&
                   *tir::asConstInt(loops.front()->extent) == 64,
               (name + ":\n" + text).c_str());
      if (loops.back()->kind == tir::ForKind::Vectorized && *tir::asConstInt(loops.back()->extent) == 16) ++vectorized;
    }
    QVERIFY2(vectorized >= 3, text.c_str());  // the two partial-sum blocks, the normalized row
    runtime::NDArray xv = test::randomArray({1, 64, 256}, 6), rv = test::randomArray({1, 64, 256}, 7);
    runtime::NDArray want = graph::evaluate(m.main(), {xv, rv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv, rv});
    QVERIFY(test::maxDiff(got, want) < 1e-4);
  }

  void depthwiseConvBlocked_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("size");
    QTest::addColumn<int>("units");
    QTest::newRow("32 channels, stride 1") << 32 << 1 << 9 << 2;
    QTest::newRow("24 channels (padded to 2 blocks), stride 2") << 24 << 2 << 9 << 2;
    QTest::newRow("64 channels 28x28, stride 1: 4 blocks x 4 bands") << 64 << 1 << 28 << 16;
    QTest::newRow("32 channels 28x28, stride 2: 2 blocks x 2 bands") << 32 << 2 << 28 << 4;
  }
  void depthwiseConvBlocked() {
    // A depthwise conv (mobilenet) runs in NCHW{k}c too: its channel lanes are the vector lanes,
    // the clip epilogue runs under its tile; kernels and the compiled model match. Its parallel
    // units are a channel block times a band of output rows (one band when the rows are few),
    // and it reads the padding in place: no padded copy of the input (each input vector feeds
    // only KH x KW FMAs, so the copy cost as much as the conv), and after loop partitioning the
    // interior reads the input without the padding's test.
    QFETCH(int, channels);
    QFETCH(int, stride);
    QFETCH(int, size);
    QFETCH(int, units);
    auto f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{1, channels, size, size + 1}, f32));
    graph::Attrs attrs;
    attrs.set("padding", std::vector<int64_t>{1, 1, 1, 1});
    attrs.set("strides", std::vector<int64_t>{stride, stride});
    attrs.set("groups", int64_t(channels));
    graph::Expr conv = graph::makeCall("nn.conv2d", {x, graph::makeConstant(test::randomArray({channels, 1, 3, 3}, 4), "w")}, attrs);
    graph::Attrs clip;
    clip.set("a_min", 0.0);
    clip.set("a_max", 6.0);
    graph::Expr y = graph::makeCall(
        "clip", {graph::makeCall("nn.bias_add", {conv, graph::makeConstant(test::randomArray({channels}, 6), "b")})}, clip);
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, y);
    driver::ModelGroup g = convGroup(m);
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string diff = transform::testing::meaningDiff(g.func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    QVERIFY2(loopsOf.count("depthwise_conv2d_NCHWc") && loopsOf.count("T_clip"), text.c_str());
    QVERIFY2(loopsOf["depthwise_conv2d_NCHWc"].back()->kind == tir::ForKind::Vectorized, text.c_str());
    QVERIFY2(loopsOf["T_clip"].front() == loopsOf["depthwise_conv2d_NCHWc"].front(), text.c_str());
    const tir::ForNode* par = loopsOf["depthwise_conv2d_NCHWc"].front();
    QVERIFY2(!loopsOf.count("pad_temp"), text.c_str());
    QVERIFY2(par->kind == tir::ForKind::Parallel && tir::isConstInt(par->extent, units), text.c_str());
    {
      transform::PassContext ctx;
      const std::string lowered = tir::printFunc(driver::lowerOperator(s, driver::OperatorOptions{}, ctx).lowered);
      // Some accumulator update reads the input with no test (the partitioned interior).
      bool plainRead = false;
      std::istringstream lines(lowered);
      for (std::string line; std::getline(lines, line);)
        if (line.find("depthwise_conv2d_NCHWc") != std::string::npos && line.find("p0") != std::string::npos &&
            line.find("if_then_else") == std::string::npos)
          plainRead = true;
      QVERIFY2(plainRead, lowered.c_str());
    }
    runtime::NDArray xv = test::randomArray({1, channels, size, size + 1}, 5);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv});
    QVERIFY(test::maxDiff(got, want) < 1e-3);
  }

  void depthwiseTileLeavesRegistersForSharedLoads_data() {
    QTest::addColumn<int>("kernel");
    QTest::addColumn<int>("stride");
    QTest::addColumn<int>("size");
    QTest::newRow("3x3, 112x112 (MnasNet, EfficientNet stage 1)") << 3 << 1 << 112;
    QTest::newRow("3x3 stride 2, 112x112") << 3 << 2 << 112;
    QTest::newRow("5x5, 28x28") << 5 << 1 << 28;
    QTest::newRow("7x7, 56x56 (ConvNeXt)") << 7 << 1 << 56;
  }
  void depthwiseTileLeavesRegistersForSharedLoads() {
    // A depthwise conv's register tile (output columns of one channel block) reads the input
    // with the lane axis at column x * stride + kx: LLVM unrolls the window's columns and keeps
    // each loaded input vector for the kernel columns that share it, so R accumulators need R +
    // KW - 1 input registers beside them. With AVX-512's 32 registers the tile took 28 columns
    // and spilled the shared loads to the stack (MnasNet's 3x3 at 112x112: 0.171 ms on one core
    // against 0.098 with 14 columns). The tile now keeps 2R + KW <= 32.
    if (!__builtin_cpu_supports("avx512f")) QSKIP("the rule is for 32 vector registers (AVX-512)");
    QFETCH(int, kernel);
    QFETCH(int, stride);
    QFETCH(int, size);
    const int channels = 32, pad = kernel / 2;
    auto f32 = DataType::Float(32);
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{1, channels, size, size}, f32));
    graph::Attrs attrs;
    attrs.set("padding", std::vector<int64_t>{pad, pad, pad, pad});
    attrs.set("strides", std::vector<int64_t>{stride, stride});
    attrs.set("groups", int64_t(channels));
    graph::Expr conv =
        graph::makeCall("nn.conv2d", {x, graph::makeConstant(test::randomArray({channels, 1, kernel, kernel}, 4), "w")}, attrs);
    graph::Module m;
    m.functions["main"] = graph::makeFunction({x}, graph::makeCall("nn.relu", {conv}));
    driver::ModelGroup g = convGroup(m);
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string text = tir::printFunc(s);
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    QVERIFY2(loopsOf.count("depthwise_conv2d_NCHWc"), text.c_str());
    const auto& dw = loopsOf["depthwise_conv2d_NCHWc"];
    QVERIFY2(dw.back()->kind == tir::ForKind::Vectorized && tir::isConstInt(dw.back()->extent, 16), text.c_str());
    QVERIFY2(dw.size() >= 2 && dw[dw.size() - 2]->kind == tir::ForKind::Unrolled, text.c_str());
    const int64_t rows = *tir::asConstInt(dw[dw.size() - 2]->extent);
    QVERIFY2(2 * rows + kernel <= 32, (std::to_string(rows) + " columns\n" + text).c_str());
    // Still a tile of several columns: each weight vector is shared by them.
    QVERIFY2(rows >= 7, (std::to_string(rows) + " columns\n" + text).c_str());
  }

  void blockedPoolsTiled_data() {
    QTest::addColumn<bool>("avg");
    QTest::newRow("max 3x3 s2 pad 1") << false;
    QTest::newRow("avg 3x3 s2 pad 1") << true;
  }
  void blockedPoolsTiled() {
    // conv -> relu -> pool: the pool runs in NCHW16c; its window reduction (guarded by the
    // padding test) keeps the 16 channel lanes in vectors, init included; results match.
    QFETCH(bool, avg);
    ConvCase cs{16, 9, 11, 16, 3, 3, 1, {1, 1, 1, 1}, false, true};
    graph::Module cm = convModule(cs, 9, 11);
    graph::Attrs pa;
    pa.set("pool_size", std::vector<int64_t>{3, 3});
    pa.set("strides", std::vector<int64_t>{2, 2});
    pa.set("padding", std::vector<int64_t>{1, 1, 1, 1});
    graph::Expr pool = graph::makeCall(avg ? "nn.avg_pool2d" : "nn.max_pool2d", {cm.main()->body}, pa);
    graph::Module m;
    m.functions["main"] = graph::makeFunction(cm.main()->params, pool);
    const driver::ModelGroup* pg = nullptr;
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, blocked());
    for (const driver::ModelGroup& g : groups)
      if (g.ops.front() == (avg ? "nn.avg_pool2d" : "nn.max_pool2d")) pg = &g;
    QVERIFY(pg);
    QCOMPARE(pg->func->paramBuffer(0)->shape.size(), size_t(5));
    tir::PrimFunc s = driver::defaultSchedule(pg->func, true);
    std::string diff = transform::testing::meaningDiff(pg->func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf = loopsByBlock(s);
    std::string text = tir::printFunc(s);
    const std::string red = avg ? "pool_sum" : "pool_max";
    QVERIFY2(loopsOf.count(red) && loopsOf.count(red + "_init"), text.c_str());
    QVERIFY2(loopsOf[red].back()->kind == tir::ForKind::Vectorized, text.c_str());
    QVERIFY2(loopsOf[red + "_init"].back()->kind == tir::ForKind::Vectorized, text.c_str());
    runtime::NDArray xv = test::randomArray({1, 16, 9, 11}, 5);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    runtime::NDArray got = runBlocked(m, {xv});
    QVERIFY(test::maxDiff(got, want) < 1e-3);
  }

  void presetsKeepTheirMeaning() {
    // The default schedule of every operator preset (matmul, batch_matmul, conv2d, depthwise,
    // softmax, layernorm, reductions, ...) at its default sizes: no throw, same results.
    for (const topi::Workload& w : topi::allWorkloads()) {
      tir::PrimFunc f = topi::buildWorkload(topi::makeWorkloadSpec(w.name));
      tir::PrimFunc s = driver::defaultSchedule(f, true);
      std::string diff = transform::testing::meaningDiff(f, s, 1e-4, 1);
      QVERIFY2(diff.empty(), (w.name + ": " + diff).c_str());
    }
  }

  void scriptReplaysTheDefaultSchedule_data() { addCases(); }
  void scriptReplaysTheDefaultSchedule() {
    // The default schedule as a script (what the Studio puts in the editor for a fused group)
    // gives exactly defaultSchedule's function when run on the unscheduled kernel.
    QFETCH(int, index);
    std::vector<int64_t> in, res;
    graph::Module m = caseModule(index, &in, &res);
    std::vector<tir::PrimFunc> funcs;
    for (const driver::ModelGroup& g : driver::extractGroups(m, {}, blocked())) funcs.push_back(g.func);
    if (index == 0)
      for (const topi::Workload& w : topi::allWorkloads()) funcs.push_back(topi::buildWorkload(topi::makeWorkloadSpec(w.name)));
    for (const tir::PrimFunc& f : funcs) {
      std::string script = driver::defaultScheduleScript(f, true);
      QVERIFY2(script.find("sch.") != std::string::npos, (f->name + ": empty script").c_str());
      tir::PrimFunc replayed = driver::applySchedule(f, script, "<default>").func();
      QVERIFY2(tir::structuralEqual(replayed, driver::defaultSchedule(f, true)), (f->name + ":\n" + script).c_str());
    }
  }

  void paddedConvRunsInRowBands_data() {
    QTest::addColumn<int64_t>("channels");
    QTest::addColumn<int64_t>("size");
    QTest::addColumn<int64_t>("bands");
    QTest::newRow("32 ch 28x28: 4 bands of 7 rows") << int64_t(32) << int64_t(28) << int64_t(4);
    QTest::newRow("32 ch 14x14: 2 bands of 7 rows") << int64_t(32) << int64_t(14) << int64_t(2);
    QTest::newRow("32 ch 7x7: too few rows") << int64_t(32) << int64_t(7) << int64_t(0);
    QTest::newRow("288 ch 14x14: weights over 1 MiB") << int64_t(288) << int64_t(14) << int64_t(0);
  }
  void paddedConvRunsInRowBands() {
    // A padded 3x3 conv with small weights runs in parallel bands of output rows, each band
    // padding the input rows it reads (the pad block under the band loop, no parallel pass of
    // its own); few rows or large weights keep the channel-parallel tile and a padding pass.
    // The register tile is 14 output columns by 2 output-channel blocks of 16 lanes.
    QFETCH(int64_t, channels);
    QFETCH(int64_t, size);
    QFETCH(int64_t, bands);
    ConvCase cs{channels, size, size, channels, 3, 3, 1, {1, 1, 1, 1}, true, true};
    graph::Module m = convModule(cs, size, size);
    driver::ModelGroup g = convGroup(m);
    tir::PrimFunc s = driver::defaultSchedule(g.func, true);
    std::string text = tir::printFunc(s);
    std::map<std::string, std::vector<const tir::ForNode*>> loopsOf;
    std::vector<const tir::ForNode*> parallel;
    LoopWalker w;
    w.onBlock = [&](const tir::BlockNode* b, const std::vector<const tir::ForNode*>& loops) { loopsOf[b->name] = loops; };
    w.onLoop = [&](const tir::ForNode* f) {
      if (f->kind == tir::ForKind::Parallel) parallel.push_back(f);
    };
    w.visitStmt(s->body);
    QVERIFY2(loopsOf.count("pad_temp") && loopsOf.count("conv2d_NCHWc"), text.c_str());
    const auto& pad = loopsOf["pad_temp"];
    const auto& conv = loopsOf["conv2d_NCHWc"];
    if (bands > 0) {
      QCOMPARE(parallel.size(), size_t(1));
      QVERIFY2(tir::isConstInt(parallel[0]->extent, bands), text.c_str());
      QVERIFY2(!pad.empty() && pad.front() == parallel[0] && conv.front() == parallel[0], text.c_str());
    } else {
      QVERIFY2(!pad.empty() && pad.front()->kind == tir::ForKind::Parallel && pad.front() != conv.front(), text.c_str());
    }
    QVERIFY2(conv.size() >= 3, text.c_str());
    const tir::ForNode* rows = conv[conv.size() - 3];
    const tir::ForNode* chunks = conv[conv.size() - 2];
    // The register tile: 14 rows x 2 chunks of 16 lanes with AVX-512's 32 registers; with AVX2's 16
    // registers of 8 lanes a row of 16 lanes takes two, so the tile is smaller (2 chunks of at
    // most 3 rows) and still fits: rows x chunks x 2 accumulators and 2 x chunks weight vectors.
    if (__builtin_cpu_supports("avx512f")) {
      QVERIFY2(rows->kind == tir::ForKind::Unrolled && chunks->kind == tir::ForKind::Unrolled, text.c_str());
      QVERIFY2(tir::isConstInt(chunks->extent, 2), text.c_str());
      QVERIFY2(tir::isConstInt(rows->extent, size % 14 == 0 ? 14 : size), text.c_str());
    } else if (size % 2 == 0) {
      // Two chunks of 2-3 rows.
      QVERIFY2(rows->kind == tir::ForKind::Unrolled && chunks->kind == tir::ForKind::Unrolled, text.c_str());
      QVERIFY2(tir::isConstInt(chunks->extent, 2), text.c_str());
      const int64_t rowTile = *tir::asConstInt(rows->extent);
      QVERIFY2(size % rowTile == 0 && rowTile >= 2 && rowTile <= 3, text.c_str());
    } else {
      // 7 columns: 7 rows of two registers, two weight vectors and a broadcast would need 17 of
      // the 16 registers (LLVM spilled the tile): two balanced tiles of 4 and 3 rows instead, not
      // 2 chunks of one row.
      QVERIFY2(chunks->kind == tir::ForKind::Unrolled && tir::isConstInt(chunks->extent, 4), text.c_str());
    }
    QVERIFY2(conv.back()->kind == tir::ForKind::Vectorized && tir::isConstInt(conv.back()->extent, 16), text.c_str());
    // The meaning (the interpreter is too slow for the 288-channel case, whose structure is the
    // one the other tests check).
    if (channels > 64) return;
    std::string diff = transform::testing::meaningDiff(g.func, s, 1e-4, 1);
    QVERIFY2(diff.empty(), diff.c_str());
    // Compiled (the bands' pads partitioned in place by loop-partition), the model matches.
    std::vector<runtime::NDArray> inputs{test::randomArray({1, channels, size, size}, 5), test::randomArray({1, channels, size, size}, 6)};
    runtime::NDArray want = graph::evaluate(m.main(), inputs).at(0);
    runtime::NDArray got = runBlocked(m, inputs);
    QVERIFY(test::maxDiff(got, want) < 1e-3);
  }

  void unblockableConvStaysNCHW() {
    // 17 input channels (prime above the block of 16: no block) and 13 outputs: ConvertLayout leaves the conv in NCHW and
    // the model still compiles and matches.
    ConvCase cs{17, 6, 6, 13, 3, 3, 1, {1, 1, 1, 1}, false, true};
    graph::Module m = convModule(cs, 6, 6);
    runtime::NDArray x = test::randomArray({1, 17, 6, 6}, 3);
    runtime::NDArray want = graph::evaluate(m.main(), {x}).at(0);
    QVERIFY(test::maxDiff(runBlocked(m, {x}), want) < 1e-3);
  }
};

QTEST_APPLESS_MAIN(TestNCHWcSchedule)
#include "test_nchwc_schedule.moc"
