// Whole models: the ONNX frontend, the model compiler and packages (loom.frontend, loom.driver,
// the graph executor), and tuning (loom.tune) with a progress callback.
#include <onnx/onnx_pb.h>

#include <fstream>

#include "core/driver/CompileModel.h"
#include "core/driver/ExportLibrary.h"
#include "core/driver/LoadModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Printer.h"
#include "core/schedule/Trace.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/TaskScheduler.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"
#include "python/src/Runtime.h"
#include "runtime/GraphExecutor.h"
#include "runtime/Package.h"

namespace loom::python {

namespace {

/// An imported model: the graph module and the names of its ONNX outputs.
struct PyGraphModule {
  graph::Module mod;
  std::vector<std::string> outputNames;
};

std::vector<std::string> onnxOutputNames(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  onnx::ModelProto m;
  std::vector<std::string> out;
  if (!in || !m.ParseFromIstream(&in)) return out;
  for (const auto& o : m.graph().output()) out.push_back(o.name());
  return out;
}

/// A graph executor and what keeps its kernels loaded.
struct PyExecutor {
  std::shared_ptr<runtime::GraphExecutor> exec;
  std::string metadata;

  size_t index(py::handle key, bool input) const {
    if (py::isinstance<py::int_>(key)) return key.cast<size_t>();
    std::string name = key.cast<std::string>();
    return input ? exec->inputIndex(name) : exec->outputIndex(name);
  }
  void setInput(py::handle key, py::handle value) {
    size_t i = index(key, true);
    if (py::isinstance<PyNDArray>(value)) {
      exec->setInput(i, value.cast<const PyNDArray&>().toNDArray());
    } else {
      auto arr = py::array::ensure(value);
      if (!arr) LOOM_THROW(TypeError) << "set_input: a numpy array or loom.nd array";
      exec->setInput(i, copyOfNumpy(arr).owned);
    }
  }
};

struct PyCompiled {
  driver::CompiledModel model;
};

py::dict eventDict(const tune::TuneEvent& e) {
  static const char* kinds[] = {"baseline", "trial", "new_best", "progress", "task_selected"};
  py::dict d;
  d["kind"] = kinds[int(e.kind)];
  d["task"] = e.task;
  d["trials_done"] = e.trialsDone;
  d["trials_total"] = e.trialsTotal;
  d["best_ms"] = e.bestMs;
  d["baseline_ms"] = e.baselineMs;
  d["flops"] = e.flops;
  d["task_index"] = e.taskIndex;
  d["task_count"] = e.taskCount;
  d["ok"] = e.result.ok();
  d["mean_ms"] = e.result.ok() ? e.result.meanMs() : 0.0;
  d["error"] = e.result.errorKind.empty() ? std::string() : e.result.errorKind + ": " + e.result.errorMessage;
  d["trace"] = e.traceScript;
  return d;
}

thread_local bool g_interrupted = false;

/// Raises KeyboardInterrupt when Ctrl-C stopped the tuning.
void raiseIfInterrupted() {
  if (!g_interrupted) return;
  g_interrupted = false;
  PyErr_SetNone(PyExc_KeyboardInterrupt);
  throw py::error_already_set();
}

tune::TuneOptions tuneOptions(int trials, int batch, int repeat, double timeoutS, uint64_t seed, bool baseline) {
  tune::TuneOptions o;
  o.trials = trials;
  o.batchSize = batch;
  o.seed = seed;
  o.measure.repeat = repeat;
  o.measure.timeoutS = timeoutS;
  o.measureBaseline = baseline;
  g_interrupted = false;
  o.shouldStop = [] {
    // Ctrl-C in Python stops after the current batch; KeyboardInterrupt is raised at the end.
    py::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) {
      PyErr_Clear();
      g_interrupted = true;
    }
    return g_interrupted;
  };
  return o;
}

py::dict resultDict(const tune::TuneResult& r) {
  py::dict d;
  d["task"] = r.task;
  d["trials"] = r.trialsDone;
  d["trials_this_run"] = r.trialsThisRun;
  d["errors"] = r.errors;
  d["baseline_ms"] = r.baselineMs;
  if (r.best) {
    d["best_ms"] = r.best->meanMs();
    d["best_trace"] = tir::Trace::fromJson(r.best->trace).str();
  } else {
    d["best_ms"] = py::none();
    d["best_trace"] = py::none();
  }
  return d;
}

}  // namespace

void bindModel(py::module_& m) {
  py::class_<PyGraphModule>(m, "GraphModule")
      .def("script", [](const PyGraphModule& g) { return graph::printModule(g.mod); })
      .def("__str__", [](const PyGraphModule& g) { return graph::printModule(g.mod); })
      .def_property_readonly("output_names", [](const PyGraphModule& g) { return g.outputNames; });
  m.def("from_onnx", [](const std::string& path, std::map<std::string, std::vector<int64_t>> shapes) {
    frontend::ImportOptions io;
    io.inputShapes = std::move(shapes);
    return PyGraphModule{frontend::importOnnx(path, io), onnxOutputNames(path)};
  }, py::arg("path"), py::arg("shape_dict") = std::map<std::string, std::vector<int64_t>>{});
  m.def("from_pytorch", [](const std::string& path, const std::string& inputShapes) {
    driver::LoadedModel lm = driver::loadModel(path, inputShapes);
    return PyGraphModule{lm.module, lm.outputNames};
  }, py::arg("path"), py::arg("input_shapes"));

  py::class_<PyExecutor>(m, "GraphExecutor")
      .def("set_input", &PyExecutor::setInput)
      .def("run", [](PyExecutor& e) {
        py::gil_scoped_release nogil;
        e.exec->run();
      })
      .def("profile", [](PyExecutor& e) { return e.exec->runProfiled(); })
      .def("get_output", [](const PyExecutor& e, py::handle key) {
        return PyNDArray::fromNDArray(e.exec->getOutput(e.index(key, false)).copy());
      })
      .def_property_readonly("metadata", [](const PyExecutor& e) { return e.metadata; })
      .def_property_readonly("num_inputs", [](const PyExecutor& e) { return e.exec->numInputs(); })
      .def_property_readonly("num_outputs", [](const PyExecutor& e) { return e.exec->numOutputs(); })
      .def("input_info", [](const PyExecutor& e) {
        py::list out;
        for (size_t i = 0; i < e.exec->numInputs(); ++i)
          out.append(py::make_tuple(e.exec->inputName(i), e.exec->inputShape(i), e.exec->inputDType(i).str()));
        return out;
      })
      .def("output_info", [](const PyExecutor& e) {
        py::list out;
        for (size_t i = 0; i < e.exec->numOutputs(); ++i)
          out.append(py::make_tuple(e.exec->outputName(i), e.exec->outputShape(i), e.exec->outputDType(i).str()));
        return out;
      })
      .def("time_run", [](PyExecutor& e, int number, int repeat) {
        std::vector<double> out;
        py::gil_scoped_release nogil;
        e.exec->run();
        for (int r = 0; r < repeat; ++r) {
          auto t0 = std::chrono::steady_clock::now();
          for (int i = 0; i < number; ++i) e.exec->run();
          out.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() / number);
        }
        return out;
      });

  py::class_<PyCompiled>(m, "CompiledModel")
      .def("export", [](const PyCompiled& c, const std::string& path) {
        driver::ExportResult r = driver::exportModel(c.model, path);
        return r.notes;
      })
      .def("executor", [](const PyCompiled& c) {
        return PyExecutor{std::shared_ptr<runtime::GraphExecutor>(driver::createExecutor(c.model)), driver::packageMetadata(c.model)};
      })
      .def_property_readonly("target", [](const PyCompiled& c) { return c.model.target; })
      .def_property_readonly("kernel_names", [](const PyCompiled& c) {
        std::vector<std::string> out;
        for (auto& k : c.model.kernels) out.push_back(k->name);
        return out;
      })
      .def_property_readonly("schedule_sources", [](const PyCompiled& c) { return c.model.scheduleSources; })
      .def_property_readonly("graph_json", [](const PyCompiled& c) { return c.model.graphJson; })
      .def_property_readonly("metadata", [](const PyCompiled& c) { return driver::packageMetadata(c.model); });
  m.def("compile_model", [](const PyGraphModule& g, const std::string& target, int optLevel,
                            const std::string& records, const std::string& layout,
                            std::vector<std::string> disabled, std::function<void(std::string, int, int)> progress) {
    driver::canonicalTarget(target);
    driver::CompileModelOptions co;
    co.optLevel = optLevel;
    co.outputNames = g.outputNames;
    co.desiredLayout = layout;
    co.disabledPasses = std::move(disabled);
    if (!records.empty())
      co.scheduleFor = tune::scheduleProviderFromRecords(records, driver::isCTarget(target) ? std::string("llvm") : target);
    if (progress) co.progress = [progress](const std::string& what, int done, int total) { progress(what, done, total); };
    PyCompiled c{driver::compileModel(g.mod, target, {}, co)};
    if (!records.empty()) c.model.tuningRecords.push_back(records);
    return c;
  }, py::arg("mod"), py::arg("target") = "llvm", py::arg("opt_level") = 3, py::arg("tuning_records") = "",
     py::arg("desired_layout") = "", py::arg("disabled_pass") = std::vector<std::string>{},
     py::arg("progress") = nullptr);
  m.def("load_package", [](const std::string& path) {
    runtime::Package p = runtime::loadPackage(path);
    return PyExecutor{std::shared_ptr<runtime::GraphExecutor>(std::move(p.executor)), p.metadata};
  });

  m.def("tune_model", [](const PyGraphModule& g, const std::string& target, const std::string& records, int trials,
                         int trialsPerTask, int batch, int repeat, double timeoutS, uint64_t seed, bool baseline,
                         std::vector<std::string> worker, std::function<void(py::dict)> callback) {
    driver::CompileModelOptions co;
    co.outputNames = g.outputNames;
    std::vector<tune::TuneTask> tasks = tune::extractTasks(g.mod, {}, co, target);
    tune::JsonDatabase db(records);
    tune::TuneOptions per = tuneOptions(trialsPerTask > 0 ? trialsPerTask : 64, batch, repeat, timeoutS, seed, baseline);
    per.measure.flushCache = true;
    tune::TaskSchedulerOptions so;
    int existing = 0;
    for (auto& t : tasks) existing += std::min(int(db.trialCount(t.key, t.target)), per.trials);
    so.totalTrials = std::max(0, trials - existing);
    tune::useDefaultSchedule(so, target);
    tune::ProcessRunner runner(worker);
    tune::TuneCallback cb;
    if (callback) cb = [&callback](const tune::TuneEvent& e) { callback(eventDict(e)); };
    tune::TaskScheduler scheduler(tasks, db, runner, per, so, cb);
    py::list out;
    for (auto& r : scheduler.run()) out.append(resultDict(r));
    raiseIfInterrupted();
    return out;
  });
  m.def("tune_func", [](const tir::PrimFunc& f, int numInputs, const std::string& target, const std::string& records,
                        int trials, int batch, int repeat, double timeoutS, uint64_t seed, bool baseline,
                        std::vector<std::string> worker, std::function<void(py::dict)> callback) {
    tune::TuneTask task = tune::TuneTask::fromFunc(f, numInputs, target);
    tune::JsonDatabase db(records);
    tune::TuneOptions o = tuneOptions(trials, batch, repeat, timeoutS, seed, baseline);
    tune::ProcessRunner runner(worker);
    tune::TuneCallback cb;
    if (callback) cb = [&callback](const tune::TuneEvent& e) { callback(eventDict(e)); };
    tune::TuneResult r = tune::tuneTask(task, db, runner, o, cb);
    raiseIfInterrupted();
    py::dict d = resultDict(r);
    d["key"] = task.key;
    return d;
  });
  m.def("tune_worker_main", &tune::tuneWorkerMain);
}

}  // namespace loom::python
