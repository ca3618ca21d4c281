// `loom run`: loads a package (.so model library or .tar) with the runtime alone and runs it on .npz or generated inputs.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <ctime>
#include <iomanip>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommon.h"
#include "core/driver/InputShapes.h"
#include "core/driver/Npz.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/support/Error.h"
#include "runtime/RuntimeFailure.h"
#include "runtime/Package.h"
#include "runtime/RuntimeFailure.h"

namespace loom::cli {

namespace {

struct RunOptions {
  std::string package, inputs, outputs, fillMode = "random", inputShapes, clock = "wall";
  int repeat = 1, number = 1, warmup = 1, printTop = 0;
  bool printTime = false, profile = false;
};

struct TimeSummary {
  double mean = 0, median = 0, min = 0, max = 0, std = 0;
};

TimeSummary summarize(std::vector<double> v) {
  TimeSummary t;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  for (double x : v) t.mean += x;
  t.mean /= double(n);
  t.median = n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
  t.min = v.front();
  t.max = v.back();
  for (double x : v) t.std += (x - t.mean) * (x - t.mean);
  t.std = std::sqrt(t.std / double(n));
  return t;
}

RunOptions& options() {
  static RunOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  RunOptions& o = options();
  CLI::App* sub = app.add_subcommand("run", "Run a compiled package (.so or .tar)");
  sub->footer("The package is loaded by the runtime alone (as a deployed program would): a package built for\n"
              "another machine, damaged or of another format version is refused with the reason (exit code 1).\n\n"
              "Examples:\n"
              "  loom run small_cnn.so --fill-mode random --print-top 5 --print-time\n"
              "  loom run small_cnn.tar --inputs in.npz --outputs out.npz --repeat 10 --profile\n"
              "  loom run small_cnn.so --print-time --number 10 --repeat 5 --warmup 3\n\n"
              "Timing follows tvmc: --warmup runs first (not timed), then --repeat measurements, each the mean of\n"
              "--number runs; --print-time prints the mean, median, min, max and standard deviation of the\n"
              "measurements in milliseconds.");
  sub->add_option("package", o.package, "The package written by `loom compile`")->required();
  sub->add_option("--inputs", o.inputs, "An .npz with the inputs by name (others are filled)");
  sub->add_option("--outputs", o.outputs, "Write the outputs to this .npz");
  sub->add_option("--input-shapes", o.inputShapes,
                  "Shapes of the filled inputs of a dynamic package, e.g. \"data:[3,3,224,224]\"");
  sub->add_option("--fill-mode", o.fillMode, "Inputs not given: zeros, ones or random")
      ->check(CLI::IsMember({"zeros", "ones", "random"}));
  sub->add_option("--repeat", o.repeat, "Measurements to take (each the mean of --number runs)")
      ->check(CLI::PositiveNumber);
  sub->add_option("--number", o.number, "Runs per measurement (default 1)")->check(CLI::PositiveNumber);
  sub->add_option("--warmup", o.warmup, "Untimed runs before the measurements (default 1)")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--print-time", o.printTime,
                "Print the mean, median, min, max and std of the measurements (ms per run)");
  sub->add_option("--print-top", o.printTop, "Print the K largest entries of the first output")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--profile", o.profile, "Print the time of each node");
  sub->add_option("--clock", o.clock,
                  "What --print-time and --profile measure. wall: elapsed time; cpu: the process's CPU time, "
                  "which stays steady while other jobs share the cores (use it with LOOM_NUM_THREADS=1: with "
                  "more threads it also counts idle workers' spinning)")
      ->check(CLI::IsMember({"wall", "cpu"}))
      ->capture_default_str();
  return sub;
}

int runImpl() {
  const RunOptions& o = options();
  runtime::Package pkg = runtime::loadPackage(o.package);
  runtime::GraphExecutor& ex = *pkg.executor;
  std::vector<bool> given(ex.numInputs(), false);
  if (!o.inputs.empty()) {
    for (auto& [name, arr] : driver::readNpz(o.inputs)) {
      size_t i = ex.inputIndex(name);
      ex.setInput(i, arr);
      given[i] = true;
    }
  }
  std::map<std::string, std::vector<int64_t>> shapes;
  if (!o.inputShapes.empty()) shapes = driver::concreteInputShapes(o.inputShapes, "loom run");
  for (const auto& [name, dims] : shapes) ex.inputIndex(name);  // an unknown name fails, listing the inputs
  for (size_t i = 0; i < ex.numInputs(); ++i) {
    if (given[i]) continue;
    std::vector<int64_t> shape = ex.inputShape(i);
    if (auto it = shapes.find(ex.inputName(i)); it != shapes.end()) {
      shape = it->second;
    } else if (ex.isDynamic()) {
      std::vector<std::string> dims = ex.inputDims(i);
      bool symbolic = false;
      std::string text;
      for (size_t k = 0; k < dims.size(); ++k) {
        symbolic |= dims[k].find_first_not_of("0123456789") != std::string::npos;
        text += (k ? ", " : "") + dims[k];
      }
      if (symbolic)
        throw runtime::RuntimeFailure("input '" + ex.inputName(i) + "' has symbolic dims (" + text +
                                      "): give it in --inputs, or its shape in --input-shapes (\"" + ex.inputName(i) +
                                      ":[...]\") to fill it");
    }
    ex.setInput(i, filled(shape, ex.inputDType(i), o.fillMode, unsigned(i + 1)));
  }
  // The first runs are cold (pages of the weights, the thread pool's start, caches): untimed.
  for (int w = 0; w < o.warmup; ++w) ex.run();
  std::vector<double> times;
  const bool cpu = o.clock == "cpu";
  auto nowMs = [cpu]() -> double {
    if (cpu) {
      timespec ts{};
      clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
      return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) * 1e-6;
    }
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  for (int r = 0; r < o.repeat; ++r) {
    const double t0 = nowMs();
    for (int n = 0; n < o.number; ++n) ex.run();
    times.push_back((nowMs() - t0) / double(o.number));
  }
  if (o.printTime) {
    const TimeSummary t = summarize(times);
    std::cout << std::fixed << std::setprecision(4) << "time (ms): mean " << t.mean << ", median " << t.median
              << ", min " << t.min << ", max " << t.max << ", std " << t.std << " over " << times.size()
              << " measurements of " << o.number << " run" << (o.number == 1 ? "" : "s") << " (" << o.warmup
              << " warm-up run" << (o.warmup == 1 ? "" : "s") << " not counted)\n";
  }
  if (o.profile) {
    auto prof = ex.runProfiled(cpu ? runtime::GraphExecutor::ProfileClock::ProcessCpu : runtime::GraphExecutor::ProfileClock::Wall);
    double total = 0;
    for (auto& p : prof) total += p.second;
    std::cout << "node                                               time (ms)      %\n";
    for (auto& [name, ms] : prof)
      std::cout << std::left << std::setw(50) << name << std::right << std::fixed << std::setprecision(4)
                << std::setw(10) << ms << std::setprecision(1) << std::setw(8) << (total > 0 ? 100 * ms / total : 0) << "\n";
    std::cout << std::left << std::setw(50) << "total" << std::right << std::setprecision(4) << std::setw(10) << total << "\n";
  }
  if (o.printTop > 0 && ex.numOutputs() > 0) {
    runtime::NDArray out = ex.getOutput(0);
    std::vector<std::pair<double, int64_t>> v;
    for (int64_t i = 0; i < out.numel(); ++i) v.emplace_back(elementAt(out, i), i);
    size_t k = std::min<size_t>(size_t(o.printTop), v.size());
    std::partial_sort(v.begin(), v.begin() + long(k), v.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::cout << "top " << k << " of " << ex.outputName(0) << ":\n";
    for (size_t i = 0; i < k; ++i) std::cout << "  [" << v[i].second << "] " << std::setprecision(6) << v[i].first << "\n";
  }
  if (!o.outputs.empty()) {
    std::vector<std::pair<std::string, runtime::NDArray>> outs;
    for (size_t i = 0; i < ex.numOutputs(); ++i) outs.emplace_back(ex.outputName(i), ex.getOutput(i));
    driver::writeNpz(o.outputs, outs);
  }
  return 0;
}

int run() {
  try {
    return runImpl();
  } catch (const runtime::RuntimeFailure& e) {
    // Bad packages and mismatched inputs are the user's error, not ours.
    LOOM_THROW(ValueError) << e.what();
  }
}

const bool registered = addCommand({setup, run});

}  // namespace

}  // namespace loom::cli
