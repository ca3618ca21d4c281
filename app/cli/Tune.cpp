// `loom tune`: search schedules for a workload, measuring candidates in worker processes; and the
// hidden `loom tune-worker` those workers run.
#include <iostream>

#include "app/cli/Commands.h"
#include "core/tune/Measure.h"

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

} // namespace

} // namespace loom::cli
