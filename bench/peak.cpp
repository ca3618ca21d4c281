// Measures this machine's fp32 FMA peak (1 and N threads) and copy bandwidth: the floor that every
// kernel benchmark reports itself against. Prints a JSON object; bench/machine.json keeps one run.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

double now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// 12 independent accumulator chains of 16-lane FMAs hide the FMA latency on two FMA ports.
__attribute__((target("avx512f,fma"))) float fmaKernel(long iters) {
  __m512 acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_ps(float(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  __m512 s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_ps(s, acc[i]);
  return _mm512_reduce_add_ps(s);
}

double fmaPeakGflops(int threads, long iters) {
  volatile float sink = 0;
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<std::thread> pool;
    double t0 = now();
    for (int t = 0; t < threads; ++t) pool.emplace_back([&] { sink = sink + fmaKernel(iters); });
    for (auto& th : pool) th.join();
    double dt = now() - t0;
    double flops = 2.0 * 16 * 12 * double(iters) * threads;
    best = std::max(best, flops / dt / 1e9);
  }
  return best;
}

double copyBandwidthGBs(int threads, size_t bytes) {
  char* src = static_cast<char*>(std::aligned_alloc(64, bytes));
  char* dst = static_cast<char*>(std::aligned_alloc(64, bytes));
  std::memset(src, 1, bytes);
  std::memset(dst, 0, bytes);
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) {
    std::vector<std::thread> pool;
    size_t chunk = bytes / threads;
    double t0 = now();
    for (int t = 0; t < threads; ++t)
      pool.emplace_back([&, t] { std::memcpy(dst + t * chunk, src + t * chunk, chunk); });
    for (auto& th : pool) th.join();
    double dt = now() - t0;
    best = std::max(best, 2.0 * double(bytes) / dt / 1e9);  // read + write
  }
  std::free(src);
  std::free(dst);
  return best;
}

}  // namespace

int main(int argc, char** argv) {
  int hw = int(std::thread::hardware_concurrency());
  long iters = argc > 1 ? std::atol(argv[1]) : 20000000;
  double p1 = fmaPeakGflops(1, iters);
  double pn = fmaPeakGflops(hw, iters);
  double b1 = copyBandwidthGBs(1, size_t(512) << 20);
  double bn = copyBandwidthGBs(hw, size_t(512) << 20);
  std::printf("{\n  \"threads\": %d,\n  \"fma_peak_gflops_1t\": %.1f,\n  \"fma_peak_gflops_%dt\": %.1f,\n"
              "  \"copy_bandwidth_gbs_1t\": %.1f,\n  \"copy_bandwidth_gbs_%dt\": %.1f\n}\n",
              hw, p1, hw, pn, b1, hw, bn);
  return 0;
}
