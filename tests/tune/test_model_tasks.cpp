// Whole-model tasks and records: extraction from small_cnn (dedupe, weights, flops, name-independent
// keys stable across processes), flops against the presets' formulas, and records applied by
// compileModel giving the untuned model's outputs; bad record files are typed errors.
#include <QProcess>
#include <QtTest>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include "core/driver/CompileModel.h"
#include "core/driver/DefaultSchedule.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/schedule/Trace.h"
#include "core/tir/Function.h"
#include "core/tir/Parser.h"
#include "core/tir/StructuralEqual.h"
#include "core/topi/Workloads.h"
#include "core/tune/FlopCount.h"
#include "core/tune/ModelTasks.h"
#include "core/tune/SpaceGenerator.h"
#include "core/tune/database/JsonDatabase.h"

using namespace loom;
using namespace loom::tune;

namespace {

const char* kSmallCnn = LOOM_SOURCE_DIR "/examples/models/small_cnn/model.onnx";
const char* kSmallCnnShapes = "data:[1,3,16,16]";

graph::Module smallCnn() {
  frontend::ImportOptions io;
  io.inputShapes = frontend::parseInputShapes(kSmallCnnShapes);
  return frontend::importOnnx(kSmallCnn, io);
}

std::string tempPath(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("loom_test_model_tasks_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

runtime::NDArray randomArray(const std::vector<int64_t>& shape, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType::f32());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.0f, 1.0f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = u(rng);
  return a;
}

double maxRelDiff(const runtime::NDArray& a, const runtime::NDArray& b) {
  if (a.shape() != b.shape()) return INFINITY;
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) {
    double x = a.as<float>()[i], y = b.as<float>()[i];
    if (!std::isfinite(x) || !std::isfinite(y)) return INFINITY;
    d = std::max(d, std::fabs(x - y) / (1.0 + std::fabs(y)));
  }
  return d;
}

/// Runs the model's executor on seeded random inputs; the outputs.
std::vector<runtime::NDArray> runModel(const driver::CompiledModel& cm, unsigned seed) {
  auto ex = driver::createExecutor(cm);
  for (size_t i = 0; i < cm.inputs.size(); ++i) ex->setInput(i, randomArray(cm.inputs[i].shape, seed + unsigned(i)));
  ex->run();
  std::vector<runtime::NDArray> outs;
  for (size_t i = 0; i < cm.outputs.size(); ++i) outs.push_back(ex->getOutput(i));
  return outs;
}

/// A record per task: a sampled schedule from the search space, with a made-up time, and the
/// task's default schedule measured twice as slow (a record is used only when it beat the default).
void writeSampledRecords(const std::vector<TuneTask>& tasks, const std::string& path, double ms) {
  JsonDatabase db(path, true);
  SpaceGenerator space = SpaceGenerator::defaultCpu();
  for (const TuneTask& t : tasks) {
    std::optional<SpacePoint> p;
    for (uint64_t seed = 1; !p && seed < 20; ++seed) p = space.sample(t.func, seed);
    QVERIFY2(p.has_value(), t.key.c_str());
    TuningRecord r;
    r.workload = t.key;
    r.target = t.target;
    r.trace = p->finalJson();
    r.timesMs = {ms};
    db.commit(r);
    TuningRecord base;
    base.workload = baselineKey(t.key);
    base.target = t.target;
    base.trace = tir::Trace().toJson();
    base.timesMs = {2 * ms};
    db.commit(base);
  }
}

} // namespace

class TestModelTasks : public QObject {
  Q_OBJECT
private slots:
  void extractSmallCnn() {
    graph::Module m = smallCnn();
    driver::CompileModelOptions co;
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, co);
    std::vector<TuneTask> tasks = extractTasks(m, {}, co, "llvm");
    QVERIFY(!tasks.empty());
    QVERIFY(tasks.size() <= groups.size());
    int calls = 0, weights = 0;
    for (auto& g : groups) calls += g.occurrences;
    std::set<std::string> keys;
    std::set<std::string> kernels;
    bool conv = false;
    for (const TuneTask& t : tasks) {
      weights += t.weight;
      QVERIFY(keys.insert(t.key).second); // deduplicated
      QVERIFY(t.key.rfind("tir:", 0) == 0 && t.key.size() == 4 + 16);
      QCOMPARE(t.func->name, std::string("main"));
      QCOMPARE(t.target, std::string("llvm"));
      QVERIFY(!t.kernels.empty() && !t.ops.empty());
      for (auto& k : t.kernels) QVERIFY(kernels.insert(k).second);
      bool computes = false; // not only moving data (reshape, flatten)
      for (auto& op : t.ops) {
        conv |= op.rfind("nn.conv2d", 0) == 0;  // direct or Winograd
        computes |= op.find("conv") != std::string::npos || op.find("pool") != std::string::npos ||
                    op.find("dense") != std::string::npos || op.find("relu") != std::string::npos;
      }
      qInfo("%s weight %d %.0f flops %s (%s)", t.key.c_str(), t.weight, t.flops, t.kernels.front().c_str(), t.ops.front().c_str());
      if (computes) QVERIFY2(t.flops > 0, t.key.c_str());
    }
    QVERIFY(conv);
    QCOMPARE(weights, calls);
    QCOMPARE(kernels.size(), groups.size());
    // The key is the group's, and does not depend on the kernel's name.
    for (auto& g : groups) {
      std::string k = groupKey(g.func);
      QVERIFY(keys.count(k));
      tir::PrimFunc renamed = tir::makePrimFunc("some_other_name", g.func->params, g.func->bufferMap, g.func->body, g.func->attrs);
      QCOMPARE(groupKey(renamed), k);
    }
    // ... but does depend on what it computes.
    QVERIFY(groupKey(topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=16,N=16,K=16"))) !=
            groupKey(topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=16,N=16,K=32"))));
  }

  void dedupeAndSharedKeys() {
    // fire_net repeats kernels (weight 2), and shares a conv kernel with small_cnn under another name.
    graph::Module fire = frontend::importOnnx(LOOM_SOURCE_DIR "/examples/models/fire_net/model.onnx");
    std::vector<driver::ModelGroup> groups = driver::extractGroups(fire, {}, {});
    std::vector<TuneTask> tasks = extractTasks(fire, {}, {}, "llvm");
    int calls = 0, weights = 0, repeated = 0;
    for (auto& g : groups) calls += g.occurrences;
    for (auto& t : tasks) {
      weights += t.weight;
      repeated += t.weight > 1;
    }
    QCOMPARE(weights, calls);
    QVERIFY(repeated >= 2);
    QVERIFY(calls > int(tasks.size()));
    std::map<std::string, std::string> fireNames;
    for (auto& t : tasks) fireNames[t.key] = t.kernels.front();
    int shared = 0;
    for (const TuneTask& t : extractTasks(smallCnn(), {}, {}, "llvm")) {
      auto it = fireNames.find(t.key);
      if (it == fireNames.end()) continue;
      ++shared;
      qInfo("shared %s: small_cnn %s, fire_net %s", t.key.c_str(), t.kernels.front().c_str(), it->second.c_str());
    }
    QVERIFY(shared >= 1);
  }

  void keysAgreeAcrossProcesses() {
    // `loom tune MODEL --list-tasks` in a fresh process prints the same keys (no pointer hashing).
    graph::Module m = smallCnn();
    std::vector<TuneTask> tasks = extractTasks(m, {}, {}, "llvm");
    QProcess p;
    p.start(QStringLiteral(LOOM_BINARY_DIR "/bin/loom"), {"tune", kSmallCnn, "--input-shapes", kSmallCnnShapes, "--list-tasks"});
    QVERIFY(p.waitForFinished(60000));
    QByteArray out = p.readAllStandardOutput();
    QVERIFY2(p.exitCode() == 0, p.readAllStandardError().constData());
    for (const TuneTask& t : tasks) QVERIFY2(out.contains(QByteArray::fromStdString(t.key)), out.constData());
    // And a preset's key is the same as in every build (a golden value).
    tir::PrimFunc mm = topi::buildWorkload(topi::parseWorkloadSpec("matmul:M=64,N=64,K=64"));
    QCOMPARE(groupKey(mm), TuneTask::fromFunc(asTaskFunc(mm), 2).key);
  }

  void flopsMatchPresets() {
    int checked = 0;
    for (const char* spec : {"matmul:M=64,N=48,K=32", "batch_matmul:B=2,M=16,N=8,K=24",
                             "conv2d:N=1,C=8,H=14,W=14,K=16,R=3,S=3,stride=1,pad=1",
                             "conv2d:N=1,C=4,H=9,W=9,K=8,R=3,S=3,stride=2,pad=1",
                             "depthwise_conv2d:N=1,C=8,H=12,W=12,R=3,S=3,stride=1,pad=1"}) {
      topi::WorkloadSpec ws;
      try {
        ws = topi::parseWorkloadSpec(spec);
      } catch (const topi::WorkloadError& e) {
        QFAIL(e.what());
      }
      double want = topi::workloadFlops(ws);
      double got = countFlops(topi::buildWorkload(ws));
      QVERIFY2(want > 0, spec);
      QVERIFY2(std::fabs(got - want) <= 1e-9 * want, qPrintable(QString("%1: counted %2, formula %3").arg(spec).arg(got).arg(want)));
      ++checked;
    }
    QCOMPARE(checked, 5);
    // Every preset at its defaults, except layernorm whose formula (8 MN) is a round estimate.
    for (const topi::Workload& w : topi::allWorkloads()) {
      topi::WorkloadSpec ws = topi::makeWorkloadSpec(w.name);
      double want = topi::workloadFlops(ws), got = countFlops(topi::buildWorkload(ws));
      qInfo("%-20s counted %12.0f formula %12.0f", w.name.c_str(), got, want);
      if (w.name != "layernorm") QVERIFY2(std::fabs(got - want) <= 1e-9 * want, w.name.c_str());
      ++checked;
    }
    QVERIFY(checked >= 10);
  }

  void flopsOfSelectCountOneValue() {
    // A select (or if_then_else) uses one of its values: the costlier counts, not both (a
    // Winograd transform's select over 36 tile positions costs one position's sum).
    tir::PrimFunc f = tir::parseFunc(R"(
@T.prim_func
def f(A: T.Buffer((10,), "float32"), B: T.Buffer((10,), "float32")):
    for i in range(10):
        with T.block("B"):
            vi = T.axis.spatial(10, i)
            B[vi] = T.Select(vi < 5, A[vi] * T.float32(2) + T.float32(1), T.if_then_else(vi < 7, A[vi] * A[vi], A[vi]))
)");
    QCOMPARE(countFlops(f), 20.0);
  }

  void recordsApplyToCompiledModel() {
    graph::Module m = smallCnn();
    driver::CompileModelOptions co;
    std::vector<TuneTask> tasks = extractTasks(m, {}, co, "llvm");
    std::string path = tempPath("sampled.json");
    writeSampledRecords(tasks, path, 1.0);
    driver::CompiledModel plain = driver::compileModel(m, "llvm", {}, co);
    driver::CompileModelOptions tuned = co;
    tuned.scheduleFor = scheduleProviderFromRecords(path, "llvm");
    driver::CompiledModel cm = driver::compileModel(m, "llvm", {}, tuned);
    std::string want = "tuned:" + std::filesystem::path(path).filename().string();
    QCOMPARE(cm.scheduleSources.size(), cm.kernels.size());
    for (auto& s : cm.scheduleSources) QCOMPARE(s, want);
    for (auto& s : plain.scheduleSources) QCOMPARE(s, std::string("default"));
    // The tuned kernels differ from the default ones but compute the same.
    bool differs = false;
    for (size_t k = 0; k < cm.kernels.size(); ++k) differs |= !tir::structuralEqual(cm.kernels[k], plain.kernels[k]);
    QVERIFY(differs);
    for (unsigned seed : {1u, 2u}) {
      auto a = runModel(plain, seed), b = runModel(cm, seed);
      QCOMPARE(a.size(), b.size());
      for (size_t i = 0; i < a.size(); ++i) QVERIFY2(maxRelDiff(b[i], a[i]) < 1e-4, qPrintable(QString::number(maxRelDiff(b[i], a[i]))));
    }
    // Records of another target are not used.
    driver::CompileModelOptions other = co;
    other.scheduleFor = scheduleProviderFromRecords(path, "llvm -mcpu=znver4");
    driver::CompiledModel cm2 = driver::compileModel(m, "llvm", {}, other);
    for (auto& s : cm2.scheduleSources) QCOMPARE(s, std::string("default"));
    std::remove(path.c_str());
  }

  void badRecordFiles() {
    std::string missing = tempPath("missing.json");
    try {
      scheduleProviderFromRecords(missing, "llvm");
      QFAIL("expected RecordFileError");
    } catch (const RecordFileError& e) {
      QVERIFY(std::string(e.what()).find(missing) != std::string::npos);
    }
    std::string bad = tempPath("bad.json");
    {
      std::ofstream(bad) << "{\"workload\": \"tir:0\", \"target\": \"llvm\", \"trace\": {\"insts\": []}}\nnot json\n";
    }
    try {
      scheduleProviderFromRecords(bad, "llvm");
      QFAIL("expected RecordFileError");
    } catch (const RecordFileError& e) {
      QVERIFY2(std::string(e.what()).find(bad + ":2") != std::string::npos, e.what());
    }
    // A record whose trace does not replay on its kernel names the kernel and the file.
    graph::Module m = smallCnn();
    std::vector<driver::ModelGroup> groups = driver::extractGroups(m, {}, {});
    {
      // get_block of a block the kernel does not have.
      nlohmann::json j = {{"insts", {{{"kind", "get_block"}, {"inputs", {"no_such_block"}}, {"outputs", {"b0"}}}}}};
      TuningRecord r;
      r.workload = groupKey(groups[0].func);
      r.target = "llvm";
      r.trace = j;
      r.timesMs = {1};
      JsonDatabase db(bad, true);
      db.commit(r);
      r.workload = baselineKey(r.workload); // the default measured slower: the record is chosen
      r.trace = tir::Trace().toJson();
      r.timesMs = {2};
      db.commit(r);
    }
    driver::CompileModelOptions co;
    co.scheduleFor = scheduleProviderFromRecords(bad, "llvm");
    try {
      driver::compileModel(m, "llvm", {}, co);
      QFAIL("expected RecordApplyError");
    } catch (const RecordApplyError& e) {
      std::string w = e.what();
      QVERIFY2(w.find(groups[0].name) != std::string::npos && w.find(bad) != std::string::npos, e.what());
    } catch (const Error& e) {
      QFAIL(e.what());
    }
    std::remove(bad.c_str());
  }
};

QTEST_APPLESS_MAIN(TestModelTasks)
#include "test_model_tasks.moc"
