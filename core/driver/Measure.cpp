// Timing of compiled functions: warm-up, calibrated inner count, repeated samples.
#include "core/driver/Measure.h"

#include <algorithm>
#include <chrono>
#include <numeric>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace loom::driver {

namespace {
double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

TimingStats timeCalls(const std::function<void()>& fn, int repeat, double minRepeatMs,
                      const std::function<void()>& beforeEachCall) {
  TimingStats s;
  if (beforeEachCall) beforeEachCall();
  auto t0 = std::chrono::steady_clock::now();
  fn();
  double once = std::max(msSince(t0), 1e-4);
  s.number = std::max(1, int(minRepeatMs / once));
  s.repeat = std::max(1, repeat);
  for (int r = 0; r < s.repeat; ++r) {
    if (!beforeEachCall) {
      auto t = std::chrono::steady_clock::now();
      for (int i = 0; i < s.number; ++i) fn();
      s.samplesMs.push_back(msSince(t) / s.number);
      continue;
    }
    double total = 0;
    for (int i = 0; i < s.number; ++i) {
      beforeEachCall();
      auto t = std::chrono::steady_clock::now();
      fn();
      total += msSince(t);
    }
    s.samplesMs.push_back(total / s.number);
  }
  std::vector<double> sorted = s.samplesMs;
  std::sort(sorted.begin(), sorted.end());
  size_t n = sorted.size();
  s.medianMs = n % 2 ? sorted[n / 2] : 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]);
  s.minMs = sorted.front();
  s.meanMs = std::accumulate(sorted.begin(), sorted.end(), 0.0) / double(n);
  return s;
}

void flushFromCaches(const void* data, size_t bytes) {
#if defined(__x86_64__) || defined(__i386__)
  const char* p = static_cast<const char*>(data);
  constexpr size_t kLine = 64;
  for (size_t off = 0; off < bytes; off += kLine) _mm_clflush(p + off);
  if (bytes) _mm_clflush(p + bytes - 1);
  _mm_mfence();
#else
  (void)data;
  (void)bytes;
#endif
}

}  // namespace loom::driver
