// The measurement worker: build, check against the reference, time (runs in a child process).
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <unistd.h>

#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/CompileModelGPU.h"
#include "core/driver/Measure.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Trace.h"
#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/topi/Workloads.h"
#include "core/tune/Measure.h"
#include "core/tune/Record.h"
#include "core/tune/rule/GPUMeasure.h"
#include "loom/c_runtime_api.h"
#include "runtime/PackedFunc.h"

namespace loom::tune {

double MeasureResult::meanMs() const {
  if (!ok()) return std::numeric_limits<double>::infinity();
  double s = 0;
  for (double t : timesMs) s += t;
  return s / double(timesMs.size());
}

nlohmann::json MeasureResult::toJson() const {
  return {{"times_ms", timesMs}, {"error_kind", errorKind}, {"error_message", errorMessage},
          {"build_ms", buildMs}, {"cache_flushed", cacheFlushed}, {"host", host}};
}

MeasureResult MeasureResult::fromJson(const nlohmann::json& j) {
  MeasureResult r;
  if (!j.is_object()) LOOM_THROW(ParseError) << "measure result: expected a JSON object";
  if (j.contains("times_ms") && j["times_ms"].is_array())
    for (auto& t : j["times_ms"])
      if (t.is_number()) r.timesMs.push_back(t.get<double>());
  if (j.contains("error_kind") && j["error_kind"].is_string()) r.errorKind = j["error_kind"];
  if (j.contains("error_message") && j["error_message"].is_string()) r.errorMessage = j["error_message"];
  if (j.contains("build_ms") && j["build_ms"].is_number()) r.buildMs = j["build_ms"];
  if (j.contains("cache_flushed") && j["cache_flushed"].is_boolean()) r.cacheFlushed = j["cache_flushed"];
  if (j.contains("host") && j["host"].is_string()) r.host = j["host"];
  return r;
}

namespace {

void callPacked(const runtime::PackedFunc& fn, const std::vector<runtime::NDArray>& arrays) {
  std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
  fn.call(args);
}

driver::OperatorOptions hostOptions(const std::string& target) {
  driver::OperatorOptions o;
  o.target = target;
  return o;
}

bool testFaultsEnabled() {
  const char* e = std::getenv("LOOM_TUNE_TEST_FAULTS");
  return e && std::string(e) == "1";
}

/// Reference outputs of the task on the given inputs (outputs of `arrays` are overwritten in the
/// copies returned).
std::vector<runtime::NDArray> referenceOutputs(const TuneTask& task,
                                               const std::vector<runtime::NDArray>& arrays,
                                               const std::string& cachePath) {
  std::vector<runtime::NDArray> want;
  for (size_t i = 0; i < arrays.size(); ++i)
    want.push_back(int(i) < task.numInputs ? arrays[i] : arrays[i].copy());
  if (!cachePath.empty()) {
    std::ifstream in(cachePath, std::ios::binary);
    if (in) {
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      size_t need = 0;
      for (size_t i = task.numInputs; i < want.size(); ++i) need += want[i].byteSize();
      if (bytes.size() == need) {
        size_t off = 0;
        for (size_t i = task.numInputs; i < want.size(); ++i) {
          want[i].copyFromBytes(bytes.data() + off, want[i].byteSize());
          off += want[i].byteSize();
        }
        return want;
      }
    }
  }
  if (!task.workloadSpec.empty() && task.flops <= 2e8) {
    topi::runReference(topi::parseWorkloadSpec(task.workloadSpec), want);
  } else {
    transform::PassContext ctx;
    driver::LoweredOperator plain = driver::lowerOperator(task.func, hostOptions(task.target), ctx);
    auto jit = driver::jitOperator(plain);
    callPacked(jit->getFunction(plain.lowered->name), want);
  }
  if (!cachePath.empty()) {
    std::string tmp = cachePath + ".tmp" + std::to_string(getpid());
    {
      std::ofstream out(tmp, std::ios::binary);
      for (size_t i = task.numInputs; i < want.size(); ++i)
        out.write(static_cast<const char*>(want[i].data()), std::streamsize(want[i].byteSize()));
    }
    std::rename(tmp.c_str(), cachePath.c_str());
  }
  return want;
}

int emptyTask(int, int, void*) { return 0; }

/// One empty parallel launch on the runtime's pool: its workers are spinning afterwards.
void wakeThreadPool() {
  int n = loom_backend_num_threads();
  if (n > 1) loom_backend_parallel_launch(emptyTask, nullptr, n);
}

MeasureResult failure(const char* kind, const std::string& message, double buildMs = 0) {
  MeasureResult r;
  r.errorKind = kind;
  r.errorMessage = message;
  r.buildMs = buildMs;
  return r;
}

} // namespace

MeasureResult measureCandidate(const MeasureCandidate& c, const MeasureOptions& options,
                               const std::string& referenceCache,
                               const std::function<void()>& beforeTiming) {
  if (driver::isGPUTarget(c.task.target)) return measureCandidateOnGPU(c, options, beforeTiming);
  const std::string fault = testFaultsEnabled() ? c.testFault : "";
  auto t0 = std::chrono::steady_clock::now();
  auto sinceMs = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  tir::PrimFunc scheduled;
  try {
    tir::Schedule sch(c.task.func);
    tir::Trace::fromJson(c.trace).apply(sch);
    scheduled = sch.func();
  } catch (const Error& e) {
    return failure(error_kind::kScheduleError, e.what());
  }
  std::unique_ptr<codegen::JITModule> jit;
  runtime::PackedFunc fn;
  try {
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(scheduled, hostOptions(c.task.target), ctx);
    if (!op.target.isHost())
      return failure(error_kind::kBuildError, "target '" + c.task.target + "' does not run on this machine");
    jit = driver::jitOperator(op);
    fn = jit->getFunction(op.lowered->name);
  } catch (const Error& e) {
    return failure(error_kind::kBuildError, e.what(), sinceMs());
  }
  double buildMs = sinceMs();
  try {
    std::vector<runtime::NDArray> arrays = topi::makeParamArrays(c.task.func);
    for (int i = 0; i < c.task.numInputs && i < int(arrays.size()); ++i)
      tir::fillRandom(arrays[i], options.seed + uint64_t(i));
    // Dies the way a faulting kernel does, by the signal, also under a sanitizer (ASan, TSan)
    // whose own SIGSEGV handler would print a report and exit with a code instead.
    if (fault == "crash") {
      std::signal(SIGSEGV, SIG_DFL);
      std::raise(SIGSEGV);
    }
    if (fault == "hang")
      for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
    callPacked(fn, arrays);
    if (fault == "wrong" && size_t(c.task.numInputs) < arrays.size())
      tir::setElement(arrays[c.task.numInputs], 0, tir::getElement(arrays[c.task.numInputs], 0) + 1000.0);
    if (options.check) {
      std::vector<runtime::NDArray> want = referenceOutputs(c.task, arrays, referenceCache);
      double tol = c.task.workloadSpec.empty() ? 1e-3 : topi::checkTolerance(topi::parseWorkloadSpec(c.task.workloadSpec));
      for (size_t i = c.task.numInputs; i < arrays.size(); ++i) {
        double err = tir::maxRelError(arrays[i], want[i]);
        if (!(err <= tol)) {
          std::ostringstream os;
          os << "output '" << c.task.func->params[i]->name << "' differs from the reference: max rel err " << err
             << " > " << tol;
          return failure(error_kind::kWrongResult, os.str(), buildMs);
        }
      }
    }
    if (beforeTiming) beforeTiming();
    std::function<void()> flush;
    if (options.flushCache)
      flush = [&] {
        for (size_t i = 1; i < arrays.size(); ++i) driver::flushFromCaches(arrays[i].data(), arrays[i].byteSize());
        // In a model the pool's workers are still spinning from the previous kernel when the
        // next one launches; flushing a large argument takes longer than their spin (2 ms), after
        // which a launch pays a futex wake-up per worker. An empty launch puts them back to
        // spinning, so the timed call starts with the pool as a model's kernel finds it.
        wakeThreadPool();
      };
    driver::TimingStats t = driver::timeCalls([&] { callPacked(fn, arrays); }, options.repeat, options.minRepeatMs, flush);
    MeasureResult r;
    r.timesMs = t.samplesMs;
    r.buildMs = buildMs;
    r.cacheFlushed = bool(flush);
    return r;
  } catch (const std::exception& e) {
    return failure(error_kind::kRuntimeError, e.what(), buildMs);
  }
}

int tuneWorkerMain(const std::string& inputPath, const std::string& outputPath) {
  MeasureResult r;
  try {
    std::ifstream in(inputPath);
    if (!in) LOOM_THROW(RuntimeError) << inputPath << ": cannot read the candidate";
    nlohmann::json j = nlohmann::json::parse(in);
    MeasureCandidate c;
    c.task = TuneTask::fromJson(j.at("task"));
    c.trace = j.at("trace");
    if (j.contains("test_fault") && j["test_fault"].is_string()) c.testFault = j["test_fault"];
    MeasureOptions o;
    const auto& jo = j.at("options");
    o.repeat = jo.value("repeat", o.repeat);
    o.minRepeatMs = jo.value("min_repeat_ms", o.minRepeatMs);
    o.check = jo.value("check", o.check);
    o.seed = jo.value("seed", o.seed);
    o.flushCache = jo.value("flush_cache", o.flushCache);
    std::string cache = j.value("reference_cache", std::string());
    r = measureCandidate(c, o, cache, [] {
      std::cout << "ready" << std::endl;
      std::string line;
      std::getline(std::cin, line);
    });
  } catch (const std::exception& e) {
    r = failure(error_kind::kRuntimeError, e.what());
  }
  std::string tmp = outputPath + ".tmp";
  {
    std::ofstream out(tmp);
    out << r.toJson().dump();
  }
  if (std::rename(tmp.c_str(), outputPath.c_str()) != 0) return 2;
  return 0;
}

} // namespace loom::tune
