// `loom tune`: search schedules for a workload or for every kernel of a model, measuring candidates
// in worker processes; and the hidden `loom tune-worker` those workers run.
#include <atomic>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <unistd.h>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommon.h"
#include "core/driver/CompileModel.h"
#include "core/driver/InputShapes.h"
#include "core/driver/LoadModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/support/Error.h"
#include "core/tune/Measure.h"
#include "core/tune/DynamicRecords.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/TaskScheduler.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"
#ifdef LOOM_HAVE_MPI
#include "core/tune/mpi/Distributed.h"
#endif

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
  std::string model, workload, target = "llvm", output, strategy = "evolutionary", inputShapes, desiredLayout, taskFilter;
  std::vector<std::string> disabledPasses;
  int trials = 0, trialsPerTask = 0, batch = 8, repeat = 3, optLevel = 3, retime = -1;
  double timeout = 10, minRepeatMs = 20;
  bool resume = false, noBaseline = false, listTasks = false, cacheFlush = false, noCacheFlush = false;
  uint64_t seed = 1;
  int searchThreads = 0;
  double simulateBuildMs = 0, simulateMeasureMs = 0; ///< distributed bench mode
  std::string simulateLowering = "charged";
  int rtPriority = 0;
  bool workerEvents = false;
};

/// Under mpirun: rank 0's runner, which measures on the worker ranks (else each run makes a
/// ProcessRunner here).
tune::Runner* g_distributed = nullptr;

TuneCliOptions& tuneOptions() {
  static TuneCliOptions o;
  return o;
}

CLI::App* setupTune(CLI::App& app) {
  TuneCliOptions& o = tuneOptions();
  CLI::App* sub = app.add_subcommand("tune", "Search schedules for a workload or a model's kernels and record the measured ones");
  sub->footer("Examples:\n  loom tune --workload matmul:M=256,N=256,K=256 --trials 64 --output matmul.json\n"
              "  loom bench-op --workload matmul:M=256,N=256,K=256 --tuning-records matmul.json\n"
              "  loom tune resnet18.onnx --input-shapes \"data:[1,3,224,224]\" --trials-per-task 64 --output r18.json\n"
              "  loom compile resnet18.onnx --tuning-records r18.json -o r18.tar\n"
              "A model's kernels are tuning tasks keyed by what they compute (\"tir:<hash>\"), so records\n"
              "carry over between models; --resume continues a record file across runs.");
  sub->add_option("model", o.model, "An ONNX (.onnx) or TorchScript (.pt) model: tune each distinct kernel (task) of it");
  sub->add_option("--workload,-w", o.workload, "A workload preset, e.g. matmul:M=256,N=256,K=256");
  sub->add_option("--input-shapes", o.inputShapes, "Model: input shapes, e.g. \"data:[1,3,224,224]\"; a dynamic model is tuned at a representative shape: \"x:[1,3,48,W=320]\" (or W<=2048: at the bound), and the records also apply to the symbolic model (loom compile --input-shapes \"x:[1,3,48,W]\" --tuning-records R.json)");
  sub->add_option("--opt-level", o.optLevel, "Model: the opt level it will be compiled at (fusion, layout)")
      ->capture_default_str()->check(CLI::Range(1, 3));
  sub->add_option("--desired-layout", o.desiredLayout, "Model: conv layout it will be compiled with (NCHW, NCHWc)");
  sub->add_option("--disabled-pass", o.disabledPasses, "Model: graph passes it will be compiled without, comma-separated")
      ->delimiter(',');
  sub->add_option("--target,-t", o.target, "Target (must run on this machine)")->capture_default_str();
  sub->add_option("--trials", o.trials,
                  "Workload: total trials (default 64). Model: total over all tasks (default trials-per-task x tasks); "
                  "records already in --output count")
      ->check(CLI::PositiveNumber);
  sub->add_option("--trials-per-task", o.trialsPerTask, "Model: at most this many trials per task (default --trials)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--batch", o.batch, "Candidates measured per round")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--timeout", o.timeout, "Seconds per candidate (build and check, then timing)")
      ->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--repeat", o.repeat, "Timing samples per candidate")->capture_default_str()->check(CLI::PositiveNumber);
  sub->add_option("--min-repeat-ms", o.minRepeatMs, "Least duration of one sample")->capture_default_str();
  sub->add_flag("--cache-flush", o.cacheFlush,
                "Evict every argument but the first from the CPU caches before each timed call, so weights come "
                "from memory as in a model larger than the cache (TVM's cache_flush_cpu_non_first_arg); "
                "the default for a model");
  sub->add_flag("--no-cache-flush", o.noCacheFlush, "Model: time with warm caches (each call right after the last)")
      ->excludes("--cache-flush");
  sub->add_option("--retime", o.retime,
                  "After the search, re-measure each task's K fastest schedules (and a model task's default schedule) "
                  "one after another, so the best is chosen from timings taken together (default: 4 for a model, 0 for a workload)")
      ->check(CLI::Range(0, 64));
  sub->add_option("--output,-o", o.output, "Tuning records (JSON lines)");
  sub->add_flag("--resume", o.resume, "Continue the records in --output (skip measured schedules)");
  sub->add_option("--strategy", o.strategy, "Search strategy")
      ->check(CLI::IsMember({"evolutionary", "random"}))->capture_default_str();
  sub->add_option("--seed", o.seed, "Random seed of the search")->capture_default_str();
  sub->add_option("--search-threads", o.searchThreads,
                  "Threads that lower candidates for the cost model (default 0: one per core; the search's proposals "
                  "do not depend on it)")
      ->check(CLI::Range(0, 256));
  sub->add_flag("--no-baseline", o.noBaseline,
                "Do not time the baseline (workload: the unscheduled program; model: the default schedule, and then "
                "`loom compile --tuning-records` uses none of these records: it takes a record only when it was "
                "measured faster than the default)");
  sub->add_flag("--list-tasks", o.listTasks, "Model: print the task table and exit (nothing is measured)");
  sub->add_option("--tasks", o.taskFilter,
                  "Model: tune only these tasks, by number in the --list-tasks table or by key (e.g. 2,4-6,tir:1dc0...)");
  const char* dist = "Distributed (mpirun -np N loom tune ...)";
  sub->add_option("--simulate-build-ms", o.simulateBuildMs,
                  "Bench: worker ranks sleep this long instead of building (and report made-up times)")
      ->group(dist)->check(CLI::NonNegativeNumber);
  sub->add_option("--simulate-measure-ms", o.simulateMeasureMs, "Bench: worker ranks sleep this long instead of timing")
      ->group(dist)->check(CLI::NonNegativeNumber);
  sub->add_option("--simulate-lowering", o.simulateLowering,
                  "Bench: the points a simulated worker rank lowers for rank 0 count against its build stand-in by "
                  "their CPU time (charged: as on a host of its own, the wait for a CPU on this machine is not "
                  "counted) or by their wall time (wall)")
      ->group(dist)->check(CLI::IsMember({"charged", "wall"}));
  sub->add_option("--rt-priority", o.rtPriority,
                  "Bench on a shared machine: once started, the job runs at real-time priority (SCHED_FIFO, needs "
                  "root or CAP_SYS_NICE): rank 0's dispatcher at this priority + 1, the worker ranks and their "
                  "measurements one below it, rank 0's search two below, so other jobs wait (0: normal)")
      ->group(dist)->check(CLI::Range(0, 98));
  sub->add_flag("--worker-events", o.workerEvents,
                "Print each worker rank's state changes on stderr (\"loom-worker rank=R host=H state=S trials=N failed=F\")")
      ->group(dist);
  return sub;
}

/// Progress redrawn in place only on a terminal; under mpirun rank 0's stdout looks like one
/// (Open MPI forwards it through a pty) even when mpirun's own output goes to a file or pipe.
bool progressOnTerminal() {
#ifdef LOOM_HAVE_MPI
  if (tune::mpi::launchedByMpi()) return false;
#endif
  return ::isatty(1);
}

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

tune::TuneOptions perTaskOptions(const TuneCliOptions& o) {
  tune::TuneOptions opts;
  opts.batchSize = o.batch;
  opts.strategy = o.strategy;
  opts.seed = o.seed;
  opts.searchThreads = o.searchThreads;
  opts.measureBaseline = !o.noBaseline;
  opts.measure.repeat = o.repeat;
  opts.measure.timeoutS = o.timeout;
  opts.measure.minRepeatMs = o.minRepeatMs;
  opts.measure.flushCache = o.cacheFlush || (!o.model.empty() && !o.noCacheFlush);
  opts.retimeTopK = o.retime >= 0 ? o.retime : (o.model.empty() ? 0 : 4);
  return opts;
}

int runWorkloadTune() {
  const TuneCliOptions& o = tuneOptions();
  tune::TuneTask task = tune::TuneTask::fromWorkload(o.workload, o.target);
  if (!o.resume && std::filesystem::exists(o.output))
    LOOM_THROW(Error) << o.output << ": the record file exists; pass --resume to continue it or remove it";
  tune::JsonDatabase db(o.output);
  tune::ProcessRunner local(tune::ProcessRunner::selfWorkerCommand());
  tune::Runner& runner = g_distributed ? *g_distributed : local;
  tune::TuneOptions opts = perTaskOptions(o);
  opts.trials = o.trials > 0 ? o.trials : 64;
  bool tty = progressOnTerminal();
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
    case tune::TuneEventKind::TaskSelected:
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

/// "a, b, c +2 more".
std::string shortList(const std::vector<std::string>& v, size_t max) {
  std::string s;
  for (size_t i = 0; i < v.size() && i < max; ++i) s += (i ? "," : "") + v[i];
  if (v.size() > max) s += " +" + std::to_string(v.size() - max) + " more";
  return s;
}

std::string padRight(std::string s, size_t w) {
  if (s.size() < w) s.append(w - s.size(), ' ');
  return s;
}

/// The trial (1-based, in record order) from which the task's best is within 90% of its final best
/// (time <= final / 0.9); 0 when it has no successful record.
int trialsTo90(const tune::Database& db, const std::string& key, const std::string& target) {
  std::vector<tune::TuningRecord> rs;
  for (auto& r : db.records(key, target))
    if (!r.retime) rs.push_back(r); // tuning-time timings only
  double final = INFINITY;
  for (auto& r : rs) final = std::min(final, r.meanMs());
  if (!std::isfinite(final)) return 0;
  for (size_t i = 0; i < rs.size(); ++i)
    if (rs[i].meanMs() <= final / 0.9) return int(i + 1);
  return 0;
}

/// The indices of the tasks named by `filter`: comma-separated 1-based numbers of the task table,
/// ranges "a-b", or task keys. Unknown entries are a ValueError naming the entry.
std::vector<size_t> selectTasks(const std::vector<tune::TuneTask>& tasks, const std::string& filter) {
  std::vector<bool> keep(tasks.size(), false);
  auto number = [&](const std::string& s, const std::string& entry) -> size_t {
    size_t pos = 0;
    long v = -1;
    try {
      v = std::stol(s, &pos);
    } catch (const std::exception&) {
      pos = 0;
    }
    if (pos != s.size() || v < 1 || size_t(v) > tasks.size())
      LOOM_THROW(ValueError) << "tune: --tasks entry '" << entry << "' is not a task key or a number from 1 to " << tasks.size();
    return size_t(v - 1);
  };
  std::stringstream in(filter);
  for (std::string entry; std::getline(in, entry, ',');) {
    if (entry.empty()) continue;
    bool byKey = false;
    for (size_t i = 0; i < tasks.size(); ++i)
      if (tasks[i].key == entry) keep[i] = byKey = true;
    if (byKey) continue;
    size_t dash = entry.find('-');
    if (dash != std::string::npos && dash > 0) {
      size_t a = number(entry.substr(0, dash), entry), b = number(entry.substr(dash + 1), entry);
      if (a > b) LOOM_THROW(ValueError) << "tune: --tasks range '" << entry << "' is empty";
      for (size_t i = a; i <= b; ++i) keep[i] = true;
    } else {
      keep[number(entry, entry)] = true;
    }
  }
  std::vector<size_t> out;
  for (size_t i = 0; i < tasks.size(); ++i)
    if (keep[i]) out.push_back(i);
  if (out.empty()) LOOM_THROW(ValueError) << "tune: --tasks '" << filter << "' selects no task";
  return out;
}

std::atomic<bool> g_stopRequested{false};

/// The first SIGINT / SIGTERM asks the tuning to stop after the current batch (records so far are
/// kept and the final table printed); a second one ends the program.
void onStopSignal(int sig) {
  if (g_stopRequested.exchange(true)) {
    std::signal(sig, SIG_DFL);
    std::raise(sig);
    return;
  }
  const char msg[] = "\nloom tune: stopping after this batch (again to abort)\n";
  ssize_t ignored = ::write(2, msg, sizeof msg - 1);
  (void)ignored;
}

int runModelTune() {
  const TuneCliOptions& o = tuneOptions();
  auto started = std::chrono::steady_clock::now();
  // A dynamic model is tuned at a representative shape: each symbolic dim at its value
  // ("W=320") or else its bound ("W<=2048"); the records are then re-keyed to the symbolic
  // model's kernels (core/tune/DynamicRecords.h).
  std::string representative = o.inputShapes, symbolicSpec;
  if (!o.inputShapes.empty()) {
    driver::InputShapes spec = driver::parseInputShapes(o.inputShapes);
    if (!spec.isStatic()) {
      representative.clear();
      for (const driver::InputShape& in : spec.inputs) {
        driver::InputShape r = in, sym = in;
        for (size_t k = 0; k < in.dims.size(); ++k) {
          const driver::InputDim& d = in.dims[k];
          sym.dims[k].example = -1;
          if (d.isStatic()) continue;
          if (d.example < 0 && d.bound < 0)
            LOOM_THROW(ValueError) << "--input-shapes gives '" << in.name << "' dimension " << k << " as " << d.str()
                                   << "; loom tune tunes a dynamic model at a representative shape: give the dim a value ("
                                   << (d.symbol.empty() ? "?" : d.symbol) << "=320) or a bound (" << (d.symbol.empty() ? "?" : d.symbol)
                                   << "<=2048, tuned at the bound)";
          r.dims[k] = driver::InputDim{d.example >= 0 ? d.example : d.bound};
        }
        representative += (representative.empty() ? "" : ",") + r.str();
        symbolicSpec += (symbolicSpec.empty() ? "" : ",") + sym.str();
      }
    }
  }
  driver::LoadedModel loaded = driver::loadModel(o.model, representative);
  graph::Module m = loaded.module;
  driver::CompileModelOptions co;
  co.optLevel = o.optLevel;
  co.desiredLayout = o.desiredLayout;
  co.disabledPasses = o.disabledPasses;
  co.outputNames = loaded.format == "onnx" ? onnxOutputNames(o.model) : loaded.outputNames;
  std::vector<tune::TuneTask> tasks = tune::extractTasks(m, {}, co, o.target);
  // Each task's number in the model's full task table (what --tasks refers to).
  std::vector<size_t> number(tasks.size());
  for (size_t i = 0; i < tasks.size(); ++i) number[i] = i + 1;
  if (!o.taskFilter.empty()) {
    std::vector<size_t> picked = selectTasks(tasks, o.taskFilter);
    std::vector<tune::TuneTask> kept;
    number.clear();
    for (size_t i : picked) {
      kept.push_back(tasks[i]);
      number.push_back(i + 1);
    }
    tasks = std::move(kept);
  }
  size_t kernels = 0;
  int calls = 0;
  double gflopTotal = 0;
  for (auto& t : tasks) {
    kernels += t.kernels.size();
    calls += t.weight;
    gflopTotal += t.weight * t.flops / 1e9;
  }
  std::cout << o.model << ": " << tasks.size() << (tasks.size() == 1 ? " task (" : " tasks (") << kernels << " kernels, " << calls << " calls, "
            << fmt("%.4g", gflopTotal * 1e3) << " MFLOP per run) on " << o.target << "\n";
  std::cout << " #  " << padRight("key", 21) << " weight     MFLOP  " << padRight("ops", 44) << "kernels\n";
  for (size_t i = 0; i < tasks.size(); ++i) {
    const tune::TuneTask& t = tasks[i];
    char buf[64];
    std::snprintf(buf, sizeof buf, "%2zu  %-21s %6d %9.3f  ", number[i], t.key.c_str(), t.weight, t.flops / 1e6);
    std::cout << buf << padRight(shortList(t.ops, 4), 44) << shortList(t.kernels, 2) << "\n";
  }
  if (o.listTasks) return 0;
  if (tasks.empty()) {
    std::cout << "nothing to tune: the model has no kernels\n";
    return 0;
  }
  if (!o.resume && std::filesystem::exists(o.output))
    LOOM_THROW(Error) << o.output << ": the record file exists; pass --resume to continue it or remove it";
  tune::JsonDatabase db(o.output);
  tune::TuneOptions per = perTaskOptions(o);
  per.shouldStop = [] { return g_stopRequested.load(); };
  std::signal(SIGINT, onStopSignal);
  std::signal(SIGTERM, onStopSignal);
  per.trials = o.trialsPerTask > 0 ? o.trialsPerTask : (o.trials > 0 ? o.trials : 64);
  int total = o.trials > 0 ? o.trials : per.trials * int(tasks.size());
  int existing = 0;
  for (auto& t : tasks) existing += std::min(int(db.trialCount(t.key, t.target)), per.trials);
  tune::TaskSchedulerOptions so;
  so.totalTrials = std::max(0, total - existing);
  tune::useDefaultSchedule(so, o.target);
  if (existing > 0) std::cout << "resuming: " << existing << " trials already in " << o.output << "\n";
  std::cout << "budget: " << so.totalTrials << " trials this run (at most " << per.trials << " per task, batches of "
            << per.batchSize << ")" << (per.measure.flushCache ? ", caches flushed before each timed call" : "")
            << (per.retimeTopK > 0 ? "; then the " + std::to_string(per.retimeTopK) + " fastest schedules and the default of each task are re-timed together"
                                   : std::string())
            << std::endl;

  std::vector<double> best(tasks.size(), INFINITY), baseline(tasks.size(), INFINITY);
  std::vector<int> done(tasks.size(), 0);
  for (size_t i = 0; i < tasks.size(); ++i) {
    if (auto b = db.best(tasks[i].key, tasks[i].target)) best[i] = b->meanMs();
    done[i] = int(db.trialCount(tasks[i].key, tasks[i].target));
  }
  // The model's time estimated from its kernels: sum of weight x (best, else baseline).
  auto estimate = [&](bool useBest) -> double {
    double s = 0;
    for (size_t i = 0; i < tasks.size(); ++i) {
      double ms = useBest && std::isfinite(best[i]) ? std::min(best[i], baseline[i]) : baseline[i];
      if (!std::isfinite(ms)) return NAN;
      s += tasks[i].weight * ms;
    }
    return s;
  };
  bool tty = progressOnTerminal();
  int spent = 0, errors = 0;
  std::string bar;
  auto drawBar = [&](size_t task) {
    if (!tty) return;
    const int width = 30;
    int filled = so.totalTrials > 0 ? int(double(width) * spent / so.totalTrials) : width;
    std::string line = "[" + std::string(size_t(std::min(filled, width)), '=') + std::string(size_t(width - std::min(filled, width)), ' ') +
                       "] " + std::to_string(spent) + "/" + std::to_string(so.totalTrials) + " | task " +
                       std::to_string(task + 1) + "/" + std::to_string(tasks.size()) + " " +
                       std::to_string(done[task]) + "/" + std::to_string(per.trials) + " best " +
                       (std::isfinite(best[task]) ? fmt("%.4g ms", best[task]) : std::string("-"));
    double est = estimate(true);
    if (std::isfinite(est)) line += " | model ~" + fmt("%.3f ms", est);
    std::cout << "\r\033[K" << line << std::flush;
  };
  auto gflops = [&](size_t i, double ms) {
    return tasks[i].flops > 0 && std::isfinite(ms) ? tasks[i].flops / ms / 1e6 : 0.0;
  };
  auto show = [&](const tune::TuneEvent& e) {
    size_t i = size_t(e.taskIndex);
    if (i >= tasks.size()) return;
    switch (e.kind) {
    case tune::TuneEventKind::TaskSelected: drawBar(i); break;
    case tune::TuneEventKind::Baseline:
      baseline[i] = e.result.ok() ? e.result.meanMs() : INFINITY;
      if (!e.result.ok()) {
        if (tty) std::cout << "\r\033[K";
        std::cout << "task " << i + 1 << " " << e.task << ": default schedule not measured: " << e.result.errorKind
                  << ": " << e.result.errorMessage << "\n";
      }
      break;
    case tune::TuneEventKind::TrialDone:
      ++spent;
      done[i] = e.trialsDone;
      best[i] = e.bestMs;
      if (!e.result.ok()) ++errors;
      drawBar(i);
      break;
    case tune::TuneEventKind::NewBest: break;
    case tune::TuneEventKind::TaskProgress: {
      std::string line = "[" + std::to_string(spent) + "/" + std::to_string(so.totalTrials) + "] task " +
                         std::to_string(i + 1) + "/" + std::to_string(tasks.size()) + " " + e.task + " " +
                         std::to_string(e.trialsDone) + "/" + std::to_string(e.trialsTotal) + " best " +
                         (std::isfinite(e.bestMs) ? fmt("%.4g ms", e.bestMs) + " " + fmt("%.2f GFLOP/s", gflops(i, e.bestMs))
                                                  : std::string("-"));
      if (std::isfinite(e.bestMs) && std::isfinite(baseline[i])) line += " " + fmt("%.2fx", baseline[i] / e.bestMs) + " default";
      double est = estimate(true);
      if (std::isfinite(est)) line += " | model ~" + fmt("%.3f ms", est);
      line += " | errors " + std::to_string(errors);
      if (tty) std::cout << "\r\033[K";
      std::cout << line << std::endl; // flushed: one line per batch, also when logged to a file
      drawBar(i);
      break;
    }
    }
  };
  tune::ProcessRunner local(tune::ProcessRunner::selfWorkerCommand());
  tune::Runner& runner = g_distributed ? *g_distributed : local;
  tune::TaskScheduler scheduler(tasks, db, runner, per, so, show);
  std::vector<tune::TuneResult> results = scheduler.run();
  if (tty) std::cout << "\r\033[K";
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();

  std::cout << "\n #  " << padRight("key", 21) << " weight  trials  t90    best ms   GFLOP/s  default ms  speedup\n";
  int tuned = 0;
  for (size_t i = 0; i < results.size() && i < tasks.size(); ++i) {
    const tune::TuneResult& r = results[i];
    double ms = r.best ? r.best->meanMs() : INFINITY;
    if (r.best) ++tuned;
    char buf[256];
    std::snprintf(buf, sizeof buf, "%2zu  %-21s %6d  %6d  %3d  %9s  %8s  %10s  %7s\n", i + 1, r.task.c_str(), tasks[i].weight,
                  r.trialsDone, trialsTo90(db, tasks[i].key, tasks[i].target),
                  std::isfinite(ms) ? fmt("%.4g", ms).c_str() : "-", std::isfinite(ms) ? fmt("%.2f", gflops(i, ms)).c_str() : "-",
                  std::isfinite(baseline[i]) ? fmt("%.4g", baseline[i]).c_str() : "-",
                  std::isfinite(ms) && std::isfinite(baseline[i]) ? fmt("%.2fx", baseline[i] / ms).c_str() : "-");
    std::cout << buf;
  }
  if (!symbolicSpec.empty()) {
    // The records of the representative shape, also under the symbolic model's kernel keys.
    graph::Module symbolic = driver::loadModel(o.model, symbolicSpec).module;
    tune::DynamicRecordSummary ds = tune::aliasDynamicRecords(db, symbolic, m, co, o.target);
    std::cout << "dynamic model: tuned at " << representative << "; " << ds.aliased << " of " << ds.kernels
              << " kernels of the symbolic model (" << symbolicSpec << ") take these records\n";
    for (const std::string& n : ds.notes) std::cout << "  " << n << "\n";
  }
  std::cout << tuned << " of " << tasks.size() << " tasks have a tuned schedule; " << spent << " trials this run, "
            << errors << " failed, " << fmt("%.1f", wall) << " s\n";
  double estBest = estimate(true), estDefault = estimate(false);
  if (std::isfinite(estBest) && std::isfinite(estDefault))
    std::cout << "kernel time per run (sum of weight x time): " << fmt("%.3f ms", estBest) << " tuned (best of tuned and default) vs "
              << fmt("%.3f ms", estDefault) << " default (" << fmt("%.2fx", estDefault / estBest) << ")\n";
  std::cout << "records: " << o.output << "\n"
            << "use them: loom compile " << o.model
            << (o.inputShapes.empty() ? "" : " --input-shapes \"" + (symbolicSpec.empty() ? o.inputShapes : symbolicSpec) + "\"")
            << " --tuning-records " << o.output << " -o model.tar\n";
  return tuned == 0 && spent > 0 ? 1 : 0;
}

int runTune() {
  const TuneCliOptions& o = tuneOptions();
  if (o.model.empty() == o.workload.empty())
    LOOM_THROW(ValueError) << "tune: give either a model (MODEL.onnx) or --workload, not " << (o.model.empty() ? "neither" : "both");
  if (o.output.empty() && !o.listTasks) LOOM_THROW(ValueError) << "tune: --output R.json is required";
  if (!o.workload.empty()) {
    for (auto [set, name] : {std::pair{!o.inputShapes.empty(), "--input-shapes"}, {o.trialsPerTask > 0, "--trials-per-task"},
                             {!o.desiredLayout.empty(), "--desired-layout"},
                             {!o.disabledPasses.empty(), "--disabled-pass"}, {o.listTasks, "--list-tasks"}, {!o.taskFilter.empty(), "--tasks"}})
      if (set) LOOM_THROW(ValueError) << "tune: " << name << " applies to a model, not to --workload";
  }
  bool simulate = o.simulateBuildMs > 0 || o.simulateMeasureMs > 0;
#ifdef LOOM_HAVE_MPI
  if (tune::mpi::launchedByMpi()) {
    tune::mpi::Session session({o.target, o.simulateBuildMs, o.simulateMeasureMs, o.simulateLowering == "charged", o.rtPriority, o.workerEvents});
    if (session.rank() != 0) return session.serve();
    if (!session.hasWorkers()) {
      if (simulate) LOOM_THROW(ValueError) << "tune: --simulate-* needs worker ranks (mpirun -np 2 or more)";
      std::cout << "distributed: one rank, no workers: measuring on this host\n";
      return o.model.empty() ? runWorkloadTune() : runModelTune();
    }
    g_distributed = &session.runner();
    std::cout << "distributed: " << session.describe() << std::endl;
    int rc = o.model.empty() ? runWorkloadTune() : runModelTune();
    g_distributed = nullptr;
    tune::mpi::SessionStats st = session.stats();
    std::cout << "distributed: " << st.trials << " candidates in " << fmt("%.2f", st.wallS) << " s ("
              << fmt("%.1f", st.wallS > 0 ? st.trials * 60.0 / st.wallS : 0.0) << " per minute) on " << st.workers
              << " worker rank" << (st.workers == 1 ? "" : "s") << "; driver busy " << fmt("%.0f%%", 100 * st.driverBusy)
              << ", workers busy " << fmt("%.0f%%", 100 * st.workerBusy) << "; " << st.fillIns
              << " fill-ins (random candidates for workers the search could not feed in time)\n";
    if (st.trials > 0 && st.driverCpuS > 0) {
      double perCandidateMs = 1000 * st.driverCpuS / st.trials;
      std::cout << "distributed: driver CPU " << fmt("%.1f", perCandidateMs) << " ms per candidate ("
                << fmt("%.2f", st.driverCpuS) << " s in all); at " << fmt("%.0f", 1000 * st.meanTrialS)
                << " ms per trial one core of rank 0 keeps about " << fmt("%.0f", 1000 * st.meanTrialS / perCandidateMs)
                << " workers busy; rank 0 used " << fmt("%.2f", st.wallS > 0 ? st.driverCpuS / st.wallS : 0.0)
                << " of a core\n";
      // Per phase (thread CPU clocks): where rank 0's time per candidate goes.
      double phases = 0;
      std::cout << "distributed: driver CPU per candidate by phase (ms):";
      for (size_t i = 0; i < st.phaseCpuS.size(); ++i) {
        phases += st.phaseCpuS[i];
        std::cout << " " << tune::cpu::name(tune::cpu::Phase(i)) << " " << fmt("%.2f", 1000 * st.phaseCpuS[i] / st.trials);
      }
      std::cout << " other " << fmt("%.2f", 1000 * std::max(0.0, st.driverCpuS - phases) / st.trials) << "\n";
    }
    if (tune::RemoteMutantStats m = tune::remoteMutantStats(); m.requested > 0)
      std::cout << "distributed: " << m.requested << " mutants made by the workers (evolutionary search): " << m.made
                << " came back, " << m.repeated << " repeated a known point ("
                << fmt("%.0f%%", m.made ? 100.0 * double(m.repeated) / double(m.made) : 0.0)
                << ", a wasted replay and lowering each); the workers drew " << m.redrawn
                << " known points again (a replay each, not lowered), " << m.allKnown << " requests found only known points\n";
    if (simulate && st.trials > 0)
      std::cout << "distributed: simulated workers' real work (jobs read, points lowered) per trial: "
                << fmt("%.1f", 1000 * st.workerWorkCpuS / st.trials) << " ms CPU, "
                << fmt("%.1f", 1000 * st.workerWorkWallS / st.trials) << " ms wall, charged by its "
                << (o.simulateLowering == "charged" ? "CPU" : "wall") << " time; " << st.simulatedOverruns
                << " trials outlasted their simulated length\n";
    return rc;
  }
#endif
  if (simulate) LOOM_THROW(ValueError) << "tune: --simulate-build-ms / --simulate-measure-ms apply to a distributed run (mpirun -np N loom tune ...)";
  if (o.rtPriority > 0) LOOM_THROW(ValueError) << "tune: --rt-priority applies to a distributed run (mpirun -np N loom tune ...)";
  return o.model.empty() ? runWorkloadTune() : runModelTune();
}

const bool tuneRegistered = addCommand({setupTune, runTune});

} // namespace

} // namespace loom::cli
