// The generated search space: for every workload preset, sampled candidates apply, keep the
// program's meaning (interpreter on random inputs), lower, and replay from their stored trace;
// mutating a sampling decision of the design trace gives another valid candidate.
#include <QtTest>
#include <set>

#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/schedule/Primitives.h"
#include "core/schedule/Trace.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"
#include "core/tune/SpaceGenerator.h"

using namespace loom;
using namespace loom::tune;

namespace {

double maxErrorBetween(const tir::PrimFunc& before, const tir::PrimFunc& after) {
  auto a = topi::makeParamArrays(before);
  auto b = topi::makeParamArrays(after);
  std::vector<tir::Arg> argsA, argsB;
  for (size_t i = 0; i < a.size(); ++i) {
    tir::fillRandom(a[i], 7 + i);
    tir::fillRandom(b[i], 7 + i);
    argsA.push_back(a[i]);
    argsB.push_back(b[i]);
  }
  tir::interpret(before, argsA);
  tir::interpret(after, argsB);
  double err = 0;
  for (size_t i = 0; i < a.size(); ++i) err = std::max(err, tir::maxRelError(b[i], a[i]));
  return err;
}

size_t countKind(const tir::Trace& t, const std::string& kind) {
  size_t n = 0;
  for (auto& inst : t.insts) n += inst.kind->name == kind;
  return n;
}

} // namespace

class TestSpace : public QObject {
  Q_OBJECT
private slots:
  void everyPresetSamplesValidCandidates_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("add") << "add:M=6,N=12";
    QTest::newRow("add no broadcast") << "add:M=6,N=12,broadcast=0";
    QTest::newRow("batch_matmul") << "batch_matmul:B=2,M=8,N=12,K=6";
    QTest::newRow("conv2d") << "conv2d:N=1,C=3,H=6,W=6,K=4,R=3,S=3";
    QTest::newRow("conv2d strided") << "conv2d:N=1,C=4,H=7,W=7,K=4,R=3,S=3,stride=2,groups=2";
    QTest::newRow("depthwise_conv2d") << "depthwise_conv2d:N=1,C=4,H=6,W=6,R=3,S=3";
    QTest::newRow("layernorm") << "layernorm:M=4,N=12";
    QTest::newRow("matmul") << "matmul:M=16,N=12,K=8";
    QTest::newRow("reduce_sum") << "reduce_sum:M=6,N=10";
    QTest::newRow("relu") << "relu:M=6,N=16";
    QTest::newRow("softmax") << "softmax:M=4,N=10";
    QTest::newRow("transpose") << "transpose:M=6,N=10";
  }
  void everyPresetSamplesValidCandidates() {
    QFETCH(QString, spec);
    topi::WorkloadSpec ws = topi::parseWorkloadSpec(spec.toStdString());
    tir::PrimFunc f = topi::buildWorkload(ws);
    SpaceGenerator gen = SpaceGenerator::defaultCpu();
    std::set<std::string> distinct;
    for (uint64_t seed = 1; seed <= 20; ++seed) {
      auto p = gen.sample(f, seed);
      QVERIFY2(p.has_value(), qPrintable(spec + " seed " + QString::number(seed)));
      double err = maxErrorBetween(f, p->final.func());
      if (!(err <= 1e-4)) qWarning("%s", p->final.trace().str().c_str());
      QVERIFY2(err <= 1e-4, qPrintable(spec + " seed " + QString::number(seed) + " err " + QString::number(err)));
      // Lowers (and compiles) for the host.
      transform::PassContext ctx;
      driver::OperatorOptions o;
      driver::LoweredOperator op = driver::lowerOperator(p->final.func(), o, ctx);
      if (seed % 5 == 1) QVERIFY(driver::jitOperator(op) != nullptr);
      // The stored trace replays to the same function.
      tir::Schedule again(f);
      tir::Trace::fromJson(p->finalJson()).apply(again);
      QVERIFY(tir::structuralEqual(again.func(), p->final.func()));
      distinct.insert(p->key());
      // Something was scheduled: every preset gets at least a parallel or vector loop.
      QVERIFY2(countKind(p->final.trace(), "parallel") + countKind(p->final.trace(), "vectorize") > 0,
               p->final.trace().str().c_str());
    }
    QVERIFY2(distinct.size() >= 2, qPrintable(spec));
  }

  void matmulSpaceIsMultiLevelTiled() {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=64,N=64,K=64"));
    auto p = SpaceGenerator::defaultCpu().sample(f, 3);
    QVERIFY(p.has_value());
    // 2 spatial loops in 4 tiles, 1 reduction loop in 2: three sample_perfect_tile.
    QCOMPARE(countKind(p->design, "sample_perfect_tile"), size_t(3));
    QCOMPARE(countKind(p->design, "sample_categorical"), size_t(2)); // parallel count, unroll step
    QCOMPARE(countKind(p->final.trace(), "pragma_auto_unroll_max_step"), size_t(0));
    QVERIFY(p->final.trace().str().find("pragma_auto_unroll_max_step") != std::string::npos);
    if (qEnvironmentVariableIsSet("LOOM_TEST_VERBOSE")) qInfo("%s", p->final.trace().simplified().str().c_str());
  }

  void mutatedDecisionsReplay() {
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=32,N=24,K=16"));
    SpaceGenerator gen = SpaceGenerator::defaultCpu();
    auto p = gen.sample(f, 5);
    QVERIFY(p.has_value());
    auto sampling = p->design.samplingInstructions();
    QVERIFY(sampling.size() >= 4);
    size_t changed = 0;
    for (size_t idx : sampling) {
      for (uint64_t s = 1; s <= 6; ++s) {
        auto q = gen.replay(f, p->design, {{idx, tir::Value()}}, s);
        QVERIFY(q.has_value());
        QVERIFY(maxErrorBetween(f, q->final.func()) <= 1e-4);
        changed += q->key() != p->key();
      }
    }
    QVERIFY(changed > 0);
    // Replaying unchanged reproduces the candidate.
    auto same = gen.replay(f, p->design, {}, 99);
    QVERIFY(same.has_value());
    QCOMPARE(same->key(), p->key());
  }
};

QTEST_APPLESS_MAIN(TestSpace)
#include "test_space.moc"
