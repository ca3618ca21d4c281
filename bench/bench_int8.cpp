// Benchmark: the machine's int8 multiply-add peak (x86 byte dot products) and the rate of Loom's
// int8 GEMM and conv kernels against it, in one run.
//
// The peak: 12 independent accumulator chains of the instructions the int8 kernels use (the
// products independent of the chains, as in a GEMM's inner loop),
// vpdpbusd (AVX-512 VNNI: 64 multiply-adds each) where the CPU has it, else vpmaddubsw +
// vpmaddwd + vpaddd (AVX2: 32 multiply-adds per triple), on 1 and 2 threads (best of 5 runs).
// The kernels: a QDQ graph (u8 data, 7-bit per-channel s8 weights as ORT's reduce_range, u8
// output) of one dense [M, K] x [K, N] and one 3x3 conv compiled by loom::driver::compileModel
// at opt level 3 and run by the graph executor (requantize fused; one op = one multiply-add = 2
// ops in GOP/s). Prints JSON with the load average.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <thread>
#include <vector>

#include "core/driver/CompileModel.h"
#include "core/graph/Op.h"

using namespace loom;

namespace {

double now() { return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

__attribute__((target("avx2"))) int avx2Kernel(long iters) {
  __m256i acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm256_set1_epi32(i);
  const __m256i a = _mm256_set1_epi8(3), b = _mm256_set1_epi8(-2), ones = _mm256_set1_epi16(1);
  for (long it = 0; it < iters; ++it)
    for (int i = 0; i < 12; ++i) {
      // An empty asm that "changes" the operand: the compiler can neither hoist the products out
      // of the loop nor share them between chains, and no instruction is added.
      __m256i x = a;
      asm volatile("" : "+x"(x));
      __m256i p = _mm256_maddubs_epi16(x, b);
      acc[i] = _mm256_add_epi32(acc[i], _mm256_madd_epi16(p, ones));
    }
  __m256i s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm256_add_epi32(s, acc[i]);
  return _mm256_extract_epi32(s, 0);
}

__attribute__((target("avx512f,avx512vnni"))) int vnniKernel(long iters) {
  __m512i acc[12];
  for (int i = 0; i < 12; ++i) acc[i] = _mm512_set1_epi32(i);
  __m512i a = _mm512_set1_epi8(3), b = _mm512_set1_epi8(-2);
  for (long it = 0; it < iters; ++it) {
    // vpdpbusd accumulates, so nothing can be hoisted; the empty asm (once per iteration, not per
    // chain as in the AVX2 kernel: there it cost a register copy per vpdpbusd, and the peak read
    // 794 GOP/s on one Zen 5 thread where the instruction alone reaches 990, below Loom's GEMM)
    // only keeps the compiler from folding the loop.
    asm volatile("" : "+v"(a), "+v"(b));
    for (int i = 0; i < 12; ++i) acc[i] = _mm512_dpbusd_epi32(acc[i], a, b);
  }
  __m512i s = acc[0];
  for (int i = 1; i < 12; ++i) s = _mm512_add_epi32(s, acc[i]);
  int out[16];
  _mm512_storeu_si512(out, s);
  return out[0];
}

/// Best int8 multiply-add rate (GOP/s, 2 ops per multiply-add) on `threads` threads.
double int8Peak(int threads, bool vnni) {
  volatile int sink = 0;
  const double macsPerIter = vnni ? 12.0 * 64 : 12.0 * 32;
  auto run = [&](long iters) {
    std::vector<std::thread> pool;
    double t0 = now();
    for (int t = 0; t < threads; ++t) pool.emplace_back([&] { sink = sink + (vnni ? vnniKernel(iters) : avx2Kernel(iters)); });
    for (auto& th : pool) th.join();
    return now() - t0;
  };
  long iters = 100000;
  double dt = run(iters);
  iters = std::max(10000L, long(double(iters) * 0.3 / std::max(dt, 1e-6)));
  double best = 0;
  for (int rep = 0; rep < 5; ++rep) best = std::max(best, 2 * macsPerIter * double(iters) * threads / run(iters) / 1e9);
  return best;
}

runtime::NDArray randomArray(const std::vector<int64_t>& shape, runtime::DType t, int lo, int hi, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, t);
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> u(lo, hi);
  for (int64_t i = 0; i < a.numel(); ++i) {
    if (t.code == runtime::DType::UInt) a.as<uint8_t>()[i] = uint8_t(u(rng));
    else a.as<int8_t>()[i] = int8_t(u(rng));
  }
  return a;
}

graph::Expr scalar(double v, DataType t) { return graph::makeScalar(v, t); }

/// Median over `runs` of the mean time of runs of `ex` in ms (at least 100 ms of runs each).
double timeRuns(runtime::GraphExecutor& ex, int runs) {
  ex.run();
  std::vector<double> ms;
  for (int r = 0; r < runs; ++r) {
    int n = 0;
    double t0 = now(), t = t0;
    do {
      ex.run();
      ++n;
      t = now();
    } while (t - t0 < 0.1);
    ms.push_back((t - t0) * 1e3 / n);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

/// quantize(op(dequantize(x), dequantize(w))) compiled and timed; returns GOP/s.
double qdqKernel(const std::vector<int64_t>& xshape, const std::vector<int64_t>& wshape, bool conv, double macs) {
  const DataType u8 = DataType::UInt(8), i8 = DataType::Int(8), f32 = DataType::Float(32);
  graph::Var x = graph::makeVar("x", graph::tensorType(xshape, u8));
  const int64_t o = wshape[0];
  runtime::NDArray scales = runtime::NDArray::empty({o}, runtime::DType::f32());
  for (int64_t i = 0; i < o; ++i) scales.as<float>()[i] = 0.001f * float(1 + i % 7);
  graph::Expr dx = graph::makeCall("qnn.dequantize", {x, scalar(0.02, f32), scalar(128, u8)});
  graph::Expr dw = graph::makeCall(
      "qnn.dequantize",
      {graph::makeConstant(randomArray(wshape, runtime::DType{runtime::DType::Int, 8, 1}, -64, 63, 2)), graph::makeConstant(scales),
       scalar(0, i8)},
      {{"axis", int64_t(0)}});
  graph::Expr y = conv ? graph::makeCall("nn.conv2d", {dx, dw}, {{"padding", std::vector<int64_t>{1, 1, 1, 1}}})
                       : graph::makeCall("nn.dense", {dx, dw});
  graph::Expr q = graph::makeCall("qnn.quantize", {y, scalar(0.1, f32), scalar(3, u8)}, {{"out_dtype", u8}});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x}, q);
  auto ex = driver::createExecutor(driver::compileModel(m, "llvm"));
  ex->setInput(0, randomArray(xshape, runtime::DType{runtime::DType::UInt, 8, 1}, 0, 255, 1));
  return 2 * macs / (timeRuns(*ex, 5) * 1e-3) / 1e9;
}

}  // namespace

int main(int argc, char** argv) {
  const int64_t M = argc > 1 ? std::atoll(argv[1]) : 256, K = argc > 2 ? std::atoll(argv[2]) : 1024,
                N = argc > 3 ? std::atoll(argv[3]) : 1024;
  const bool vnni = __builtin_cpu_supports("avx512vnni");
  double load[3] = {0, 0, 0};
  if (getloadavg(load, 3) < 0) load[0] = -1;
  const double peak1 = int8Peak(1, vnni), peak2 = int8Peak(2, vnni);
  const char* threads = std::getenv("LOOM_NUM_THREADS");
  const double gemm = qdqKernel({M, K}, {N, K}, false, double(M) * double(N) * double(K));
  // A ResNet-18 stage-3 conv: 256 -> 256 channels, 3x3, 14x14.
  const double conv = qdqKernel({1, 256, 14, 14}, {256, 256, 3, 3}, true, 256.0 * 256 * 9 * 14 * 14);
  const double kernelPeak = threads && std::atoi(threads) == 1 ? peak1 : peak2;
  std::printf("{\n  \"instructions\": \"%s\",\n  \"int8_peak_gops_1t\": %.1f,\n  \"int8_peak_gops_2t\": %.1f,\n"
              "  \"gemm\": \"%lldx%lldx%lld\",\n  \"gemm_gops\": %.1f,\n  \"gemm_fraction_of_peak\": %.3f,\n"
              "  \"conv_3x3_256_14x14_gops\": %.1f,\n  \"conv_fraction_of_peak\": %.3f,\n"
              "  \"kernel_threads\": \"%s\",\n  \"load_average\": [%.2f, %.2f, %.2f]\n}\n",
              vnni ? "vpdpbusd (AVX-512 VNNI)" : "vpmaddubsw+vpmaddwd+vpaddd (AVX2)", peak1, peak2, (long long)M,
              (long long)K, (long long)N, gemm, gemm / kernelPeak, conv, conv / kernelPeak, threads ? threads : "default",
              load[0], load[1], load[2]);
  return 0;
}
