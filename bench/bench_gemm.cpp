// Benchmark: Loom's scheduled 1024^3 fp32 matmul against OpenBLAS cblas_sgemm, side by side in one run.
//
// Run it through bench/run_gemm.sh, which unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE for this
// command alone (see docs: "Measuring against libraries"). Prints both GFLOP/s, their ratio, the
// fraction of the FMA peak measured in the same run, the OpenBLAS kernel, and the latency of the
// live path (parse + schedule + lower + LLVM codegen to assembly) broken down by stage.
#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <functional>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "bench/BenchCommon.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/MachinePeak.h"
#include "core/driver/Measure.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Printer.h"
#include "core/topi/Workloads.h"
#include "core/transform/Instruments.h"
#include "loom/c_runtime_api.h"
#include "runtime/PackedFunc.h"

using namespace loom;
using namespace loom::bench;

namespace {

struct Options {
  std::string schedule = LOOM_SOURCE_DIR "/examples/schedules/matmul_x86.py";
  int m = 1024, n = 1024, k = 1024;
  int repeat = 15;
  double minRepeatMs = 100;
  bool emitTir = false, emitAsm = false, emitLL = false;
  bool cpuTime = false;  ///< time by process CPU time (a steadier measure on a busy machine, 1 thread)
  int threads = 2;
};

/// parse + schedule + lower + codegen to assembly, each stage timed (best of a few runs).
void reportLatency(const topi::WorkloadSpec& spec, const std::string& script, const std::string& name) {
  double best[5] = {1e30, 1e30, 1e30, 1e30, 1e30};
  std::string passReport;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    tir::PrimFunc f = topi::buildWorkload(spec);
    double tBuild = msSince(t0);
    t0 = std::chrono::steady_clock::now();
    tir::Schedule sch(f);
    tir::ScriptResult r = tir::runScript(sch, script, name);
    if (!r.ok) {
      std::cerr << r.error << "\n";
      std::exit(1);
    }
    double tSched = msSince(t0);
    t0 = std::chrono::steady_clock::now();
    transform::PassContext ctx;
    auto timer = std::make_shared<transform::TimePasses>();
    ctx.instruments.push_back(timer);
    driver::LoweredOperator op = driver::lowerOperator(sch.func(), driver::OperatorOptions{}, ctx);
    double tLower = msSince(t0);
    t0 = std::chrono::steady_clock::now();
    std::string asmText = driver::emitCode(op, driver::CodeKind::Asm);
    double tCodegen = msSince(t0);
    double total = tBuild + tSched + tLower + tCodegen;
    if (total < best[4]) {
      best[0] = tBuild, best[1] = tSched, best[2] = tLower, best[3] = tCodegen, best[4] = total;
      passReport = timer->report();
    }
  }
  std::printf("live path latency (best of 5): %.1f ms total\n", best[4]);
  std::printf("  workload -> TIR      %7.1f ms\n", best[0]);
  std::printf("  schedule script      %7.1f ms\n", best[1]);
  std::printf("  lowering pipeline    %7.1f ms\n", best[2]);
  std::printf("  LLVM codegen to asm  %7.1f ms\n", best[3]);
  std::printf("  lowering passes:\n%s", passReport.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"Loom's scheduled matmul against OpenBLAS sgemm, side by side in one run", "bench_gemm"};
  app.add_option("--schedule", o.schedule, "Schedule script of the matmul")->check(CLI::ExistingFile);
  int size = 0;
  app.add_option("--size", size, "M = N = K (default 1024)")->check(CLI::Range(1, 1 << 14));
  app.add_option("--repeat", o.repeat, "Samples per best-of-3 median")->check(CLI::Range(1, 100000));
  app.add_option("--threads", o.threads, "Threads of both libraries")->check(CLI::Range(1, 1024));
  app.add_flag("--cpu-time", o.cpuTime, "Time by process CPU time (steadier on a busy machine, 1 thread)");
  app.add_flag("--emit-tir", o.emitTir, "Print the lowered TIR and exit");
  app.add_flag("--emit-asm", o.emitAsm, "Print the assembly and exit");
  app.add_flag("--emit-ll", o.emitLL, "Print the LLVM IR and exit");
  CLI11_PARSE(app, argc, argv);
  if (size > 0) o.m = o.n = o.k = size;
  // Loom's thread pool reads LOOM_NUM_THREADS when it starts (at the first parallel launch).
  setenv("LOOM_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  loom::bench::g_threads = o.threads;
  const int M = o.m, N = o.n, K = o.k;
  topi::WorkloadSpec spec = topi::makeWorkloadSpec("matmul", {{"M", M}, {"N", N}, {"K", K}});
  std::string script = readFile(o.schedule);

  driver::OperatorOptions opts;
  opts.schedule = script;
  opts.scheduleName = o.schedule;
  transform::PassContext ctx;
  driver::LoweredOperator op = driver::lowerOperator(topi::buildWorkload(spec), opts, ctx);
  if (o.emitTir || o.emitAsm || o.emitLL) {
    if (o.emitTir) std::cout << tir::printFunc(op.lowered) << "\n";
    if (o.emitLL) std::cout << driver::emitCode(op, driver::CodeKind::LLVM) << "\n";
    if (o.emitAsm) std::cout << driver::emitCode(op, driver::CodeKind::Asm) << "\n";
    return 0;
  }
  auto jit = driver::jitOperator(op);
  runtime::PackedFunc fn = jit->getFunction(op.lowered->name);

  std::vector<runtime::NDArray> arrays = topi::makeParamArrays(op.input);
  tir::fillRandom(arrays[0], 1);
  tir::fillRandom(arrays[1], 2);
  const float* A = arrays[0].as<float>();
  const float* B = arrays[1].as<float>();
  std::vector<float> ref(size_t(M) * N);
  auto callLoom = [&] {
    std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
    fn.call(args);
  };
  openblas_set_num_threads(o.threads);
  auto callBlas = [&] {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, M, N, K, 1.0f, A, K, B, N, 0.0f, ref.data(), N);
  };

  // Correctness: Loom's C against OpenBLAS's C.
  callLoom();
  callBlas();
  const float* C = arrays[2].as<float>();
  double worst = maxScaledError(C, ref.data(), ref.size());
  double tol = topi::checkTolerance(spec);
  bool ok = worst <= tol;
  double load0 = loadAverage();

  // Interleave the two so both see the same machine state; keep the best median of each.
  double flops = 2.0 * M * N * K;
  SideBySide timed = timeSideBySide(callLoom, callBlas, o.cpuTime, o.repeat, o.minRepeatMs);
  const driver::TimingStats* best = timed.best;
  const double* fastest = timed.fastest;
  double peak = measuredPeak(o.threads);
  double recorded = recordedPeak(LOOM_SOURCE_DIR, o.threads);
  double load1 = loadAverage();
  double gLoom = flops / (best[0].medianMs * 1e-3) / 1e9;
  double gBlas = flops / (best[1].medianMs * 1e-3) / 1e9;

  const char* coretype = std::getenv("OPENBLAS_CORETYPE");
  const char* l2 = std::getenv("OPENBLAS_L2_SIZE");
  std::printf("gemm %dx%dx%d fp32, %d threads (Loom pool %d)\n", M, N, K, o.threads, loom_backend_num_threads());
  std::printf("schedule: %s\n", o.schedule.c_str());
  std::printf("check: %s (max error %.2e of max |C|, tolerance %.1e, vs OpenBLAS)\n", ok ? "correct" : "WRONG",
              worst, tol);
  std::printf("openblas: core %s, config %s, OPENBLAS_CORETYPE %s, OPENBLAS_L2_SIZE %s\n",
              openblas_get_corename(), openblas_get_config(), coretype ? coretype : "(unset)", l2 ? l2 : "(unset)");
  std::printf("loom:     median %.3f ms  min %.3f ms  %7.1f GFLOP/s  %5.1f%% of peak\n", best[0].medianMs,
              best[0].minMs, gLoom, 100 * gLoom / peak);
  std::printf("openblas: median %.3f ms  min %.3f ms  %7.1f GFLOP/s  %5.1f%% of peak\n", best[1].medianMs,
              best[1].minMs, gBlas, 100 * gBlas / peak);
  std::printf("ratio loom/openblas: %.3f  (best-of-3 medians of %d samples, %s time)\n", gLoom / gBlas, o.repeat,
              o.cpuTime ? "process CPU" : "wall");
  std::printf("ratio of the fastest samples (the least disturbed by other processes): %.3f\n",
              fastest[1] / fastest[0]);
  std::printf("fma peak measured now: %.1f GFLOP/s on %d threads (best of 3)\n", peak, o.threads);
  if (recorded > 0)
    std::printf("against bench/machine.json's %.1f GFLOP/s peak: loom %.1f%%, openblas %.1f%%\n", recorded,
                100 * gLoom / recorded, 100 * gBlas / recorded);
  std::printf("load average (1 min): %.2f before timing, %.2f after\n", load0, load1);
  reportLatency(spec, script, o.schedule);
  return ok ? 0 : 1;
}
