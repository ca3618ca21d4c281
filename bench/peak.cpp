// Measures this machine's fp32 FMA peak (1 and N threads) and copy bandwidth: the floor that every
// kernel benchmark reports itself against. Prints JSON; bench/machine.json keeps one quiet run.
#include <cstdio>
#include <thread>

#include "core/driver/MachinePeak.h"

int main() {
  using namespace loom::driver;
  int hw = int(std::thread::hardware_concurrency());
  std::printf("{\n  \"threads\": %d,\n  \"fma_peak_gflops_1t\": %.1f,\n  \"fma_peak_gflops_%dt\": %.1f,\n"
              "  \"copy_bandwidth_gbs_1t\": %.1f,\n  \"copy_bandwidth_gbs_%dt\": %.1f\n}\n",
              hw, measureFmaPeakGflops(1, 1.0), hw, measureFmaPeakGflops(hw, 1.0),
              measureCopyBandwidthGBs(1), hw, measureCopyBandwidthGBs(hw));
  return 0;
}
