// `loom verify`: runs a program before and after its schedule in the interpreter, and the scheduled
// program compiled for the host, and compares each with the unscheduled interpreter run.
#include <iomanip>
#include <iostream>
#include <sstream>

#include "app/cli/Commands.h"
#include "app/cli/ProgramInput.h"
#include "app/cli/ScheduleInput.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/support/Error.h"
#include "runtime/PackedFunc.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"

namespace loom::cli {

namespace {

struct VerifyOptions {
  std::string file;
  std::string workload;
  std::string schedule;
  uint64_t seed = 1;
  double rtol = 1e-4, atol = 1e-5;
  bool noCompile = false;
};

VerifyOptions& options() {
  static VerifyOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  VerifyOptions& o = options();
  CLI::App* sub = app.add_subcommand("verify", "Check that a schedule keeps a program's meaning: "
                                               "run it before and after in the interpreter");
  sub->add_option("file", o.file, "A .tir file (TVMScript subset) to read");
  sub->add_option("--workload,-w", o.workload, "A workload preset, e.g. matmul:M=64,N=64,K=64");
  sub->add_option("--schedule,-s", o.schedule,
                  "The schedule script (Python subset of tvm.tir.Schedule)")
      ->required();
  sub->add_option("--seed", o.seed, "Seed of the random inputs")->capture_default_str();
  sub->add_option("--rtol", o.rtol, "Relative tolerance")->capture_default_str();
  sub->add_option("--atol", o.atol, "Absolute tolerance")->capture_default_str();
  sub->add_flag("--no-compile", o.noCompile,
                "Only compare in the interpreter (skip running the compiled scheduled program)");
  sub->footer("Prints `equivalent (max rel err ...)` or the first mismatch; exit code 0 only when "
              "equivalent.\n\nExamples:\n"
              "  loom verify --workload matmul:M=256,N=256,K=256 --schedule "
              "examples/schedules/matmul_tiled.py\n"
              "  loom verify --workload softmax:M=128,N=128 --schedule "
              "examples/schedules/softmax_inline.py --no-compile\n"
              "  loom verify kernel.tir --schedule my_schedule.py --seed 3");
  return sub;
}

int run() {
  const VerifyOptions& o = options();
  ProgramInput in = loadProgram("verify", o.file, o.workload);
  tir::Schedule sch = applyScheduleFile(in.func, o.schedule);
  const tir::PrimFunc& before = in.func;
  const tir::PrimFunc& after = sch.func();

  // Same random data for both runs (outputs too, so a schedule that skips writes shows up).
  std::vector<runtime::NDArray> a = topi::makeParamArrays(before), b = topi::makeParamArrays(after);
  std::vector<tir::Arg> argsA, argsB;
  for (size_t i = 0; i < a.size(); ++i) {
    tir::fillRandom(a[i], o.seed + i);
    tir::fillRandom(b[i], o.seed + i);
    argsA.push_back(a[i]);
    argsB.push_back(b[i]);
  }
  tir::interpret(before, argsA);
  tir::interpret(after, argsB);

  // Compares `got` with the unscheduled interpreter run; prints the first mismatch.
  auto compare = [&](const std::vector<runtime::NDArray>& got, const char* what, double& worst) {
    worst = 0;
    for (size_t i = 0; i < a.size(); ++i) {
      std::string report = tir::mismatchReport(got[i], a[i], o.rtol, o.atol);
      if (!report.empty()) {
        std::cout << "NOT equivalent: parameter '" << before->paramBuffer(i)->name << "' differs "
                  << what << "\n"
                  << report << "\n";
        return false;
      }
      worst = std::max(worst, tir::maxRelError(got[i], a[i]));
    }
    return true;
  };
  auto fmt = [](double v) {
    std::ostringstream os;
    os << std::setprecision(3) << v;
    return os.str();
  };
  double worst = 0;
  if (!compare(b, "after the schedule", worst)) return 1;
  std::cout << "equivalent (max rel err " << fmt(worst) << ")\n";
  if (o.noCompile) return 0;

  // The scheduled program, lowered and compiled for the host, on the same data.
  transform::PassContext ctx;
  driver::OperatorOptions opts;
  driver::LoweredOperator op = driver::lowerOperator(after, opts, ctx);
  auto jit = driver::jitOperator(op);
  std::vector<runtime::NDArray> c = topi::makeParamArrays(after);
  std::vector<runtime::PackedArg> packed;
  for (size_t i = 0; i < c.size(); ++i) {
    tir::fillRandom(c[i], o.seed + i);
    packed.emplace_back(c[i]);
  }
  jit->getFunction(op.lowered->name).call(packed);
  if (!compare(c, "when compiled", worst)) return 1;
  std::cout << "compiled: equivalent (max rel err " << fmt(worst) << ")\n";
  return 0;
}

const bool registered = addCommand({setup, run});

} // namespace

} // namespace loom::cli
