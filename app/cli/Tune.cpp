// `loom tune`: search schedules for a workload, measuring candidates in worker processes; and the
// hidden `loom tune-worker` those workers run.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <unistd.h>

#include "app/cli/Commands.h"
#include "core/support/Error.h"
#include "core/tune/Measure.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"

namespace loom::cli {

namespace {

struct WorkerOptions {
  std::string input, output;
};

WorkerOptions& workerOptions() {
  static WorkerOptions o;
  return o;
}

CLI::App* setupWorker(CLI::App& app) {
  WorkerOptions& o = workerOptions();
  CLI::App* sub = app.add_subcommand("tune-worker", "Measure one tuning candidate (used by loom tune)");
  sub->group(""); // hidden
  sub->add_option("input", o.input, "The candidate (JSON)")->required();
  sub->add_option("output", o.output, "Where to write the result (JSON)")->required();
  return sub;
}

int runWorker() { return tune::tuneWorkerMain(workerOptions().input, workerOptions().output); }

const bool workerRegistered = addCommand({setupWorker, runWorker});

struct TuneCliOptions {
  std::string workload, target = "llvm", output, strategy = "evolutionary";
  int trials = 64, batch = 8, repeat = 3;
  double timeout = 10, minRepeatMs = 20;
  bool resume = false, noBaseline = false;
  uint64_t seed = 1;
};

TuneCliOptions& tuneOptions() {
  static TuneCliOptions o;
  return o;
}

CLI::App* setupTune(CLI::App& app) {
  TuneCliOptions& o = tuneOptions();
  CLI::App* sub = app.add_subcommand("tune", "Search schedules for a workload and record the measured ones");
  sub->footer("Example:\n  loom tune --workload matmul:M=256,N=256,K=256 --trials 64 --output matmul.json\n"
              "  loom bench-op --workload matmul:M=256,N=256,K=256 --tuning-records matmul.json");
  sub->add_option("--workload,-w", o.workload, "A workload preset, e.g. matmul:M=256,N=256,K=256")->required();
  sub->add_option("--target,-t", o.target, "Target (must run on this machine)")->capture_default_str();
  sub->add_option("--trials", o.trials, "Total trials of the workload (resumed ones count)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--batch", o.batch, "Candidates measured per round")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--timeout", o.timeout, "Seconds per candidate (build and check, then timing)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--repeat", o.repeat, "Timing samples per candidate")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--min-repeat-ms", o.minRepeatMs, "Least duration of one sample")->capture_default_str();
  sub->add_option("--output,-o", o.output, "Tuning records (JSON lines)")->required();
  sub->add_flag("--resume", o.resume, "Continue the records in --output (skip measured schedules)");
  sub->add_option("--strategy", o.strategy, "Search strategy")
      ->check(CLI::IsMember({"evolutionary", "random"}))->capture_default_str();
  sub->add_option("--seed", o.seed, "Random seed of the search")->capture_default_str();
  sub->add_flag("--no-baseline", o.noBaseline, "Do not time the unscheduled program");
  return sub;
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

int runTune() {
  const TuneCliOptions& o = tuneOptions();
  tune::TuneTask task = tune::TuneTask::fromWorkload(o.workload, o.target);
  if (!o.resume && std::filesystem::exists(o.output))
    LOOM_THROW(Error) << o.output << ": the record file exists; pass --resume to continue it or remove it";
  tune::JsonDatabase db(o.output);
  tune::ProcessRunner runner(tune::ProcessRunner::selfWorkerCommand());
  tune::TuneOptions opts;
  opts.trials = o.trials;
  opts.batchSize = o.batch;
  opts.strategy = o.strategy;
  opts.seed = o.seed;
  opts.measureBaseline = !o.noBaseline;
  opts.measure.repeat = o.repeat;
  opts.measure.timeoutS = o.timeout;
  opts.measure.minRepeatMs = o.minRepeatMs;
  bool tty = ::isatty(1);
  int errors = 0;
  auto gflops = [&](double ms) { return task.flops > 0 && std::isfinite(ms) ? task.flops / ms / 1e6 : 0.0; };
  auto show = [&](const tune::TuneEvent& e) {
    switch (e.kind) {
    case tune::TuneEventKind::Baseline:
      std::cout << "baseline (unscheduled): "
                << (e.result.ok() ? fmt("%.4f ms", e.result.meanMs()) + " (" + fmt("%.2f", gflops(e.result.meanMs())) + " GFLOP/s)"
                                  : e.result.errorKind + ": " + e.result.errorMessage)
                << "\n";
      break;
    case tune::TuneEventKind::TrialDone: {
      if (!e.result.ok()) ++errors;
      std::string line = "[" + std::to_string(e.trialsDone) + "/" + std::to_string(e.trialsTotal) + "] best " +
                         (std::isfinite(e.bestMs) ? fmt("%.4f ms", e.bestMs) + " " + fmt("%.2f GFLOP/s", gflops(e.bestMs)) : "-") +
                         (std::isfinite(e.bestMs) && std::isfinite(e.baselineMs) ? " " + fmt("%.2fx", e.baselineMs / e.bestMs) : "") +
                         " | last " + (e.result.ok() ? fmt("%.4f ms", e.result.meanMs()) : e.result.errorKind) +
                         " | errors " + std::to_string(errors);
      if (tty)
        std::cout << "\r\033[K" << line << std::flush;
      else
        std::cout << line << "\n";
      break;
    }
    case tune::TuneEventKind::NewBest:
    case tune::TuneEventKind::TaskProgress:
      break;
    }
  };
  tune::TuneResult r = tune::tuneTask(task, db, runner, opts, show);
  if (tty) std::cout << "\n";
  std::cout << "task: " << r.task << " on " << o.target << ": " << r.trialsThisRun << " trials this run, "
            << r.trialsDone << " in total, " << r.errors << " failed\n";
  if (!r.best) {
    std::cerr << "error: no candidate of " << r.task << " succeeded; see the error kinds in " << o.output << "\n";
    return 1;
  }
  std::cout << "best: " << fmt("%.4f ms", r.best->meanMs()) << " (" << fmt("%.2f GFLOP/s", gflops(r.best->meanMs())) << ")";
  if (std::isfinite(r.baselineMs)) std::cout << ", " << fmt("%.2fx", r.baselineMs / r.best->meanMs()) << " the unscheduled program";
  std::cout << "\nrecords: " << o.output << "\n";
  return 0;
}

const bool tuneRegistered = addCommand({setupTune, runTune});

} // namespace

} // namespace loom::cli
