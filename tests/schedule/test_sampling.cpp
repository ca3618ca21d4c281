// sample_categorical and sample_perfect_tile: distributions, decisions, refusals.
#include <map>

#include "ScheduleTestUtil.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

class TestSampling : public QObject {
  Q_OBJECT
private slots:
  void categoricalFollowsProbabilities() {
    PrimFunc f = workload("matmul:M=8,N=8,K=8");
    Schedule sch(f, 123);
    std::map<int64_t, int> counts;
    for (int n = 0; n < 2000; ++n)
      counts[sch.get(sampleCategorical(sch, {1, 2, 3}, {0.1, 0.0, 0.9}))]++;
    QCOMPARE(counts[2], 0);
    QVERIFY2(counts[1] > 120 && counts[1] < 280, qPrintable(QString::number(counts[1])));
    QVERIFY(counts[3] > 1700);
    // Decisions are recorded and win over the random draw.
    QVERIFY(sch.trace().insts.back().decision.kind() == Value::Kind::Int);
    ExprRV v = sampleCategorical(sch, {7, 8}, {1, 0}, 1);
    QCOMPARE(sch.get(v), int64_t(8));
  }
  void perfectTiles() {
    PrimFunc f = workload("matmul:M=24,N=8,K=8");
    for (uint64_t seed = 0; seed < 30; ++seed) {
      Schedule sch(f, seed);
      auto loops = getLoops(sch, getBlock(sch, "C"));
      auto tiles = samplePerfectTile(sch, loops[0], 3, 4);
      int64_t prod = 1;
      for (auto& t : tiles)
        prod *= sch.get(t);
      QCOMPARE(prod, int64_t(24));
      QVERIFY(sch.get(tiles[2]) <= 4);
      std::vector<Value> fs(tiles.begin(), tiles.end());
      split(sch, loops[0], fs);
      QCOMPARE(maxErrorBetween(f, sch.func()), 0.0);
      QVERIFY(printFunc(sch.func()).find("T.where") == std::string::npos); // perfect: no predicate
    }
  }
  void refusals() {
    PrimFunc f = workload("matmul:M=24,N=8,K=8");
    auto [k1, m1] = scriptError(f, "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nt = "
                                   "sch.sample_perfect_tile(i, n=2, decision=[5, 5])\n");
    QCOMPARE(QString::fromStdString(k1), QString("InvalidDecisionError"));
    QVERIFY2(m1.find("decision does not tile loop 'i' of extent 24 into 2 factors") !=
                 std::string::npos,
             m1.c_str());
    auto [k2, m2] = scriptError(f, "v = sch.sample_categorical(candidates=[1, 2], probs=[1.0])\n");
    QCOMPARE(QString::fromStdString(k2), QString("ScheduleValueError"));
    auto [k3, m3] = scriptError(
        f, "v = sch.sample_categorical(candidates=[1, 2], probs=[0.5, 0.5], decision=2)\n");
    QCOMPARE(QString::fromStdString(k3), QString("InvalidDecisionError"));
    auto [k4, m4] = scriptError(
        f, "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nt = sch.sample_perfect_tile(i, "
           "n=2, max_innermost_factor=5, decision=[3, 8])\n");
    QCOMPARE(QString::fromStdString(k4),
             QString("")); // a decision is trusted beyond the sampling limit
    auto [k5, m5] =
        scriptError(f, "b = sch.get_block(\"C\")\ni, j, k = sch.get_loops(b)\nt = "
                       "sch.sample_perfect_tile(i, n=2, max_innermost_factor=5, decision=\"x\")\n");
    QCOMPARE(QString::fromStdString(k5), QString("InvalidDecisionError"));
  }
};

QTEST_APPLESS_MAIN(TestSampling)
#include "test_sampling.moc"
