// Measures the machine's floor: fp32 FMA peak and copy bandwidth, against which kernels report.
#pragma once

namespace loom::driver {

/// The best fp32 FMA rate over a few short runs, in GFLOP/s, on `threads` threads (AVX-512 when
/// the CPU has it, else AVX2+FMA). `seconds` bounds the time spent.
double measureFmaPeakGflops(int threads, double seconds = 0.3);

/// The best memcpy bandwidth (bytes read + written per second), in GB/s, on `threads` threads.
double measureCopyBandwidthGBs(int threads, double seconds = 0.5);

}  // namespace loom::driver
