// Postprocessor rewrite-reduction-init (MetaSchedule's RewriteReductionBlock, for the blocks the
// register-tiled rules mark): the init of the reduction moves out of the reduction loops
// (decompose_reduction at the outermost loop a reduce iter var depends on), its innermost loop
// vectorized and the others unrolled, so the tile starts from zeroed registers. Done after the
// design, on the final loop structure, because decompose_reduction drops unit loops: how many
// loops the init gets depends on the sampled tile sizes.
#include <set>

#include "core/schedule/Primitives.h"
#include "core/tir/Visitor.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/RegisterTiling.h"
#include "core/tune/rule/RuleUtil.h"

namespace loom::tune {

using namespace tir;

namespace {

class VarUse : public IRVisitor {
public:
  std::set<const VarNode*> used;
  using IRVisitor::visit;
  void visit(const VarNode* n) override { used.insert(n); }
};

/// Index (among the block's loops) of the outermost loop a reduce iter var's binding uses; -1 if none.
int firstReductionLoop(const Schedule& sch, const BlockNode* b) {
  const BlockRealizeNode* realize = sch.realizeOf(b);
  if (!realize) return -1;
  VarUse u;
  for (size_t i = 0; i < b->iterVars.size() && i < realize->iterValues.size(); ++i)
    if (b->iterVars[i].iterType != IterType::DataPar) u.visitExpr(realize->iterValues[i]);
  auto loops = loopsAbove(sch, b);
  for (size_t i = 0; i < loops.size(); ++i)
    if (u.used.count(loops[i]->loopVar.get())) return int(i);
  return -1;
}

} // namespace

void rewriteReductionInit(Schedule& sch) {
  for (const std::string& name : rule::blockNames(sch)) {
    auto found = findBlocks(sch.func(), name);
    if (found.size() != 1 || !found[0]->annotations.count(rule::kDecomposeReductionKey)) continue;
    int at = firstReductionLoop(sch, found[0]);
    BlockRV block = getBlock(sch, name);
    unannotate(sch, block, rule::kDecomposeReductionKey);
    if (at < 0) continue;
    Schedule trial = sch;
    try {
      BlockRV init = decomposeReduction(trial, block, getLoops(trial, block)[size_t(at)]);
      std::vector<LoopRV> loops = getLoops(trial, init);
      if (loops.size() > size_t(at)) {
        for (size_t i = size_t(at); i + 1 < loops.size(); ++i) unroll(trial, loops[i]);
        if (constIntValue(trial.get(loops.back())->extent).value_or(0) <= 64) vectorize(trial, loops.back());
      }
    } catch (const ScheduleError&) {
      continue; // the init stays in the block: still correct
    }
    sch = std::move(trial);
  }
}

} // namespace loom::tune
