// Shared helpers of the GPU tests: schedule and lower a preset for a GPU, and check it against the interpreter.
#pragma once
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "core/driver/BuildOperator.h"
#include "core/schedule/Script.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Interpreter.h"
#include "core/tir/Parser.h"
#include "core/topi/Workloads.h"
#include "core/transform/CrossThreadReduction.h"
#include "core/transform/Pass.h"
#include "core/transform/Pipeline.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/rule/GPURules.h"
#include "runtime/DeviceAPI.h"

namespace loom::gputest {

/// Points the runtime at the build's device plugins.
inline void usePluginsOfThisBuild() { setenv("LOOM_DEVICE_PATH", LOOM_BINARY_DIR "/lib", 1); }

/// The text of a committed fuzz_difftest reproducer (tests/fuzz/regressions/difftest_tir/NAME):
/// the regression tests here read the program and schedule the fuzzer's own test replays.
inline std::string difftestRegression(const std::string& name) {
  std::ifstream in(LOOM_SOURCE_DIR "/tests/fuzz/regressions/difftest_tir/" + name);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

/// fuzz_difftest's GPU variant (d) of a committed reproducer NAME.py / NAME.sched.py, lowered for
/// `target`: the schedule script (in place of the random primitive sequence), then the GPU space's
/// auto-bind rule seeded by `seed`, as the tester does.
inline tir::PrimFunc difftestAutoBoundVariant(const std::string& name, uint64_t seed, const std::string& target) {
  tir::PrimFunc f = tir::parseFunc(difftestRegression(name + ".py"), name + ".py");
  tir::Schedule sch(f, seed);
  tir::ScriptResult r = tir::runScript(sch, difftestRegression(name + ".sched.py"), name + ".sched.py");
  if (!r.ok) throw std::runtime_error(name + ".sched.py: " + r.message);
  tune::RuleContext ctx{std::mt19937_64(seed), 2};
  tune::makeGPUAutoBind()->apply(sch, ctx);
  transform::PassContext pc;
  driver::OperatorOptions o;
  o.target = target;
  o.defaultGPUSchedule = false;
  return driver::lowerOperator(sch.func(), o, pc).lowered;
}

/// Empty when the OpenCL device is usable, else why not (the runtime's message).
inline std::string openclUnavailable() {
  try {
    runtime::DeviceAPI::get(runtime::DeviceType::OpenCL);
    return {};
  } catch (const std::exception& e) {
    return e.what();
  }
}

/// `spec`'s PrimFunc after `script`, and lowered by the GPU pipeline.
struct GPUCase {
  topi::WorkloadSpec spec;
  tir::PrimFunc input, scheduled, lowered;
};

inline GPUCase lowerForGPU(const std::string& specText, const std::string& script, const std::string& name = "main") {
  GPUCase c;
  c.spec = topi::parseWorkloadSpec(specText);
  c.input = topi::buildWorkload(c.spec, name);
  c.scheduled = script.empty() ? c.input : driver::applySchedule(c.input, script, "<gpu schedule>").func();
  transform::PassContext ctx;
  transform::LowerOptions lo;
  lo.gpu = true;
  c.lowered = transform::lower(transform::lowerCrossThreadReduction(c.scheduled), ctx, lo);
  return c;
}

/// Random inputs (seeded), zero outputs.
inline std::vector<runtime::NDArray> randomArgs(const GPUCase& c, uint64_t seed) {
  std::vector<runtime::NDArray> args = topi::makeParamArrays(c.input);
  for (int i = 0; i < c.spec.workload->numInputs; ++i) tir::fillRandom(args[size_t(i)], seed + uint64_t(i));
  return args;
}

/// The interpreter's outputs of the unscheduled program on copies of `args`.
inline std::vector<runtime::NDArray> interpreterResult(const GPUCase& c, const std::vector<runtime::NDArray>& args) {
  std::vector<runtime::NDArray> want;
  std::vector<tir::Arg> iargs;
  for (auto& a : args) {
    want.push_back(a.copy());
    iargs.push_back(want.back());
  }
  tir::interpret(c.input, iargs);
  return want;
}

/// "" when every output matches within the preset's tolerance, else what differs.
inline std::string compareOutputs(const GPUCase& c, const std::vector<runtime::NDArray>& got,
                                  const std::vector<runtime::NDArray>& want) {
  std::string report;
  for (size_t i = size_t(c.spec.workload->numInputs); i < got.size(); ++i) {
    double err = tir::maxRelError(got[i], want[i]);
    if (!(err <= topi::checkTolerance(c.spec)))
      report += c.spec.str() + " output " + std::to_string(i) + ": max relative error " + std::to_string(err) + "\n";
  }
  return report;
}

}  // namespace loom::gputest
