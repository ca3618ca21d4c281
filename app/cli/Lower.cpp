// `loom lower`: builds or parses a tensor program, schedules and lowers it, and emits any stage:
// TIR, the schedule trace, lowered TIR, LLVM IR, assembly or C.
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "app/cli/Commands.h"
#include "app/cli/ProgramInput.h"
#include "app/cli/ScheduleInput.h"
#include "core/driver/BuildOperator.h"
#include "core/support/Error.h"
#include "core/tir/Printer.h"
#include "core/transform/Instruments.h"

namespace loom::cli {

namespace {

/// What `lower` prints: a stage of the operator's build.
enum class Emit { Tir, Trace, Lowered, LLVM, Asm, C, CUDA, PTX, OpenCL };

struct LowerOptions {
  std::string file;
  std::string workload;
  bool listWorkloads = false;
  Emit emit = Emit::Tir;
  std::string output; ///< empty: stdout
  std::string schedule; ///< --schedule S.py (ScheduleInput.h), empty: none
  std::string target = "llvm";
  bool printAfterAll = false;
  bool timePasses = false;
};

LowerOptions& options() {
  static LowerOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  LowerOptions& o = options();
  CLI::App* sub = app.add_subcommand("lower", "Build or parse a tensor program and print it");
  sub->add_option("file", o.file, "A .tir file (TVMScript subset) to read");
  sub->add_option("--workload,-w", o.workload, "A workload preset, e.g. matmul:M=64,N=64,K=64");
  sub->add_flag("--list-workloads", o.listWorkloads,
                "List the workload presets and their parameters");
  sub->add_option("--emit", o.emit,
                  "What to print: tir (after the schedule), trace (the schedule as a script), "
                  "lowered (after the lowering pipeline), llvm, asm, c, cuda, ptx (through NVRTC), opencl")
      ->transform(CLI::CheckedTransformer(
          std::map<std::string, Emit>{{"tir", Emit::Tir},
                                      {"trace", Emit::Trace},
                                      {"lowered", Emit::Lowered},
                                      {"llvm", Emit::LLVM},
                                      {"asm", Emit::Asm},
                                      {"c", Emit::C},
                                      {"cuda", Emit::CUDA},
                                      {"ptx", Emit::PTX},
                                      {"opencl", Emit::OpenCL}},
          CLI::ignore_case));
  sub->add_option("--target,-t", o.target,
                  "Code generation target: llvm, \"llvm -mcpu=... -mattr=...\", "
                  "\"llvm -mtriple=aarch64-linux-gnu\", \"cuda -arch=sm_80\", opencl")
      ->capture_default_str();
  sub->add_flag("--print-after-all", o.printAfterAll,
                "Print the IR after every lowering pass that changed it (to stderr)");
  sub->add_flag("--time-passes", o.timePasses,
                "Print the time of each lowering pass and of each stage of the build (to stderr)");
  sub->add_option("--schedule,-s", o.schedule,
                  "Apply this schedule script (Python subset of tvm.tir.Schedule) first");
  sub->add_option("--output,-o", o.output, "Write to this file instead of stdout");
  sub->footer("Examples:\n"
              "  loom lower --workload matmul:M=64,N=64,K=64 --emit tir\n"
              "  loom lower -w matmul:M=1024,N=1024,K=1024 -s examples/schedules/matmul_x86.py "
              "--emit asm --time-passes\n"
              "  loom lower kernel.tir --emit lowered --print-after-all");
  return sub;
}

int run() {
  const LowerOptions& o = options();
  if (o.listWorkloads) {
    std::cout << workloadListing();
    return 0;
  }
  using Clock = std::chrono::steady_clock;
  auto ms = [](Clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  };
  auto t0 = Clock::now();
  ProgramInput in = loadProgram("lower", o.file, o.workload);
  double parseMs = ms(t0);
  // --schedule: transform the program first; --emit trace prints the applied instructions.
  t0 = Clock::now();
  ScheduledProgram scheduled = applyScheduleOption(in.func, o.schedule, o.emit == Emit::Trace);
  double scheduleMs = ms(t0);
  std::string text;
  if (o.emit == Emit::Tir) {
    text = tir::printFunc(scheduled.func);
  } else if (o.emit == Emit::Trace) {
    text = scheduled.trace;
  } else {
    transform::PassContext ctx;
    auto timer = std::make_shared<transform::TimePasses>();
    if (o.printAfterAll) ctx.instruments.push_back(std::make_shared<transform::PrintAfterAll>(std::cerr));
    if (o.timePasses) ctx.instruments.push_back(timer);
    t0 = Clock::now();
    driver::OperatorOptions opts;
    opts.target = o.target;
    // GPU kernels need a GPU target: --emit cuda/ptx/opencl picks it when none is given; without a
    // --schedule the preset's default GPU schedule binds the loops.
    if (o.target == "llvm" && (o.emit == Emit::CUDA || o.emit == Emit::PTX)) opts.target = "cuda";
    if (o.target == "llvm" && o.emit == Emit::OpenCL) opts.target = "opencl";
    opts.defaultGPUSchedule = o.schedule.empty();
    if (in.workload) opts.workload = in.workload->workload->name;
    driver::LoweredOperator op = driver::lowerOperator(scheduled.func, opts, ctx);
    double lowerMs = ms(t0);
    for (const auto& d : ctx.diagnostics) std::cerr << d.str() << "\n";
    t0 = Clock::now();
    switch (o.emit) {
    case Emit::Lowered: text = tir::printFunc(op.lowered); break;
    case Emit::LLVM: text = driver::emitCode(op, driver::CodeKind::LLVM); break;
    case Emit::Asm: text = driver::emitCode(op, driver::CodeKind::Asm); break;
    case Emit::C: text = driver::emitCode(op, driver::CodeKind::C); break;
    case Emit::CUDA: text = driver::emitCode(op, driver::CodeKind::CUDA); break;
    case Emit::PTX: text = driver::emitCode(op, driver::CodeKind::PTX); break;
    case Emit::OpenCL: text = driver::emitCode(op, driver::CodeKind::OpenCL); break;
    default: LOOM_ICHECK(false) << "unhandled emit kind";
    }
    double emitMs = ms(t0);
    if (o.timePasses) {
      char line[160];
      std::cerr << timer->report();
      std::snprintf(line, sizeof line,
                    "stages: parse %.1f ms, schedule %.1f ms, lower %.1f ms, emit %.1f ms, "
                    "total %.1f ms\n",
                    parseMs, scheduleMs, lowerMs, emitMs, parseMs + scheduleMs + lowerMs + emitMs);
      std::cerr << line;
    }
  }
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
