// `loom lower`: builds or parses a tensor program and emits it (TIR text for now).
#include <fstream>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ProgramInput.h"
#include "app/cli/ScheduleInput.h"
#include "core/support/Error.h"
#include "core/tir/Printer.h"

namespace loom::cli {

namespace {

/// What `lower` prints. New stages (lowered TIR, LLVM IR, assembly) add a value here and a case
/// in emit().
enum class Emit { Tir, Trace };

struct LowerOptions {
  std::string file;
  std::string workload;
  bool listWorkloads = false;
  Emit emit = Emit::Tir;
  std::string output; ///< empty: stdout
  std::string schedule; ///< --schedule S.py (ScheduleInput.h), empty: none
};

LowerOptions& options() {
  static LowerOptions o;
  return o;
}

std::string emit(const tir::PrimFunc& f, Emit what) {
  switch (what) {
  case Emit::Tir:
    return tir::printFunc(f);
  case Emit::Trace:
    break; // printed from the schedule in run()
  }
  LOOM_ICHECK(false) << "unhandled emit kind";
}

CLI::App* setup(CLI::App& app) {
  LowerOptions& o = options();
  CLI::App* sub = app.add_subcommand("lower", "Build or parse a tensor program and print it");
  sub->add_option("file", o.file, "A .tir file (TVMScript subset) to read");
  sub->add_option("--workload,-w", o.workload, "A workload preset, e.g. matmul:M=64,N=64,K=64");
  sub->add_flag("--list-workloads", o.listWorkloads,
                "List the workload presets and their parameters");
  sub->add_option("--emit", o.emit, "What to print: tir, trace (the schedule's trace)")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, Emit>{{"tir", Emit::Tir}, {"trace", Emit::Trace}}, CLI::ignore_case));
  sub->add_option("--schedule,-s", o.schedule,
                  "Apply this schedule script (Python subset of tvm.tir.Schedule) first");
  sub->add_option("--output,-o", o.output, "Write to this file instead of stdout");
  return sub;
}

int run() {
  const LowerOptions& o = options();
  if (o.listWorkloads) {
    std::cout << workloadListing();
    return 0;
  }
  ProgramInput in = loadProgram("lower", o.file, o.workload);
  // --schedule: transform the program first; --emit trace prints the applied instructions.
  ScheduledProgram scheduled = applyScheduleOption(in.func, o.schedule, o.emit == Emit::Trace);
  in.func = scheduled.func;
  std::string text = o.emit == Emit::Trace ? scheduled.trace : emit(in.func, o.emit);
  if (o.output.empty()) {
    std::cout << text;
    return 0;
  }
  std::ofstream out(o.output, std::ios::binary);
  if (!out) LOOM_THROW(Error) << o.output << ": cannot open for writing";
  out << text;
  if (!out.flush()) LOOM_THROW(Error) << o.output << ": write error";
  return 0;
}

const bool registered = addCommand({setup, run});

} // namespace

} // namespace loom::cli
