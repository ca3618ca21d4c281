// Features of lowered programs and the XGBoost cost model: fixed-length rows that see the
// schedule, a model that trains and ranks held-out programs by a known cost.
#include <QtTest>
#include <algorithm>
#include <cmath>

#include "core/schedule/Primitives.h"
#include "core/topi/Workloads.h"
#include "core/tune/CostModel.h"
#include "core/tune/Features.h"
#include "core/tune/SearchStrategy.h"
#include "core/tune/SpaceGenerator.h"

using namespace loom;
using namespace loom::tune;

namespace {

size_t featureIndex(const std::string& name) {
  auto& n = featureNames();
  return size_t(std::find(n.begin(), n.end(), name) - n.begin());
}

/// Spearman rank correlation.
double spearman(const std::vector<double>& a, const std::vector<double>& b) {
  auto ranks = [](const std::vector<double>& v) {
    std::vector<size_t> idx(v.size());
    for (size_t i = 0; i < idx.size(); ++i) idx[i] = i;
    std::sort(idx.begin(), idx.end(), [&](size_t x, size_t y) { return v[x] < v[y]; });
    std::vector<double> r(v.size());
    for (size_t i = 0; i < idx.size(); ++i) r[idx[i]] = double(i);
    return r;
  };
  auto ra = ranks(a), rb = ranks(b);
  double n = double(a.size()), d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += (ra[i] - rb[i]) * (ra[i] - rb[i]);
  return 1 - 6 * d / (n * (n * n - 1));
}

} // namespace

class TestCostModel : public QObject {
  Q_OBJECT
private slots:
  void featuresSeeTheSchedule() {
    QCOMPARE(featureNames().size(), featureCount());
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=64,N=64,K=64"));
    auto plain = featuresOf(f, "llvm");
    QVERIFY(plain.has_value());
    QCOMPARE(plain->size(), featureCount());
    tir::Schedule sch(f);
    auto loops = tir::getLoops(sch, tir::getBlock(sch, "C"));
    tir::parallel(sch, loops[0]);
    auto parts = tir::split(sch, loops[1], {nullptr, int64_t(8)});
    tir::reorder(sch, {loops[2], parts[1]});
    tir::vectorize(sch, parts[1]);
    auto sched = featuresOf(sch.func(), "llvm");
    QVERIFY(sched.has_value());
    QCOMPARE((*plain)[featureIndex("parallel_loops")], 0.0f);
    QVERIFY((*sched)[featureIndex("parallel_loops")] > 0);
    QCOMPARE((*sched)[featureIndex("parallel_extent")], float(std::log2(65.0)));
    QCOMPARE((*sched)[featureIndex("max_lanes")], float(std::log2(9.0)));
    QVERIFY((*sched)[featureIndex("vector_loads")] > 0);
    // The same multiply-adds are counted either way (vector lanes included).
    QCOMPARE((*sched)[featureIndex("float_mul")], (*plain)[featureIndex("float_mul")]);
    QCOMPARE((*plain)[featureIndex("float_mul")], float(std::log2(1.0 + 64.0 * 64 * 64)));
  }

  void untrainedPredictsZero() {
    auto m = makeXGBoostModel();
    QCOMPARE(m->trainedOn(), size_t(0));
    std::vector<std::vector<float>> x(3, std::vector<float>(featureCount(), 1.0f));
    QCOMPARE(m->predict(x), (std::vector<double>{0, 0, 0}));
    // Only failures: still untrained (no label scale).
    m->update({x[0]}, {INFINITY});
    QCOMPARE(m->trainedOn(), size_t(0));
  }

  void trainsAndRanksHeldOut() {
    // Candidates of the real space with a known cost: the model must learn to rank them.
    tir::PrimFunc f = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=64,N=64,K=64"));
    SpaceGenerator gen = SpaceGenerator::defaultCpu();
    std::vector<std::vector<float>> x;
    std::vector<double> cost;
    size_t par = featureIndex("parallel_extent"), inner = featureIndex("innermost_extent"),
           lanes = featureIndex("max_lanes"), allocs = featureIndex("alloc_bytes");
    for (uint64_t seed = 1; x.size() < 120 && seed < 400; ++seed) {
      auto p = gen.sample(f, seed);
      if (!p) continue;
      auto c = makeCandidate(std::move(*p), "llvm");
      if (!c) continue;
      auto& v = c->features;
      x.push_back(v);
      cost.push_back(10.0 / (1 + v[par]) + 3.0 / (1 + v[lanes]) + 0.3 * v[inner] + 0.2 * v[allocs] + 1);
    }
    QVERIFY(x.size() >= 100);
    size_t nTrain = x.size() * 2 / 3;
    std::vector<std::vector<float>> xt(x.begin(), x.begin() + long(nTrain)), xh(x.begin() + long(nTrain), x.end());
    std::vector<double> tt(cost.begin(), cost.begin() + long(nTrain)), th(cost.begin() + long(nTrain), cost.end());
    tt[0] = INFINITY; // a failed measurement is part of the data
    auto m = makeXGBoostModel();
    m->update(xt, tt);
    QCOMPARE(m->trainedOn(), nTrain);
    std::vector<double> pred = m->predict(xh);
    std::vector<double> negTime;
    for (double t : th) negTime.push_back(-t);
    double rho = spearman(pred, negTime);
    QVERIFY2(rho > 0.7, qPrintable(QString("rank correlation %1").arg(rho)));
  }
};

QTEST_APPLESS_MAIN(TestCostModel)
#include "test_cost_model.moc"
