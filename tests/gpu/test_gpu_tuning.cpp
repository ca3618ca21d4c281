// Tuning for opencl: a matmul for a few trials (candidates from the GPU space measured in worker
// processes on the OpenCL device, PoCL, checked, timed, recorded; the baseline is the preset's
// default GPU schedule), and a whole model whose records compileModel applies.
#include <QtTest>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <unistd.h>

#include "GPUTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/schedule/Trace.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/TaskScheduler.h"
#include "core/tune/Tuner.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"

using namespace loom;
using namespace loom::tune;

class TestGPUTuning : public QObject {
  Q_OBJECT
  std::string m_unavailable;

private slots:
  void initTestCase() {
    gputest::usePluginsOfThisBuild();
    m_unavailable = gputest::openclUnavailable();
  }

  void tuneMatmulOnOpenCL() {
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    std::string path = (std::filesystem::temp_directory_path() /
                        ("loom_test_gpu_tuning_" + std::to_string(::getpid()) + ".json")).string();
    std::remove(path.c_str());
    TuneTask task = TuneTask::fromWorkload("matmul:M=64,N=64,K=64", "opencl");
    ProcessRunner runner({LOOM_BINARY_DIR "/bin/loom", "tune-worker"}, false);
    TuneOptions o;
    o.trials = 8;
    o.batchSize = 4;
    o.strategy = "random";
    o.measure.repeat = 2;
    o.measure.minRepeatMs = 1;
    o.measure.timeoutS = 30;
    int ok = 0, failed = 0;
    TuneResult r;
    {
      JsonDatabase db(path);
      r = tuneTask(task, db, runner, o, [&](const TuneEvent& e) {
        if (e.kind != TuneEventKind::TrialDone) return;
        if (e.result.ok()) ++ok;
        else if (e.result.errorKind != "build_error") {  // over the thread limit: refused by the verifier
          ++failed;
          qWarning("%s: %s", e.result.errorKind.c_str(), e.result.errorMessage.c_str());
        }
      });
    }
    std::remove(path.c_str());
    QCOMPARE(failed, 0);
    QVERIFY2(ok >= 4, qPrintable(QString::number(ok)));
    QVERIFY(r.best.has_value());
    QVERIFY(r.best->meanMs() > 0);
    // The baseline: the default GPU schedule of the preset, measured on the device too.
    QVERIFY2(std::isfinite(r.baselineMs) && r.baselineMs > 0, qPrintable(QString::number(r.baselineMs)));
  }

  void tuneModelOnOpenCL() {
    // Whole-model tuning for opencl (one trial per kernel), the records applied by compileModel:
    // the tuned GPU kernels give the CPU build's outputs on PoCL.
    if (!m_unavailable.empty()) QSKIP(("no OpenCL device: " + m_unavailable).c_str());
    frontend::ImportOptions io;
    io.inputShapes = frontend::parseInputShapes("data:[1,3,16,16]");
    graph::Module m = frontend::importOnnx(LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx", io);
    driver::CompileModelOptions co;
    co.desiredLayout = "NCHW";  // what compileModel uses for GPU targets by default
    std::vector<TuneTask> tasks = extractTasks(m, {}, co, "opencl");
    QVERIFY(tasks.size() >= 5);
    std::string path = (std::filesystem::temp_directory_path() /
                        ("loom_test_gpu_model_tuning_" + std::to_string(::getpid()) + ".json")).string();
    std::remove(path.c_str());
    ProcessRunner runner({LOOM_BINARY_DIR "/bin/loom", "tune-worker"}, false);
    TuneOptions per;
    per.trials = 1;
    per.batchSize = 1;
    per.strategy = "random";
    per.measureBaseline = false;
    per.measure.repeat = 1;
    per.measure.minRepeatMs = 1;
    per.measure.timeoutS = 30;
    TaskSchedulerOptions so;
    so.totalTrials = int(tasks.size());
    {
      JsonDatabase db(path);
      TaskScheduler s(tasks, db, runner, per, so, [&](const TuneEvent& e) {
        if (e.kind == TuneEventKind::TrialDone && !e.result.ok())
          qWarning("%s: %s: %s", e.task.c_str(), e.result.errorKind.c_str(), e.result.errorMessage.c_str());
      });
      s.run();
      // A record is used only when it was measured faster than the default schedule: record the
      // defaults as measured far slower, so every kernel with a record uses it (this test checks
      // that the tuned GPU kernels compute right, not which is faster).
      for (const TuneTask& t : tasks) {
        auto best = db.best(t.key, t.target);
        if (!best) continue;
        TuningRecord b = *best;
        b.workload = baselineKey(t.key);
        b.trace = tir::Trace().toJson();
        b.timesMs = {1e9};
        b.retime = false;
        db.commit(b);
      }
    }
    driver::CompileModelOptions tuned = co;
    tuned.scheduleFor = scheduleProviderFromRecords(path, "opencl");
    driver::CompiledModel gpu = driver::compileModel(m, "opencl", {}, tuned);
    std::remove(path.c_str());
    int fromRecords = 0;
    for (auto& src : gpu.scheduleSources) fromRecords += src.rfind("tuned:", 0) == 0;
    QVERIFY2(fromRecords >= int(tasks.size()) - 1, qPrintable(QString::number(fromRecords)));
    driver::CompiledModel cpu = driver::compileModel(m, "llvm", {}, co);
    auto cpuEx = driver::createExecutor(cpu);
    auto gpuEx = driver::createExecutor(gpu);
    runtime::NDArray x = runtime::NDArray::empty(cpu.inputs[0].shape, cpu.inputs[0].dtype);
    tir::fillRandom(x, 5);
    cpuEx->setInput(size_t(0), x);
    gpuEx->setInput(size_t(0), x);
    cpuEx->run();
    gpuEx->run();
    runtime::NDArray want = cpuEx->getOutput(size_t(0)), got = gpuEx->getOutput(size_t(0));
    for (int64_t i = 0; i < want.numel(); ++i) {
      double w = want.as<float>()[i], g = got.as<float>()[i];
      QVERIFY2(std::fabs(g - w) <= 1e-5 + 1e-3 * std::fabs(w), qPrintable(QString("%1: %2 vs %3").arg(i).arg(g).arg(w)));
    }
  }
};

QTEST_APPLESS_MAIN(TestGPUTuning)
#include "test_gpu_tuning.moc"
