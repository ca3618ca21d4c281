// Random sequences of primitives on several workloads: meaning, trace replay and JSON round trip.
#include <nlohmann/json.hpp>
#include <random>

#include "ScheduleTestUtil.h"
#include "core/schedule/Analysis.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::tir::testing;

namespace {

/// Applies up to `steps` random primitives; refusals (ScheduleError) are part of the game, any
/// other exception fails the test.
void randomSchedule(Schedule& sch, std::mt19937& rng, int steps) {
  auto blocks = allBlocks(sch.func());
  std::vector<std::string> names;
  for (auto* b : blocks)
    if (b->name != "root") names.push_back(b->name);
  for (int s = 0; s < steps; ++s) {
    try {
      BlockRV b = getBlock(sch, names[rng() % names.size()]);
      auto loops = getLoops(sch, b);
      if (loops.empty()) continue;
      LoopRV l = loops[rng() % loops.size()];
      switch (rng() % 7) {
      case 0:
      case 1: {
        int64_t ext = constIntValue(sch.get(l)->extent).value_or(4);
        int64_t f = 1 + int64_t(rng() % std::max<int64_t>(1, ext));
        if (rng() % 2)
          split(sch, l, {nullptr, f});
        else
          split(sch, l, {f, nullptr, int64_t(1 + rng() % 2)});
        break;
      }
      case 2: {
        size_t a = rng() % loops.size();
        if (a + 1 < loops.size()) fuse(sch, {loops[a], loops[a + 1]});
        break;
      }
      case 3: {
        std::vector<LoopRV> perm = loops;
        std::shuffle(perm.begin(), perm.end(), rng);
        perm.resize(1 + rng() % perm.size());
        reorder(sch, perm);
        break;
      }
      case 4:
        parallel(sch, l);
        break;
      case 5:
        vectorize(sch, l);
        break;
      default:
        unroll(sch, l);
        break;
      }
    } catch (const ScheduleError&) {
    }
  }
}

} // namespace

class TestRandomSchedules : public QObject {
  Q_OBJECT
private slots:
  void run_data() {
    QTest::addColumn<QString>("spec");
    QTest::newRow("matmul") << "matmul:M=12,N=10,K=6";
    QTest::newRow("conv2d") << "conv2d:N=1,C=3,H=5,W=5,K=4,R=3,S=3";
    QTest::newRow("softmax") << "softmax";
    QTest::newRow("layernorm") << "layernorm";
    QTest::newRow("reduce_sum") << "reduce_sum";
    QTest::newRow("batch_matmul") << "batch_matmul";
  }
  void run() {
    QFETCH(QString, spec);
    topi::WorkloadSpec ws = topi::parseWorkloadSpec(spec.toStdString());
    // Keep the presets small so the interpreter stays fast.
    for (auto& [k, v] : ws.params)
      v = std::min<int64_t>(v, k == "N" && spec.startsWith("conv") ? 1 : 8);
    PrimFunc f = topi::buildWorkload(ws);
    std::mt19937 rng(qHash(spec));
    int changed = 0;
    for (int trial = 0; trial < 16; ++trial) {
      Schedule sch(f, trial);
      randomSchedule(sch, rng, 12);
      std::string t = sch.trace().str();
      changed += !structuralEqual(f, sch.func());
      if (qEnvironmentVariableIsSet("LOOM_SHOW")) qWarning("%s", t.c_str());
      // Meaning.
      double err = maxErrorBetween(f, sch.func(), trial);
      QVERIFY2(err < 1e-4, (t + "error " + std::to_string(err)).c_str());
      // The printed trace replays to the same function; so does its JSON form.
      Schedule again(f);
      ScriptResult r = runScript(again, t);
      QVERIFY2(r.ok, (r.message + "\n" + t).c_str());
      QVERIFY2(structuralEqual(again.func(), sch.func()), t.c_str());
      Schedule fromJson(f);
      Trace::fromJson(nlohmann::json::parse(sch.trace().toJson().dump())).apply(fromJson);
      QVERIFY(structuralEqual(fromJson.func(), sch.func()));
      Schedule simplified(f);
      sch.trace().simplified().apply(simplified);
      QVERIFY(structuralEqual(simplified.func(), sch.func()));
    }
    QVERIFY(changed > 0);
  }
};

QTEST_APPLESS_MAIN(TestRandomSchedules)
#include "test_random_schedules.moc"
