// The "__datadep" node fields of a data-dependent call.
#include "core/driver/DataDependentPlan.h"

#include <map>

#include "core/graph/DataDependent.h"
#include "core/graph/Op.h"
#include "core/schedule/ScheduleError.h"
#include "core/support/Error.h"
#include "core/schedule/primitive/get_block_loop.h"
#include "core/schedule/primitive/reduction.h"
#include "core/tir/Visitor.h"

namespace loom::driver {

nlohmann::json dataDependentNodeJson(const graph::CallNode& call) {
  runtime::datadep::Attrs a = graph::dataDependentAttrs(call);
  nlohmann::json attrs = {{"axis", a.axis},
                          {"has_axis", int64_t(a.hasAxis)},
                          {"largest", int64_t(a.largest)},
                          {"sorted", int64_t(a.sorted)},
                          {"center_point_box", a.centerPointBox},
                          {"has_score_threshold", int64_t(a.hasScoreThreshold)}};
  graph::Dim bound = graph::dataDependentBound(call);
  return {{"op", graph::dataDependentRuntimeOp(call)},
          {"attrs", attrs},
          {"symbol", *graph::dataDependentSymbol(call)},
          {"bound", bound.str()}};
}

std::set<std::string> dataDependentSymbols(const std::string& graphJson) {
  std::set<std::string> out;
  nlohmann::json j = nlohmann::json::parse(graphJson);
  for (const auto& n : j.at("nodes"))
    if (n.value("func", "") == "__datadep") out.insert(n.at("symbol").get<std::string>());
  return out;
}

void refuseDataDependentNodes(const std::string& graphJson, const std::string& target) {
  nlohmann::json j = nlohmann::json::parse(graphJson);
  for (const auto& n : j.at("nodes"))
    if (n.value("func", "") == "__datadep")
      LOOM_THROW(UnsupportedError) << "node '" << n.value("name", "") << "' (" << n.value("op", "")
                                   << ") has a data-dependent output shape (" << n.value("symbol", "")
                                   << "); such nodes run on the host only, not on target '" << target
                                   << "' (compile for llvm)";
}

tir::PrimFunc hoistReductionInits(const tir::PrimFunc& f) {
  // Each reduction block (one with an init) and the loop vars its reduce iter vars are bound to.
  std::map<std::string, std::set<const tir::VarNode*>> reductions;
  tir::postOrderVisit(f->body, [&](const tir::IRNode* x) {
    if (x->nodeKind != tir::NodeKind::BlockRealize) return;
    auto* r = static_cast<const tir::BlockRealizeNode*>(x);
    const tir::BlockNode* b = r->block.get();
    if (!b->init.defined()) return;
    std::set<const tir::VarNode*>& vars = reductions[b->name];
    for (size_t i = 0; i < b->iterVars.size() && i < r->iterValues.size(); ++i) {
      tir::IterType t = b->iterVars[i].iterType;
      if (t != tir::IterType::CommReduce && t != tir::IterType::Ordered) continue;
      tir::postOrderVisit(r->iterValues[i], [&](const tir::IRNode* v) {
        if (v->nodeKind == tir::NodeKind::Var) vars.insert(static_cast<const tir::VarNode*>(v));
      });
    }
  });
  if (reductions.empty()) return f;
  tir::Schedule sch(f);
  for (const auto& [name, vars] : reductions) {
    if (vars.empty()) continue;
    try {
      tir::BlockRV block = tir::getBlock(sch, name);
      for (const tir::LoopRV& loop : tir::getLoops(sch, block))
        if (vars.count(sch.get(loop)->loopVar.get())) {
          tir::decomposeReduction(sch, block, loop);
          break;
        }
    } catch (const tir::ScheduleError&) {
      // Left as it is (e.g. a reduce loop fused with a spatial one).
    }
  }
  return sch.func();
}

}  // namespace loom::driver
