// Layouts that stay put (issue #17): ShuffleNet's channel shuffle and channel slices run as
// channel_shuffle kernels in NCHW16c instead of layout_transform -> NCHW copy -> layout_transform.
// Structure (what ConvertLayout and fusion make), meaning (graph evaluator before and after the
// pass; compiled model against the graph evaluator on random inputs) and the op's own meaning
// (against the concat -> reshape -> transpose -> reshape -> slice it replaces, in every layout).
#include <QtTest>

#include <algorithm>

#include "../graph/GraphTestUtil.h"
#include "ModelTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/driver/DefaultSchedule.h"
#include "core/graph/Evaluator.h"
#include "core/graph/Op.h"
#include "core/graph/Printer.h"
#include "core/graph/pass/ConvertLayout.h"
#include "core/graph/pass/FoldConstant.h"
#include "core/graph/pass/InferType.h"
#include "core/support/Error.h"
#include "core/tir/Printer.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::testutil;

namespace {

using IntList = std::vector<int64_t>;

Function fn(std::vector<Var> params, Expr body) {
  Function f = makeFunction(std::move(params), std::move(body));
  inferType(Expr(f));
  return f;
}

int countOps(const Function& f, const std::string& op) {
  int n = 0;
  for (const Expr& e : postOrder(f->body, true))
    if (auto* c = e.as<CallNode>(); c && c->op && c->op->name == op) ++n;
  return n;
}

Expr slice(const Expr& x, int64_t begin, int64_t end) {
  return makeCall("strided_slice", {x},
                  {{"begin", IntList{begin}}, {"end", IntList{end}}, {"strides", IntList{1}}, {"axes", IntList{1}}});
}

/// ShuffleNet-v2's shuffle as exported by PyTorch: reshape [N, g, C/g, H, W], transpose(0, 2, 1,
/// 3, 4), reshape [N, C, H, W].
/// `n` 0: over a symbolic batch N.
Expr shuffle(const Expr& x, int64_t n, int64_t c, int64_t h, int64_t w, int64_t g) {
  auto reshape = [&](const Expr& e, IntList s) {
    if (n) return makeCall("reshape", {e}, {{"newshape", s}});
    std::string text = "N";
    for (size_t k = 1; k < s.size(); ++k) text += ";" + std::to_string(s[k]);
    s[0] = -1;
    return makeCall("reshape", {e}, {{"newshape", s}, {"symbolic_shape", text}});
  };
  Expr r = reshape(x, IntList{n, g, c / g, h, w});
  Expr t = makeCall("transpose", {r}, {{"axes", IntList{0, 2, 1, 3, 4}}});
  return reshape(t, IntList{n, c, h, w});
}

Expr conv1x1(const Expr& x, int64_t in, int64_t out, uint32_t seed) {
  return makeCall("nn.relu", {makeCall("nn.conv2d", {x, randomConst({out, in, 1, 1}, seed)})});
}

/// Two ShuffleNet-v2 units over 116 channels (58 + 58: not a multiple of the block of 16, so the
/// blocked tensors carry padding channels): a downsampling-free first unit whose two branches are
/// concatenated, shuffled and split, and a second unit that keeps the first half and transforms
/// the second; a 1x1 conv reads the final shuffle.
/// `batch` 0: a symbolic batch N.
Function shuffleNetUnits(int64_t batch = 1) {
  Var x = makeVar("x", tensorType(Shape{batch ? Dim(batch) : Dim::symbol("N"), 24, 6, 6}, DataType::Float(32)));
  Expr a = conv1x1(x, 24, 58, 61), b = conv1x1(x, 24, 58, 62);
  Expr s1 = shuffle(makeCall("concatenate", {a, b}, {{"axis", int64_t(1)}}), batch, 116, 6, 6, 2);
  Expr keep = slice(s1, 0, 58), work = slice(s1, 58, 116);
  Expr dw = makeCall("nn.conv2d", {work, randomConst({58, 1, 3, 3}, 63)},
                     {{"groups", int64_t(58)}, {"padding", IntList{1, 1, 1, 1}}});
  Expr y = conv1x1(dw, 58, 58, 64);
  Expr s2 = shuffle(makeCall("concatenate", {keep, y}, {{"axis", int64_t(1)}}), batch, 116, 6, 6, 2);
  return fn({x}, makeCall("nn.conv2d", {s2, randomConst({32, 116, 1, 1}, 65)}));
}

Function blockedOf(const Function& f) {
  Function g = fn(f->params, convertLayout(f->body, 16));
  return fn(g->params, foldConstant(g->body));
}

driver::CompileModelOptions options(const std::string& layout) {
  driver::CompileModelOptions o;
  o.optLevel = 3;
  o.desiredLayout = layout;
  return o;
}

Module moduleOf(const Function& f) {
  Module m;
  m.functions["main"] = f;
  return m;
}

/// Compiles `f` in `layout` and runs it on random inputs: the largest difference to the graph
/// evaluator.
double compiledDiff(const Function& f, const std::string& layout) {
  std::vector<runtime::NDArray> args;
  for (size_t i = 0; i < f->params.size(); ++i)
    args.push_back(test::randomArray(f->params[i]->annotation.as<TensorTypeNode>()->staticShape(), 11 + unsigned(i)));
  runtime::NDArray want = evaluate(f, args).at(0);
  auto ex = driver::createExecutor(driver::compileModel(moduleOf(f), "llvm", {}, options(layout)));
  for (size_t i = 0; i < args.size(); ++i) ex->setInput(int(i), args[i]);
  ex->run();
  return test::maxDiff(ex->getOutput(0), want);
}

/// A GoogLeNet inception block: four branches (1x1; 1x1 -> 3x3; 1x1 -> 5x5 as 3x3; max pool ->
/// 1x1) concatenated along channels, then a 1x1 conv. With `shared`, the first branch's result
/// is also added to the output (so it has a second reader and cannot be a view of the concat).
Function inception(bool shared) {
  Var x = makeVar("x", f32({1, 32, 8, 8}));
  auto conv = [](const Expr& in, int64_t ci, int64_t co, int64_t k, uint32_t seed) -> Expr {
    const int64_t p = k / 2;
    return makeCall("nn.relu", {makeCall("nn.conv2d", {in, randomConst({co, ci, k, k}, seed)},
                                         {{"padding", IntList{p, p, p, p}}})});
  };
  Expr b1 = conv(x, 32, 16, 1, 71);
  Expr b2 = conv(conv(x, 32, 16, 1, 72), 16, 32, 3, 73);
  Expr b3 = conv(conv(x, 32, 16, 1, 74), 16, 16, 3, 75);
  Expr pool = makeCall("nn.max_pool2d", {x},
                       {{"pool_size", IntList{3, 3}}, {"strides", IntList{1, 1}}, {"padding", IntList{1, 1, 1, 1}}});
  Expr b4 = conv(pool, 32, 16, 1, 76);
  Expr cat = makeCall("concatenate", {b1, b2, b3, b4}, {{"axis", int64_t(1)}});
  Expr y = makeCall("nn.conv2d", {cat, randomConst({16, 80, 1, 1}, 77)});
  if (shared) y = makeCall("add", {y, b1});
  return fn({x}, y);
}

/// The kernels of a compiled model whose name mentions `what`, and how many entries of its graph
/// are views at an offset.
std::pair<int, int> kernelsAndViews(const driver::CompiledModel& cm, const std::string& what) {
  int kernels = 0, views = 0;
  for (size_t at = cm.graphJson.find("\"func\": \"fused_" + what); at != std::string::npos;
       at = cm.graphJson.find("\"func\": \"fused_" + what, at + 1))
    ++kernels;
  for (size_t at = cm.graphJson.find("\"offset\""); at != std::string::npos; at = cm.graphJson.find("\"offset\"", at + 1))
    ++views;
  return {kernels, views};
}

} // namespace

class TestLayoutFusion : public QObject {
  Q_OBJECT

private slots:
  void shuffleUnitsStayBlocked() {
    // Before: each shuffle and each slice left NCHW16c for an NCHW copy and came back. After:
    // one layout_transform in (the input) and one out; the shuffles and slices are
    // channel_shuffle ops in NCHW16c that read the concatenation's inputs directly; no reshape,
    // transpose or concatenate is left.
    Function f = shuffleNetUnits();
    Function g = blockedOf(f);
    std::string text = printFunction(g);
    QCOMPARE(countOps(g, "layout_transform"), 2);
    QCOMPARE(countOps(g, "reshape"), 0);
    QCOMPARE(countOps(g, "transpose"), 0);
    QCOMPARE(countOps(g, "concatenate"), 0);
    QCOMPARE(countOps(g, "channel_shuffle"), 3);
    QVERIFY2(text.find("channel_shuffle(%3, %5, channels=[58, 58], groups=2, begin=58, count=58, "
                       "layout=\"NCHW16c\") /* ty=Tensor[(1, 4, 6, 6, 16), float32] */") != std::string::npos,
             text.c_str());
    QVERIFY2(text.find("channels=[58, 58], groups=2, count=116, layout=\"NCHW16c\") /* ty=Tensor[(1, 8, 6, 6, "
                       "16), float32] */") != std::string::npos,
             text.c_str());
    QVERIFY2(maxDiff(f, g) < 1e-4, text.c_str());
  }

  void shuffleUnitsOverASymbolicBatchCompile() {
    // The same units over a symbolic batch (ShuffleNet-v2 exported by torch.onnx with
    // dynamic_axes). Before, channel_shuffle's type wanted a static tensor and nn.pad's compute
    // (the padding channels) static extents: such a model did not compile; and the shuffle's
    // reshape-transpose-reshape over the batch was not matched, so each shuffle went back to NCHW.
    Function f = shuffleNetUnits(0);
    Function g = blockedOf(f);
    std::string text = printFunction(g);
    // As over batch 1: one layout_transform in and one out, the shuffles blocked.
    QCOMPARE(countOps(g, "layout_transform"), 2);
    QCOMPARE(countOps(g, "channel_shuffle"), 3);
    QCOMPARE(countOps(g, "reshape"), 0);
    QVERIFY2(text.find("channel_shuffle(%3, %5, channels=[58, 58], groups=2, begin=58, count=58, "
                       "layout=\"NCHW16c\") /* ty=Tensor[(N, 4, 6, 6, 16), float32] */") != std::string::npos,
             text.c_str());
    driver::CompiledModel cm = driver::compileModel(moduleOf(f), "llvm", {}, options("NCHWc"));
    auto ex = driver::createExecutor(cm);
    for (int64_t n : {1, 3}) {
      runtime::NDArray in = test::randomArray({n, 24, 6, 6}, 17);
      ex->setInput(0, in);
      ex->run();
      const double d = test::maxDiff(ex->getOutput(0), evaluate(f, {in}).at(0));
      QVERIFY2(d < 1e-4, qPrintable(QString("batch %1: max diff %2").arg(n).arg(d)));
    }
  }

  void splitDilatedConvStaysBlocked() {
    // A conv -> ASPP-style dilated conv (dilation 12 over 16x16, split per tap by
    // prune-conv-taps into 1x1 convs over row/column windows, padded back and summed) -> relu:
    // the window slices and the pads run on the blocked tensors, so the only layout transforms
    // are the input's and the output's; compiled it matches the evaluator.
    Var x = makeVar("x", f32({1, 8, 16, 16}));
    Expr y = conv1x1(x, 8, 32, 61);
    Expr d = makeCall("nn.conv2d", {y, randomConst({16, 32, 3, 3}, 62)},
                      {{"padding", IntList{12, 12, 12, 12}}, {"dilation", IntList{12, 12}}});
    Function f = fn({x}, makeCall("nn.relu", {d}));
    std::vector<driver::ModelGroup> groups = driver::extractGroups(moduleOf(f), {}, options("NCHWc"));
    int transforms = 0, convs = 0;
    for (const driver::ModelGroup& gr : groups)
      for (const std::string& op : gr.ops) {
        transforms += op == "layout_transform" ? gr.occurrences : 0;
        convs += op == "nn.conv2d" ? gr.occurrences : 0;
      }
    QCOMPARE(convs, 10);
    QCOMPARE(transforms, 2);
    const double diff = compiledDiff(f, "NCHWc");
    QVERIFY2(diff < 1e-3, std::to_string(diff).c_str());
  }

  void splitPartsStayBlocked() {
    // YOLOv8's C2f block: a conv's 32 channels split (ONNX Split) into 16 + 16, the second half
    // through a 3x3 conv with a residual add, then all concatenated and read by a 1x1 conv; and
    // an unaligned split (20 + 12) of the same conv. Each split part was a layout_transform to
    // NCHW: the C2f concat ran as layout_transform + add + concatenate + layout_transform in NCHW
    // (0.29 ms of the YOLO detector's 7.8 at one thread). Now the parts are channel slices in
    // NCHW16c: no split op is left, the only layout transforms are the input's and the output's.
    Var x = makeVar("x", f32({1, 8, 10, 10}));
    Expr y = conv1x1(x, 8, 32, 81);
    Expr parts = makeCall("split", {y}, {{"sections", IntList{16, 16}}, {"axis", int64_t(1)}});
    Expr a = makeTupleGetItem(parts, 0), b = makeTupleGetItem(parts, 1);
    Expr c = makeCall("add", {makeCall("nn.relu", {makeCall("nn.conv2d", {b, randomConst({16, 16, 3, 3}, 82)},
                                                                {{"padding", IntList{1, 1, 1, 1}}})}),
                              b});
    Expr odd = makeCall("split", {y}, {{"sections", IntList{20, 12}}, {"axis", int64_t(1)}});
    Expr cat = makeCall("concatenate", {a, b, c, makeTupleGetItem(odd, 1), makeTupleGetItem(odd, 0)}, {{"axis", int64_t(1)}});
    Function f = fn({x}, makeCall("nn.conv2d", {cat, randomConst({16, 80, 1, 1}, 83)}));
    Function g = blockedOf(f);
    const std::string text = printFunction(g);
    QVERIFY2(countOps(g, "layout_transform") == 2, text.c_str());
    QVERIFY2(countOps(g, "split") == 0, text.c_str());
    QVERIFY2(maxDiff(f, g) < 1e-4, text.c_str());
    const double diff = compiledDiff(f, "NCHWc");
    QVERIFY2(diff < 1e-3, std::to_string(diff).c_str());
  }

  void concatOfBlockedAndPlainStaysBlocked() {
    // A UNet decoder step: the skip connection (a blocked conv's output) concatenated with the
    // upsampling ConvTranspose's output (which stays NCHW), read by a 3x3 conv. The concat ran
    // in NCHW (the skip left NCHW16c, the result came back: 6.3 ms of the UNet's 88 at one
    // thread); now the NCHW input is blocked and the concat is of blocked tensors.
    Var x = makeVar("x", f32({1, 8, 16, 16}));
    Var low = makeVar("low", f32({1, 24, 8, 8}));
    Expr skip = conv1x1(x, 8, 32, 91);
    Expr up = makeCall("nn.conv2d_transpose", {low, randomConst({24, 20, 2, 2}, 92)}, {{"strides", IntList{2, 2}}});
    Expr cat = makeCall("concatenate", {skip, up}, {{"axis", int64_t(1)}});
    Function f = fn({x, low}, makeCall("nn.conv2d", {cat, randomConst({16, 52, 3, 3}, 93)}, {{"padding", IntList{1, 1, 1, 1}}}));
    Function g = blockedOf(f);
    const std::string text = printFunction(g);
    bool blockedConcat = false, plainConcat = false;
    for (const Expr& e : postOrder(g->body, true))
      if (auto* c = e.as<CallNode>(); c && c->op && c->op->name == "concatenate") {
        const int nd = int(inferType(e).as<TensorTypeNode>()->ndim());
        (nd == 5 ? blockedConcat : plainConcat) = true;
      }
    QVERIFY2(blockedConcat && !plainConcat, text.c_str());
    QVERIFY2(maxDiff(f, g) < 1e-4, text.c_str());
    const double diff = compiledDiff(f, "NCHWc");
    QVERIFY2(diff < 1e-3, std::to_string(diff).c_str());
  }

  void strideSizedConvTransposeIsBlockedConvAndDepthToSpace() {
    // A UNet decoder step: a 2x2 stride-2 ConvTranspose (32 -> 16) of a blocked conv's output,
    // concatenated with the skip and read by a 3x3 conv. It ran in NCHW (a col GEMM, then a
    // two-plane gather per output vector; its output left NCHW16c): it is now a blocked 1x1
    // conv to 64 channels and a blocked depth_to_space (DCR). An FPN head's ConvTranspose
    // 16 -> 16 that feeds (through a relu) a 16 -> 1 ConvTranspose, which stays NCHW, stays too.
    Var x = makeVar("x", f32({1, 8, 6, 6}));
    Var skip = makeVar("skip", f32({1, 16, 12, 12}));
    Expr up = makeCall("nn.conv2d_transpose", {conv1x1(x, 8, 32, 101), randomConst({32, 16, 2, 2}, 102)},
                       {{"strides", IntList{2, 2}}});
    Expr cat = makeCall("concatenate", {makeCall("nn.relu", {skip}), up}, {{"axis", int64_t(1)}});
    Function f = fn({x, skip}, makeCall("nn.conv2d", {cat, randomConst({16, 32, 3, 3}, 103)}, {{"padding", IntList{1, 1, 1, 1}}}));
    Function g = blockedOf(f);
    std::string text = printFunction(g);
    QVERIFY2(countOps(g, "nn.conv2d_transpose") == 0, text.c_str());
    bool blockedD2S = false;
    for (const Expr& e : postOrder(g->body, true))
      if (auto* c = e.as<CallNode>(); c && c->op && c->op->name == "nn.depth_to_space")
        blockedD2S = inferType(e).as<TensorTypeNode>()->ndim() == 5;
    QVERIFY2(blockedD2S, text.c_str());
    QVERIFY2(maxDiff(f, g) < 1e-4, text.c_str());
    double diff = compiledDiff(f, "NCHWc");
    QVERIFY2(diff < 1e-3, std::to_string(diff).c_str());

    Var h = makeVar("h", f32({1, 16, 5, 5}));
    Expr t1 = makeCall("nn.relu", {makeCall("nn.conv2d_transpose", {conv1x1(h, 16, 16, 104), randomConst({16, 16, 2, 2}, 105)},
                                            {{"strides", IntList{2, 2}}})});
    Function head = fn({h}, makeCall("nn.conv2d_transpose", {t1, randomConst({16, 1, 2, 2}, 106)}, {{"strides", IntList{2, 2}}}));
    Function gh = blockedOf(head);
    text = printFunction(gh);
    QVERIFY2(countOps(gh, "nn.conv2d_transpose") == 2 && countOps(gh, "nn.depth_to_space") == 0, text.c_str());
    diff = compiledDiff(head, "NCHWc");
    QVERIFY2(diff < 1e-3, std::to_string(diff).c_str());
  }

  void oneChannelHeadReadsTheBlockedTensor() {
    // A segmentation head: a 1x1 conv from 32 blocked channels to 1 (and to 3). With no block
    // for one channel it stayed NCHW, so its 32-channel input went back to NCHW first (UNet at
    // 256x256, one thread: a 0.59 ms transform and 1.08 ms at 8 GFLOP/s); now its output block
    // is padded to 16 zero filters and it reads the blocked input. So do 3x3 and 9x9 heads to
    // RGB (an image generator's output): in a 3-lane block (NCHW3c) they had no vector schedule
    // (a style-transfer net's 9x9 32 -> 3 conv at 224x224: 1213 ms at 0.6 GFLOP/s, one thread;
    // 16.9 ms padded).
    for (auto [out, k] : {std::pair<int64_t, int64_t>{1, 1}, {3, 1}, {3, 3}, {3, 9}}) {
      Var x = makeVar("x", f32({1, 8, 10, 12}));
      Function f = fn({x}, makeCall("nn.conv2d", {conv1x1(x, 8, 32, 111), randomConst({out, 32, k, k}, 112)},
                                    {{"padding", IntList{k / 2, k / 2, k / 2, k / 2}}}));
      Function g = blockedOf(f);
      const std::string text = printFunction(g);
      int blockedConvs = 0, paddedHeads = 0;
      for (const Expr& e : postOrder(g->body, true))
        if (auto* c = e.as<CallNode>(); c && c->op && c->op->name == "nn.conv2d") {
          blockedConvs += c->attrs.getString("data_layout") != "NCHW";
          paddedHeads += c->attrs.getString("kernel_layout") == "OIHW16i16o" &&
                         inferType(e).as<TensorTypeNode>()->shape[1].value == 1;
        }
      QVERIFY2(blockedConvs == 2, text.c_str());
      QVERIFY2(paddedHeads == 1, text.c_str());
      QVERIFY2(countOps(g, "layout_transform") == 2, text.c_str());
      QVERIFY2(maxDiff(f, g) < 1e-4, text.c_str());
      const double diff = compiledDiff(f, "NCHWc");
      QVERIFY2(diff < 1e-4, std::to_string(diff).c_str());
    }
  }

  void spatialMeanIsABlockedPool_data() {
    QTest::addColumn<QVector<int>>("axes");
    QTest::addColumn<int>("keepdims");
    QTest::addColumn<int>("channels");
    QTest::newRow("[2, 3], 32 channels") << QVector<int>{2, 3} << 0 << 32;
    QTest::newRow("[-1, -2] keepdims, 20 channels (padded block)") << QVector<int>{-1, -2} << 1 << 20;
    QTest::newRow("[1] stays NCHW") << QVector<int>{1} << 0 << 32;
  }
  void spatialMeanIsABlockedPool() {
    // x.mean([2, 3]) after a blocked conv (MnasNet's and ShuffleNet-v2's heads) is the blocked
    // global average pool, then a transform of N x C elements: the feature map itself no longer
    // goes back to NCHW. A mean over channels is left as it was.
    QFETCH(QVector<int>, axes);
    QFETCH(int, keepdims);
    QFETCH(int, channels);
    Var x = makeVar("x", f32({1, 8, 6, 7}));
    Attrs attrs;
    attrs.set("axis", std::vector<int64_t>(axes.begin(), axes.end()));
    attrs.set("keepdims", int64_t(keepdims));
    Function f = fn({x}, makeCall("mean", {conv1x1(x, 8, channels, 121)}, attrs));
    Function g = blockedOf(f);
    const std::string text = printFunction(g);
    const bool spatial = axes.size() == 2;
    int blockedPools = 0;
    for (const Expr& e : postOrder(g->body, true))
      if (auto* c = e.as<CallNode>(); c && c->op && c->op->name == "nn.global_avg_pool2d")
        blockedPools += c->attrs.getString("layout") != "NCHW";
    QVERIFY2(blockedPools == (spatial ? 1 : 0), text.c_str());
    QVERIFY2(countOps(g, "mean") == (spatial ? 0 : 1), text.c_str());
    QVERIFY2(maxDiff(f, g) < 1e-5, text.c_str());
    const double diff = compiledDiff(f, "NCHWc");
    QVERIFY2(diff < 1e-4, std::to_string(diff).c_str());
  }

  void shuffleUnitsCompiledMatchEvaluator_data() {
    QTest::addColumn<QString>("layout");
    QTest::newRow("NCHWc") << "NCHWc";
    QTest::newRow("NCHW") << "NCHW";
  }
  void shuffleUnitsCompiledMatchEvaluator() {
    QFETCH(QString, layout);
    double d = compiledDiff(shuffleNetUnits(), layout.toStdString());
    QVERIFY2(d < 1e-3, std::to_string(d).c_str());
  }

  void compiledModelHasLayoutTransformsOnlyAtItsBoundaries() {
    // The kernels compileModel builds for NCHWc: two layout transforms (input and output), the
    // shuffles as channel_shuffle kernels.
    std::vector<driver::ModelGroup> groups = driver::extractGroups(moduleOf(shuffleNetUnits()), {}, options("NCHWc"));
    int transforms = 0, shuffles = 0;
    for (const driver::ModelGroup& gr : groups)
      for (const std::string& op : gr.ops) {
        transforms += op == "layout_transform" ? gr.occurrences : 0;
        shuffles += op == "channel_shuffle" ? gr.occurrences : 0;
      }
    QCOMPARE(transforms, 2);
    QVERIFY(shuffles >= 3);
  }

  /// The RGB input's packing NCHW -> NCHW3c (one block of all 3 channels) is fused into the first
  /// conv, which reads the image in place: no kernel copies the image first. 16 input channels
  /// still get their own transform kernel (16 planes for the conv's channel loop).
  void narrowInputPackingIsReadByTheFirstConv_data() {
    QTest::addColumn<int>("channels");
    QTest::addColumn<bool>("fused");
    QTest::newRow("rgb") << 3 << true;
    QTest::newRow("rgba") << 4 << true;
    QTest::newRow("16 channels") << 16 << false;
  }
  void narrowInputPackingIsReadByTheFirstConv() {
    QFETCH(int, channels);
    QFETCH(bool, fused);
    Var x = makeVar("x", f32({1, channels, 18, 18}));
    Expr c1 = makeCall("nn.relu", {makeCall("nn.conv2d", {x, randomConst({32, channels, 3, 3}, 81)},
                                            {{"padding", IntList{1, 1, 1, 1}}, {"strides", IntList{2, 2}}})});
    Function f = fn({x}, makeCall("nn.conv2d", {c1, randomConst({16, 32, 1, 1}, 82)}));
    std::vector<driver::ModelGroup> groups = driver::extractGroups(moduleOf(f), {}, options("NCHWc"));
    int alone = 0, withConv = 0;
    for (const driver::ModelGroup& gr : groups) {
      bool transform = std::count(gr.ops.begin(), gr.ops.end(), "layout_transform") > 0;
      bool conv = std::count(gr.ops.begin(), gr.ops.end(), "nn.conv2d") > 0;
      if (transform && !conv) ++alone;
      if (transform && conv) {
        ++withConv;
        // The default schedule inlines the transform into the conv's input read.
        tir::PrimFunc s = driver::defaultSchedule(gr.func);
        QVERIFY2(tir::printFunc(s).find("T_layout_transform") == std::string::npos, tir::printFunc(s).c_str());
      }
    }
    QCOMPARE(withConv, fused ? 1 : 0);
    QCOMPARE(alone, fused ? 1 : 2);  // the output's transform back to NCHW stays a kernel
    double d = compiledDiff(f, "NCHWc");
    QVERIFY2(d < 1e-4, std::to_string(d).c_str());
  }

  void channelShuffleMeansConcatShuffleSlice_data() {
    QTest::addColumn<int>("block");
    QTest::addColumn<int>("groups");
    QTest::addColumn<int>("begin");
    QTest::addColumn<int>("count");
    // Channels 5 + 7 = 12: blocks of 4 pad the first input (5 -> 8) inside the concatenation.
    QTest::newRow("NCHW g3") << 0 << 3 << 2 << 9;
    QTest::newRow("NCHW4c g3 slice") << 4 << 3 << 2 << 9;
    QTest::newRow("NCHW4c g2 all") << 4 << 2 << 0 << 12;
    QTest::newRow("NCHW8c g4 tail") << 8 << 4 << 5 << 7;
    QTest::newRow("NCHW4c concat only") << 4 << 1 << 3 << 6;
  }
  void channelShuffleMeansConcatShuffleSlice() {
    // channel_shuffle in layout NCHW{k}c of blocked inputs, brought back to NCHW, against the NCHW
    // ops it stands for; in the graph evaluator and compiled.
    QFETCH(int, block);
    QFETCH(int, groups);
    QFETCH(int, begin);
    QFETCH(int, count);
    Var a = makeVar("a", f32({1, 5, 3, 4})), b = makeVar("b", f32({1, 7, 3, 4}));
    Expr ref = slice(shuffle(makeCall("concatenate", {a, b}, {{"axis", int64_t(1)}}), 1, 12, 3, 4, groups), begin,
                     begin + count);
    std::string layout = block ? "NCHW" + std::to_string(block) + "c" : "NCHW";
    auto blocked = [&](const Expr& x, int64_t c) -> Expr {
      if (!block) return x;
      const int64_t padded = (c + block - 1) / block * block;
      Expr p = makeCall("nn.pad", {x}, {{"pad_width", IntList{0, 0, 0, padded - c, 0, 0, 0, 0}}});
      return makeCall("layout_transform", {p}, {{"src_layout", std::string("NCHW")}, {"dst_layout", layout}});
    };
    Expr s = makeCall("channel_shuffle", {blocked(a, 5), blocked(b, 7)},
                      {{"channels", IntList{5, 7}}, {"groups", int64_t(groups)}, {"begin", int64_t(begin)},
                       {"count", int64_t(count)}, {"layout", layout}});
    if (block) {
      s = makeCall("layout_transform", {s}, {{"src_layout", layout}, {"dst_layout", std::string("NCHW")}});
      if (count % block) s = slice(s, 0, count);
    }
    Function want = fn({a, b}, ref), got = fn({a, b}, s);
    QCOMPARE(maxDiff(want, got), 0.0);
    double d = compiledDiff(got, "NCHW");
    QVERIFY2(d == 0.0, std::to_string(d).c_str());
  }

  void concatWrittenInPlace_data() {
    QTest::addColumn<QString>("layout");
    QTest::newRow("NCHWc") << "NCHWc";
    QTest::newRow("NCHW") << "NCHW";
  }
  void concatWrittenInPlace() {
    // Each branch's last kernel writes its slice of the concatenation (its result is a view of
    // the concat's storage at an offset): no concatenate kernel is left, and the result is the
    // graph evaluator's. A branch read by another node too keeps the concat kernel.
    QFETCH(QString, layout);
    for (bool shared : {false, true}) {
      Function f = inception(shared);
      driver::CompiledModel cm = driver::compileModel(moduleOf(f), "llvm", {}, options(layout.toStdString()));
      auto [concats, views] = kernelsAndViews(cm, "concatenate");
      if (!shared) {
        QCOMPARE(concats, 0);
        QCOMPARE(views, 3);  // the first slice is at offset 0
      } else {
        QCOMPARE(concats, 1);
        QCOMPARE(views, 0);
      }
      double d = compiledDiff(f, layout.toStdString());
      QVERIFY2(d < 1e-3, std::to_string(d).c_str());
    }
  }

  void fusedConcatReadsOneInputPerPoint() {
    // DenseNet: each layer's batch norm and relu read the concatenation of all earlier results,
    // fused into one kernel. The concat's choice of input is a lazy if_then_else on the channel
    // block (outside the vector lanes), so each point loads one input instead of all of them;
    // the lanes stay vectorized; the result is the evaluator's.
    Var x = makeVar("x", f32({1, 16, 6, 6}));
    std::vector<Expr> parts{makeCall("nn.conv2d", {x, randomConst({16, 16, 3, 3}, 79)}, {{"padding", IntList{1, 1, 1, 1}}})};
    for (uint32_t k = 0; k < 5; ++k)
      parts.push_back(makeCall("nn.conv2d", {parts.back(), randomConst({16, 16, 1, 1}, 80 + k)}));
    Expr cat = makeCall("concatenate", parts, {{"axis", int64_t(1)}});
    Expr y = makeCall("nn.relu", {makeCall("multiply", {cat, randomConst({96, 1, 1}, 90)})});
    Function f = fn({x}, makeCall("nn.conv2d", {y, randomConst({16, 96, 1, 1}, 91)}));
    driver::CompiledModel cm = driver::compileModel(moduleOf(f), "llvm", {}, options("NCHWc"));
    bool found = false;
    for (const tir::PrimFunc& k : cm.scheduledKernels) {
      std::string text = tir::printFunc(k);
      const size_t def = text.find("def "), open = text.find('(', def);
      if (text.substr(def, open - def).find("concatenate") == std::string::npos) continue;
      found = true;
      QVERIFY2(text.find("T.if_then_else(") != std::string::npos, text.c_str());
      QVERIFY2(text.find("T.Select(") == std::string::npos, text.c_str());
      QVERIFY2(text.find("T.vectorized(16)") != std::string::npos, text.c_str());
    }
    QVERIFY(found);
    double d = compiledDiff(f, "NCHWc");
    QVERIFY2(d < 1e-3, std::to_string(d).c_str());
  }

  void channelShuffleTypeErrors() {
    auto msg = [](IntList channels, int64_t groups, int64_t begin, int64_t count) -> std::string {
      try {
        inferType(Expr(makeCall("channel_shuffle", {makeVar("x", f32({1, 1, 2, 2, 8}))},
                                {{"channels", channels}, {"groups", groups}, {"begin", begin}, {"count", count},
                                 {"layout", std::string("NCHW8c")}})));
      } catch (const GraphTypeError& e) {
        return e.what();
      }
      return {};
    };
    QCOMPARE(msg({6}, 4, 0, 6), std::string("channel_shuffle: groups 4 do not divide the 6 channels"));
    QCOMPARE(msg({6}, 2, 4, 3), std::string("channel_shuffle: channels [4, 7) are not within the 6 channels"));
    QCOMPARE(msg({9}, 1, 0, 3),
             std::string("channel_shuffle: input 0 Tensor[(1, 1, 2, 2, 8), float32] does not hold 9 channels in "
                         "layout NCHW8c"));
  }
};

QTEST_APPLESS_MAIN(TestLayoutFusion)
#include "test_layout_fusion.moc"
