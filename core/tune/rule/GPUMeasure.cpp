// Measuring a tuning candidate on a GPU device: build the kernels there, check, time them alone.
#include "core/tune/rule/GPUMeasure.h"

#include <chrono>
#include <sstream>

#include "codegen/CodeGenOpenCL.h"
#include "codegen/JITModule.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/Measure.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Trace.h"
#include "core/tir/HostArrays.h"
#include "core/topi/Workloads.h"
#include "core/tune/Record.h"
#include "runtime/DeviceAPI.h"
#include "runtime/PackedFunc.h"

namespace loom::tune {

namespace {

MeasureResult failure(const char* kind, const std::string& message, double buildMs = 0) {
  MeasureResult r;
  r.errorKind = kind;
  r.errorMessage = message;
  r.buildMs = buildMs;
  return r;
}

void call(const runtime::PackedFunc& fn, const std::vector<runtime::NDArray>& arrays) {
  std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
  fn.call(args);
}

/// The reference outputs on the CPU (copies of `arrays` with the outputs recomputed).
std::vector<runtime::NDArray> reference(const TuneTask& task, const std::vector<runtime::NDArray>& arrays) {
  std::vector<runtime::NDArray> want;
  for (size_t i = 0; i < arrays.size(); ++i) want.push_back(int(i) < task.numInputs ? arrays[i] : arrays[i].copy());
  if (!task.workloadSpec.empty() && task.flops <= 2e8) {
    topi::runReference(topi::parseWorkloadSpec(task.workloadSpec), want);
    return want;
  }
  transform::PassContext ctx;
  driver::OperatorOptions host;  // llvm for this machine
  driver::LoweredOperator plain = driver::lowerOperator(task.func, host, ctx);
  auto jit = driver::jitOperator(plain);
  call(jit->getFunction(plain.lowered->name), want);
  return want;
}

}  // namespace

MeasureResult measureCandidateOnGPU(const MeasureCandidate& c, const MeasureOptions& options,
                                    const std::function<void()>& beforeTiming) {
  auto t0 = std::chrono::steady_clock::now();
  auto sinceMs = [&] { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count(); };
  tir::PrimFunc scheduled;
  try {
    tir::Schedule sch(c.task.func);
    tir::Trace::fromJson(c.trace).apply(sch);
    scheduled = sch.func();
  } catch (const Error& e) {
    return failure(error_kind::kScheduleError, e.what());
  }
  runtime::Module mod;
  runtime::PackedFunc fn;
  runtime::Device dev;
  runtime::DeviceAPI* api = nullptr;
  try {
    transform::PassContext ctx;
    driver::OperatorOptions o;
    o.target = c.task.target;
    // A candidate bound to threads is lowered as it is; an unbound one (the baseline's empty
    // trace) gets the default GPU schedule of its preset.
    if (!c.task.workloadSpec.empty()) o.workload = topi::parseWorkloadSpec(c.task.workloadSpec).workload->name;
    driver::LoweredOperator op = driver::lowerOperator(scheduled, o, ctx);
    dev = runtime::Device{op.target.kind == "cuda" ? runtime::DeviceType::CUDA : runtime::DeviceType::OpenCL, 0};
    api = runtime::DeviceAPI::get(dev.type);
    mod = codegen::buildGPUKernelModule({op.lowered}, op.target);
    fn = mod.getFunction(op.lowered->name);
  } catch (const std::exception& e) {
    return failure(error_kind::kBuildError, e.what(), sinceMs());
  }
  double buildMs = sinceMs();
  try {
    std::vector<runtime::NDArray> host = topi::makeParamArrays(c.task.func);
    for (int i = 0; i < c.task.numInputs && i < int(host.size()); ++i) tir::fillRandom(host[size_t(i)], options.seed + uint64_t(i));
    std::vector<runtime::NDArray> onDevice;
    for (auto& h : host) {
      onDevice.push_back(runtime::NDArray::empty(h.shape(), h.dtype(), dev));
      onDevice.back().copyFrom(h);
    }
    call(fn, onDevice);
    api->sync(dev);
    if (options.check) {
      for (size_t i = size_t(c.task.numInputs); i < host.size(); ++i) host[i].copyFrom(onDevice[i]);
      std::vector<runtime::NDArray> want = reference(c.task, host);
      double tol = c.task.workloadSpec.empty() ? 1e-3 : topi::checkTolerance(topi::parseWorkloadSpec(c.task.workloadSpec));
      for (size_t i = size_t(c.task.numInputs); i < host.size(); ++i) {
        double err = tir::maxRelError(host[i], want[i]);
        if (!(err <= tol)) {
          std::ostringstream os;
          os << "output '" << c.task.func->params[i]->name << "' differs from the reference: max rel err " << err << " > "
             << tol;
          return failure(error_kind::kWrongResult, os.str(), buildMs);
        }
      }
    }
    if (beforeTiming) beforeTiming();
    driver::TimingStats t = driver::timeCalls(
        [&] {
          call(fn, onDevice);
          api->sync(dev);
        },
        options.repeat, options.minRepeatMs);
    MeasureResult r;
    r.timesMs = t.samplesMs;
    r.buildMs = buildMs;
    return r;
  } catch (const std::exception& e) {
    return failure(error_kind::kRuntimeError, e.what(), buildMs);
  }
}

}  // namespace loom::tune
