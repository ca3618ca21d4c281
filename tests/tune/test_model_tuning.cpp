// A real, short whole-model tuning of small_cnn (worker processes, default-schedule baselines,
// caches flushed, the best and the default re-timed together), resumed once, whose records
// compileModel then applies: a kernel takes its record only when it was measured faster than its
// default schedule (tuned never slower), and the model gives the untuned model's outputs.
#include <QtTest>
#include <cstdio>
#include <filesystem>
#include <random>

#include "core/driver/CompileModel.h"
#include "core/driver/DefaultSchedule.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/TaskScheduler.h"
#include "core/tune/database/JsonDatabase.h"
#include "core/tune/runner/ProcessRunner.h"

using namespace loom;
using namespace loom::tune;

namespace {

runtime::NDArray randomArray(const std::vector<int64_t>& shape, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType::f32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = u(rng);
  return a;
}

std::vector<runtime::NDArray> runModel(const driver::CompiledModel& cm, unsigned seed) {
  auto ex = driver::createExecutor(cm);
  for (size_t i = 0; i < cm.inputs.size(); ++i) ex->setInput(i, randomArray(cm.inputs[i].shape, seed + unsigned(i)));
  ex->run();
  std::vector<runtime::NDArray> outs;
  for (size_t i = 0; i < cm.outputs.size(); ++i) outs.push_back(ex->getOutput(i));
  return outs;
}

} // namespace

class TestModelTuning : public QObject {
  Q_OBJECT
private slots:
  void tuneSmallCnnAndApply() {
    frontend::ImportOptions io;
    io.inputShapes = frontend::parseInputShapes("data:[1,3,16,16]");
    graph::Module m = frontend::importOnnx(LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx", io);
    driver::CompileModelOptions co;
    std::vector<TuneTask> tasks = extractTasks(m, {}, co, "llvm");
    QVERIFY(tasks.size() >= 5);
    std::string path = (std::filesystem::temp_directory_path() /
                        ("loom_test_model_tuning_" + std::to_string(::getpid()) + ".json")).string();
    std::remove(path.c_str());
    ProcessRunner runner({LOOM_BINARY_DIR "/bin/loom", "tune-worker"}, false);
    TuneOptions per;
    per.trials = 2;
    per.batchSize = 2;
    per.strategy = "random";
    per.measure.repeat = 1;
    per.measure.minRepeatMs = 1;
    per.measure.timeoutS = 20;
    per.measure.flushCache = true; // as `loom tune MODEL` measures
    per.retimeTopK = 1;            // the best and the default re-timed together at the end
    TaskSchedulerOptions so;
    so.totalTrials = 2 * int(tasks.size());
    so.baselineSchedule = [](const tir::PrimFunc& f) { return driver::defaultSchedule(f, true); };
    int trials = 0, failed = 0;
    {
      JsonDatabase db(path);
      TaskScheduler s(tasks, db, runner, per, so, [&](const TuneEvent& e) {
        if (e.kind != TuneEventKind::TrialDone) return;
        ++trials;
        if (!e.result.ok()) {
          ++failed;
          qWarning("%s: %s: %s", e.task.c_str(), e.result.errorKind.c_str(), e.result.errorMessage.c_str());
        }
      });
      auto rs = s.run();
      QCOMPARE(rs.size(), tasks.size());
    }
    // A tiny kernel's space may hold a single schedule; every other task got its two trials.
    QVERIFY2(trials >= 2 * int(tasks.size()) - 2, qPrintable(QString::number(trials)));
    QCOMPARE(failed, 0);
    // Resume: the records count, so a budget already spent measures nothing more.
    {
      JsonDatabase db(path);
      size_t before = db.all().size();
      per.measureBaseline = false;
      per.retimeTopK = 0;
      TaskScheduler s(tasks, db, runner, per, so);
      auto rs = s.run();
      for (auto& r : rs) QCOMPARE(r.trialsThisRun, 0);
      QCOMPARE(db.all().size(), before);
      for (auto& t : tasks) QVERIFY2(db.best(baselineKey(t.key), t.target).has_value(), t.key.c_str());
    }
    // The records as the model's schedules: kernels whose tuned schedule beat the default use it.
    driver::CompileModelOptions tuned = co;
    tuned.scheduleFor = scheduleProviderFromRecords(path, "llvm");
    driver::CompiledModel cm = driver::compileModel(m, "llvm", {}, tuned);
    driver::CompiledModel plain = driver::compileModel(m, "llvm", {}, co);
    JsonDatabase db(path);
    int usedTuned = 0;
    std::string source = "tuned:" + std::filesystem::path(path).filename().string();
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, co);
    QCOMPARE(groups.size(), cm.scheduleSources.size());
    for (size_t k = 0; k < groups.size(); ++k) {
      // Tuned never slower: a kernel uses its record exactly when the record's time is below the
      // default schedule's latest time taken under the same conditions (here: caches flushed,
      // both re-timed one after the other at the end of the run).
      std::string key = groupKey(groups[k].func);
      auto best = db.best(key, "llvm");
      QVERIFY(best.has_value());
      QVERIFY(best->cacheFlush);
      std::optional<TuningRecord> base;
      for (const TuningRecord& r : db.records(baselineKey(key), "llvm"))
        if (r.ok() && r.cacheFlush) base = r; // the latest counts
      QVERIFY2(base.has_value(), key.c_str());
      QVERIFY2(base->retime, key.c_str());
      bool wantTuned = best->meanMs() < base->meanMs();
      QCOMPARE(cm.scheduleSources[k], wantTuned ? source : std::string("default"));
      if (cm.scheduleSources[k] == source) QVERIFY(best->meanMs() < base->meanMs());
      usedTuned += wantTuned;
    }
    qInfo("%d of %zu kernels use a tuned schedule", usedTuned, groups.size());
    auto a = runModel(plain, 7), b = runModel(cm, 7);
    for (size_t i = 0; i < a.size(); ++i)
      for (int64_t j = 0; j < a[i].numel(); ++j)
        QVERIFY(std::fabs(a[i].as<float>()[j] - b[i].as<float>()[j]) <= 1e-4 * (1 + std::fabs(a[i].as<float>()[j])));
    std::remove(path.c_str());
  }
};

QTEST_APPLESS_MAIN(TestModelTuning)
#include "test_model_tuning.moc"
