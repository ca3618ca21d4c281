// Live compile and measured run of one operator, off the UI thread, through the driver API only.
#include "views/OperatorJobs.h"

#include <QElapsedTimer>
#include <algorithm>
#include <cstdlib>
#include <exception>
#include <optional>

#include "codegen/CodeGenCUDANVRTC.h"
#include "codegen/CodeGenOpenCL.h"
#include "codegen/JITModule.h"
#include "codegen/Listing.h"
#include "core/driver/BuildOperator.h"
#include "core/driver/DefaultSchedule.h"
#include "core/driver/Measure.h"
#include "core/schedule/Instruction.h"
#include "core/schedule/Schedule.h"
#include "core/schedule/Script.h"
#include "core/schedule/Trace.h"
#include "core/support/Error.h"
#include "core/tir/HostArrays.h"
#include "core/tir/Printer.h"
#include "core/topi/Workloads.h"
#include "core/transform/Instruments.h"
#include "runtime/DeviceAPI.h"
#include "runtime/PackedFunc.h"
#include "runtime/RuntimeFailure.h"

namespace loom::views {

namespace {

QString q(const std::string& s) { return QString::fromStdString(s); }

topi::WorkloadSpec specOf(const OperatorRequest& req) {
  topi::ParamMap overrides;
  for (auto it = req.params.begin(); it != req.params.end(); ++it) overrides[it.key().toStdString()] = it.value();
  return topi::makeWorkloadSpec(req.preset.toStdString(), overrides);
}

/// The loops of a printed function, in print order, nested by their line ranges.
QVector<LoopInfo> loopsOf(const tir::PrintResult& pr) {
  std::vector<std::pair<const tir::ForNode*, tir::LineRange>> fors;
  for (const auto& [stmt, range] : pr.stmtLines)
    if (const auto* loop = stmt.as<tir::ForNode>(); loop && range.valid()) fors.push_back({loop, range});
  // stmtLines lists children before parents. Outer loops first: by first line, then the longer
  // range; loops of one T.grid line share a range and keep their recorded order (outer first).
  std::stable_sort(fors.begin(), fors.end(), [](const auto& a, const auto& b) {
    return a.second.first != b.second.first ? a.second.first < b.second.first : a.second.last > b.second.last;
  });
  QVector<LoopInfo> loops;
  QVector<int> stack;  // indices into loops of the open loops
  for (const auto& [loop, range] : fors) {
    while (!stack.isEmpty() && loops[stack.back()].lastLine < range.first) stack.pop_back();
    LoopInfo li;
    li.name = q(loop->loopVar->name);
    li.extent = q(tir::printExpr(loop->extent));
    li.kind = tir::forKindName(loop->kind);
    QStringList ann;
    if (!loop->threadTag.empty()) ann << q(loop->threadTag);
    for (const auto& [key, value] : loop->annotations) ann << q(key) + "=" + q(tir::printExpr(value));
    li.annotations = ann.join(", ");
    li.firstLine = range.first;
    li.lastLine = range.last;
    li.depth = int(stack.size());
    stack.push_back(int(loops.size()));
    loops.push_back(li);
  }
  return loops;
}

QStringList blockNamesOf(const tir::PrintResult& pr) {
  QStringList names;
  for (const auto& entry : pr.stmtLines)
    if (const auto* b = entry.first.as<tir::BlockNode>(); b && !b->name.empty() && !names.contains(q(b->name)))
      names << q(b->name);
  return names;
}

void callPacked(const runtime::PackedFunc& fn, const std::vector<runtime::NDArray>& arrays) {
  std::vector<runtime::PackedArg> args(arrays.begin(), arrays.end());
  fn.call(args);
}

/// True when `script` has no statement (blank lines and comments only).
bool scriptIsEmpty(const QString& script) {
  for (const QString& line : script.split('\n')) {
    QString t = line.trimmed();
    if (!t.isEmpty() && !t.startsWith('#')) return false;
  }
  return true;
}

/// The driver's options for `req`: on a GPU target an empty script takes the default GPU schedule
/// (the preset's, or the generic one for a fused group); a script must bind threads itself.
driver::OperatorOptions optionsOf(const OperatorRequest& req, bool withScript) {
  driver::OperatorOptions opts;
  opts.target = req.target.toStdString();
  bool empty = scriptIsEmpty(req.schedule);
  if (withScript && !empty) {
    opts.schedule = req.schedule.toStdString();
    opts.scheduleName = "schedule.py";
  }
  opts.workload = req.isGroup() ? std::string() : req.preset.toStdString();
  opts.defaultGPUSchedule = empty;
  return opts;
}

/// The GPU code of a lowered operator as listing lines: CUDA C (then PTX or why there is none)
/// or OpenCL C, each source line mapped by the GPU backend to the printed loop of `op.lowered`
/// it was emitted in (codegen::makeGPUListing), as the CPU assembly is.
QVector<AsmLineInfo> gpuCode(const driver::LoweredOperator& op, QString& kind) {
  bool opencl = op.target.kind == "opencl";
  codegen::Listing listing = codegen::makeGPUListing(op.lowered, opencl ? codegen::GPUDialect::OpenCL : codegen::GPUDialect::CUDA);
  QVector<AsmLineInfo> lines;
  lines.push_back({opencl ? QString("// OpenCL C of the kernels (target opencl)") : "// CUDA C of the kernels (target " + q(op.target.str()) + ")", 0});
  for (const codegen::AsmLine& a : listing.asmLines) lines.push_back({q(a.text), a.tirLine});
  QString ptx;
  if (opencl) {
    kind = "OpenCL C";
  } else {
    std::string why;
    std::string arch = op.target.arch.empty() ? "sm_90" : op.target.arch;
    if (!codegen::nvrtcAvailable(&why)) {
      kind = "CUDA C";
      ptx = "\n// PTX: not shown: NVRTC (libnvrtc) is not available on this machine (" + q(why) +
            "). Install the CUDA toolkit or set LOOM_NVRTC to see the PTX for " + q(arch) + ".\n";
    } else {
      kind = "CUDA C + PTX";
      try {
        ptx = "\n// PTX for " + q(arch) + " (NVRTC)\n" + q(driver::emitCode(op, driver::CodeKind::PTX));
      } catch (const Error& e) {
        ptx = "\n// PTX: NVRTC failed: " + q(e.what()).replace('\n', "\n// ") + "\n";
      }
    }
  }
  // The PTX has no line map (NVRTC is asked for no line info).
  if (!ptx.isEmpty())
    for (const QString& line : ptx.mid(1).split('\n')) lines.push_back({line, 0});
  while (!lines.isEmpty() && lines.back().text.isEmpty()) lines.pop_back();
  return lines;
}

/// Random inputs: floats uniform in [-1, 1]; integer inputs of a fused group are zeros (they are
/// often indices, and 0 is in range for any non-empty axis).
void fillInputs(std::vector<runtime::NDArray>& arrays, size_t numInputs, bool group) {
  for (size_t i = 0; i < numInputs && i < arrays.size(); ++i) {
    if (group && arrays[i].dtype().code != runtime::DType::Float && arrays[i].dtype().code != runtime::DType::BFloat) {
      for (int64_t k = 0; k < arrays[i].numel(); ++k) tir::setElement(arrays[i], k, 0);
      continue;
    }
    tir::fillRandom(arrays[i], 1 + i);
  }
}

}  // namespace

QStringList presetNames() {
  QStringList names;
  for (const topi::Workload& w : topi::allWorkloads()) names << q(w.name);
  return names;
}

QVector<PresetParamInfo> presetParams(const QString& preset) {
  QVector<PresetParamInfo> out;
  if (const topi::Workload* w = topi::findWorkload(preset.toStdString()))
    for (const topi::WorkloadParam& p : w->params) out.push_back({q(p.name), p.defaultValue, p.minValue, q(p.help)});
  return out;
}

QString presetDescription(const QString& preset) {
  const topi::Workload* w = topi::findWorkload(preset.toStdString());
  return w ? q(w->description) : QString();
}

CompileResult compileOperator(const OperatorRequest& req) {
  CompileResult r;
  r.preset = req.preset;
  r.target = req.target;
  QElapsedTimer timer;
  timer.start();
  try {
    tir::PrimFunc func = req.isGroup() ? req.func : topi::buildWorkload(specOf(req));
    tir::PrimFunc scheduled = func;
    if (!req.schedule.trimmed().isEmpty()) {
      tir::Schedule sch(func);
      tir::ScriptResult sr = tir::runScript(sch, req.schedule.toStdString(), "schedule.py");
      if (sr.ok) {
        scheduled = sch.func();
      } else {
        r.scriptOk = false;
        r.errorMessage = q(sr.message);
        r.errorKind = q(sr.errorKind);
        r.errorLine = sr.span.line;
        r.errorColumn = sr.span.column;
        r.errorEndColumn = sr.span.endLine == sr.span.line ? sr.span.endColumn : 0;
        if (sr.funcBefore.defined()) scheduled = sr.funcBefore;
      }
    }
    tir::PrintResult pr = tir::printWithMap(scheduled);
    r.scheduledTir = q(pr.text);
    r.scheduledLoops = loopsOf(pr);
    r.blockNames = blockNamesOf(pr);

    driver::OperatorOptions opts = optionsOf(req, false);
    transform::PassContext ctx;
    auto recorder = std::make_shared<transform::PassRecorder>();
    ctx.instruments.push_back(recorder);
    driver::LoweredOperator op = driver::lowerOperator(scheduled, opts, ctx);
    if (!op.trace.empty()) {  // the default GPU schedule ran: show the program it made
      r.note = "default GPU schedule (the script is empty)";
      tir::PrintResult gpr = tir::printWithMap(op.scheduled);
      r.scheduledTir = q(gpr.text);
      r.scheduledLoops = loopsOf(gpr);
    }
    if (recorder->input().defined()) r.passes.push_back({"input", q(tir::printFunc(recorder->input())), true});
    for (const auto& step : recorder->steps())
      r.passes.push_back({q(step.pass), step.changed ? q(tir::printFunc(step.after)) : QString(), step.changed});
    // Unchanged passes show the text of the last pass that changed something.
    for (int i = 1; i < r.passes.size(); ++i)
      if (!r.passes[i].changed) r.passes[i].text = r.passes[i - 1].text;

    tir::PrintResult lpr = tir::printWithMap(op.lowered);
    r.loweredLoops = loopsOf(lpr);
    if (op.target.isGPU()) {
      r.loweredTir = q(lpr.text);  // what the GPU listing's lines refer to (the same printer)
      r.asmLines = gpuCode(op, r.codeKind);
    } else {
      codegen::Listing listing = codegen::makeListing(op.lowered, op.target);
      r.loweredTir = q(listing.tir);
      r.asmLines.reserve(int(listing.asmLines.size()));
      for (const codegen::AsmLine& a : listing.asmLines) r.asmLines.push_back({q(a.text), a.tirLine});
    }
  } catch (const Error& e) {
    r.buildError = QString("%1: %2").arg(e.kind(), q(e.what()));
  } catch (const std::exception& e) {
    r.buildError = q(e.what());
  }
  r.compileMs = double(timer.nsecsElapsed()) / 1e6;
  return r;
}

RunRecord runOperator(const OperatorRequest& req, const std::atomic<bool>* cancel) {
  RunRecord rec;
  rec.preset = req.isGroup() ? "group " + req.group : req.preset;
  rec.target = req.target;
  rec.schedule = req.schedule;
  auto cancelled = [&] { return cancel && cancel->load(); };
  try {
    std::optional<topi::WorkloadSpec> spec;
    tir::PrimFunc func;
    size_t numInputs = 0;
    double flops = 0;
    if (req.isGroup()) {
      func = req.func;
      numInputs = size_t(req.numInputs);
      flops = req.flops;
    } else {
      spec = specOf(req);
      rec.preset = q(spec->str());
      func = topi::buildWorkload(*spec);
      numInputs = size_t(spec->workload->numInputs);
      flops = topi::workloadFlops(*spec);
    }
    rec.flopsKnown = flops > 0;
    driver::OperatorOptions opts = optionsOf(req, true);
    transform::PassContext ctx;
    driver::LoweredOperator op = driver::lowerOperator(func, opts, ctx);
    rec.loweredTir = q(tir::printFunc(op.lowered));
    if (op.target.kind == "cuda")
      LOOM_THROW(Error) << "target '" << op.target.str()
                        << "' cannot run in the Studio: it runs GPU kernels through OpenCL, and no CUDA GPU is present "
                           "here anyway; the assembly pane shows the CUDA C and PTX; pick opencl to run GPU kernels on an "
                           "OpenCL device, or use `loom bench-op --target cuda` on a machine with a CUDA GPU";
    if (!op.target.isGPU() && !op.target.isHost())
      LOOM_THROW(Error) << "target '" << opts.target << "' does not run on this machine; pick a host target to run";
    if (cancelled()) LOOM_THROW(Error) << "cancelled";

    std::vector<runtime::NDArray> arrays = topi::makeParamArrays(func);
    fillInputs(arrays, numInputs, req.isGroup());
    std::vector<runtime::NDArray> want;
    for (size_t i = 0; i < arrays.size(); ++i) want.push_back(i < numInputs ? arrays[i] : arrays[i].copy());

    std::unique_ptr<codegen::JITModule> jit;
    runtime::PackedFunc fn;
    std::unique_ptr<codegen::OpenCLModule> device;
    if (op.target.isGPU()) {
      runtime::useDevicePluginsBesideProgram();
      try {
        device = std::make_unique<codegen::OpenCLModule>(op.lowered);
      } catch (const runtime::RuntimeFailure& e) {
        LOOM_THROW(Error) << "cannot run on OpenCL: " << e.what();
      }
      rec.device = q(device->deviceDescription());
      device->run(arrays);
    } else {
      jit = driver::jitOperator(op);
      fn = jit->getFunction(op.lowered->name);
      callPacked(fn, arrays);
    }

    double tolerance = 1e-3;
    if (spec && flops <= 2e8) {
      topi::runReference(*spec, want);
      rec.reference = "C++ reference";
      tolerance = topi::checkTolerance(*spec);
    } else {
      if (cancelled()) LOOM_THROW(Error) << "cancelled";
      transform::PassContext plainCtx;
      driver::OperatorOptions plainOpts;
      plainOpts.target = op.target.isGPU() ? std::string("llvm") : opts.target;
      driver::LoweredOperator plain = driver::lowerOperator(func, plainOpts, plainCtx);
      auto plainJit = driver::jitOperator(plain);
      callPacked(plainJit->getFunction(plain.lowered->name), want);
      rec.reference = "unscheduled program";
      if (spec) tolerance = topi::checkTolerance(*spec);
    }
    double worst = 0;
    for (size_t i = numInputs; i < arrays.size(); ++i) {
      double err = tir::maxRelError(arrays[i], want[i]);
      worst = err > worst || err != err ? err : worst;
    }
    rec.maxRelError = worst;
    rec.correct = worst <= tolerance;
    if (cancelled()) LOOM_THROW(Error) << "cancelled";
    if (device) {
      rec.medianMs = device->run(arrays, 10) * 1e3;
    } else {
      // Warm up for ~20 ms first (caches, the thread pool, the clock), then 10 samples of >= 20 ms.
      QElapsedTimer warm;
      warm.start();
      do callPacked(fn, arrays);
      while (warm.nsecsElapsed() < 20'000'000 && !cancelled());
      driver::TimingStats t = driver::timeCalls([&] { callPacked(fn, arrays); }, 10, 20);
      rec.medianMs = t.medianMs;
      rec.minMs = t.minMs;
      rec.maxMs = t.samplesMs.empty() ? t.medianMs : *std::max_element(t.samplesMs.begin(), t.samplesMs.end());
      rec.repeats = t.repeat;
      rec.callsPerRepeat = t.number;
    }
    rec.gflops = rec.flopsKnown && rec.medianMs > 0 ? flops / (rec.medianMs * 1e-3) / 1e9 : 0;
    // A fused group on the CPU: also time the model's default schedule, the time to beat.
    if (req.isGroup() && !device && !cancelled()) {
      transform::PassContext defCtx;
      driver::OperatorOptions defOpts;
      defOpts.target = opts.target;
      driver::LoweredOperator def = driver::lowerOperator(driver::defaultSchedule(func), defOpts, defCtx);
      auto defJit = driver::jitOperator(def);
      runtime::PackedFunc defFn = defJit->getFunction(def.lowered->name);
      std::vector<runtime::NDArray> scratch;
      for (size_t i = 0; i < arrays.size(); ++i) scratch.push_back(i < numInputs ? arrays[i] : arrays[i].copy());
      rec.defaultMs = driver::timeCalls([&] { callPacked(defFn, scratch); }, 5, 30).medianMs;
    }
    rec.ok = true;
  } catch (const Error& e) {
    rec.error = q(e.what());
  } catch (const std::exception& e) {
    rec.error = q(e.what());
  }
  return rec;
}

QVector<PrimitiveInfo> schedulePrimitives() {
  QVector<PrimitiveInfo> out;
  for (const std::string& name : tir::instructionKindNames()) {
    const tir::InstructionKind* kind = tir::findInstructionKind(name);
    if (!kind) continue;
    QStringList params;
    for (const tir::ParamSpec& p : kind->params) {
      QString s = p.variadic ? "*" + q(p.name) : q(p.name);
      if (p.defaultValue) s += "=" + q(tir::valueToScript(*p.defaultValue, {}));
      params << s;
    }
    out.push_back({q(name), q(name) + "(" + params.join(", ") + ")", q(kind->doc)});
  }
  return out;
}

}  // namespace loom::views
