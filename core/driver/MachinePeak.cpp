// The FMA-peak and bandwidth probes. 12 independent accumulator chains hide the FMA latency on
// two FMA ports; the copy uses memcpy over buffers far larger than the caches.
#include "core/driver/MachinePeak.h"

#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace loom::driver {

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

__attribute__((target("avx512f,fma"))) float fmaKernel512(long iters) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  // Stored and summed by hand: GCC 12's _mm512_reduce_add_ps trips -Wuninitialized in its header.
  float out[16];
  _mm512_storeu_ps(out, s);
  float sum = 0;
  for (float v : out) sum += v;
  return sum;
}

__attribute__((target("avx2,fma"))) float fmaKernel256(long iters) {
  __m256 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_ps(float(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  float out[8];
  __m256 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_ps(s, acc[i]);
  _mm256_storeu_ps(out, s);
  return out[0] + out[7];
}

/// Runs `body(t)` on `threads` threads at once and returns the wall time.
template <class F> double timeThreads(int threads, F&& body) {
  std::vector<std::thread> pool;
  double t0 = now();
  for (int t = 0; t < threads; ++t) pool.emplace_back([&, t] { body(t); });
  for (auto& th : pool) th.join();
  return now() - t0;
}

}  // namespace

double measureFmaPeakGflops(int threads, double seconds) {
  threads = std::max(threads, 1);
  const bool avx512 = __builtin_cpu_supports("avx512f");
  const int lanes = avx512 ? 16 : 8;
  volatile float sink = 0;
  auto run = [&](long iters) {
    return timeThreads(threads, [&](int) {
      float r = avx512 ? fmaKernel512(iters) : fmaKernel256(iters);
      sink = sink + r;
    });
  };
  // Calibrate to ~1/5 of the budget per run, then keep the best of five.
  long iters = 100000;
  double dt = run(iters);
  iters = std::max(10000L, long(double(iters) * (seconds / 5) / std::max(dt, 1e-6)));
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    double t = run(iters);
    best = std::max(best, 2.0 * lanes * 12 * double(iters) * threads / t / 1e9);
  }
  return best;
}

double measureCopyBandwidthGBs(int threads, double seconds) {
  threads = std::max(threads, 1);
  const size_t bytes = size_t(256) << 20;
  char* src = static_cast<char*>(std::aligned_alloc(64, bytes));
  char* dst = static_cast<char*>(std::aligned_alloc(64, bytes));
  if (!src || !dst) {
    std::free(src);
    std::free(dst);
    return 0;
  }
  std::memset(src, 1, bytes);
  std::memset(dst, 0, bytes);
  double best = 0, spent = 0;
  for (int rep = 0; rep < 5 && (rep < 2 || spent < seconds); ++rep) {
    size_t chunk = bytes / threads;
    double t = timeThreads(threads, [&](int k) { std::memcpy(dst + k * chunk, src + k * chunk, chunk); });
    spent += t;
    best = std::max(best, 2.0 * double(bytes) / t / 1e9);
  }
  std::free(src);
  std::free(dst);
  return best;
}

}  // namespace loom::driver
