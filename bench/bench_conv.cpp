// Benchmark: Loom's scheduled ResNet 3x3 conv2d against oneDNN's convolution, side by side in one run.
//
// The layer: N=1, C=64, H=W=56, K=64, 3x3, pad 1, stride 1, fp32. oneDNN picks its own layouts
// (format_tag::any); the reorders into and out of them happen outside the timed region. Loom's
// function takes NCHW data and KCRS weights and its time includes everything it does (padding,
// weight packing). Prints both GFLOP/s, their ratio and the fraction of the FMA peak measured in
// the same run.
#include <dnnl.hpp>

#include <dlfcn.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/BenchCommon.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/MachinePeak.h"
#include "core/driver/Measure.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Printer.h"
#include "core/topi/Workloads.h"
#include "loom/c_runtime_api.h"
#include "runtime/PackedFunc.h"

using namespace loom;
using namespace loom::bench;

namespace {

struct Options {
  std::string schedule = LOOM_SOURCE_DIR "/examples/schedules/conv2d_x86.py";
  int repeat = 15;
  double minRepeatMs = 100;
  int threads = 2;
  bool cpuTime = false;
  bool emitTir = false, emitAsm = false;
};

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Loom's scheduled ResNet 3x3 conv2d against oneDNN, side by side in one run", "bench_conv"};
  app.add_option("--schedule", o.schedule, "Schedule script of the conv2d")->check(CLI::ExistingFile);
  app.add_option("--repeat", o.repeat, "Samples per best-of-3 median")->check(CLI::Range(1, 100000));
  app.add_option("--threads", o.threads, "Threads of both libraries")->check(CLI::Range(1, 1024));
  app.add_flag("--cpu-time", o.cpuTime, "Time by process CPU time (steadier on a busy machine, 1 thread)");
  app.add_flag("--emit-tir", o.emitTir, "Print the lowered TIR and exit");
  app.add_flag("--emit-asm", o.emitAsm, "Print the assembly and exit");
  CLI11_PARSE(app, argc, argv);
  // Loom's pool reads LOOM_NUM_THREADS when it starts; oneDNN's OpenMP runtime read
  // OMP_NUM_THREADS before main, so it is told through omp_set_num_threads when present.
  setenv("LOOM_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  if (auto* setThreads = reinterpret_cast<void (*)(int)>(dlsym(RTLD_DEFAULT, "omp_set_num_threads")))
    setThreads(o.threads);
  loom::bench::g_threads = o.threads;

  const int N = 1, C = 64, H = 56, W = 56, K = 64, R = 3, S = 3, pad = 1, stride = 1;
  const int P = (H + 2 * pad - R) / stride + 1, Q = (W + 2 * pad - S) / stride + 1;
  topi::WorkloadSpec spec = topi::makeWorkloadSpec(
      "conv2d", {{"N", N}, {"C", C}, {"H", H}, {"W", W}, {"K", K}, {"R", R}, {"S", S}, {"pad", pad}, {"stride", stride}});
  std::string script = readFile(o.schedule);
  driver::OperatorOptions opts;
  opts.schedule = script;
  opts.scheduleName = o.schedule;
  transform::PassContext ctx;
  driver::LoweredOperator op = driver::lowerOperator(topi::buildWorkload(spec), opts, ctx);
  if (o.emitTir || o.emitAsm) {
    if (o.emitTir) std::cout << tir::printFunc(op.lowered) << "\n";
    if (o.emitAsm) std::cout << driver::emitCode(op, driver::CodeKind::Asm) << "\n";
    return 0;
  }
  auto jit = driver::jitOperator(op);
  runtime::PackedFunc fn = jit->getFunction(op.lowered->name);
  std::vector<runtime::NDArray> arrays = topi::makeParamArrays(op.input);
  tir::fillRandom(arrays[0], 1);
  tir::fillRandom(arrays[1], 2);
  auto callLoom = [&] {
    std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
    fn.call(args);
  };

  // oneDNN: user memories in NCHW / OIHW, the primitive in the layouts it prefers.
  using namespace dnnl;
  using tag = memory::format_tag;
  using dt = memory::data_type;
  engine eng(engine::kind::cpu, 0);
  stream strm(eng);
  memory::dims srcDims{N, C, H, W}, weiDims{K, C, R, S}, dstDims{N, K, P, Q};
  memory userSrc({srcDims, dt::f32, tag::nchw}, eng, arrays[0].data());
  memory userWei({weiDims, dt::f32, tag::oihw}, eng, arrays[1].data());
  std::vector<float> refOut(size_t(N) * K * P * Q);
  memory userDst({dstDims, dt::f32, tag::nchw}, eng, refOut.data());
  auto convDesc = convolution_forward::desc(
      prop_kind::forward_inference, algorithm::convolution_direct, memory::desc(srcDims, dt::f32, tag::any),
      memory::desc(weiDims, dt::f32, tag::any), memory::desc(dstDims, dt::f32, tag::any), {stride, stride},
      {pad, pad}, {pad, pad});
  convolution_forward::primitive_desc pd(convDesc, eng);
  memory src = userSrc, wei = userWei, dst = userDst;
  if (pd.src_desc() != userSrc.get_desc()) {
    src = memory(pd.src_desc(), eng);
    reorder(userSrc, src).execute(strm, userSrc, src);
  }
  if (pd.weights_desc() != userWei.get_desc()) {
    wei = memory(pd.weights_desc(), eng);
    reorder(userWei, wei).execute(strm, userWei, wei);
  }
  if (pd.dst_desc() != userDst.get_desc()) dst = memory(pd.dst_desc(), eng);
  strm.wait();
  convolution_forward conv(pd);
  auto callDnnl = [&] {
    conv.execute(strm, {{DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}});
    strm.wait();
  };

  // Correctness: Loom's output against oneDNN's (reordered back to NCHW).
  callLoom();
  callDnnl();
  if (dst != userDst) {
    reorder(dst, userDst).execute(strm, dst, userDst);
    strm.wait();
  }
  const float* out = arrays[2].as<float>();
  double worst = maxScaledError(out, refOut.data(), refOut.size());
  double tol = topi::checkTolerance(spec);
  bool ok = worst <= tol;

  double load0 = loadAverage();
  double flops = topi::workloadFlops(spec);
  SideBySide timed = timeSideBySide(callLoom, callDnnl, o.cpuTime, o.repeat, o.minRepeatMs);
  const driver::TimingStats* best = timed.best;
  const double* fastest = timed.fastest;
  double peak = measuredPeak(o.threads);
  double recorded = recordedPeak(LOOM_SOURCE_DIR, o.threads);
  double load1 = loadAverage();
  double gLoom = flops / (best[0].medianMs * 1e-3) / 1e9;
  double gDnnl = flops / (best[1].medianMs * 1e-3) / 1e9;
  const dnnl_version_t* v = dnnl_version();

  std::printf("conv2d N=%d C=%d H=W=%d K=%d %dx%d pad %d stride %d fp32 (%.1f MFLOP), %d threads\n", N, C, H, K, R,
              S, pad, stride, flops / 1e6, o.threads);
  std::printf("schedule: %s\n", o.schedule.c_str());
  std::printf("check: %s (max error %.2e of max |out|, tolerance %.1e, vs oneDNN)\n", ok ? "correct" : "WRONG", worst,
              tol);
  std::printf("onednn: %d.%d.%d, implementation %s\n", v->major, v->minor, v->patch, pd.impl_info_str());
  std::printf("loom:   median %.4f ms  min %.4f ms  %7.1f GFLOP/s  %5.1f%% of peak\n", best[0].medianMs,
              best[0].minMs, gLoom, 100 * gLoom / peak);
  std::printf("onednn: median %.4f ms  min %.4f ms  %7.1f GFLOP/s  %5.1f%% of peak\n", best[1].medianMs,
              best[1].minMs, gDnnl, 100 * gDnnl / peak);
  std::printf("ratio loom/onednn: %.3f  (best-of-3 medians of %d samples, %s time)\n", gLoom / gDnnl, o.repeat,
              o.cpuTime ? "process CPU" : "wall");
  std::printf("ratio of the fastest samples (the least disturbed by other processes): %.3f\n",
              fastest[1] / fastest[0]);
  std::printf("fma peak measured now: %.1f GFLOP/s on %d threads (best of 3)\n", peak, o.threads);
  if (recorded > 0)
    std::printf("against bench/machine.json's %.1f GFLOP/s peak: loom %.1f%%, onednn %.1f%%\n", recorded,
                100 * gLoom / recorded, 100 * gDnnl / recorded);
  std::printf("load average (1 min): %.2f before timing, %.2f after\n", load0, load1);
  return ok ? 0 : 1;
}
