// The "__datadep" node fields of a data-dependent call.
#include "core/driver/DataDependentPlan.h"

#include "core/graph/DataDependent.h"
#include "core/graph/Op.h"

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

}  // namespace loom::driver
