// `loom run`: loads a package (.so model library or .tar) with the runtime alone and runs it on .npz or generated inputs.
#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommon.h"
#include "core/driver/Npz.h"
#include "core/support/Error.h"
#include "runtime/Package.h"
#include "runtime/RuntimeFailure.h"

namespace loom::cli {

namespace {

struct RunOptions {
  std::string package, inputs, outputs, fillMode = "random";
  int repeat = 1, printTop = 0;
  bool printTime = false, profile = false;
};

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
              "  loom run small_cnn.tar --inputs in.npz --outputs out.npz --repeat 10 --profile");
  sub->add_option("package", o.package, "The package written by `loom compile`")->required();
  sub->add_option("--inputs", o.inputs, "An .npz with the inputs by name (others are filled)");
  sub->add_option("--outputs", o.outputs, "Write the outputs to this .npz");
  sub->add_option("--fill-mode", o.fillMode, "Inputs not given: zeros, ones or random")
      ->check(CLI::IsMember({"zeros", "ones", "random"}));
  sub->add_option("--repeat", o.repeat, "Run this many times")->check(CLI::PositiveNumber);
  sub->add_flag("--print-time", o.printTime, "Print the mean, min and max time per run");
  sub->add_option("--print-top", o.printTop, "Print the K largest entries of the first output")
      ->check(CLI::NonNegativeNumber);
  sub->add_flag("--profile", o.profile, "Print the time of each node");
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
  for (size_t i = 0; i < ex.numInputs(); ++i)
    if (!given[i]) ex.setInput(i, filled(ex.inputShape(i), ex.inputDType(i), o.fillMode, unsigned(i + 1)));
  std::vector<double> times;
  for (int r = 0; r < o.repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    ex.run();
    times.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  }
  if (o.printTime) {
    double sum = 0;
    for (double t : times) sum += t;
    std::cout << std::fixed << std::setprecision(3) << "time (ms): mean " << sum / double(times.size()) << ", min "
              << *std::min_element(times.begin(), times.end()) << ", max "
              << *std::max_element(times.begin(), times.end()) << " over " << times.size() << " runs\n";
  }
  if (o.profile) {
    auto prof = ex.runProfiled();
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
