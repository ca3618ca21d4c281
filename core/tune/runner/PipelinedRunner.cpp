// PipelinedRunner::run: a whole list measured through submit / next, results in candidate order.
#include "core/tune/Measure.h"

#include "core/support/Error.h"

namespace loom::tune {

std::vector<MeasureResult> PipelinedRunner::run(const std::vector<MeasureCandidate>& candidates,
                                                const MeasureOptions& options,
                                                const std::function<void(size_t, const MeasureResult&)>& onResult) {
  LOOM_ICHECK(outstanding() == 0) << "PipelinedRunner::run with candidates of a pipelined loop still out";
  for (size_t i = 0; i < candidates.size(); ++i) submit(i, candidates[i], options);
  std::vector<MeasureResult> results(candidates.size());
  while (auto done = next()) {
    results[done->first] = done->second;
    if (onResult) onResult(size_t(done->first), done->second);
  }
  return results;
}

} // namespace loom::tune
