// Sampling primitives (the tuner's random choices): sample_categorical, sample_perfect_tile.
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

void registerSamplingInstructions();

} // namespace loom::tir
