// "A tuned model is never slower than the untuned one", the record side: `loom compile
// --tuning-records` (scheduleProviderFromRecords / chooseRecord) takes a kernel's record only when
// it was measured faster than that kernel's default schedule under the same conditions. A record
// slower than the default, as fast as it, without a default measurement, or measured under other
// conditions (cache flushed or not, another host) leaves the default schedule in place; a record
// faster than the default's latest measurement is used and computes the same. (The end-to-end
// side, a real tuning run of small_cnn, is tune.test_model_tuning.)
#include <QtTest>
#include <cstdio>
#include <filesystem>
#include <random>

#include "core/driver/CompileModel.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/schedule/Trace.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/database/JsonDatabase.h"

using namespace loom;
using namespace loom::tune;

namespace {

graph::Module smallCnn() {
  frontend::ImportOptions io;
  io.inputShapes = frontend::parseInputShapes("data:[1,3,16,16]");
  return frontend::importOnnx(LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx", io);
}

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() /
          ("loom_test_tuned_never_slower_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

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

/// A sampled schedule of the task (a stand-in for what the search found).
nlohmann::json sampledTrace(const TuneTask& t) {
  SpaceGenerator space = SpaceGenerator::defaultCpu();
  for (uint64_t seed = 1; seed < 20; ++seed)
    if (auto p = space.sample(t.func, seed)) return p->finalJson();
  return {};
}

TuningRecord record(const std::string& workload, nlohmann::json trace, double ms, bool flushed = true,
                    const std::string& host = "h1", bool retime = false) {
  TuningRecord r;
  r.workload = workload;
  r.target = "llvm";
  r.trace = std::move(trace);
  r.timesMs = {ms, ms};
  r.cacheFlush = flushed;
  r.host = host;
  r.retime = retime;
  return r;
}

TuningRecord defaultMeasured(const std::string& key, double ms, bool flushed = true, const std::string& host = "h1",
                             bool retime = false) {
  return record(baselineKey(key), tir::Trace().toJson(), ms, flushed, host, retime);
}

} // namespace

class TestTunedNeverSlower : public QObject {
  Q_OBJECT
private slots:
  void recordSlowerThanDefaultIsNotApplied() {
    // Every kernel of small_cnn gets a record measured slower than its default schedule: the
    // compiled model is the untuned one, kernel for kernel. Then a later measurement of the
    // default, slower than the records (the latest counts), makes every record apply.
    graph::Module m = smallCnn();
    driver::CompileModelOptions co;
    std::vector<TuneTask> tasks = extractTasks(m, {}, co, "llvm");
    QVERIFY(tasks.size() >= 5);
    std::string path = tempPath("slower.json");
    {
      JsonDatabase db(path, true);
      for (const TuneTask& t : tasks) {
        nlohmann::json trace = sampledTrace(t);
        QVERIFY2(!trace.is_null(), t.key.c_str());
        db.commit(defaultMeasured(t.key, 1.0));
        db.commit(record(t.key, trace, 1.5));
      }
    }
    driver::CompiledModel plain = driver::compileModel(m, "llvm", {}, co);
    auto use = std::make_shared<RecordUse>();
    driver::CompileModelOptions withRecords = co;
    withRecords.scheduleFor = scheduleProviderFromRecords(path, "llvm", use);
    driver::CompiledModel cm = driver::compileModel(m, "llvm", {}, withRecords);
    QCOMPARE(cm.scheduleSources, plain.scheduleSources);
    for (auto& s : cm.scheduleSources) QCOMPARE(s, std::string("default"));
    QCOMPARE(use->count[RecordChoice::Why::DefaultFaster], int(cm.kernels.size()));
    QCOMPARE(use->count[RecordChoice::Why::Tuned], 0);
    QVERIFY2(use->summary().find("default faster") != std::string::npos, use->summary().c_str());

    {
      JsonDatabase db(path);
      for (const TuneTask& t : tasks) db.commit(defaultMeasured(t.key, 2.0, true, "h1", true));
    }
    use = std::make_shared<RecordUse>();
    withRecords.scheduleFor = scheduleProviderFromRecords(path, "llvm", use);
    driver::CompiledModel tuned = driver::compileModel(m, "llvm", {}, withRecords);
    std::string source = "tuned:" + std::filesystem::path(path).filename().string();
    for (auto& s : tuned.scheduleSources) QCOMPARE(s, source);
    QCOMPARE(use->count[RecordChoice::Why::Tuned], int(tuned.kernels.size()));
    auto a = runModel(plain, 3), b = runModel(tuned, 3);
    for (size_t i = 0; i < a.size(); ++i)
      for (int64_t j = 0; j < a[i].numel(); ++j)
        QVERIFY(std::fabs(a[i].as<float>()[j] - b[i].as<float>()[j]) <= 1e-4 * (1 + std::fabs(a[i].as<float>()[j])));
    std::remove(path.c_str());
  }

  void chooseOnlyWhenMeasuredFaster() {
    const std::string key = "tir:00000000000000aa";
    const nlohmann::json trace = {{"insts", nlohmann::json::array()}, {"decisions", nlohmann::json::array()}};
    auto choose = [&](const std::vector<TuningRecord>& rs) {
      std::string path = tempPath("choose.json");
      JsonDatabase db(path, true);
      for (auto& r : rs) db.commit(r);
      RecordChoice c = chooseRecord(db, key, "llvm");
      std::remove(path.c_str());
      return c.why;
    };
    using W = RecordChoice::Why;
    QCOMPARE(choose({}), W::NoRecord);
    QCOMPARE(choose({defaultMeasured(key, 1.0)}), W::NoRecord);
    // Faster than the default: used. Slower or as fast: the default stays.
    QCOMPARE(choose({defaultMeasured(key, 1.0), record(key, trace, 0.9)}), W::Tuned);
    QCOMPARE(choose({defaultMeasured(key, 1.0), record(key, trace, 1.1)}), W::DefaultFaster);
    QCOMPARE(choose({defaultMeasured(key, 1.0), record(key, trace, 1.0)}), W::DefaultFaster);
    // No measurement of the default (tuned with --no-baseline), or only one taken under other
    // conditions: nothing says the record is faster, so the default stays.
    QCOMPARE(choose({record(key, trace, 0.5)}), W::NoDefault);
    QCOMPARE(choose({defaultMeasured(key, 9.0, /*flushed=*/false), record(key, trace, 0.5)}), W::NoDefault);
    QCOMPARE(choose({defaultMeasured(key, 9.0, true, "other-host"), record(key, trace, 0.5)}), W::NoDefault);
    // A failed measurement of the default is no measurement.
    TuningRecord failed = defaultMeasured(key, 9.0);
    failed.errorKind = error_kind::kTimeout;
    failed.timesMs.clear();
    QCOMPARE(choose({failed, record(key, trace, 0.5)}), W::NoDefault);
    // Of several measurements of the default under the record's conditions, the latest counts.
    QCOMPARE(choose({defaultMeasured(key, 0.4), defaultMeasured(key, 2.0), record(key, trace, 1.0)}), W::Tuned);
    QCOMPARE(choose({defaultMeasured(key, 2.0), defaultMeasured(key, 0.4), record(key, trace, 1.0)}), W::DefaultFaster);
    QCOMPARE(choose({defaultMeasured(key, 2.0), defaultMeasured(key, 0.4, false), record(key, trace, 1.0)}), W::Tuned);
    // A lucky trial re-timed slower than the re-timed default (both at the end of the run, one
    // after the other): the re-timings are what compare.
    QCOMPARE(choose({defaultMeasured(key, 1.0), record(key, trace, 0.5), defaultMeasured(key, 1.0, true, "h1", true),
                     record(key, trace, 1.2, true, "h1", true)}),
             W::DefaultFaster);
  }
};

QTEST_APPLESS_MAIN(TestTunedNeverSlower)
#include "test_tuned_never_slower.moc"
