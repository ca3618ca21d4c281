// `loom run-tir`: runs a tensor program in the reference interpreter on seeded random inputs and,
// with --check, compares the outputs with the workload's plain C++ reference.
#include <cstdio>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ProgramInput.h"
#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"

namespace loom::cli {

namespace {

struct RunTirOptions {
  std::string file;
  std::string workload;
  bool check = false;
  uint64_t seed = 0;
  double tolerance = 0; ///< 0: the workload's topi::checkTolerance
};

RunTirOptions& options() {
  static RunTirOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  RunTirOptions& o = options();
  CLI::App* sub = app.add_subcommand(
      "run-tir", "Run a tensor program in the reference interpreter on random inputs");
  sub->add_option("file", o.file,
                  "A .tir file to run (its parameters must match --workload's when checking)");
  sub->add_option(
      "--workload,-w", o.workload,
      "A workload preset: the program to run when no FILE is given, and the reference for --check");
  sub->add_flag("--check", o.check, "Compare the outputs with the workload's C++ reference");
  sub->add_option("--seed", o.seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option(
         "--tolerance", o.tolerance,
         "Largest accepted max relative error (default: 1e-4, more for reductions over > 64 terms)")
      ->check(CLI::PositiveNumber);
  sub->footer("Examples:\n"
              "  loom run-tir --workload matmul:M=64,N=64,K=64 --check\n"
              "  loom run-tir kernel.tir --seed 3\n"
              "  loom run-tir kernel.tir --workload matmul:M=64,N=64,K=64 --check --tolerance 1e-3");
  return sub;
}

std::string fmt(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

int run() {
  const RunTirOptions& o = options();
  ProgramInput in;
  std::optional<topi::WorkloadSpec> reference;
  if (!o.file.empty()) {
    in.func = loadTirFile(o.file);
    in.origin = o.file;
    if (!o.workload.empty()) reference = topi::parseWorkloadSpec(o.workload);
  } else {
    in = loadProgram("run-tir", o.file, o.workload);
    reference = in.workload;
  }
  if (o.check && !reference)
    LOOM_THROW(Error) << "run-tir: --check needs --workload SPEC to name the reference";

  // Arrays shaped like the reference workload's parameters (it defines inputs and outputs), or
  // like the program's own parameters.
  tir::PrimFunc shapes = reference ? topi::buildWorkload(*reference) : in.func;
  std::vector<runtime::NDArray> arrays = topi::makeParamArrays(shapes);
  if (in.func->params.size() != arrays.size())
    LOOM_THROW(Error) << in.origin << ": the program has " << in.func->params.size()
                      << " parameters but workload " << reference->str() << " has "
                      << arrays.size();
  size_t numInputs = reference ? size_t(reference->workload->numInputs) : arrays.size();
  for (size_t i = 0; i < numInputs; ++i)
    tir::fillRandom(arrays[i], o.seed + i);

  std::vector<tir::Arg> args(arrays.begin(), arrays.end());
  tir::interpret(in.func, args);
  std::cout << "ran " << in.origin << " (seed " << o.seed << ")\n";

  if (!o.check) {
    for (size_t i = numInputs < arrays.size() ? numInputs : 0; i < arrays.size(); ++i)
      std::cout << in.func->paramBuffer(i)->name << " = " << tir::formatArray(arrays[i], 16)
                << "\n";
    return 0;
  }

  std::vector<runtime::NDArray> want;
  for (size_t i = 0; i < arrays.size(); ++i)
    want.push_back(i < numInputs ? arrays[i] : arrays[i].copy());
  topi::runReference(*reference, want);
  double worst = 0;
  for (size_t i = numInputs; i < arrays.size(); ++i) {
    double err = tir::maxRelError(arrays[i], want[i]);
    std::cout << in.func->paramBuffer(i)->name << ": max relative error " << fmt(err) << "\n";
    worst = err > worst || err != err ? err : worst;
  }
  double tolerance = o.tolerance > 0 ? o.tolerance : topi::checkTolerance(*reference);
  bool ok = worst <= tolerance;
  std::cout << "check " << (ok ? "passed" : "FAILED") << ": max relative error " << fmt(worst)
            << (ok ? " <= " : " > ") << "tolerance " << fmt(tolerance) << " against the "
            << reference->workload->name << " reference\n";
  if (!ok)
    std::cerr << "error: " << in.origin << ": the result does not match the "
              << reference->workload->name << " reference (max relative error " << fmt(worst)
              << " > " << fmt(tolerance) << ")\n";
  return ok ? 0 : 1;
}

const bool registered = addCommand({setup, run});

} // namespace

} // namespace loom::cli
