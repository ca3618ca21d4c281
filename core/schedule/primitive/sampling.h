// Sampling primitives (the tuner's random choices): sample_categorical, sample_perfect_tile,
// sample_compute_location.
#pragma once
#include <optional>
#include <vector>

#include "core/schedule/Schedule.h"

namespace loom::tir {

/// A decision that does not fit its instruction (index out of range, tiles not multiplying to
/// the extent, ...).
LOOM_DECLARE_ERROR(InvalidDecisionError, ScheduleError);

/// One of `candidates`, drawn with probabilities `probs` (or `decision`, an index, when given).
ExprRV sampleCategorical(Schedule& sch, const std::vector<int64_t>& candidates,
                         const std::vector<double>& probs,
                         std::optional<int64_t> decision = std::nullopt);
/// `n` factors whose product is the (constant) extent of `loop`, the innermost at most
/// `maxInnermostFactor` (0: no limit), drawn uniformly among such tilings (or `decision`).
std::vector<ExprRV> samplePerfectTile(Schedule& sch, const LoopRV& loop, int n,
                                      int64_t maxInnermostFactor = 16,
                                      std::optional<std::vector<int64_t>> decision = std::nullopt);

/// A loop at which `block` can be computed (compute_at succeeds there), drawn uniformly among
/// the loops of its first consumer from the outermost down to the deepest loop enclosing every
/// consumer and the deepest loop of spatial iter vars only (or `decision`: that loop's depth,
/// 0 for the outermost). Unlike TVM there is no "root"/"inline" mark (Loom has no special loop
/// RVs): a tuner decides whether to move the block at all with sample_categorical. Throws
/// ScheduleValueError when the block has no consumer or no such loop exists.
LoopRV sampleComputeLocation(Schedule& sch, const BlockRV& block,
                             std::optional<int64_t> decision = std::nullopt);
/// The depths (0: outermost loop of the first consumer) of the loops sample_compute_location
/// draws from, in order, and the loops themselves.
std::vector<std::pair<int64_t, const ForNode*>> computeLocationCandidates(const Schedule& sch,
                                                                          const BlockRV& block);

void registerSamplingInstructions();

} // namespace loom::tir
