// `loom bench-op`: compiles one operator (optionally scheduled), checks its result, and reports
// its time, GFLOP/s and the fraction of the machine's FMA peak measured in the same run.
#include <cstdio>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/BenchOpGPU.h"
#include "app/cli/ProgramInput.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/MachinePeak.h"
#include "core/driver/Measure.h"
#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tune/ApplyHistoryBest.h"
#include "loom/c_runtime_api.h"
#include "runtime/PackedFunc.h"

namespace loom::cli {

namespace {

struct BenchOptions {
  std::string file, workload, schedule, target = "llvm";
  std::string tuningRecords;
  int repeat = 10;
  double minRepeatMs = 50;
  bool noCheck = false;
  uint64_t seed = 0;
};

BenchOptions& options() {
  static BenchOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  BenchOptions& o = options();
  CLI::App* sub = app.add_subcommand("bench-op", "Compile, check and time one operator");
  sub->footer("Example:\n  loom bench-op --workload matmul:M=1024,N=1024,K=1024 "
              "--schedule examples/schedules/matmul_x86.py --repeat 10");
  sub->add_option("file", o.file, "A .tir file (TVMScript subset)");
  sub->add_option("--workload,-w", o.workload, "A workload preset, e.g. matmul:M=256,N=256,K=256");
  sub->add_option("--schedule,-s", o.schedule, "A schedule script to apply first");
  sub->add_option("--target,-t", o.target, "Target, e.g. \"llvm -mcpu=znver5\", opencl (runs on an OpenCL device)")->capture_default_str();
  sub->add_option("--repeat", o.repeat, "Timing samples")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--min-repeat-ms", o.minRepeatMs, "Minimum duration of one sample")->capture_default_str();
  sub->add_option("--seed", o.seed, "Seed of the random inputs")->capture_default_str();
  sub->add_flag("--no-check", o.noCheck, "Skip the correctness check");
  sub->add_option("--tuning-records", o.tuningRecords,
                  "Apply the best schedule of the workload from these tuning records (loom tune)");
  return sub;
}

std::string readFile(const std::string& path);

std::string fmtNum(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

void callPacked(const runtime::PackedFunc& fn, const std::vector<runtime::NDArray>& arrays) {
  std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
  fn.call(args);
}

int run() {
  const BenchOptions& o = options();
  ProgramInput in = loadProgram("bench-op", o.file, o.workload);
  driver::OperatorOptions opts;
  opts.target = o.target;
  if (!o.schedule.empty()) {
    opts.schedule = readFile(o.schedule);
    opts.scheduleName = o.schedule;
  }
  if (!o.tuningRecords.empty()) {
    if (!o.schedule.empty()) LOOM_THROW(Error) << "bench-op: give --schedule or --tuning-records, not both";
    if (!in.workload) LOOM_THROW(Error) << "bench-op: --tuning-records needs --workload";
    opts.schedule = tune::bestScheduleScript(o.tuningRecords, in.workload->str(), o.target);
    opts.scheduleName = o.tuningRecords;
    std::cout << "schedule: the best of " << o.tuningRecords << "\n";
  }
  transform::PassContext ctx;
  if (in.workload) opts.workload = in.workload->workload->name;
  driver::LoweredOperator op = driver::lowerOperator(in.func, opts, ctx);
  if (op.target.isGPU()) return benchOperatorOnGPU(in, op, o.seed, o.repeat, o.noCheck);
  if (!op.target.isHost())
    LOOM_THROW(Error) << "bench-op: target '" << o.target << "' does not run on this machine";
  auto jit = driver::jitOperator(op);
  runtime::PackedFunc fn = jit->getFunction(op.lowered->name);

  std::vector<runtime::NDArray> arrays = topi::makeParamArrays(in.func);
  size_t numInputs = in.workload ? size_t(in.workload->workload->numInputs) : arrays.size();
  for (size_t i = 0; i < numInputs; ++i) tir::fillRandom(arrays[i], o.seed + i);
  callPacked(fn, arrays);

  if (!o.noCheck) {
    // The reference: the preset's C++ code for small sizes, else the unscheduled program
    // compiled as written (or, for a .tir file, the reference interpreter).
    std::vector<runtime::NDArray> want;
    for (size_t i = 0; i < arrays.size(); ++i) want.push_back(i < numInputs ? arrays[i] : arrays[i].copy());
    std::string refName;
    double flops = in.workload ? topi::workloadFlops(*in.workload) : 0;
    double tolerance = in.workload ? topi::checkTolerance(*in.workload) : 1e-4;
    if (in.workload && flops <= 2e8) {
      topi::runReference(*in.workload, want);
      refName = "the C++ reference";
    } else if (in.workload || o.schedule.empty()) {
      transform::PassContext plainCtx;
      driver::OperatorOptions plainOptions;
      plainOptions.target = o.target;
      driver::LoweredOperator plain = driver::lowerOperator(in.func, plainOptions, plainCtx);
      auto plainJit = driver::jitOperator(plain);
      callPacked(plainJit->getFunction(plain.lowered->name), want);
      refName = "the unscheduled program";
    } else {
      std::vector<tir::Arg> args(want.begin(), want.end());
      tir::interpret(in.func, args);
      refName = "the reference interpreter";
    }
    double worst = 0;
    for (size_t i = numInputs; i < arrays.size(); ++i) {
      double err = tir::maxRelError(arrays[i], want[i]);
      worst = err > worst || err != err ? err : worst;
    }
    bool ok = worst <= tolerance;
    std::cout << "check: " << (ok ? "correct" : "WRONG") << " (max rel err "
              << fmtNum("%.2e", worst) << " vs " << refName << ")\n";
    if (!ok) {
      std::cerr << "error: " << in.origin << ": result differs from " << refName << "\n";
      return 1;
    }
  }

  driver::TimingStats t = driver::timeCalls([&] { callPacked(fn, arrays); }, o.repeat, o.minRepeatMs);
  int threads = loom_backend_num_threads();
  double peak = driver::measureFmaPeakGflops(threads);
  std::cout << "operator: " << in.origin << (o.schedule.empty() ? "" : " scheduled by " + o.schedule)
            << "\ntarget: " << o.target << " (cpu " << op.target.cpu << ")\n";
  std::cout << "time: median " << fmtNum("%.4f", t.medianMs) << " ms, min " << fmtNum("%.4f", t.minMs)
            << " ms (" << t.repeat << " samples x " << t.number << " calls)\n";
  if (in.workload) {
    double gflops = topi::workloadFlops(*in.workload) / (t.medianMs * 1e-3) / 1e9;
    std::cout << "throughput: " << fmtNum("%.1f", gflops) << " GFLOP/s, "
              << fmtNum("%.1f", 100.0 * gflops / peak) << "% of the " << fmtNum("%.0f", peak)
              << " GFLOP/s FMA peak measured now on " << threads << " thread(s)\n";
  }
  return 0;
}

std::string readFile(const std::string& path) {
  FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) LOOM_THROW(Error) << path << ": cannot open the schedule script";
  std::string text;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  std::fclose(f);
  return text;
}

const bool registered = addCommand({setup, run});

}  // namespace

}  // namespace loom::cli
