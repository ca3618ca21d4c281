// FuseOps: TVM's fusion rules on small graphs and on the example CNN; group names, group count,
// and unchanged outputs on random inputs.
#include <QtTest>

#include "GraphTestUtil.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Op.h"
#include "core/graph/PassManager.h"
#include "core/graph/Printer.h"
#include "core/graph/pass/FuseOps.h"
#include "core/graph/pass/InferType.h"

using namespace loom;
using namespace loom::graph;
using namespace loom::graph::testutil;

namespace {

using IntList = std::vector<int64_t>;
using Names = std::vector<std::string>;

/// The fused groups of `body` (in call order) after FuseOps; checks every op landed in a group and
/// the outputs did not change.
Names groupsOf(const Var& x, const Expr& body, int maxDepth = 256) {
  Function f = makeFunction({x}, body);
  inferType(Expr(f));
  Function g = makeFunction({x}, fuseOps(body, maxDepth));
  inferType(Expr(g));
  Names names;
  for (const Expr& e : postOrder(g->body, false)) {
    auto* c = e.as<CallNode>();
    if (!c) continue;
    if (c->op)
      names.push_back("UNFUSED " + c->op->name);
    else
      names.push_back(c->fn->name);
  }
  if (maxDiff(f, g) != 0) names.push_back("OUTPUTS DIFFER");
  return names;
}

Expr conv(const Expr& x, uint32_t seed) {
  return makeCall("nn.conv2d", {x, randomConst({2, 2, 1, 1}, seed)});
}

} // namespace

class TestFuseOps : public QObject {
  Q_OBJECT

private slots:
  void anchorTakesElementwiseChain() {
    Var x = makeVar("x", f32({1, 2, 4, 4}));
    Expr c = conv(x, 1);
    Expr b = makeCall("add",
                      {c, randomConst({2, 1, 1}, 2)}); // broadcast, but elementwise on conv's side
    Expr r = makeCall("nn.relu", {b});
    QCOMPARE(groupsOf(x, r), (Names{"fused_nn_conv2d_add_nn_relu"}));
  }

  void diamondFusesAtPostDominator() {
    Var x = makeVar("x", f32({1, 2, 4, 4}));
    Expr c = conv(x, 1);
    Expr out = makeCall("add", {makeCall("nn.relu", {c}), makeCall("exp", {c})});
    QCOMPARE(groupsOf(x, out), (Names{"fused_nn_conv2d_nn_relu_exp_add"}));
  }

  void opaqueOnAPathBlocksFusion() {
    Var x = makeVar("x", f32({1, 2, 4, 4}));
    Expr r = makeCall("nn.relu", {x});
    Expr out = makeCall("add", {makeCall("nn.softmax", {r}), r});
    QCOMPARE(groupsOf(x, out), (Names{"fused_nn_relu", "fused_nn_softmax", "fused_add"}));
  }

  void reductionTakesElementwiseProducers() {
    Var x = makeVar("x", f32({3, 5}));
    Expr s =
        makeCall("sum", {makeCall("exp", {makeCall("negative", {x})})}, {{"axis", IntList{1}}});
    Expr out = makeCall("multiply", {s, makeScalar(2, DataType::Float(32))});
    QCOMPARE(groupsOf(x, out), (Names{"fused_negative_exp_sum", "fused_multiply"}));
  }

  void injectiveChainsFuse() {
    Var x = makeVar("x", f32({2, 3, 4}));
    Expr r = makeCall("reshape", {x}, {{"newshape", IntList{6, 4}}});
    Expr t = makeCall("transpose", {r});
    Expr s = makeCall("strided_slice", {t}, {{"begin", IntList{1}}, {"end", IntList{3}}});
    Expr out = makeCall("nn.dense", {makeCall("nn.relu", {s}), randomConst({5, 6}, 1)});
    // relu (elementwise) joins the injective chain; dense (an anchor) does not take injective
    // inputs.
    QCOMPARE(groupsOf(x, out),
             (Names{"fused_reshape_transpose_strided_slice_nn_relu", "fused_nn_dense"}));
  }

  void elementwiseBeforeAnchorStaysApart() {
    Var x = makeVar("x", f32({1, 2, 4, 4}));
    Expr out =
        makeCall("reshape", {conv(makeCall("nn.relu", {x}), 1)}, {{"newshape", IntList{2, 16}}});
    QCOMPARE(groupsOf(x, out), (Names{"fused_nn_relu", "fused_nn_conv2d", "fused_reshape"}));
  }

  void maxDepthSplitsGroups() {
    Var x = makeVar("x", f32({8}));
    Expr e = x;
    for (const char* op : {"negative", "exp", "nn.relu", "sqrt", "abs"})
      e = makeCall(op, {e});
    QCOMPARE(groupsOf(x, e), (Names{"fused_negative_exp_nn_relu_sqrt_abs"}));
    Names limited = groupsOf(x, e, 2);
    QVERIFY2(limited.size() >= 3, qPrintable(QString::number(limited.size())));
    for (const std::string& n : limited)
      QVERIFY2(n.rfind("fused_", 0) == 0, n.c_str());
  }

  void tuplesStayOutside() {
    Var x = makeVar("x", f32({4, 6}));
    Expr s = makeCall("split", {makeCall("nn.relu", {x})},
                      {{"sections", IntList{2, 4}}, {"axis", int64_t(1)}});
    Expr out = makeCall("add", {makeCall("exp", {makeTupleGetItem(s, 0)}),
                                makeCall("sum", {makeTupleGetItem(s, 1)})});
    Names n = groupsOf(x, out);
    // relu fuses into the split; the tuple projections stay outside; exp joins its broadcast
    // consumer; the reduction does not take its consumer.
    QCOMPARE(n, (Names{"fused_nn_relu_split", "fused_sum", "fused_exp_add"}));
  }

  void smallCnnGroups() {
    frontend::ImportOptions o;
    o.inputShapes = frontend::parseInputShapes("data:[1,3,16,16]");
    Module m = frontend::importOnnx(
        std::string(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx", o);
    Module fused = runGraphPasses(m, fusePipeline());
    Names names;
    for (const Expr& e : postOrder(fused.main()->body, false))
      if (auto* c = e.as<CallNode>())
        names.push_back(c->fn.defined() ? c->fn->name : "UNFUSED " + c->op->name);
    QCOMPARE(names, (Names{"fused_nn_conv2d_nn_bias_add_nn_relu", "fused_nn_max_pool2d",
                           "fused_nn_conv2d_nn_bias_add_nn_relu", "fused_nn_global_avg_pool2d",
                           "fused_reshape", "fused_nn_dense_add", "fused_nn_softmax"}));
    QVERIFY(maxDiff(m.main(), fused.main()) < 1e-6);
  }
};

QTEST_APPLESS_MAIN(TestFuseOps)
#include "test_fuse_ops.moc"
