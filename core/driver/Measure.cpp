// Timing of compiled functions: warm-up, calibrated inner count, repeated samples.
#include "core/driver/Measure.h"

#include <algorithm>
#include <chrono>
#include <numeric>

namespace loom::driver {

namespace {
double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

TimingStats timeCalls(const std::function<void()>& fn, int repeat, double minRepeatMs) {
  TimingStats s;
  auto t0 = std::chrono::steady_clock::now();
  fn();
  double once = std::max(msSince(t0), 1e-4);
  s.number = std::max(1, int(minRepeatMs / once));
  s.repeat = std::max(1, repeat);
  for (int r = 0; r < s.repeat; ++r) {
    auto t = std::chrono::steady_clock::now();
    for (int i = 0; i < s.number; ++i) fn();
    s.samplesMs.push_back(msSince(t) / s.number);
  }
  std::vector<double> sorted = s.samplesMs;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  s.medianMs = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  s.minMs = sorted.front();
  s.meanMs = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(n);
  return s;
}

}  // namespace loom::driver
