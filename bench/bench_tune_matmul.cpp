// Benchmark: the best tuned schedule of a matmul (tuning records of `loom tune`) against OpenBLAS cblas_sgemm,
// side by side in one run, with the tuning history (trials to 90% of the final best) read from the records.
//
//   bench_tune_matmul --records R.json [--workload matmul:M=1024,N=1024,K=1024] [--threads 2] [--repeat 15]
//                     [--cpu-time] [--print-schedule] [--top K] [--schedule S.py]
// --top K re-times the K fastest records here (one run each) and compares the fastest of them: the
// best tuning-time timing of many candidates is biased low by noise (the winner's curse).   (S.py: time a hand schedule instead of the records)
// bench/bench_tune_matmul.sh runs `loom tune` first and then this program.
#include <cblas.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "bench/BenchCommon.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/schedule/Trace.h"
#include "core/tir/HostArrays.h"
#include "core/topi/Workloads.h"
#include "core/tune/ApplyHistoryBest.h"
#include "core/tune/Task.h"
#include "core/tune/database/JsonDatabase.h"
#include "loom/c_runtime_api.h"
#include "runtime/PackedFunc.h"

using namespace loom;
using namespace loom::bench;

namespace {

struct Options {
  std::string records, schedule, workload = "matmul:M=1024,N=1024,K=1024", target = "llvm";
  int threads = 2, repeat = 15;
  double minRepeatMs = 100;
  bool cpuTime = false;
  bool printSchedule = false; ///< print the schedule script and stop
  int top = 1; ///< re-time the fastest `top` records (tuning-time timings are noisy) and keep the best
};

/// The tuning history of the records in file order: best-so-far GFLOP/s after each trial.
void reportHistory(const std::string& path, const std::string& key, const std::string& target, double flops) {
  tune::JsonDatabase db(path);
  std::vector<tune::TuningRecord> rs = db.records(key, target);
  double best = 1e300;
  std::vector<double> bestAfter;
  int failed = 0;
  for (auto& r : rs) {
    if (r.ok()) best = std::min(best, r.meanMs());
    else ++failed;
    bestAfter.push_back(best);
  }
  if (rs.empty() || best >= 1e300) {
    std::printf("records: none successful for %s\n", key.c_str());
    return;
  }
  size_t to90 = 0;
  while (to90 < bestAfter.size() && !(bestAfter[to90] <= best / 0.9)) ++to90;
  std::printf("records: %zu trials (%d failed), best measured while tuning %.3f ms = %.1f GFLOP/s\n", rs.size(),
              failed, best, flops / (best * 1e-3) / 1e9);
  std::printf("trials to 90%% of the final best (tuning-time measurements): %zu\n", to90 + 1);
  for (size_t t : {size_t(50), size_t(100), size_t(200), size_t(500), size_t(1000)})
    if (t <= bestAfter.size())
      std::printf("  best after %4zu trials: %7.1f GFLOP/s\n", t, flops / (bestAfter[t - 1] * 1e-3) / 1e9);
}

} // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::cerr << "bench_tune_matmul: " << a << " needs a value\n";
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--records") o.records = next();
    else if (a == "--schedule") o.schedule = next();
    else if (a == "--workload") o.workload = next();
    else if (a == "--threads") o.threads = std::atoi(next().c_str());
    else if (a == "--repeat") o.repeat = std::atoi(next().c_str());
    else if (a == "--cpu-time") o.cpuTime = true;
    else if (a == "--print-schedule") o.printSchedule = true;
    else if (a == "--top") o.top = std::max(1, std::atoi(next().c_str()));
    else {
      std::cerr << "usage: bench_tune_matmul --records R.json | --schedule S.py [--workload matmul:M=..,N=..,K=..] "
                   "[--threads T] [--repeat R] [--cpu-time] [--print-schedule] [--top K]\n";
      return 2;
    }
  }
  if (o.records.empty() == o.schedule.empty()) {
    std::cerr << "bench_tune_matmul: give exactly one of --records and --schedule\n";
    return 2;
  }
  setenv("LOOM_NUM_THREADS", std::to_string(o.threads).c_str(), 1);
  g_threads = o.threads;
  try {
    topi::WorkloadSpec spec = topi::parseWorkloadSpec(o.workload);
    if (spec.workload->name != "matmul") {
      std::cerr << "bench_tune_matmul: the workload must be a matmul preset, got " << o.workload << "\n";
      return 2;
    }
    const int M = int(spec.params.at("M")), N = int(spec.params.at("N")), K = int(spec.params.at("K"));
    double flops = 2.0 * M * N * K;
    tune::TuneTask task = tune::TuneTask::fromWorkload(o.workload, o.target);
    std::string script = o.schedule.empty() ? tune::bestScheduleScript(o.records, task.key, o.target)
                                            : readFile(o.schedule);
    if (o.printSchedule) {
      std::cout << script;
      return 0;
    }
    if (!o.records.empty()) reportHistory(o.records, task.key, o.target, flops);

    if (o.top > 1 && !o.records.empty()) {
      tune::JsonDatabase db(o.records);
      double bestMs = 1e300;
      int rank = 0, chosen = 0;
      for (auto& r : db.topK(task.key, o.target, size_t(o.top))) {
        ++rank;
        std::string s = tir::Trace::fromJson(r.trace).str();
        driver::OperatorOptions op1;
        op1.schedule = s;
        transform::PassContext c1;
        driver::LoweredOperator l1 = driver::lowerOperator(topi::buildWorkload(spec), op1, c1);
        auto j1 = driver::jitOperator(l1);
        runtime::PackedFunc f1 = j1->getFunction(l1.lowered->name);
        std::vector<runtime::NDArray> arr = topi::makeParamArrays(l1.input);
        std::vector<runtime::PackedArg> args(arr.begin(), arr.end());
        double ms = driver::timeCalls([&] { f1.call(args); }, 5, 50).medianMs;
        std::printf("  record #%d (tuning-time %.3f ms): %.3f ms now\n", rank, r.meanMs(), ms);
        if (ms < bestMs) bestMs = ms, script = s, chosen = rank;
      }
      std::printf("re-timed the %d fastest records: record #%d is compared\n", rank, chosen);
    }
    driver::OperatorOptions opts;
    opts.schedule = script;
    opts.scheduleName = o.schedule.empty() ? o.records : o.schedule;
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(topi::buildWorkload(spec), opts, ctx);
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
    callLoom();
    callBlas();
    const float* C = arrays[2].as<float>();
    double worst = maxScaledError(C, ref.data(), ref.size());
    bool ok = worst <= topi::checkTolerance(spec);
    double load0 = loadAverage();
    SideBySide timed = timeSideBySide(callLoom, callBlas, o.cpuTime, o.repeat, o.minRepeatMs);
    double load1 = loadAverage();
    double gLoom = flops / (timed.best[0].medianMs * 1e-3) / 1e9;
    double gBlas = flops / (timed.best[1].medianMs * 1e-3) / 1e9;
    std::printf("matmul %dx%dx%d fp32, %d threads (Loom pool %d), %s time\n", M, N, K, o.threads,
                loom_backend_num_threads(), o.cpuTime ? "process CPU" : "wall");
    std::printf("schedule: %s\n", o.schedule.empty() ? ("best record of " + o.records).c_str() : o.schedule.c_str());
    std::printf("check: %s (max error %.2e of max |C| vs OpenBLAS)\n", ok ? "correct" : "WRONG", worst);
    std::printf("openblas: core %s\n", openblas_get_corename());
    std::printf("tuned:    median %.3f ms  min %.3f ms  %7.1f GFLOP/s\n", timed.best[0].medianMs,
                timed.best[0].minMs, gLoom);
    std::printf("openblas: median %.3f ms  min %.3f ms  %7.1f GFLOP/s\n", timed.best[1].medianMs,
                timed.best[1].minMs, gBlas);
    std::printf("ratio tuned/openblas: %.3f (best-of-3 medians), fastest samples %.3f; target >= 0.90\n",
                gLoom / gBlas, timed.fastest[1] / timed.fastest[0]);
    std::printf("load average (1 min): %.2f before timing, %.2f after\n", load0, load1);
    return ok ? 0 : 1;
  } catch (const std::exception& e) {
    std::cerr << "bench_tune_matmul: " << e.what() << "\n";
    return 1;
  }
}
