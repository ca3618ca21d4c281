// The Studio session: workspace state and its worker-thread jobs, with stale results dropped.
#include "views/Session.h"

#include <QFileInfo>
#include <QJsonArray>
#include <QPointer>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <exception>

#include "core/driver/MachinePeak.h"
#include "core/support/Error.h"
#include "core/tir/Parser.h"
#include "core/tir/Printer.h"
#include "loom/c_runtime_api.h"
#include "views/Background.h"
#include "views/ModelJobs.h"
#include "views/RunsModel.h"

#if defined(__SANITIZE_ADDRESS__)
// AddressSanitizer builds only (scripts/test.sh --sanitize): no alternate signal stacks from ASan
// in Studio processes. PoCL's kernel compiler (LLVM 15) runs on the Session's worker threads and
// LLVM's signal handlers (RemoveFileOnSignal) replace the thread's alternate stack, ASan's 54 KiB
// mapping, by a malloc'd one of 64 KiB + SIGSTKSZ (79,040 bytes here); when the pool thread exits,
// ASan unmaps the thread's current alternate stack, LLVM's heap block, and aborts ("failed to
// deallocate 0x134c0 bytes ... unable to unmap": studio.test_model_view after an OpenCL run).
// ASAN_OPTIONS in the environment still override this.
extern "C" const char* __asan_default_options() { return "use_sigaltstack=0"; }
#endif

namespace loom::views {

Session::Session(QObject* parent) : QObject(parent), m_cancel(std::make_shared<std::atomic<bool>>(false)) {
  qRegisterMetaType<CompileResult>();
  qRegisterMetaType<RunRecord>();
  qRegisterMetaType<ModelData>();
  m_pool.setMaxThreadCount(3);
  m_runPool.setMaxThreadCount(1);
  m_timer = new QTimer(this);
  m_timer->setSingleShot(true);
  m_timer->setInterval(150);
  connect(m_timer, &QTimer::timeout, this, &Session::startCompile);
  m_runs = new RunsModel(this);
}

Session::~Session() {
  m_cancel->store(true);
  m_pool.waitForDone();
  m_runPool.waitForDone();
}

void Session::setPreset(const QString& preset, const QMap<QString, qint64>& params) {
  QMap<QString, qint64> full;
  for (const PresetParamInfo& p : presetParams(preset)) full[p.name] = params.value(p.name, p.defaultValue);
  if (!m_request.isGroup() && preset == m_request.preset && full == m_request.params) return;
  m_request.func = tir::PrimFunc();
  m_request.group.clear();
  m_request.numInputs = 0;
  m_request.flops = 0;
  m_request.preset = preset;
  m_request.params = full;
  setModified(true);
  emit requestChanged();
  scheduleCompile();
}

void Session::setScheduleText(const QString& text) {
  if (text == m_request.schedule) return;
  m_request.schedule = text;
  setModified(true);
  scheduleCompile();
}

void Session::setTarget(const QString& target) {
  if (target == m_request.target) return;
  m_request.target = target;
  setModified(true);
  emit requestChanged();
  scheduleCompile();
}

void Session::setCompileDelay(int ms) { m_timer->setInterval(ms); }

void Session::scheduleCompile() {
  ++m_compileGen;  // anything in flight is now stale
  m_timer->start();
}

void Session::compileNow() {
  ++m_compileGen;
  m_timer->stop();
  startCompile();
}

void Session::startCompile() {
  if (m_compileRunning) {  // one compile at a time: the latest request runs when this one ends
    m_compilePending = true;
    return;
  }
  m_compileRunning = true;
  m_compilePending = false;
  quint64 gen = m_compileGen;
  OperatorRequest req = m_request;
  emit compileStarted();
  QPointer<Session> self(this);
  startJob(m_pool, [self, req, gen] {
    yieldToUiThread();
    CompileResult r = compileOperator(req);
    r.generation = gen;
    if (!self) return;
    postToGui(self, [self, r] {
      if (!self) return;
      self->m_compileRunning = false;
      if (r.generation == self->m_compileGen) {
        self->m_lastCompile = r;
        emit self->operatorCompiled(r);
      } else if (!self->m_timer->isActive()) {
        self->startCompile();  // stale: compile the newest request now
        return;
      }
      if (self->m_compilePending) self->startCompile();
    });
  });
}

int Session::scheduleVersion(const QString& schedule) {
  auto it = m_versions.find(schedule);
  if (it != m_versions.end()) return *it;
  int v = int(m_versions.size()) + 1;
  m_versions.insert(schedule, v);
  return v;
}

void Session::measurePeak() {
  if (m_peakStarted) return;
  m_peakStarted = true;
  QPointer<Session> self(this);
  startJob(m_runPool, [self] {
    double peak = driver::measureFmaPeakGflops(loom_backend_num_threads(), 0.2);
    postToGui(self, [self, peak] {
      if (!self) return;
      self->m_peak = peak;
      emit self->logged(QString("machine peak: %1 GFLOP/s fp32 FMA on %2 thread(s)").arg(peak, 0, 'f', 0).arg(loom_backend_num_threads()));
      emit self->peakMeasured(peak);
    });
  });
}

void Session::run() {
  bool needPeak = m_peak <= 0;
  OperatorRequest req = m_request;
  int version = scheduleVersion(req.schedule);
  int id = m_nextRunId++;
  quint64 gen = ++m_runGen;
  m_cancel->store(false);
  auto cancel = m_cancel;
  ++m_tasks;
  emit runStarted();
  emit taskStarted(QString("Running %1 (schedule v%2)").arg(req.preset).arg(version));
  QPointer<Session> self(this);
  QString runModel = req.isGroup() ? modelPath() : QString();
  // The code of this request, when the last compile is of it (no edit since): for the run diff.
  QString assembly;
  if (m_lastCompile.generation == m_compileGen && !m_timer->isActive() && m_lastCompile.buildError.isEmpty())
    for (const AsmLineInfo& a : m_lastCompile.asmLines) assembly += a.text + '\n';
  startJob(m_runPool, [self, req, version, id, gen, cancel, needPeak, runModel, assembly] {
    // The peak is measured before the run, never beside it (both would compete for the cores).
    double peak = needPeak ? driver::measureFmaPeakGflops(loom_backend_num_threads(), 0.2) : 0;
    RunRecord rec = runOperator(req, cancel.get());
    rec.peakGflops = peak;
    rec.id = id;
    rec.scheduleVersion = version;
    rec.model = runModel;
    rec.assembly = assembly;
    postToGui(self, [self, rec, gen, cancel] {
      if (!self) return;
      self->endTask();
      if (cancel->load() || gen != self->m_runGen) {
        emit self->logged(QString("run #%1 cancelled").arg(rec.id));
        return;
      }
      RunRecord r = rec;
      if (self->m_peak <= 0 && r.peakGflops > 0) {
        self->m_peak = r.peakGflops;
        emit self->peakMeasured(r.peakGflops);
      }
      r.peakGflops = self->m_peak;
      self->m_runs->addRun(r);
      self->setModified(true);
      QString rate = r.flopsKnown ? QString("%1 GFLOP/s").arg(r.gflops, 0, 'f', 1) : QString("GFLOP/s unknown");
      emit self->logged(r.ok ? QString("run #%1: %2 ms, %3, %4 (vs %5, max rel err %6)%7").arg(r.id).arg(r.medianMs, 0, 'f', 4).arg(rate, r.correct ? "correct" : "WRONG", r.reference).arg(r.maxRelError, 0, 'e', 2).arg(r.device.isEmpty() ? QString() : " on " + r.device) +
                                 (r.defaultMs > 0 ? QString("; the model's default schedule: %1 ms").arg(r.defaultMs, 0, 'f', 4) : QString())
                             : QString("run #%1 failed: %2").arg(r.id).arg(r.error));
      emit self->runFinished(r);
    });
  });
}

void Session::loadModel(const QString& path, bool markModified, bool keepInputShapes) {
  // Input shapes are a model's: another model starts without them (unless they were set for it).
  if (!keepInputShapes && m_model && QFileInfo(path).absoluteFilePath() != QFileInfo(m_model->path).absoluteFilePath()) {
    m_inputShapes.clear();
    m_symbolicShapes.clear();
  }
  quint64 gen = ++m_modelGen;
  m_cancel->store(false);
  auto cancel = m_cancel;
  ++m_tasks;
  emit modelLoadStarted(path);
  emit taskStarted(QString("Loading %1").arg(path));
  QPointer<Session> self(this);
  QString layout = m_layout;
  QMap<QString, QVector<qint64>> shapes = m_inputShapes;
  QString torchSpec = m_torchInputSpec, symbolic = m_symbolicShapes;
  startJob(m_pool, [self, path, gen, cancel, markModified, layout, shapes, torchSpec, symbolic] {
    yieldToUiThread();
    std::shared_ptr<ModelData> data;
    QString error;
    try {
      data = std::make_shared<ModelData>(loadModelData(path, cancel.get(), layout, shapes, torchSpec, symbolic));
      data->generation = gen;
    } catch (const Error& e) {
      error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    postToGui(self, [self, data, error, path, gen, cancel, markModified] {
      if (!self) return;
      self->endTask();
      if (cancel->load() || gen != self->m_modelGen) return;
      if (!data) {
        emit self->logged(QString("%1: %2").arg(path, error));
        emit self->modelFailed(path, error);
        return;
      }
      self->m_model = data;
      self->m_groups.reset();
      if (markModified) self->setModified(true);
      emit self->logged(QString("model %1: %2 ops as imported, %3 after optimization, %4 in %5 fused groups; loaded in %6 ms")
                            .arg(path).arg(data->opCount).arg(data->optimizedOpCount).arg(data->fusedOpCount).arg(data->fusedGroups)
                            .arg(data->loadMs, 0, 'f', 0));
      emit self->modelLoaded(*data);
      if (data->concrete())
        self->extractGroups();
      else
        emit self->logged(QString("%1 has symbolic input dims without values: its kernels are made once Model > Input Shapes… "
                                  "sets them").arg(QFileInfo(path).fileName()));
    });
  });
}

void Session::setInputShapes(const QMap<QString, QVector<qint64>>& shapes, bool reload, const QString& symbolic) {
  if (shapes == m_inputShapes && symbolic == m_symbolicShapes) return;
  m_inputShapes = shapes;
  m_symbolicShapes = symbolic;
  if (reload && m_model) {
    setModified(true);
    loadModel(m_model->path, false, true);
  }
}

void Session::setModelLayout(const QString& layout) {
  if (layout == m_layout) return;
  m_layout = layout;
  if (m_model) loadModel(m_model->path, false, true);
}

bool Session::openGroup(int index) {
  if (!m_groups || index < 0 || size_t(index) >= m_groups->groups.size()) return false;
  const driver::ModelGroup& g = m_groups->groups[size_t(index)];
  m_request.func = g.func;
  m_request.group = QString::fromStdString(g.name);
  m_request.numInputs = g.numInputs;
  m_request.flops = m_groups->flops[size_t(index)];
  m_request.preset = m_request.group;
  m_request.params.clear();
  setModified(true);
  emit logged(QString("opened fused group %1 (%2 input(s), used %3x in the model)").arg(m_request.group).arg(g.numInputs).arg(g.occurrences));
  emit requestChanged();
  scheduleCompile();
  return true;
}

void Session::extractGroups() {
  if (!m_model) return;
  quint64 gen = m_modelGen;
  auto cancel = m_cancel;
  std::shared_ptr<const ModelData> model = m_model;
  ++m_tasks;
  emit taskStarted(QString("Extracting the kernels of %1").arg(model->path));
  QPointer<Session> self(this);
  startJob(m_pool, [self, model, gen, cancel] {
    yieldToUiThread();
    std::shared_ptr<ModelGroups> groups;
    QString error;
    try {
      groups = std::make_shared<ModelGroups>(extractModelGroups(*model, cancel.get()));
    } catch (const Error& e) {
      error = QString::fromStdString(e.what());
    } catch (const std::exception& e) {
      error = QString::fromStdString(e.what());
    }
    postToGui(self, [self, groups, error, gen, cancel] {
      if (!self) return;
      self->endTask();
      if (cancel->load() || gen != self->m_modelGen) return;
      if (!groups) {
        emit self->logged("cannot extract the model's kernels: " + error);
        emit self->groupsFailed(error);
        return;
      }
      self->m_groups = groups;
      emit self->logged(QString("%1 kernels for %2 fused groups, extracted in %3 ms")
                            .arg(groups->groups.size()).arg(groups->clusterGroup.size()).arg(groups->ms, 0, 'f', 0));
      emit self->groupsReady();
    });
  });
}

bool Session::isIdle() const { return !m_compileRunning && !m_compilePending && !m_timer->isActive() && m_tasks == 0; }

void Session::cancel() {
  m_cancel->store(true);
  m_cancel = std::make_shared<std::atomic<bool>>(false);
  ++m_runGen;
  ++m_modelGen;
}

void Session::endTask() {
  if (--m_tasks == 0) emit taskFinished();
}

void Session::setModified(bool m) {
  if (m == m_modified) return;
  m_modified = m;
  emit modifiedChanged(m);
}

QJsonObject Session::toJson() const {
  QJsonObject o;
  o["preset"] = m_request.preset;
  QJsonObject params;
  for (auto it = m_request.params.begin(); it != m_request.params.end(); ++it) params[it.key()] = double(it.value());
  o["params"] = params;
  o["schedule"] = m_request.schedule;
  o["target"] = m_request.target;
  if (m_request.isGroup()) {
    QJsonObject g;
    g["name"] = m_request.group;
    g["tir"] = QString::fromStdString(tir::printFunc(m_request.func));
    g["numInputs"] = m_request.numInputs;
    g["flops"] = m_request.flops;
    o["group"] = g;
  }
  if (m_model) o["model"] = m_model->path;
  o["modelLayout"] = m_layout;
  QJsonObject shapes;
  for (auto it = m_inputShapes.begin(); it != m_inputShapes.end(); ++it) {
    QJsonArray dims;
    for (qint64 d : *it) dims.append(double(d));
    shapes[it.key()] = dims;
  }
  if (!shapes.isEmpty()) o["inputShapes"] = shapes;
  if (!m_symbolicShapes.isEmpty()) o["symbolicInputShapes"] = m_symbolicShapes;
  QJsonArray runs;
  for (const RunRecord& r : m_runs->records()) {
    QJsonObject j;
    j["id"] = r.id;
    j["version"] = r.scheduleVersion;
    j["preset"] = r.preset;
    j["target"] = r.target;
    j["schedule"] = r.schedule;
    j["lowered"] = r.loweredTir;
    j["ok"] = r.ok;
    j["error"] = r.error;
    j["correct"] = r.correct;
    j["maxRelError"] = r.maxRelError;
    j["reference"] = r.reference;
    j["medianMs"] = r.medianMs;
    j["minMs"] = r.minMs;
    j["maxMs"] = r.maxMs;
    j["repeats"] = r.repeats;
    j["callsPerRepeat"] = r.callsPerRepeat;
    j["gflops"] = r.gflops;
    j["peak"] = r.peakGflops;
    j["flopsKnown"] = r.flopsKnown;
    j["defaultMs"] = r.defaultMs;
    j["device"] = r.device;
    if (!r.model.isEmpty()) j["model"] = r.model;
    if (!r.assembly.isEmpty()) j["assembly"] = r.assembly;
    runs.append(j);
  }
  o["runs"] = runs;
  return o;
}

void Session::restore(const driver::SessionWorkspace& ws) {
  auto q = [](const std::string& s) { return QString::fromStdString(s); };
  QMap<QString, qint64> params;
  for (const auto& [name, value] : ws.params) params[q(name)] = qint64(value);
  m_request.target = q(ws.target);
  m_request.schedule = q(ws.schedule);
  m_request.preset.clear();
  setPreset(q(ws.preset), params);
  if (ws.group) {  // a fused group's kernel, kept as TIR text
    const driver::SessionGroup& g = *ws.group;
    try {
      m_request.func = tir::parseFunc(g.tir, g.name + ".tir");
      m_request.group = q(g.name);
      m_request.numInputs = g.numInputs;
      m_request.flops = g.flops;
      m_request.preset = m_request.group;
      m_request.params.clear();
    } catch (const Error& e) {
      emit logged(QString("the session's fused group %1 cannot be restored: %2").arg(q(g.name), QString::fromStdString(e.what())));
    }
  }
  m_runs->clear();
  m_versions.clear();
  m_nextRunId = 1;
  for (const driver::SessionRun& j : ws.runs) {
    RunRecord r;
    r.id = j.id;
    r.scheduleVersion = j.version;
    r.preset = q(j.preset);
    r.target = q(j.target);
    r.schedule = q(j.schedule);
    r.loweredTir = q(j.lowered);
    r.ok = j.ok;
    r.error = q(j.error);
    r.correct = j.correct;
    r.maxRelError = j.maxRelError;
    r.reference = q(j.reference);
    r.medianMs = j.medianMs;
    r.minMs = j.minMs;
    r.maxMs = j.maxMs;
    r.repeats = j.repeats;
    r.callsPerRepeat = j.callsPerRepeat;
    r.gflops = j.gflops;
    r.peakGflops = j.peak;
    r.flopsKnown = j.flopsKnown;
    r.defaultMs = j.defaultMs;
    r.device = q(j.device);
    r.model = q(j.model);
    r.assembly = q(j.assembly);
    m_runs->addRun(r);
    m_versions.insert(r.schedule, r.scheduleVersion);
    m_nextRunId = std::max(m_nextRunId, r.id + 1);
  }
  emit requestChanged();
  compileNow();
  m_layout = q(ws.modelLayout);
  m_inputShapes.clear();
  for (const auto& [name, dims] : ws.inputShapes) {
    QVector<qint64> d;
    for (int64_t x : dims) d << qint64(x);
    m_inputShapes[q(name)] = d;
  }
  m_symbolicShapes = q(ws.symbolicInputShapes);
  if (!ws.model.empty()) loadModel(q(ws.model), false, true);
  setModified(false);
}

}  // namespace loom::views
