// Every workload preset under a family of generic schedules (each block's innermost loop split
// by 3, 4 or 5, the inner part vectorized or unrolled, the outermost loop parallel): lowering
// must keep the meaning, and vector loops must only fall back where the schedule asks for
// something the vector form cannot say.
#include <QtTest>

#include "core/schedule/Analysis.h"
#include "core/schedule/Primitives.h"
#include "core/schedule/Schedule.h"
#include "core/topi/Workloads.h"
#include "core/transform/Pipeline.h"
#include "tests/transform/Meaning.h"

using namespace loom;
using namespace loom::tir;
using namespace loom::transform;
using namespace loom::transform::testing;

namespace {
/// Applies generic schedule `variant` (0-5) to every block of `f`.
PrimFunc genericSchedule(const PrimFunc& f, int variant) {
  Schedule sch(f);
  for (const BlockNode* b : allBlocks(sch.func())) {
    if (b->name == "root") continue;
    BlockRV brv = getBlock(sch, b->name);
    auto loops = getLoops(sch, brv);
    if (loops.empty()) continue;
    int64_t factor = variant % 3 + 3;
    auto parts = split(sch, loops.back(), {Value(), Value(factor)});
    bool reduceInner = sch.get(brv)->iterVars.back().iterType == IterType::CommReduce;
    if (variant < 3 && !reduceInner) vectorize(sch, parts[1]);
    else unroll(sch, parts[1]);
    if (variant % 2 == 0 && loops.size() > 1) parallel(sch, loops[0]);
  }
  return sch.func();
}
}  // namespace

class TestGenericSchedules : public QObject {
  Q_OBJECT
private slots:
  void everyPresetEverySchedule() {
    int runs = 0;
    for (const topi::Workload& w : topi::allWorkloads()) {
      topi::ParamMap small;
      for (auto& p : w.params) small[p.name] = std::max(p.minValue, std::min<int64_t>(p.defaultValue, 7));
      topi::WorkloadSpec spec;
      try {
        spec = topi::makeWorkloadSpec(w.name, small);
        topi::buildWorkload(spec);
      } catch (const topi::WorkloadError&) {
        spec = topi::makeWorkloadSpec(w.name);
      }
      PrimFunc f = topi::buildWorkload(spec);
      for (int variant = 0; variant < 6; ++variant) {
        std::string where = spec.str() + " variant " + std::to_string(variant);
        PrimFunc s = genericSchedule(f, variant);
        PassContext ctx;
        PrimFunc g = lower(s, ctx);
        std::string d = meaningDiff(s, g, 1e-5, 1);
        QVERIFY2(d.empty(), (where + ": " + d).c_str());
        QCOMPARE(countLoops(g, ForKind::Vectorized) + countLoops(g, ForKind::Unrolled), 0);
        // Split tails and padding are peeled: no vector or unroll loop falls back.
        std::string notes;
        for (auto& n : ctx.diagnostics) notes += n.str() + "\n";
        QVERIFY2(ctx.diagnostics.empty(), (where + ":\n" + notes).c_str());
        ++runs;
      }
    }
    QVERIFY(runs >= 60);
  }
};

QTEST_APPLESS_MAIN(TestGenericSchedules)
#include "test_generic_schedules.moc"
