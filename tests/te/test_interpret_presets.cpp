// Every workload preset, built with createPrimFunc and run in the reference interpreter on random
// inputs, agrees with its plain C++ reference.
#include <QtTest>

#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/topi/Workloads.h"

using namespace loom;

class TestInterpretPresets : public QObject {
  Q_OBJECT

private slots:
  void matchesReference_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("matmul") << "matmul:M=7,N=5,K=9";
    QTest::newRow("batch_matmul") << "batch_matmul:B=2,M=3,N=5,K=4";
    QTest::newRow("conv2d") << "conv2d:N=2,C=3,H=6,W=5,K=4,R=3,S=3";
    QTest::newRow("conv2d-stride-dilation")
        << "conv2d:N=1,C=2,H=9,W=8,K=3,R=3,S=2,stride=2,pad=2,dilation=2";
    QTest::newRow("conv2d-groups") << "conv2d:N=1,C=4,H=5,W=5,K=6,R=3,S=3,groups=2";
    QTest::newRow("conv2d-nopad") << "conv2d:N=1,C=2,H=5,W=6,K=2,R=2,S=3,pad=0";
    QTest::newRow("depthwise") << "depthwise_conv2d:N=1,C=3,H=6,W=6,R=3,S=3";
    QTest::newRow("depthwise-mult")
        << "depthwise_conv2d:N=2,C=2,H=5,W=4,R=3,S=3,stride=2,multiplier=3";
    QTest::newRow("softmax") << "softmax:M=4,N=11";
    QTest::newRow("layernorm") << "layernorm:M=3,N=13";
    QTest::newRow("relu") << "relu:M=5,N=6";
    QTest::newRow("add") << "add:M=4,N=7";
    QTest::newRow("add-full") << "add:M=4,N=7,broadcast=0";
    QTest::newRow("reduce_sum") << "reduce_sum:M=3,N=17";
    QTest::newRow("transpose") << "transpose:M=3,N=5";
  }

  void matchesReference() {
    QFETCH(QString, spec);
    topi::WorkloadSpec s = topi::parseWorkloadSpec(spec.toStdString());
    tir::PrimFunc f = topi::buildWorkload(s);
    for (uint64_t seed : {1u, 2u}) {
      std::vector<runtime::NDArray> args = topi::makeParamArrays(f);
      std::vector<runtime::NDArray> want = topi::makeParamArrays(f);
      for (int i = 0; i < s.workload->numInputs; ++i) {
        tir::fillRandom(args[i], seed * 100 + i);
        want[i] = args[i];
      }
      tir::interpret(f, std::vector<tir::Arg>(args.begin(), args.end()));
      topi::runReference(s, want);
      for (size_t i = s.workload->numInputs; i < args.size(); ++i) {
        double err = tir::maxRelError(args[i], want[i]);
        QVERIFY2(err <= 1e-4, (spec.toStdString() + ": max relative error " + std::to_string(err) +
                               "\n" + tir::mismatchReport(args[i], want[i], 1e-5, 1e-6))
                                  .c_str());
      }
    }
  }

  // The comparison can fail: running with the inputs swapped (B*A instead of A*B) is caught.
  void detectsWrongResult() {
    topi::WorkloadSpec s = topi::parseWorkloadSpec("matmul:M=4,N=4,K=4");
    tir::PrimFunc g = topi::buildWorkload(s);
    std::vector<runtime::NDArray> args = topi::makeParamArrays(g), want = topi::makeParamArrays(g);
    tir::fillRandom(args[0], 1);
    tir::fillRandom(args[1], 2);
    want[0] = args[0];
    want[1] = args[1];
    tir::interpret(g, {args[1], args[0], args[2]});
    topi::runReference(s, want);
    QVERIFY(tir::maxRelError(args[2], want[2]) > 1e-3);
  }
};

QTEST_APPLESS_MAIN(TestInterpretPresets)
#include "test_interpret_presets.moc"
