// `loom profile`: compiles an ONNX model in this process, runs it a number of times with each
// node timed, and prints where the time goes per kernel (or writes it as JSON: the Studio's
// Model > Profile runs this command as its worker process).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <map>
#include <optional>
#include <set>
#include <nlohmann/json.hpp>

#include "app/cli/Commands.h"
#include "app/cli/ModelCommon.h"
#include "app/cli/ScheduleInput.h"
#include "core/driver/CompileModel.h"
#include "core/driver/ExportLibrary.h"
#include "core/driver/MachinePeak.h"
#include "core/driver/InputShapes.h"
#include "core/driver/LoadModel.h"
#include "core/driver/SymbolBounds.h"
#include "core/driver/Npz.h"
#include "core/arith/Eval.h"
#include "core/support/Error.h"
#include "core/tir/Buffer.h"
#include "core/tir/Op.h"
#include "core/tir/Visitor.h"
#include "core/transform/Pipeline.h"
#include "core/transform/Simplify.h"
#include "core/tune/FlopCount.h"
#include "core/tune/ModelTasks.h"
#include "loom/c_runtime_api.h"
#include "runtime/RuntimeFailure.h"

namespace loom::cli {

namespace {

struct ProfileOptions {
  std::string model, target = "llvm", clock = "wall", inputShapes, tuningRecords, desiredLayout, inputs, json;
  std::vector<std::string> disabledPasses, kernelSchedules;
  int repeat = 10, warmup = 2;
  bool measureMachine = false, quiet = false;
};

ProfileOptions& options() {
  static ProfileOptions o;
  return o;
}

CLI::App* setup(CLI::App& app) {
  ProfileOptions& o = options();
  CLI::App* sub = app.add_subcommand("profile", "Compile an ONNX model, run it with every node timed, and print the time "
                                                "of each kernel");
  sub->footer(
      "The model is compiled in this process (JIT) and run `--warmup` times untimed, then `--repeat` times\n"
      "with each node timed. Per kernel: calls, total and per-call time (median over the runs), share of\n"
      "the model's time, GFLOP/s, GB/s (the kernel's arguments read and written once: a lower bound on its\n"
      "traffic) and arithmetic intensity (FLOP per byte). Progress goes to stderr.\n\n"
      "--input-shapes builds the module `loom compile` would build from the same text: static dims give a\n"
      "static module; symbolic ones (W, ?, W<=2048) the dynamic module, run at each symbol's value (W=224)\n"
      "or at the shapes of the --inputs arrays. Inputs not named keep the model's own shapes.\n\n"
      "Examples:\n"
      "  loom profile examples/models/small_cnn/model.onnx --input-shapes \"data:[1,3,16,16]\" --repeat 20\n"
      "  loom profile resnet18.onnx --input-shapes \"data:[N=1,3,H=224,W=224]\"   (the dynamic module at 224)\n"
      "  loom profile resnet18.onnx --tuning-records r.json --json profile.json --measure-machine");
  sub->add_option("model", o.model, "The .onnx model")->required();
  sub->add_option("--target", o.target, "llvm or an llvm target string for this machine")->capture_default_str();
  sub->add_option("--input-shapes", o.inputShapes,
                  "Input shapes as `loom compile` takes them, e.g. \"data:[1,3,224,224]\"; a symbolic dim compiles the "
                  "dynamic module and runs it at the dim's value: \"data:[1,3,H=224,W=224]\"");
  sub->add_option("--tuning-records", o.tuningRecords, "Kernels with a record in this file use its best schedule");
  sub->add_option("--desired-layout", o.desiredLayout, "Conv layout: NCHW or NCHWc (default: NCHWc)");
  sub->add_option("--disabled-pass", o.disabledPasses, "Graph passes to leave out, comma-separated")->delimiter(',');
  sub->add_option("--kernel-schedule", o.kernelSchedules,
                  "KERNEL=S.py: schedule kernel KERNEL with this script instead (repeatable; before the records)");
  sub->add_option("--inputs", o.inputs, "An .npz with the inputs by name (others are random)");
  sub->add_option("--repeat", o.repeat, "Timed runs")->capture_default_str()->check(CLI::Range(1, 100000));
  sub->add_option("--warmup", o.warmup, "Untimed runs first")->capture_default_str()->check(CLI::Range(0, 100000));
  sub->add_option("--json", o.json, "Also write the profile as JSON to this file");
  sub->add_option("--clock", o.clock,
                  "wall: elapsed time; cpu: the process's CPU time, which stays steady while other jobs share the "
                  "cores (use it with LOOM_NUM_THREADS=1: with more threads it also counts idle workers' spinning)")
      ->check(CLI::IsMember({"wall", "cpu"}))
      ->capture_default_str();
  sub->add_flag("--measure-machine", o.measureMachine,
                "First measure the machine's fp32 FMA peak and copy bandwidth (as bench_peak) and report against them");
  sub->add_flag("--quiet,-q", o.quiet, "No progress output on stderr");
  return sub;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t n = v.size();
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/// Bytes of the kernel's arguments (inputs and outputs), each read or written once; a symbolic
/// dim takes its value from `env` (the kernel's symbol params), 0 when one has none.
double argumentBytes(const tir::PrimFunc& f, const arith::VarValueMap& env) {
  double bytes = 0;
  for (const auto& [var, buf] : f->bufferMap) {
    double n = buf->dtype.bytes();
    for (const tir::Expr& e : buf->shape) {
      std::optional<int64_t> v = arith::evalInt(e, env);
      if (!v) return 0;
      n *= double(*v);
    }
    bytes += n;
  }
  return bytes;
}

/// Kernel `f`'s symbol params (its last ones, in the order of `symbols`: docs/dynamic-shapes.md)
/// bound to their values; empty when a symbol has no value (a data-dependent count).
arith::VarValueMap symbolParams(const tir::PrimFunc& f, const std::vector<std::string>& symbols,
                                const std::map<std::string, int64_t>& values) {
  arith::VarValueMap env;
  if (symbols.size() > f->params.size()) return {};
  size_t first = f->params.size() - symbols.size();
  for (size_t k = 0; k < symbols.size(); ++k) {
    auto it = values.find(symbols[k]);
    if (it == values.end()) return {};
    env[f->params[first + k]] = it->second;
  }
  return env;
}

/// The FLOPs of one call of scheduled kernel `f` with its symbol params at their values: the
/// kernel is lowered at those values, so that its loops have constant extents and the guarded
/// rows of a partial tile that do not exist at this shape are gone (the scheduled kernel's loops
/// cover whole tiles). Where that counts nothing (a loop bound left that countFlops cannot read
/// as a constant: the dynamic ResNet-18's max pool), the scheduled kernel simplified at the
/// values is counted instead.
double flopsAtSymbolValues(const tir::PrimFunc& f, const arith::VarValueMap& env) {
  if (env.empty()) return tune::countFlops(f);
  std::unordered_map<tir::Var, tir::Expr, RefHash, RefEqual> vmap;
  for (const auto& [v, value] : env) vmap[v] = tir::intImm(v->dtype, value);
  tir::PrimFunc at = tir::withBody(f, tir::substitute(f->body, vmap));
  double lowered = 0;
  try {
    transform::PassContext ctx;
    lowered = tune::countFlops(transform::lower(at, ctx));
  } catch (const Error&) {
  }
  return lowered > 0 ? lowered : tune::countFlops(transform::simplifyFunc(at));
}

/// The representative value of each symbol that --input-shapes gives one (`W=224`), under the
/// symbol's name in the compiled model (an anonymous `?=224` takes the name the dim got).
std::map<std::string, int64_t> representativeValues(const runtime::GraphExecutor& ex, const driver::InputShapes& specs) {
  std::map<std::string, int64_t> values;
  for (const driver::InputShape& s : specs.inputs) {
    std::vector<std::string> dims = ex.inputDims(ex.inputIndex(s.name));
    for (size_t k = 0; k < s.dims.size() && k < dims.size(); ++k) {
      if (s.dims[k].example < 0) continue;
      auto [it, fresh] = values.emplace(dims[k], s.dims[k].example);
      if (!fresh && it->second != s.dims[k].example)
        LOOM_THROW(ValueError) << "--input-shapes gives symbol " << dims[k] << " two values, " << it->second << " and "
                               << s.dims[k].example;
    }
  }
  return values;
}

/// The shape input `i` is filled at: its static dims, and each symbolic one at its value.
std::vector<int64_t> concreteShape(const runtime::GraphExecutor& ex, size_t i, const std::map<std::string, int64_t>& values) {
  std::vector<int64_t> shape;
  std::vector<std::string> dims = ex.inputDims(i);
  for (size_t k = 0; k < dims.size(); ++k) {
    if (dims[k].find_first_not_of("0123456789") == std::string::npos) {
      shape.push_back(std::stoll(dims[k]));
      continue;
    }
    auto it = values.find(dims[k]);
    if (it == values.end()) {
      std::string text;
      for (size_t j = 0; j < dims.size(); ++j) text += (j ? "," : "") + (j == k ? dims[j] + "=VALUE" : dims[j]);
      LOOM_THROW(ValueError) << "loom profile: dimension " << k << " (" << dims[k] << ") of input '" << ex.inputName(i)
                             << "' is symbolic and has no value: give one in --input-shapes (\"" << ex.inputName(i)
                             << ":[" << text << "]\") or the input in --inputs";
    }
    shape.push_back(it->second);
  }
  return shape;
}

/// Each input symbol's value at the inputs set (the graph JSON's "symbols" say where it is read).
std::map<std::string, int64_t> boundSymbols(const runtime::GraphExecutor& ex, const nlohmann::json& graph) {
  std::map<std::string, int64_t> values;
  if (!graph.contains("symbols")) return values;
  for (const auto& s : graph["symbols"]) {
    std::vector<int64_t> shape = ex.inputShape(s.at("input").get<size_t>());
    size_t axis = s.at("axis").get<size_t>();
    if (axis < shape.size()) values[s.at("name").get<std::string>()] = shape[axis];
  }
  return values;
}

int run() {
  const ProfileOptions& o = options();
  if (!driver::isCTarget(o.target) && o.target.find("-mtriple") != std::string::npos)
    LOOM_THROW(ValueError) << "--target '" << o.target << "': profiling runs the model here; a cross target cannot run";
  if (driver::isCTarget(o.target)) LOOM_THROW(ValueError) << "--target c cannot be profiled (use llvm)";
  driver::canonicalTarget(o.target);
  auto say = [&](const std::string& line) {
    if (!o.quiet) std::cerr << line << std::endl;
  };
  nlohmann::json out;
  int threads = loom_backend_num_threads();
  double peak = 0, bandwidth = 0;
  if (o.measureMachine) {
    say("measuring the machine's FMA peak and bandwidth");
    peak = driver::measureFmaPeakGflops(threads, 0.3);
    bandwidth = driver::measureCopyBandwidthGBs(threads, 0.3);
    out["machine"] = {{"threads", threads}, {"fma_peak_gflops", peak}, {"copy_bandwidth_gbs", bandwidth}};
  }
  // The same text `loom compile` takes: a symbolic dim keeps the module dynamic, and its
  // representative value (`W=224`) is the shape the module runs at here.
  driver::InputShapes specs;
  if (!o.inputShapes.empty()) specs = driver::parseInputShapes(o.inputShapes);
  say("importing " + o.model);
  driver::LoadedModel loaded = driver::loadModel(o.model, o.inputShapes);
  graph::Module m = loaded.module;
  driver::CompileModelOptions co;
  co.outputNames = loaded.format == "onnx" ? onnxOutputNames(o.model) : loaded.outputNames;
  co.desiredLayout = o.desiredLayout.empty() ? std::string("NCHWc") : o.desiredLayout;
  co.disabledPasses = o.disabledPasses;
  driver::ScheduleProvider fromRecords;
  if (!o.tuningRecords.empty()) fromRecords = tune::scheduleProviderFromRecords(o.tuningRecords, o.target);
  std::map<std::string, std::string> scripts;  // kernel -> script file
  for (const std::string& spec : o.kernelSchedules) {
    size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0 || eq + 1 == spec.size())
      LOOM_THROW(ValueError) << "--kernel-schedule '" << spec << "': expected KERNEL=S.py";
    scripts[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  std::set<std::string> scripted;
  co.scheduleFor = [&](const driver::ModelGroup& g) -> std::optional<driver::GroupSchedule> {
    if (auto it = scripts.find(g.name); it != scripts.end()) {
      scripted.insert(g.name);
      return driver::GroupSchedule{applyScheduleFile(g.func, it->second).func(), "script:" + it->second};
    }
    return fromRecords ? fromRecords(g) : std::nullopt;
  };
  co.progress = [&](const std::string& what, int done, int total) {
    if (done < total) say("[" + std::to_string(done + 1) + "/" + std::to_string(total) + "] " + what);
  };
  auto t0 = std::chrono::steady_clock::now();
  driver::CompiledModel cm = driver::compileModel(m, o.target, {}, co);
  driver::applySymbolBounds(cm, loaded.symbolBounds);
  for (const auto& [kernel, file] : scripts)
    if (!scripted.count(kernel)) LOOM_THROW(ValueError) << "--kernel-schedule: the model has no kernel '" << kernel << "'";
  say("[codegen] JIT-compiling " + std::to_string(cm.kernels.size()) + " kernels");
  std::unique_ptr<runtime::GraphExecutor> ex = driver::createExecutor(cm);
  double compileMs = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();

  std::vector<bool> given(ex->numInputs(), false);
  try {
    if (!o.inputs.empty())
      for (auto& [name, arr] : driver::readNpz(o.inputs)) {
        size_t i = ex->inputIndex(name);
        ex->setInput(i, arr);
        given[i] = true;
      }
  } catch (const runtime::RuntimeFailure& e) {
    LOOM_THROW(ValueError) << o.inputs << ": " << e.what();
  }
  std::map<std::string, int64_t> values = representativeValues(*ex, specs);
  for (size_t i = 0; i < ex->numInputs(); ++i)
    if (!given[i]) {
      try {
        ex->setInput(i, filled(concreteShape(*ex, i, values), ex->inputDType(i), "random", unsigned(i + 1)));
      } catch (const runtime::RuntimeFailure& e) {
        LOOM_THROW(ValueError) << "loom profile: " << e.what();
      }
    }
  // The symbols' values at the shapes set (read where the graph JSON says each symbol is read).
  nlohmann::json graph = nlohmann::json::parse(cm.graphJson);
  std::map<std::string, int64_t> symbolValues = boundSymbols(*ex, graph);
  for (int r = 0; r < o.warmup; ++r) {
    say("warm-up run " + std::to_string(r + 1) + "/" + std::to_string(o.warmup));
    ex->run();
  }
  // Per node: its time in each run; per run: the sum over nodes.
  std::vector<std::string> nodeNames;
  std::vector<std::vector<double>> nodeMs;
  std::vector<double> totals;
  for (int r = 0; r < o.repeat; ++r) {
    say("run " + std::to_string(r + 1) + "/" + std::to_string(o.repeat));
    auto prof = ex->runProfiled(o.clock == "cpu" ? runtime::GraphExecutor::ProfileClock::ProcessCpu
                                                     : runtime::GraphExecutor::ProfileClock::Wall);
    if (nodeNames.empty()) {
      for (auto& p : prof) nodeNames.push_back(p.first);
      nodeMs.resize(prof.size());
    }
    double total = 0;
    for (size_t k = 0; k < prof.size(); ++k) {
      nodeMs[k].push_back(prof[k].second);
      total += prof[k].second;
    }
    totals.push_back(total);
  }

  // Node -> kernel, from the graph JSON (a node's func is its kernel's name), and the symbols
  // each kernel takes after its tensors.
  std::map<std::string, std::string> funcOf;
  std::map<std::string, std::vector<std::string>> symbolsOf;
  for (const auto& n : graph["nodes"]) {
    funcOf[n["name"].get<std::string>()] = n["func"].get<std::string>();
    if (n.contains("symbols")) symbolsOf[n["func"].get<std::string>()] = n["symbols"].get<std::vector<std::string>>();
  }
  struct KernelStat {
    std::string name, source;
    double flops = 0, bytes = 0, ms = 0;
    int calls = 0;
  };
  std::vector<KernelStat> kernels;
  std::map<std::string, size_t> kernelIndex;
  for (size_t k = 0; k < cm.kernels.size(); ++k) {
    KernelStat s;
    s.name = cm.kernels[k]->name;
    s.source = k < cm.scheduleSources.size() ? cm.scheduleSources[k] : std::string();
    const tir::PrimFunc& f = k < cm.scheduledKernels.size() ? cm.scheduledKernels[k] : cm.kernels[k];
    arith::VarValueMap env;
    if (auto it = symbolsOf.find(s.name); it != symbolsOf.end()) env = symbolParams(f, it->second, symbolValues);
    s.flops = flopsAtSymbolValues(f, env);
    s.bytes = argumentBytes(f, env);
    kernelIndex[s.name] = kernels.size();
    kernels.push_back(s);
  }
  double totalMs = median(totals);
  nlohmann::json nodes = nlohmann::json::array();
  for (size_t k = 0; k < nodeNames.size(); ++k) {
    std::string func = funcOf.count(nodeNames[k]) ? funcOf[nodeNames[k]] : std::string();
    double ms = median(nodeMs[k]);
    nodes.push_back({{"name", nodeNames[k]}, {"func", func}, {"median_ms", ms}, {"ms", nodeMs[k]}});
    if (auto it = kernelIndex.find(func); it != kernelIndex.end()) {
      kernels[it->second].ms += ms;
      ++kernels[it->second].calls;
    }
  }
  nlohmann::json ks = nlohmann::json::array();
  for (const KernelStat& s : kernels)
    ks.push_back({{"name", s.name}, {"schedule", s.source}, {"calls", s.calls}, {"total_ms", s.ms}, {"flops", s.flops},
                  {"bytes", s.bytes}});
  nlohmann::json inputs = nlohmann::json::array();
  for (const driver::TensorInfo& t : cm.inputs)
    inputs.push_back({{"name", t.name}, {"shape", ex->inputShape(ex->inputIndex(t.name))}, {"dtype", t.dtype.str()}});
  out["model"] = o.model;
  out["target"] = o.target;
  out["layout"] = cm.layout;
  out["threads"] = threads;
  out["tuning_records"] = o.tuningRecords;
  out["compile_ms"] = compileMs;
  out["warmup"] = o.warmup;
  out["repeat"] = o.repeat;
  out["inputs"] = inputs;
  out["dynamic"] = ex->isDynamic();
  out["symbols"] = symbolValues;
  out["run_ms"] = totals;
  out["median_ms"] = totalMs;
  out["kernels"] = ks;
  out["nodes"] = nodes;
  if (!o.json.empty()) {
    std::ofstream f(o.json, std::ios::binary);
    f << out.dump(1);
    f.close();  // a full disk shows at the flush of the last buffer, here
    if (!f) LOOM_THROW(ValueError) << "cannot write '" << o.json << "': " << std::strerror(errno);
  }

  // The table, hottest kernel first.
  std::vector<size_t> order(kernels.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return kernels[a].ms > kernels[b].ms; });
  std::cout << "model " << o.model << ": " << std::fixed << std::setprecision(3) << totalMs << " ms (median of "
            << o.repeat << " runs after " << o.warmup << " warm-up, min " << *std::min_element(totals.begin(), totals.end())
            << ", max " << *std::max_element(totals.begin(), totals.end()) << "), " << kernels.size() << " kernels, "
            << threads << " thread(s), compiled in " << std::setprecision(0) << compileMs << " ms\n";
  if (ex->isDynamic()) {
    std::string at;
    for (const auto& [name, v] : symbolValues) at += (at.empty() ? "" : ", ") + name + " = " + std::to_string(v);
    std::cout << "dynamic module, run at " << (at.empty() ? std::string("its inputs' shapes") : at) << "\n";
  }
  std::cout << std::left << std::setw(44) << "kernel" << std::right << std::setw(6) << "calls" << std::setw(11) << "total ms"
            << std::setw(11) << "per call" << std::setw(8) << "%" << std::setw(10) << "GFLOP/s" << std::setw(9) << "GB/s"
            << std::setw(10) << "FLOP/B";
  if (peak > 0) std::cout << std::setw(8) << "% peak";
  std::cout << "\n";
  for (size_t k : order) {
    const KernelStat& s = kernels[k];
    double sec = s.ms / 1e3;
    double gflops = sec > 0 ? s.flops * s.calls / sec / 1e9 : 0, gbs = sec > 0 ? s.bytes * s.calls / sec / 1e9 : 0;
    std::cout << std::left << std::setw(44) << s.name << std::right << std::setw(6) << s.calls << std::setprecision(4)
              << std::setw(11) << s.ms << std::setw(11) << (s.calls ? s.ms / s.calls : 0) << std::setprecision(1) << std::setw(8)
              << (totalMs > 0 ? 100 * s.ms / totalMs : 0) << std::setw(10) << gflops << std::setw(9) << gbs << std::setprecision(2)
              << std::setw(10) << (s.bytes > 0 ? s.flops / s.bytes : 0);
    if (peak > 0) std::cout << std::setprecision(1) << std::setw(8) << 100 * gflops / peak;
    std::cout << "\n";
  }
  if (peak > 0)
    std::cout << "machine: " << std::setprecision(1) << peak << " GFLOP/s fp32 FMA peak, " << bandwidth << " GB/s copy bandwidth\n";
  return 0;
}

const bool registered = addCommand({setup, run});

}  // namespace

}  // namespace loom::cli
