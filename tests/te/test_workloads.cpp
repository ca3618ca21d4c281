// The workload presets: their blocks and buffers, spec parsing and its errors, FLOP counts, and
// the C++ references against hand-computed examples.
#include <QtTest>

#include <cmath>

#include "core/support/Error.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/tir/StructuralEqual.h"
#include "core/tir/Visitor.h"
#include "core/topi/Workloads.h"

using namespace loom;
using namespace loom::tir;
using loom::topi::WorkloadError;

namespace {

struct BlockInfo {
  std::string name, iterTypes; // "SSR"
};

std::vector<BlockInfo> blocksOf(const PrimFunc& f) {
  std::vector<BlockInfo> out;
  postOrderVisit(f->body, [&](const IRNode* n) {
    if (n->nodeKind != NodeKind::Block) return;
    auto* b = static_cast<const BlockNode*>(n);
    if (b->name == "root") return;
    std::string t;
    for (auto& iv : b->iterVars)
      t += iv.iterType == IterType::DataPar ? "S" : "R";
    out.push_back({b->name, t});
  });
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (auto& x : v)
    s += (s.empty() ? "" : ",") + x;
  return s;
}

runtime::NDArray arr(std::vector<int64_t> shape, std::vector<float> values) {
  auto a = runtime::NDArray::empty(shape, runtime::DType::f32());
  if (int64_t(values.size()) != a.numel())
    qFatal("arr: %zu values for %lld elements", values.size(), (long long)a.numel());
  std::copy(values.begin(), values.end(), a.as<float>());
  return a;
}

std::string errorOf(const std::string& spec) {
  try {
    topi::parseWorkloadSpec(spec);
  } catch (const WorkloadError& e) {
    return e.what();
  }
  return "(no error)";
}

} // namespace

class TestWorkloads : public QObject {
  Q_OBJECT

private slots:
  void structure_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("params");
    QTest::addColumn<QString>("blocks"); // name:iter types;...
    QTest::addColumn<QString>("allocs");
    QTest::newRow("matmul") << "matmul:M=4,N=5,K=6"
                            << "A,B,C"
                            << "C:SSR"
                            << "";
    QTest::newRow("batch_matmul") << "batch_matmul:B=2,M=3,N=4,K=5"
                                  << "A,B,C"
                                  << "C:SSSR"
                                  << "";
    QTest::newRow("conv2d") << "conv2d:N=1,C=2,H=5,W=5,K=3,R=3,S=3"
                            << "data,weight,conv2d_nchw"
                            << "pad_temp:SSSS;conv2d_nchw:SSSSRRR"
                            << "pad_temp";
    QTest::newRow("conv2d-nopad") << "conv2d:N=1,C=2,H=5,W=5,K=3,pad=0"
                                  << "data,weight,conv2d_nchw"
                                  << "conv2d_nchw:SSSSRRR"
                                  << "";
    QTest::newRow("depthwise") << "depthwise_conv2d:C=3,H=6,W=6"
                               << "data,weight,DepthwiseConv2d"
                               << "pad_temp:SSSS;DepthwiseConv2d:SSSSRR"
                               << "pad_temp";
    QTest::newRow("softmax")
        << "softmax:M=3,N=7"
        << "A,T_softmax_norm"
        << "T_softmax_maxelem:SR;T_softmax_exp:SS;T_softmax_expsum:SR;T_softmax_norm:SS"
        << "T_softmax_maxelem,T_softmax_exp,T_softmax_expsum";
    QTest::newRow("layernorm") << "layernorm:M=3,N=7"
                               << "A,gamma,beta,T_layer_norm"
                               << "T_layer_norm_sum:SR;T_layer_norm_varsum:SR;T_layer_norm:SS"
                               << "T_layer_norm_sum,T_layer_norm_varsum";
    QTest::newRow("relu") << "relu:M=3,N=4"
                          << "A,T_relu"
                          << "T_relu:SS"
                          << "";
    QTest::newRow("add") << "add:M=3,N=4"
                         << "A,B,T_add"
                         << "T_add:SS"
                         << "";
    QTest::newRow("reduce_sum") << "reduce_sum:M=3,N=4"
                                << "A,A_red"
                                << "A_red:SR"
                                << "";
    QTest::newRow("transpose") << "transpose:M=3,N=4"
                               << "A,T_transpose"
                               << "T_transpose:SS"
                               << "";
  }

  void structure() {
    QFETCH(QString, spec);
    QFETCH(QString, params);
    QFETCH(QString, blocks);
    QFETCH(QString, allocs);
    PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec(spec.toStdString()));
    std::vector<std::string> p;
    for (size_t i = 0; i < f->params.size(); ++i)
      p.push_back(f->paramBuffer(i)->name);
    QCOMPARE(QString::fromStdString(join(p)), params);
    std::vector<std::string> b;
    for (auto& x : blocksOf(f))
      b.push_back(x.name + ":" + x.iterTypes);
    QCOMPARE(QString::fromStdString(join(b)).replace(",", ";"), blocks);
    auto* root = f->body.as<BlockRealizeNode>()->block.get();
    QCOMPARE(root->name, std::string("root"));
    std::vector<std::string> a;
    for (auto& x : root->allocBuffers)
      a.push_back(x->name);
    QCOMPARE(QString::fromStdString(join(a)), allocs);

    // Every block writes exactly its own output point and reads only other buffers; reductions
    // have an init, the others do not; iter var values are the enclosing loop variables.
    postOrderVisit(f->body, [&](const IRNode* n) {
      if (n->nodeKind != NodeKind::BlockRealize) return;
      auto* br = static_cast<const BlockRealizeNode*>(n);
      const BlockNode* blk = br->block.get();
      if (blk->name == "root") return;
      QCOMPARE(blk->writes.size(), size_t(1));
      QCOMPARE(blk->writes[0].buffer->name, blk->name);
      for (auto& r : blk->reads)
        QVERIFY(!r.buffer.same_as(blk->writes[0].buffer));
      bool reduce = false;
      for (auto& iv : blk->iterVars)
        reduce = reduce || iv.iterType == IterType::CommReduce;
      QCOMPARE(blk->init.defined(), reduce);
      for (auto& v : br->iterValues)
        QVERIFY(v.as<VarNode>());
    });

    // The printed text parses back to the same function.
    std::string text = printFunc(f);
    PrimFunc back = parseFunc(text, "preset.tir");
    QVERIFY2(structuralEqual(f, back), (text + structuralDiff(f, back)).c_str());
  }

  void shapesAndParamsOfConv() {
    auto spec = topi::parseWorkloadSpec(
        "conv2d:N=2,C=4,H=9,W=7,K=6,R=3,S=3,stride=2,pad=1,dilation=1,groups=2");
    PrimFunc f = topi::buildWorkload(spec);
    auto shape = [](const Buffer& b) {
      std::vector<int64_t> s;
      for (auto& e : b->shape)
        s.push_back(*asConstInt(e));
      return s;
    };
    QCOMPARE(shape(f->paramBuffer(0)), (std::vector<int64_t>{2, 4, 9, 7}));
    QCOMPARE(shape(f->paramBuffer(1)), (std::vector<int64_t>{6, 2, 3, 3}));
    QCOMPARE(shape(f->paramBuffer(2)), (std::vector<int64_t>{2, 6, 5, 4}));
    QCOMPARE(topi::workloadFlops(spec), 2.0 * 2 * 6 * 5 * 4 * 2 * 3 * 3);
    QCOMPARE(topi::workloadFlops(topi::parseWorkloadSpec("matmul:M=2,N=3,K=4")), 48.0);
  }

  void tolerances() {
    QCOMPARE(topi::checkTolerance(topi::parseWorkloadSpec("relu")), 1e-4);
    QCOMPARE(topi::checkTolerance(topi::parseWorkloadSpec("matmul:K=64")), 1e-4);
    QCOMPARE(topi::checkTolerance(topi::parseWorkloadSpec("matmul:K=256")), 4e-4);
    // conv2d sums C/groups * R * S = 8 * 3 * 3 = 72 terms per output.
    QCOMPARE(topi::checkTolerance(topi::parseWorkloadSpec("conv2d:C=16,groups=2")), 1e-4 * 72 / 64);
  }

  void specParsing() {
    auto s = topi::parseWorkloadSpec("matmul:M=64,N=32");
    QCOMPARE(s.workload->name, std::string("matmul"));
    QCOMPARE(s.params.at("M"), int64_t(64));
    QCOMPARE(s.params.at("N"), int64_t(32));
    QCOMPARE(s.params.at("K"), int64_t(128)); // default
    QCOMPARE(s.str(), std::string("matmul:K=128,M=64,N=32"));
    QCOMPARE(topi::parseWorkloadSpec(s.str()).params, s.params);
    QCOMPARE(topi::parseWorkloadSpec("relu").params.at("M"), int64_t(128));
    auto m = topi::makeWorkloadSpec("add", {{"broadcast", 0}});
    QCOMPARE(m.params.at("broadcast"), int64_t(0));
    QVERIFY(topi::findWorkload("softmax"));
    QVERIFY(!topi::findWorkload("nope"));
    QCOMPARE(topi::allWorkloads().size(), size_t(10));
    for (size_t i = 1; i < topi::allWorkloads().size(); ++i)
      QVERIFY(topi::allWorkloads()[i - 1].name < topi::allWorkloads()[i].name);
  }

  void specErrors_data() {
    QTest::addColumn<QString>("spec");
    QTest::addColumn<QString>("expect");
    QTest::newRow("unknown")
        << "matmull:M=1"
        << "unknown workload 'matmull'; known workloads: add, batch_matmul, conv2d";
    QTest::newRow("empty") << ""
                           << "known workloads: add";
    QTest::newRow("param") << "matmul:Q=3"
                           << "workload 'matmul' has no parameter 'Q'; valid parameters: M, N, K";
    QTest::newRow("value") << "matmul:M=abc"
                           << "parameter 'M' has value 'abc', expected an integer";
    QTest::newRow("trailing") << "matmul:M=12x"
                              << "parameter 'M' has value '12x'";
    QTest::newRow("novalue") << "matmul:M="
                             << "parameter 'M' has value ''";
    QTest::newRow("range") << "matmul:M=0"
                           << "parameter 'M' is 0, must be at least 1";
    QTest::newRow("negpad") << "conv2d:pad=-1"
                            << "parameter 'pad' is -1, must be at least 0";
    QTest::newRow("noeq") << "matmul:M"
                          << "expected NAME=VALUE, got 'M'";
    QTest::newRow("twice") << "matmul:M=1,M=2"
                           << "parameter 'M' given twice";
    QTest::newRow("comma") << "matmul:M=1,"
                           << "trailing ','";
  }

  void specErrors() {
    QFETCH(QString, spec);
    QFETCH(QString, expect);
    std::string msg = errorOf(spec.toStdString());
    QVERIFY2(msg.find(expect.toStdString()) != std::string::npos, msg.c_str());
  }

  void parameterConflicts() {
    try {
      topi::buildWorkload(topi::parseWorkloadSpec("conv2d:C=6,K=8,groups=4"));
      QFAIL("no error");
    } catch (const WorkloadError& e) {
      QVERIFY2(std::string(e.what()).find("groups=4 must divide C=6 and K=8") != std::string::npos,
               e.what());
    }
    QVERIFY_THROWS_EXCEPTION(WorkloadError, topi::buildWorkload(topi::parseWorkloadSpec(
                                                "conv2d:H=2,W=2,R=5,S=5,pad=0")));
  }

  // --- The references, against examples computed by hand -----------------------------------

  void referenceMatmul() {
    auto spec = topi::parseWorkloadSpec("matmul:M=2,N=2,K=3");
    auto C = arr({2, 2}, {0, 0, 0, 0});
    topi::runReference(spec,
                       {arr({2, 3}, {1, 2, 3, 4, 5, 6}), arr({3, 2}, {7, 8, 9, 10, 11, 12}), C});
    QCOMPARE(std::vector<float>(C.as<float>(), C.as<float>() + 4),
             (std::vector<float>{58, 64, 139, 154}));
  }

  void referenceBatchMatmul() {
    auto spec = topi::parseWorkloadSpec("batch_matmul:B=2,M=1,N=1,K=2");
    auto C = arr({2, 1, 1}, {0, 0});
    topi::runReference(spec, {arr({2, 1, 2}, {1, 2, 3, 4}), arr({2, 2, 1}, {5, 6, 7, 8}), C});
    QCOMPARE(C.as<float>()[0], 17.0f);
    QCOMPARE(C.as<float>()[1], 53.0f);
  }

  void referenceConv2d() {
    // 1x1x3x3 input 1..9, 2x2 kernel of ones, no padding: sums of 2x2 windows.
    auto spec = topi::parseWorkloadSpec("conv2d:N=1,C=1,H=3,W=3,K=1,R=2,S=2,pad=0");
    auto O = arr({1, 1, 2, 2}, {0, 0, 0, 0});
    topi::runReference(
        spec, {arr({1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}), arr({1, 1, 2, 2}, {1, 1, 1, 1}), O});
    QCOMPARE(std::vector<float>(O.as<float>(), O.as<float>() + 4),
             (std::vector<float>{12, 16, 24, 28}));
    // Padding 1, 3x3 kernel with only the centre set: the identity.
    auto spec2 = topi::parseWorkloadSpec("conv2d:N=1,C=1,H=2,W=2,K=1,R=3,S=3,pad=1");
    auto O2 = arr({1, 1, 2, 2}, {0, 0, 0, 0});
    topi::runReference(spec2, {arr({1, 1, 2, 2}, {1, 2, 3, 4}),
                               arr({1, 1, 3, 3}, {0, 0, 0, 0, 1, 0, 0, 0, 0}), O2});
    QCOMPARE(std::vector<float>(O2.as<float>(), O2.as<float>() + 4),
             (std::vector<float>{1, 2, 3, 4}));
    // Two groups: each output channel sees only its own input channel.
    auto spec3 = topi::parseWorkloadSpec("conv2d:N=1,C=2,H=1,W=1,K=2,R=1,S=1,pad=0,groups=2");
    auto O3 = arr({1, 2, 1, 1}, {0, 0});
    topi::runReference(spec3, {arr({1, 2, 1, 1}, {3, 5}), arr({2, 1, 1, 1}, {10, 100}), O3});
    QCOMPARE(O3.as<float>()[0], 30.0f);
    QCOMPARE(O3.as<float>()[1], 500.0f);
  }

  void referenceDepthwise() {
    auto spec =
        topi::parseWorkloadSpec("depthwise_conv2d:N=1,C=2,H=1,W=1,R=1,S=1,pad=0,multiplier=2");
    auto O = arr({1, 4, 1, 1}, {0, 0, 0, 0});
    topi::runReference(spec, {arr({1, 2, 1, 1}, {3, 5}), arr({2, 2, 1, 1}, {1, 2, 3, 4}), O});
    QCOMPARE(std::vector<float>(O.as<float>(), O.as<float>() + 4),
             (std::vector<float>{3, 6, 15, 20}));
  }

  void referenceSoftmaxLayernorm() {
    auto O = arr({1, 2}, {0, 0});
    topi::runReference(topi::parseWorkloadSpec("softmax:M=1,N=2"),
                       {arr({1, 2}, {0, std::log(3.0f)}), O});
    QVERIFY(std::fabs(O.as<float>()[0] - 0.25f) < 1e-6f &&
            std::fabs(O.as<float>()[1] - 0.75f) < 1e-6f);
    auto L = arr({1, 2}, {0, 0});
    topi::runReference(topi::parseWorkloadSpec("layernorm:M=1,N=2"),
                       {arr({1, 2}, {1, 3}), arr({2}, {2, 2}), arr({2}, {10, 20}), L});
    // mean 2, var 1: (x - 2) / sqrt(1 + 1e-5) * 2 + beta.
    float s = float(2.0 / std::sqrt(1.0 + 1e-5));
    QVERIFY(std::fabs(L.as<float>()[0] - (10 - s)) < 1e-5f &&
            std::fabs(L.as<float>()[1] - (20 + s)) < 1e-5f);
  }

  void referenceElementwise() {
    auto R = arr({1, 3}, {0, 0, 0});
    topi::runReference(topi::parseWorkloadSpec("relu:M=1,N=3"), {arr({1, 3}, {-1, 0, 2}), R});
    QCOMPARE(std::vector<float>(R.as<float>(), R.as<float>() + 3), (std::vector<float>{0, 0, 2}));
    auto S = arr({2, 2}, {0, 0, 0, 0});
    topi::runReference(topi::parseWorkloadSpec("add:M=2,N=2"),
                       {arr({2, 2}, {1, 2, 3, 4}), arr({2}, {10, 20}), S});
    QCOMPARE(std::vector<float>(S.as<float>(), S.as<float>() + 4),
             (std::vector<float>{11, 22, 13, 24}));
    auto S2 = arr({2, 2}, {0, 0, 0, 0});
    topi::runReference(topi::parseWorkloadSpec("add:M=2,N=2,broadcast=0"),
                       {arr({2, 2}, {1, 2, 3, 4}), arr({2, 2}, {10, 20, 30, 40}), S2});
    QCOMPARE(std::vector<float>(S2.as<float>(), S2.as<float>() + 4),
             (std::vector<float>{11, 22, 33, 44}));
    auto T = arr({3, 2}, {0, 0, 0, 0, 0, 0});
    topi::runReference(topi::parseWorkloadSpec("transpose:M=2,N=3"),
                       {arr({2, 3}, {1, 2, 3, 4, 5, 6}), T});
    QCOMPARE(std::vector<float>(T.as<float>(), T.as<float>() + 6),
             (std::vector<float>{1, 4, 2, 5, 3, 6}));
    auto Rs = arr({2}, {0, 0});
    topi::runReference(topi::parseWorkloadSpec("reduce_sum:M=2,N=3"),
                       {arr({2, 3}, {1, 2, 3, 4, 5, 6}), Rs});
    QCOMPARE(Rs.as<float>()[0], 6.0f);
    QCOMPARE(Rs.as<float>()[1], 15.0f);
  }

  void paramArrays() {
    PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("add:M=3,N=5"));
    auto arrays = topi::makeParamArrays(f);
    QCOMPARE(arrays.size(), size_t(3));
    QCOMPARE(arrays[1].shape(), (std::vector<int64_t>{5}));
    QCOMPARE(arrays[2].shape(), (std::vector<int64_t>{3, 5}));
  }
};

QTEST_APPLESS_MAIN(TestWorkloads)
#include "test_workloads.moc"
