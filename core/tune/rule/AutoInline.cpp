// Rule auto-inline: elementwise producers into their consumers (compute_inline), elementwise
// output stages into their single spatial producer (reverse_compute_inline).
#include "core/schedule/Primitives.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

namespace {

using namespace tir;

class AutoInline : public ScheduleRule {
public:
  std::string name() const override { return "auto-inline"; }

  void apply(Schedule& sch, RuleContext&) const override {
    for (bool changed = true; changed;) {
      changed = false;
      for (const std::string& name : rule::blockNames(sch)) {
        auto found = findBlocks(sch.func(), name);
        if (found.size() != 1) continue;
        const BlockNode* b = found[0];
        if (rule::isReduction(b) || b->init.defined() || rule::hasConditional(b)) continue;
        if (!rule::writesOutput(sch, b)) {
          if (consumersOf(sch, b).empty()) continue;
          if (tryApply(sch, [&](Schedule& s) { computeInline(s, getBlock(s, name)); })) changed = true;
        } else {
          auto producers = producersOf(sch, b);
          if (producers.size() != 1 || rule::isReduction(producers[0]) || producers[0]->init.defined())
            continue;
          if (tryApply(sch, [&](Schedule& s) { reverseComputeInline(s, getBlock(s, name)); })) changed = true;
        }
      }
    }
  }

private:
  /// Applies `f` to a copy first, so a refusal leaves no lookups behind in the trace.
  template <class F> static bool tryApply(Schedule& sch, F&& f) {
    Schedule trial = sch;
    try {
      f(trial);
    } catch (const ScheduleError&) {
      return false;
    }
    sch = std::move(trial);
    return true;
  }
};

} // namespace

std::shared_ptr<ScheduleRule> makeAutoInline() { return std::make_shared<AutoInline>(); }

} // namespace loom::tune
