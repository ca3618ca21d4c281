// Shared pieces of the library-comparison benchmarks: file reading, CPU-time timing, load average,
// the result check.
#pragma once
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/driver/MachinePeak.h"
#include "core/driver/Measure.h"

namespace loom::bench {

/// The largest |got - want| over the `n` values, relative to the largest |want| (so near-zero
/// outputs do not blow it up); NaN in `got` gives NaN.
inline double maxScaledError(const float* got, const float* want, size_t n) {
  double worst = 0, scale = 0;
  for (size_t i = 0; i < n; ++i) scale = std::max(scale, double(std::fabs(want[i])));
  for (size_t i = 0; i < n; ++i) {
    double e = std::fabs(double(got[i]) - double(want[i])) / std::max(scale, 1e-30);
    if (!(e <= worst)) worst = e;
  }
  return worst;
}

inline std::string readFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::cerr << "bench: cannot open " << path << "\n";
    std::exit(2);
  }
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline double msSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

inline double cpuMs() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec * 1e-6;
}

inline int g_threads = 1;

/// Like driver::timeCalls, but by process CPU time divided by the thread count: the time the work
/// itself took (waiting and spinning included) even while other processes share the cores.
inline driver::TimingStats timeCallsCpu(const std::function<void()>& fn, int repeat, double minRepeatMs) {
  driver::TimingStats s;
  double t0 = cpuMs();
  fn();
  s.number = std::max(1, int(minRepeatMs / std::max(cpuMs() - t0, 1e-4)));
  s.repeat = std::max(1, repeat);
  for (int r = 0; r < s.repeat; ++r) {
    double t = cpuMs();
    for (int i = 0; i < s.number; ++i) fn();
    s.samplesMs.push_back((cpuMs() - t) / s.number / g_threads);
  }
  std::vector<double> sorted = s.samplesMs;
  std::sort(sorted.begin(), sorted.end());
  s.medianMs = sorted[sorted.size() / 2];
  s.minMs = sorted.front();
  return s;
}

/// Loom's and the library's timings taken side by side: per side the sample set with the best
/// median over all rounds, and the fastest single sample.
struct SideBySide {
  driver::TimingStats best[2];
  double fastest[2] = {1e30, 1e30};
};

/// Times `loom` and `library` interleaved for `rounds` rounds, so both see the same machine state.
inline SideBySide timeSideBySide(const std::function<void()>& loom,
                                 const std::function<void()>& library, bool cpuTime, int repeat,
                                 double minRepeatMs, int rounds = 3) {
  SideBySide r;
  auto timer = [cpuTime](const std::function<void()>& fn, int n, double minMs) {
    return cpuTime ? timeCallsCpu(fn, n, minMs) : driver::timeCalls(fn, n, minMs);
  };
  for (int round = 0; round < rounds; ++round) {
    const std::function<void()>* fns[2] = {&loom, &library};
    for (int side = 0; side < 2; ++side) {
      driver::TimingStats t = timer(*fns[side], repeat, minRepeatMs);
      if (round == 0 || t.medianMs < r.best[side].medianMs) r.best[side] = t;
      r.fastest[side] = std::min(r.fastest[side], t.minMs);
    }
  }
  return r;
}

inline double loadAverage() {
  double l = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1) l = -1;
    std::fclose(f);
  }
  return l;
}

/// The fp32 FMA peak on `threads` threads recorded in bench/machine.json (0 when absent).
inline double recordedPeak(const std::string& sourceDir, int threads) {
  std::ifstream in(sourceDir + "/bench/machine.json");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str(), key = "\"fma_peak_gflops_" + std::to_string(threads) + "t\":";
  size_t at = text.find(key);
  return at == std::string::npos ? 0 : std::strtod(text.c_str() + at + key.size(), nullptr);
}

/// The best of a few peak measurements: other processes only ever lower it.
inline double measuredPeak(int threads) {
  double best = 0;
  for (int i = 0; i < 3; ++i) best = std::max(best, driver::measureFmaPeakGflops(threads));
  return best;
}

}  // namespace loom::bench
