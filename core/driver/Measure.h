// Timing a compiled function the way TVM's time_evaluator does: `repeat` samples of `number` calls.
#pragma once
#include <functional>
#include <vector>

namespace loom::driver {

struct TimingStats {
  std::vector<double> samplesMs;  ///< per-call time of each repeat
  double medianMs = 0, minMs = 0, meanMs = 0;
  int repeat = 0, number = 0;     ///< samples taken, calls per sample
};

/// Calls `fn` once to warm up, picks `number` so one sample lasts at least `minRepeatMs`, then
/// takes `repeat` samples.
TimingStats timeCalls(const std::function<void()>& fn, int repeat, double minRepeatMs = 50);

}  // namespace loom::driver
