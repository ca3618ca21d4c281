// Shared pieces of the library-comparison benchmarks: file reading, CPU-time timing, load average.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <functional>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "core/driver/Measure.h"

namespace loom::bench {

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

inline double loadAverage() {
  double l = -1;
  if (FILE* f = std::fopen("/proc/loadavg", "r")) {
    if (std::fscanf(f, "%lf", &l) != 1) l = -1;
    std::fclose(f);
  }
  return l;
}

}  // namespace loom::bench
