// Differential testing of the compiler: random tensor programs, unscheduled, randomly scheduled
// (primitive sequences, and the tuner's own search space), compiled with LLVM at opt levels 0-3 and
// through the C backend, each compared with the reference interpreter on the unscheduled program.
// With --gpu-every K, every Kth program is also bound to GPU threads (its default GPU schedule, a
// flat binding with a drawn thread count, a point of the tuner's GPU space) and run on each GPU
// target of --gpu-targets that this machine can run (opencl on PoCL, cuda with a driver + NVRTC;
// cuda with NVRTC but no driver: the kernels are compiled to PTX only); each such program comes
// with a second one, a reduction with data reuse (matmul, matrix-vector, 1-D conv), through the
// same GPU variants (--reuse-file: a committed one instead).
// Also random ONNX models through the whole model pipeline (import, layouts, fusion, Winograd,
// default schedules, opt levels 0-3) against the graph evaluator.
// Usage: fuzz_difftest [--tir N] [--graphs M] [--seed S] [--c-every K] [--graph-model FILE.onnx]
//                      [--tir-file FILE.py [--schedule-file SCHED.py]] [--gpu-every K]
//                      [--gpu-targets opencl,cuda] [--reuse-file FILE.py] [--max-seconds T] [--quiet]
// (--graph-model: each graph case runs that model instead of the generated one; --tir-file: each
// program case that TVMScript program, --schedule-file: with that schedule script as its random
// schedule; regressions that survive generator changes; --max-seconds: no case starts after T
// seconds, the summary still prints).
// Exit code 1 when any case mismatched (each is printed: program, schedule, variant, difference).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <span>
#include <string>
#include <dlfcn.h>
#include <unistd.h>
#include <vector>

#include "codegen/CodeGenCUDANVRTC.h"
#include "codegen/CodeGenLLVM.h"
#include "codegen/CodeGenOpenCL.h"
#include "codegen/JITModule.h"
#include "core/driver/CompileModel.h"
#include "core/driver/Npz.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Evaluator.h"
#include "runtime/GraphExecutor.h"
#include "tests/fuzz/diff/GraphGen.h"
#include "core/driver/BuildOperator.h"
#include "core/schedule/ScheduleError.h"
#include "core/schedule/Script.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Op.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "core/transform/GPUSchedules.h"
#include "core/transform/Instruments.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/GPURules.h"
#include "runtime/DeviceAPI.h"
#include "runtime/Module.h"
#include "tests/fuzz/diff/TirGen.h"

using namespace loom;

namespace {

/// Thread CPU seconds per phase (LOOM_DIFF_PROFILE=1 prints them at the end): CPU time, not
/// wall time, so the split is meaningful on a loaded machine.
double cpuNow() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
}
struct PhaseStats {
  double total = 0, min = 1e9;
  long count = 0;
};
std::map<std::string, PhaseStats>& profile() {
  static std::map<std::string, PhaseStats> p;
  return p;
}
/// Adds the CPU time from its construction to its destruction to `phase`.
struct Phase {
  explicit Phase(std::string name) : name(std::move(name)), t0(cpuNow()) {}
  ~Phase() {
    PhaseStats& p = profile()[name];
    double t = cpuNow() - t0;
    p.total += t;
    p.min = std::min(p.min, t);
    ++p.count;
  }
  std::string name;
  double t0;
};

struct Counts {
  long graphs = 0, graphMismatches = 0;
  long programs = 0, variants = 0, duplicates = 0, scheduled = 0, tunerSpace = 0, cBuilds = 0, mismatches = 0, buildFailures = 0;
  /// Per GPU target: variants run on the device, variants only compiled (CUDA C to PTX by NVRTC
  /// where there is no driver), and variants skipped (no device here).
  std::map<std::string, long> gpuRun, gpuCompiledOnly, gpuSkipped;
  long gpuTunerSpace = 0, reusePrograms = 0, gpuRefused = 0;
};

const std::string kNoCudaDriver = "no CUDA driver here (libcuda.so.1 not found)";

/// Empty when kernels of `target` ("opencl", "cuda") can run here, else why not.
std::string gpuUnavailable(const std::string& target) {
  if (target == "cuda") {
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib) return kNoCudaDriver;
    dlclose(lib);
    std::string why;
    if (!codegen::nvrtcAvailable(&why)) return "NVRTC missing: " + why;
  }
  try {
    runtime::DeviceAPI::get(target == "cuda" ? runtime::DeviceType::CUDA : runtime::DeviceType::OpenCL);
  } catch (const std::exception& e) {
    return e.what();
  }
  return {};
}

std::vector<runtime::NDArray> argsFor(const tir::PrimFunc& f, uint64_t seed) {
  std::vector<runtime::NDArray> out;
  for (size_t i = 0; i < f->params.size(); ++i) {
    tir::Buffer b = f->paramBuffer(i);
    std::vector<int64_t> shape;
    for (auto& e : b->shape) shape.push_back(*tir::asConstInt(e));
    runtime::DType dt{uint8_t(b->dtype.code()), uint8_t(b->dtype.bits()), uint16_t(b->dtype.lanes())};
    auto a = runtime::NDArray::empty(shape, dt);
    tir::fillRandom(a, seed * 131 + i);
    out.push_back(a);
  }
  return out;
}

/// Empty when `got` matches `want` (exactly for integers), else a report. A NaN of the reference
/// (a program computing inf - inf, seed 1110364) must be a NaN in `got` at the same index.
std::string compare(const std::vector<runtime::NDArray>& got, const std::vector<runtime::NDArray>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    bool isFloat = want[i].dtype().code == runtime::DType::Float;
    std::string m = isFloat ? tir::mismatchReport(got[i], want[i], 1e-4, 1e-5, /*equalNan=*/true)
                            : tir::mismatchReport(got[i], want[i], 0, 0);
    if (!m.empty()) return "parameter " + std::to_string(i) + ": " + m;
  }
  return {};
}

class Runner {
public:
  Runner(int cEvery, bool quiet, std::string graphModel, std::string tirFile, std::string scheduleFile, int gpuEvery,
         std::vector<std::string> gpuTargets, std::string reuseFile)
      : m_cEvery(cEvery), m_quiet(quiet), m_graphModel(std::move(graphModel)), m_tirFile(std::move(tirFile)),
        m_scheduleFile(std::move(scheduleFile)), m_gpuEvery(gpuEvery), m_gpuTargets(std::move(gpuTargets)),
        m_reuseFile(std::move(reuseFile)) {
    m_dir = std::filesystem::temp_directory_path() / ("loom-difftest-" + std::to_string(getpid()));
    std::filesystem::create_directories(m_dir);
  }
  ~Runner() {
    std::error_code ec;
    std::filesystem::remove_all(m_dir, ec);
  }
  Counts counts;

  void program(uint64_t seed) {
    m_compiled.clear();
    // Variant (d) of gpuVariants takes this program's random schedule, never an earlier one's: with
    // --gpu-every 2 or more, a program that ran no GPU variants left its schedule here, and the
    // next GPU program whose random sequence applied nothing ran it against its own outputs.
    m_randomScheduled.reset();
    std::mt19937_64 rng(seed);
    std::optional<Phase> ph(std::in_place, "generate + parse");
    std::string text = fuzz::randomTirProgram(rng);
    // A committed program instead of the generated one (the rng is advanced the same way, so the
    // seed still picks the inputs, the opt levels and the random schedule's draws).
    if (!m_tirFile.empty()) text = readFile(m_tirFile);
    // LOOM_DIFF_DUMP=DIR: each program's text as DIR/tir_SEED.py (a corpus for the TVMScript
    // fuzz target or its replay under the sanitizers).
    if (const char* dir = std::getenv("LOOM_DIFF_DUMP"))
      std::ofstream(std::string(dir) + "/tir_" + std::to_string(seed) + ".py") << text;
    tir::PrimFunc f;
    try {
      f = tir::parseFunc(text, "generated.py");
    } catch (const Error& e) {
      report(seed, text, "", "parse", std::string("the generated program does not parse: ") + e.what());
      return;
    }
    ++counts.programs;
    auto want = argsFor(f, seed);
    ph.emplace("interpreter (reference)");
    try {
      tir::interpret(f, std::vector<tir::Arg>(want.begin(), want.end()));
    } catch (const Error& e) {
      report(seed, text, "", "interpret", std::string("the interpreter refuses the generated program: ") + e.what());
      return;
    }
    ph.reset();
    // Unscheduled, at one opt level (cycling through 0-3).
    int opt = int(seed % 4);
    check(seed, text, f, "", f, "llvm -opt-level=" + std::to_string(opt), want);
    // A random primitive sequence.
    {
      std::optional<Phase> sp(std::in_place, "schedule (random primitives)");
      tir::Schedule sch(f, seed);
      int applied = 0;
      if (m_scheduleFile.empty()) {
        applied = fuzz::randomSchedule(sch, rng, 2 + int(rng() % 8));
      } else {
        // A committed schedule script instead of the random one (the rng draws the same count).
        // Like a random sequence, it stops at a primitive that refuses (a fixed bug may be a
        // refusal now): the lines before it are checked.
        (void)(2 + int(rng() % 8));
        tir::ScriptResult r = tir::runScript(sch, readFile(m_scheduleFile), m_scheduleFile);
        if (!r.ok && !m_quiet) std::fprintf(stderr, "schedule script stopped: %s\n", r.message.c_str());
        applied = r.linesApplied;
      }
      sp.reset();
      if (applied > 0) {
        ++counts.scheduled;
        std::string trace = sch.trace().str();
        interpretCheck(seed, text, trace, sch.func(), want);
        check(seed, text, f, trace, sch.func(), "llvm -opt-level=" + std::to_string((opt + 1 + rng() % 3) % 4), want);
        if (m_cEvery > 0 && counts.programs % m_cEvery == 0) checkC(seed, text, trace, sch.func(), want);
        m_randomScheduled = sch;
      }
    }
    // A point of the tuner's search space.
    {
      static const tune::SpaceGenerator space = tune::SpaceGenerator::defaultCpu();
      std::optional<tune::SpacePoint> p;
      try {
        Phase sp("schedule (tuner space)");
        p = space.sample(f, seed);
      } catch (const tir::ScheduleError&) {
      }
      if (p) {
        ++counts.tunerSpace;
        std::string trace = p->final.trace().str();
        interpretCheck(seed, text, trace, p->final.func(), want);
        check(seed, text, f, trace, p->final.func(), "llvm", want);
      }
    }
    if (m_gpuEvery > 0 && counts.programs % m_gpuEvery == 0) {
      gpuVariants(seed, text, f, rng, want);
      reuseProgram(seed);
    }
  }

  /// With the GPU variants: a second program of the seed, a reduction with data reuse
  /// (fuzz::randomReuseProgram: matmul, matrix-vector, 1-D conv; what the GPU space tiles with
  /// vthreads and shared memory), from its own rng: compiled unscheduled for the CPU and run
  /// through the GPU variants. --reuse-file FILE: that program instead (a regression).
  void reuseProgram(uint64_t seed) {
    std::mt19937_64 rng(seed ^ 0x7265757365ull);
    std::string text = fuzz::randomReuseProgram(rng);
    if (!m_reuseFile.empty()) text = readFile(m_reuseFile);
    if (const char* dir = std::getenv("LOOM_DIFF_DUMP"))
      std::ofstream(std::string(dir) + "/reuse_" + std::to_string(seed) + ".py") << text;
    text = "# the reuse program of seed " + std::to_string(seed) + "\n" + text;
    tir::PrimFunc f;
    try {
      f = tir::parseFunc(text, "reuse.py");
    } catch (const Error& e) {
      report(seed, text, "", "parse", std::string("the generated reuse program does not parse: ") + e.what());
      return;
    }
    ++counts.reusePrograms;
    auto want = argsFor(f, seed);
    try {
      tir::interpret(f, std::vector<tir::Arg>(want.begin(), want.end()));
    } catch (const Error& e) {
      report(seed, text, "", "interpret", std::string("the interpreter refuses the reuse program: ") + e.what());
      return;
    }
    check(seed, text, f, "", f, "llvm -opt-level=" + std::to_string(seed % 4), want);
    gpuVariants(seed, text, f, rng, want);
  }

  void graph(uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::string ops;
    std::string bytes = fuzz::randomOnnxModel(rng, &ops);
    if (!m_graphModel.empty()) {
      // A committed model instead of the generated one (the rng is advanced the same way, so the
      // seed still picks the same opt level, layout, Winograd choice and inputs).
      std::ifstream in(m_graphModel, std::ios::binary);
      if (!in) throw std::runtime_error("fuzz_difftest: cannot read " + m_graphModel);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
      ops = m_graphModel;
    }
    CompileModelTry t;
    t.opt = int(seed % 4);
    const char* layouts[] = {"", "NCHW", "NCHWc"};
    t.layout = layouts[rng() % (t.opt >= 1 ? 3 : 2)];
    t.noWinograd = rng() % 4 == 0;
    // Reproduction overrides: LOOM_DIFF_OPT=N, LOOM_DIFF_LAYOUT=NCHW|NCHWc|default.
    if (const char* e = std::getenv("LOOM_DIFF_OPT")) t.opt = std::atoi(e);
    if (const char* e = std::getenv("LOOM_DIFF_LAYOUT")) t.layout = std::string(e) == "default" ? "" : e;
    std::string what = "graph seed " + std::to_string(seed) + " [" + ops + "] opt " + std::to_string(t.opt) +
                       " layout '" + t.layout + "'" + (t.noWinograd ? " no winograd" : "");
    // LOOM_DIFF_DUMP=DIR: each graph's model as DIR/graph_SEED.onnx and its description in
    // DIR/graph_SEED.txt, written before it is compiled (a case that hangs or dies leaves them).
    if (const char* dir = std::getenv("LOOM_DIFF_DUMP")) {
      std::string base = std::string(dir) + "/graph_" + std::to_string(seed);
      std::ofstream(base + ".onnx", std::ios::binary) << bytes;
      std::ofstream(base + ".txt") << what << "\n";
    }
    try {
      std::optional<Phase> ph(std::in_place, "graph: import");
      graph::Module m = frontend::importOnnxBytes(bytes, "random.onnx");
      driver::CompileModelOptions o;
      o.optLevel = t.opt;
      o.desiredLayout = t.layout;
      if (t.noWinograd) o.disabledPasses = {"winograd-conv"};
      ph.emplace("graph: compileModel (passes, schedules, LLVM)");
      driver::CompiledModel model = driver::compileModel(m, "llvm", {}, o);
      ph.reset();
      graph::Function main = m.main();
      std::vector<runtime::NDArray> inputs;
      for (size_t i = 0; i < main->params.size(); ++i) {
        const driver::TensorInfo* info = nullptr;
        for (auto& in : model.inputs)
          if (in.name == main->params[i]->name) info = &in;
        if (!info) throw std::runtime_error("compiled model has no input " + main->params[i]->name);
        auto a = runtime::NDArray::empty(info->shape, info->dtype);
        tir::fillRandom(a, seed * 7 + i);
        inputs.push_back(a);
      }
      ph.emplace("graph: evaluator (reference)");
      std::vector<runtime::NDArray> want = graph::evaluate(main, inputs);
      ph.emplace("graph: executor (load, run)");
      auto ex = driver::createExecutor(model);
      for (size_t i = 0; i < inputs.size(); ++i) ex->setInput(main->params[i]->name, inputs[i]);
      ex->run();
      ph.reset();
      ++counts.graphs;
      if (!m_quiet) std::fprintf(stderr, "%s\n", what.c_str());
      if (ex->numOutputs() != want.size()) throw std::runtime_error("output count differs");
      bool mismatched = false;
      std::vector<std::pair<std::string, runtime::NDArray>> arrays;
      for (size_t i = 0; i < inputs.size(); ++i) arrays.emplace_back(main->params[i]->name, inputs[i]);
      for (size_t i = 0; i < want.size(); ++i) {
        runtime::NDArray got = ex->getOutput(i);
        arrays.emplace_back("want" + std::to_string(i), want[i]);
        arrays.emplace_back("got" + std::to_string(i), got);
        double err = tir::maxRelError(got, want[i]);
        if (!(err <= 2e-3)) {
          ++counts.graphMismatches;
          mismatched = true;
          std::fprintf(stderr, "=== GRAPH MISMATCH %s: output %zu max rel error %g\n%s\n", what.c_str(), i, err,
                       tir::mismatchReport(got, want[i], 2e-3, 1e-4).c_str());
        }
      }
      if (mismatched) {
        dumpModel(seed, bytes);
        // The inputs, the evaluator's outputs (wantN) and the executor's (gotN), for a check against
        // another oracle (numpy in float64, ONNX Runtime).
        std::string npz = "difftest-graph-" + std::to_string(seed) + ".npz";
        driver::writeNpz(npz, arrays);
        std::fprintf(stderr, "    inputs and outputs written to %s\n", npz.c_str());
      }
    } catch (const std::exception& e) {
      ++counts.graphs;
      ++counts.graphMismatches;
      std::fprintf(stderr, "=== GRAPH FAILURE %s: %s\n", what.c_str(), e.what());
      dumpModel(seed, bytes);
    }
  }

private:
  struct CompileModelTry {
    int opt = 3;
    std::string layout;
    bool noWinograd = false;
  };
  static std::string readFile(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error("fuzz_difftest: cannot read " + path);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }
  void dumpModel(uint64_t seed, const std::string& bytes) {
    std::string path = "difftest-graph-" + std::to_string(seed) + ".onnx";
    std::ofstream(path, std::ios::binary) << bytes;
    std::fprintf(stderr, "    model written to %s\n", path.c_str());
  }
  int m_cEvery;
  bool m_quiet;
  std::string m_graphModel;
  std::string m_tirFile, m_scheduleFile;
  int m_gpuEvery;
  std::vector<std::string> m_gpuTargets;
  std::string m_reuseFile;
  std::map<std::string, std::string> m_gpuUnavailable;  // per GPU target, checked once: why it cannot run here
  std::set<std::string> m_ptxOnly;  // GPU targets whose kernels are only compiled here (cuda without a driver)
  std::optional<tir::Schedule> m_randomScheduled;  // this program's random primitive sequence, for variant (d)
  bool m_lowered = std::getenv("LOOM_DIFF_LOWERED") != nullptr;
  std::set<std::string> m_compiled;  // target + lowered entry of each variant compiled for this program
  std::filesystem::path m_dir;

  void report(uint64_t seed, const std::string& text, const std::string& trace, const std::string& variant,
              const std::string& what) {
    ++counts.mismatches;
    std::fprintf(stderr, "=== MISMATCH seed %llu, %s: %s\n--- program:\n%s\n--- schedule:\n%s\n", (unsigned long long)seed,
                 variant.c_str(), what.c_str(), text.c_str(), trace.c_str());
  }

  void interpretCheck(uint64_t seed, const std::string& text, const std::string& trace, const tir::PrimFunc& g,
                      const std::vector<runtime::NDArray>& want) {
    ++counts.variants;
    auto got = argsFor(g, seed);
    try {
      Phase ph("interpreter (scheduled)");
      tir::interpret(g, std::vector<tir::Arg>(got.begin(), got.end()));
    } catch (const Error& e) {
      report(seed, text, trace, "interpreter on the scheduled program", e.what());
      return;
    }
    std::string m = compare(got, want);
    if (!m.empty()) report(seed, text, trace, "interpreter on the scheduled program", m + "\n" + tir::printFunc(g));
  }

  /// The lowering's pass context; LOOM_DIFF_PRINT=passes prints each pass's output too (which
  /// pass broke a program).
  static transform::PassContext passContext() {
    transform::PassContext ctx;
    if (const char* e = std::getenv("LOOM_DIFF_PRINT"); e && std::string(e) == "passes")
      ctx.instruments.push_back(std::make_shared<transform::PrintAfterAll>(std::cerr));
    return ctx;
  }

  /// Whether this program already compiled `code` for `target` (a schedule that changed nothing
  /// the lowering keeps, the tuner's point equal to the plain program): the same machine code and
  /// result, so the variant is skipped and counted as a duplicate instead.
  bool compiledBefore(const std::string& target, const tir::PrimFunc& code) {
    if (m_compiled.insert(target + "\n" + tir::printFunc(code)).second) return false;
    --counts.variants;
    ++counts.duplicates;
    return true;
  }

  void check(uint64_t seed, const std::string& text, const tir::PrimFunc&, const std::string& trace, const tir::PrimFunc& g,
             const std::string& target, const std::vector<runtime::NDArray>& want) {
    ++counts.variants;
    auto got = argsFor(g, seed);
    try {
      transform::PassContext ctx = passContext();
      driver::OperatorOptions o;
      o.target = target;
      std::optional<Phase> ph(std::in_place, "lower");
      driver::LoweredOperator op = driver::lowerOperator(g, o, ctx);
      ph.reset();
      if (compiledBefore(op.target.str(), op.entry)) return;
      if (std::getenv("LOOM_DIFF_PRINT"))
        std::fprintf(stderr, "--- %s, schedule:\n%s\n--- lowered:\n%s\n", target.c_str(), trace.c_str(),
                     tir::printFunc(op.entry).c_str());
      if (m_lowered && op.lowered.defined()) loweredCheck(seed, text, trace, target, op.lowered, want);
      ph.emplace("LLVM IR + optimization, " + target);
      codegen::LLVMModule mod = codegen::buildLLVM({op.entry}, op.target);
      ph.emplace("JIT (machine code), " + target);
      auto jit = std::make_unique<codegen::JITModule>(std::move(mod));
      runtime::PackedFunc fn = jit->getFunction(op.entry->name);
      ph.emplace("run compiled");
      std::vector<runtime::PackedArg> args(got.begin(), got.end());
      fn.call(args);
      ph.reset();
    } catch (const std::exception& e) {
      ++counts.buildFailures;
      report(seed, text, trace, target, std::string("build or run failed: ") + e.what());
      return;
    }
    std::string m = compare(got, want);
    if (!m.empty()) report(seed, text, trace, target, m);
  }

  /// The lowered program (before make-packed-api) run by the interpreter, which fills every
  /// allocation with NaN (0xA5 bytes for integers): a read of an element no one wrote in that
  /// allocation's lifetime shows, where compiled code may read stale memory that happens to be right.
  void loweredCheck(uint64_t seed, const std::string& text, const std::string& trace, const std::string& target,
                    const tir::PrimFunc& lowered, const std::vector<runtime::NDArray>& want) {
    ++counts.variants;
    auto got = argsFor(lowered, seed);
    const std::string variant = "interpreter on the program lowered for " + target;
    try {
      Phase ph("interpreter (lowered)");
      tir::interpret(lowered, std::vector<tir::Arg>(got.begin(), got.end()));
    } catch (const Error& e) {
      report(seed, text, trace, variant, e.what());
      return;
    }
    std::string m = compare(got, want);
    if (!m.empty()) report(seed, text, trace, variant, m + "\n" + tir::printFunc(lowered));
  }

  /// The program bound to GPU threads and run on each GPU target: (a) its default GPU schedule
  /// (transform::defaultGPUSchedule: spatial loops fused and bound to blocks of 64 threads,
  /// reductions serial per thread), (b) the flat binding with a thread count drawn from 1-256
  /// (ragged tails) or a 2-D one, (c) a point of the tuner's GPU space (SpaceGenerator::forTarget:
  /// multi-level tiling with vthreads, local and shared-memory tiles, cross-thread reductions,
  /// auto-bind), seeded by the program's seed. The same schedules for every target. Each
  /// scheduled program is also run by the interpreter; the rng draws the same whatever the targets.
  void gpuVariants(uint64_t seed, const std::string& text, const tir::PrimFunc& f, std::mt19937_64& rng,
                   const std::vector<runtime::NDArray>& want) {
    std::vector<std::pair<std::string, tir::PrimFunc>> schedules;  // trace, scheduled program
    auto scheduled = [&](const std::string& script, const std::string& name) {
      try {
        Phase ph("schedule (GPU)");
        schedules.emplace_back(script, driver::applySchedule(f, script, name).func());
      } catch (const Error& e) {
        report(seed, text, script, name, std::string("the GPU schedule does not apply: ") + e.what());
      }
    };
    scheduled(transform::defaultGPUSchedule("", f), "<default GPU schedule>");
    int threads = 1 + int(rng() % 256);
    int ty = 1 << int(rng() % 4), tx = 1 << int(1 + rng() % 6);
    if (rng() % 2) scheduled(transform::gpuScheduleFlat(f, threads), "<flat GPU schedule>");
    else scheduled(transform::gpuSchedule2D(f, ty, tx), "<2-D GPU schedule>");
    {
      static const tune::SpaceGenerator space = tune::SpaceGenerator::forTarget("cuda");
      std::optional<tune::SpacePoint> p;
      try {
        Phase sp("schedule (GPU tuner space)");
        p = space.sample(f, seed);
      } catch (const tir::ScheduleError&) {
      }
      if (p) {
        ++counts.gpuTunerSpace;
        std::string trace = p->final.trace().str();
        schedules.emplace_back(trace, p->final.func());
        // Multi-level tiling applied (vthreads) without shared-memory tiles, drawn for half of such
        // points: up to 3 more draws for a point with them (they occur in few random programs).
        for (uint64_t k = 1; k <= 3 && trace.find("vthread") != std::string::npos &&
                             trace.find("\"shared\"") == std::string::npos; ++k) {
          std::optional<tune::SpacePoint> q;
          try {
            Phase sp("schedule (GPU tuner space)");
            q = space.sample(f, seed * 4 + k);
          } catch (const tir::ScheduleError&) {
          }
          if (!q) continue;
          std::string t = q->final.trace().str();
          if (t.find("\"shared\"") == std::string::npos) continue;
          ++counts.gpuTunerSpace;
          schedules.emplace_back(t, q->final.func());
          break;
        }
      }
    }
    // (d) The random primitive sequence's result, then the space's auto-bind rule: CPU-style
    // structure (compute_at, cache_read / cache_write in any scope, rfactor, split tails) under
    // thread bindings. Not every such program can run on a GPU (a loop left outside the kernels,
    // a local buffer used by two kernels): the GPU split's typed refusals are counted, not
    // reported; a wrong result or any other failure is a finding.
    size_t mayRefuseFrom = schedules.size();
    // A vectorized loop is refused by the GPU backends by design (scalar code only): not tried.
    if (m_randomScheduled && m_randomScheduled->trace().str().find("sch.vectorize(") != std::string::npos) {
      m_randomScheduled.reset();
      ++counts.gpuRefused;
    }
    if (m_randomScheduled) {
      static const std::shared_ptr<tune::ScheduleRule> autoBind = tune::makeGPUAutoBind();
      tir::Schedule sch = *m_randomScheduled;
      m_randomScheduled.reset();
      tune::RuleContext ctx{std::mt19937_64(seed), 2};
      {
        Phase sp("schedule (GPU)");
        autoBind->apply(sch, ctx);
      }
      schedules.emplace_back(sch.trace().str(), sch.func());
    }
    for (auto& [trace, g] : schedules) interpretCheck(seed, text, trace, g, want);
    for (const std::string& target : m_gpuTargets) {
      auto it = m_gpuUnavailable.find(target);
      if (it == m_gpuUnavailable.end()) {
        it = m_gpuUnavailable.emplace(target, gpuUnavailable(target)).first;
        // CUDA without a driver but with NVRTC: the kernels are still compiled to PTX (as on CI).
        if (target == "cuda" && it->second == kNoCudaDriver && codegen::nvrtcAvailable()) m_ptxOnly.insert(target);
        if (m_ptxOnly.count(target))
          std::fprintf(stderr, "fuzz_difftest: %s variants are compiled to PTX by NVRTC, not run: %s\n", target.c_str(),
                       it->second.c_str());
        else if (!it->second.empty())
          std::fprintf(stderr, "fuzz_difftest: %s variants are skipped: %s\n", target.c_str(), it->second.c_str());
      }
      bool ptxOnly = m_ptxOnly.count(target) > 0;
      for (size_t i = 0; i < schedules.size(); ++i) {
        auto& [trace, g] = schedules[i];
        if (it->second.empty() || ptxOnly) checkGPU(seed, text, trace, g, target, want, ptxOnly, i >= mayRefuseFrom);
        else ++counts.gpuSkipped[target];
      }
    }
  }

  /// A program bound to GPU threads lowered for `target` (cuda, opencl), its kernels built and run
  /// on the target's first device, the arrays copied back and compared.
  void checkGPU(uint64_t seed, const std::string& text, const std::string& trace, const tir::PrimFunc& g,
                const std::string& target, const std::vector<runtime::NDArray>& want, bool ptxOnly, bool mayRefuse = false) {
    ++counts.variants;
    auto got = argsFor(g, seed);
    std::string source;  // the kernels' CUDA C / OpenCL C, shown with a failure or a difference
    try {
      transform::PassContext ctx = passContext();
      driver::OperatorOptions o;
      o.target = target;
      o.defaultGPUSchedule = false;
      std::optional<Phase> ph(std::in_place, "lower (GPU)");
      driver::LoweredOperator op = driver::lowerOperator(g, o, ctx);
      ph.reset();
      if (compiledBefore(op.target.str(), op.lowered)) return;
      source = driver::emitCode(op, target == "cuda" ? driver::CodeKind::CUDA : driver::CodeKind::OpenCL);
      if (std::getenv("LOOM_DIFF_PRINT"))
        std::fprintf(stderr, "--- %s, schedule:\n%s\n--- lowered:\n%s\n--- kernels:\n%s\n", target.c_str(), trace.c_str(),
                     tir::printFunc(op.lowered).c_str(), source.c_str());
      if (ptxOnly) {
        --counts.variants;  // compiled, not compared
        ++counts.gpuCompiledOnly[target];
        Phase nv("NVRTC (CUDA C to PTX only)");
        checkPTX(seed, text, trace, driver::emitCode(op, driver::CodeKind::PTX), source);
        return;
      }
      ++counts.gpuRun[target];
      ph.emplace("GPU kernel build, " + target);
      runtime::Module mod = codegen::buildGPUKernelModule({op.lowered}, op.target);
      if (target == "cuda") checkPTX(seed, text, trace, mod.meta().value_or(""), source);
      runtime::PackedFunc fn = mod.getFunction(op.lowered->name);
      ph.emplace("GPU run with copies, " + target);
      runtime::Device dev{target == "cuda" ? runtime::DeviceType::CUDA : runtime::DeviceType::OpenCL, 0};
      std::vector<runtime::NDArray> onDevice;
      std::vector<runtime::PackedArg> args;
      for (auto& h : got) {
        onDevice.push_back(runtime::NDArray::empty(h.shape(), h.dtype(), dev));
        onDevice.back().copyFrom(h);
      }
      for (auto& d : onDevice) args.emplace_back(d);
      fn.call(std::span<const runtime::PackedArg>(args.data(), args.size()));
      runtime::DeviceAPI::get(dev.type)->sync(dev);
      for (size_t i = 0; i < got.size(); ++i) got[i].copyFrom(onDevice[i]);
    } catch (const std::exception& e) {
      if (mayRefuse && dynamic_cast<const GPUSplitError*>(&e)) {
        --counts.variants;
        ++counts.gpuRefused;
        return;
      }
      ++counts.buildFailures;
      report(seed, text, trace, target, std::string("build or run failed: ") + e.what() + "\n--- kernels:\n" + source);
      return;
    }
    std::string m = compare(got, want);
    if (!m.empty()) report(seed, text, trace, target, m + "\n--- kernels:\n" + source);
  }

  /// NVRTC's PTX of a CUDA variant must not load a buffer that the same kernel stores to through
  /// the non-coherent cache (seeds 1100071 and 1230077: NVVM did, for a load through a pointer
  /// selected between a written buffer and a read-only one, and the H200 returned the value from
  /// before the thread's own store). A static check: it finds the fault where no GPU runs the
  /// kernel, and where the stale value happens to be the right one.
  void checkPTX(uint64_t seed, const std::string& text, const std::string& trace, const std::string& ptx,
                const std::string& source) {
    std::vector<std::string> hazards = codegen::nonCoherentLoadsOfWrittenParams(ptx);
    if (hazards.empty()) return;
    std::string what = "the PTX loads a buffer the kernel stores to through the non-coherent cache:";
    for (auto& h : hazards) what += "\n  " + h;
    report(seed, text, trace, "cuda (PTX)", what + "\n--- kernels:\n" + source);
  }

  void checkC(uint64_t seed, const std::string& text, const std::string& trace, const tir::PrimFunc& g,
              const std::vector<runtime::NDArray>& want) {
    ++counts.variants;
    ++counts.cBuilds;
    auto got = argsFor(g, seed);
    std::string base = (m_dir / ("k" + std::to_string(seed))).string();
    Phase ph("C backend (cc itself not counted)");
    try {
      transform::PassContext ctx;
      driver::OperatorOptions o;
      driver::LoweredOperator op = driver::lowerOperator(g, o, ctx);
      std::ofstream(base + ".c") << driver::emitCode(op, driver::CodeKind::C);
      std::string cmd = "cc -std=c11 -O2 -fPIC -shared -fwrapv -fexcess-precision=standard -Wno-main -I" LOOM_SOURCE_DIR
                        "/runtime/include -o " + base + ".so " + base + ".c -lm 2> " + base + ".log";
      if (std::system(cmd.c_str()) != 0) {
        std::ifstream log(base + ".log");
        std::string l((std::istreambuf_iterator<char>(log)), {});
        throw std::runtime_error("cc failed: " + l.substr(0, 2000));
      }
      runtime::Module lib = runtime::Module::loadFile(base + ".so");
      std::vector<runtime::PackedArg> args(got.begin(), got.end());
      lib.getFunction(op.entry->name).call(args);
    } catch (const std::exception& e) {
      ++counts.buildFailures;
      report(seed, text, trace, "c", std::string("build or run failed: ") + e.what());
      return;
    }
    std::string m = compare(got, want);
    if (!m.empty()) report(seed, text, trace, "c", m);
  }
};

} // namespace

int main(int argc, char** argv) {
  long n = 20, graphs = 0;
  uint64_t seed = 1;
  int cEvery = 10, gpuEvery = 0;
  double maxSeconds = 0;
  std::vector<std::string> gpuTargets = {"opencl", "cuda"};
  bool quiet = false;
  std::string graphModel, tirFile, scheduleFile, reuseFile;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "fuzz_difftest: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--tir") n = std::stol(next());
    else if (a == "--graphs") graphs = std::stol(next());
    else if (a == "--seed") seed = std::stoull(next());
    else if (a == "--c-every") cEvery = std::stoi(next());
    else if (a == "--quiet") quiet = true;
    else if (a == "--graph-model") graphModel = next();
    else if (a == "--tir-file") tirFile = next();
    else if (a == "--schedule-file") scheduleFile = next();
    else if (a == "--gpu-every") gpuEvery = std::stoi(next());
    else if (a == "--max-seconds") maxSeconds = std::stod(next());
    else if (a == "--reuse-file") reuseFile = next();
    else if (a == "--gpu-targets") {
      gpuTargets.clear();
      std::string list = next();
      for (size_t at = 0; at <= list.size();) {
        size_t end = std::min(list.find(',', at), list.size());
        std::string t = list.substr(at, end - at);
        if (t != "opencl" && t != "cuda") {
          std::fprintf(stderr, "fuzz_difftest: --gpu-targets takes opencl and cuda, not '%s'\n", t.c_str());
          return 2;
        }
        gpuTargets.push_back(t);
        at = end + 1;
      }
    } else {
      std::fprintf(stderr, "usage: fuzz_difftest [--tir N] [--graphs M] [--seed S] [--c-every K] [--graph-model FILE.onnx] "
                           "[--tir-file FILE.py [--schedule-file SCHED.py]] [--gpu-every K] [--gpu-targets opencl,cuda] [--reuse-file FILE.py] [--max-seconds T] [--quiet]\n");
      return 2;
    }
  }
  if (gpuEvery > 0) runtime::useDevicePluginsBesideProgram();
  Runner r(cEvery, quiet, graphModel, tirFile, scheduleFile, gpuEvery, gpuTargets, reuseFile);
  // --max-seconds T: no new case starts after T seconds of wall time (the summary still prints;
  // for a run under an outer time limit, e.g. on a lent GPU machine).
  auto start = std::chrono::steady_clock::now();
  auto outOfTime = [&] {
    return maxSeconds > 0 && std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > maxSeconds;
  };
  long ran = 0;
  for (long k = 0; k < n; ++k, ++ran) {
    if (outOfTime()) break;
    r.program(seed + uint64_t(k));
    if (!quiet && (k + 1) % 100 == 0)
      std::fprintf(stderr, "%ld programs, %ld mismatches\n", k + 1, r.counts.mismatches);
  }
  long graphsRan = 0;
  for (long k = 0; k < graphs; ++k, ++graphsRan) {
    if (outOfTime()) break;
    r.graph(seed + uint64_t(k));
    if (!quiet && (k + 1) % 50 == 0)
      std::fprintf(stderr, "%ld graphs, %ld mismatches\n", k + 1, r.counts.graphMismatches);
  }
  if (std::getenv("LOOM_DIFF_PROFILE")) {
    double total = 0;
    for (auto& [name, p] : profile()) total += p.total;
    std::fprintf(stderr, "CPU time by phase (this thread, %.2f s in all; %.3f s per program or graph):\n", cpuNow(),
                 ran + graphsRan > 0 ? cpuNow() / double(ran + graphsRan) : 0.0);
    for (auto& [name, p] : profile())
      std::fprintf(stderr, "  %-40s %8.2f s %5.1f%%  %6ld times, mean %7.2f ms, min %7.2f ms\n", name.c_str(),
                   p.total, total > 0 ? 100 * p.total / total : 0.0, p.count, 1e3 * p.total / double(p.count),
                   1e3 * p.min);
  }
  const Counts& c = r.counts;
  std::printf("tir: %ld programs (seeds %llu..%llu), %ld randomly scheduled, %ld tuner-space points, %ld variants "
              "compared (%ld through the C backend; %ld duplicates of a compiled one skipped), %ld mismatches (%ld build/run "
              "failures)\n",
              c.programs, (unsigned long long)seed, (unsigned long long)(seed + ran - 1), c.scheduled, c.tunerSpace,
              c.variants, c.cBuilds, c.duplicates, c.mismatches, c.buildFailures);
  if (gpuEvery > 0) {
    std::printf("gpu (one program in %d, and a reuse program with each, bound to GPU threads; %ld reuse programs, %ld GPU "
                "tuner-space points):",
                gpuEvery, c.reusePrograms, c.gpuTunerSpace);
    for (auto& t : gpuTargets) {
      auto get = [&](const std::map<std::string, long>& m) { auto it = m.find(t); return it == m.end() ? 0L : it->second; };
      std::printf(" %s %ld variants run, %ld compiled only, %ld skipped (no device);", t.c_str(), get(c.gpuRun),
                  get(c.gpuCompiledOnly), get(c.gpuSkipped));
    }
    std::printf(" %ld random schedules + auto-bind not run (vectorized, or refused by the GPU split)\n", c.gpuRefused);
  }
  if (graphs > 0)
    std::printf("graphs: %ld random models through the whole pipeline, %ld mismatches or failures\n", c.graphs,
                c.graphMismatches);
  return c.mismatches || c.graphMismatches ? 1 : 0;
}
