// `loom lower`: builds or parses a tensor program and emits it (TIR text for now).
#include <fstream>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ProgramInput.h"
#include "core/support/Error.h"
#include "core/tir/Printer.h"

namespace loom::cli {

namespace {

/// What `lower` prints. New stages (lowered TIR, LLVM IR, assembly) add a value here and a case
/// in emit().
enum class Emit { Tir };

struct LowerOptions {
  std::string file;
  std::string workload;
  bool listWorkloads = false;
  Emit emit = Emit::Tir;
  std::string output; ///< empty: stdout
};

LowerOptions& options() {
  static LowerOptions o;
  return o;
}

std::string emit(const tir::PrimFunc& f, Emit what) {
  switch (what) {
  case Emit::Tir:
    return tir::printFunc(f);
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
  sub->add_option("--emit", o.emit, "What to print: tir")
      ->transform(CLI::CheckedTransformer(std::map<std::string, Emit>{{"tir", Emit::Tir}},
                                          CLI::ignore_case));
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
  std::string text = emit(in.func, o.emit);
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
