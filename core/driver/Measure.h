// Timing a compiled function the way TVM's time_evaluator does: `repeat` samples of `number` calls.
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

namespace loom::driver {

struct TimingStats {
  std::vector<double> samplesMs;  ///< per-call time of each repeat
  double medianMs = 0, minMs = 0, meanMs = 0;
  int repeat = 0, number = 0;     ///< samples taken, calls per sample
};

/// Calls `fn` once to warm up, picks `number` so one sample lasts at least `minRepeatMs`, then
/// takes `repeat` samples. With `beforeEachCall`, that runs before every call of a sample and is
/// not timed (each call is timed on its own and the calls' times summed): e.g. a cache flush.
TimingStats timeCalls(const std::function<void()>& fn, int repeat, double minRepeatMs = 50,
                      const std::function<void()>& beforeEachCall = {});

/// Evicts the `bytes` at `data` from every level of the CPU caches (clflush per line on x86; no-op
/// elsewhere), so the next access reads memory, as a model's weights are read when the model's
/// data does not fit in the cache.
void flushFromCaches(const void* data, size_t bytes);

}  // namespace loom::driver
