// Symbol bounds and run-time shape checks of dynamic models (issue #18): storage planned once for
// the bounds, runs at and below a bound against the graph evaluator, and the errors (an input
// above its bound, two inputs that disagree on a shared symbol, a concatenation or broadcast the
// compiler could not prove) from the executor and from `loom run` (exit 1, never a crash).
#include <QTemporaryDir>
#include <QtTest>
#include <nlohmann/json.hpp>

#include "DynamicTestModels.h"
#include "core/driver/CompileModel.h"
#include "core/driver/LoadModel.h"
#include "core/driver/Npz.h"
#include "core/driver/SymbolBounds.h"
#include "core/graph/Evaluator.h"
#include "runtime/GraphExecutor.h"
#include "runtime/RuntimeFailure.h"
#include "tests/common/ProcessRun.h"

using namespace loom;

namespace {

std::string smallCnn() { return std::string(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx"; }

runtime::NDArray randomArray(const std::vector<int64_t>& shape, unsigned seed) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType::f32());
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = float((seed * 7919u + unsigned(i) * 104729u) % 2000u) / 500.0f - 2.0f;
  return a;
}

double maxDiff(const runtime::NDArray& a, const runtime::NDArray& b) {
  if (a.shape() != b.shape()) return INFINITY;
  double d = 0;
  for (int64_t i = 0; i < a.numel(); ++i) d = std::max(d, double(std::fabs(a.as<float>()[i] - b.as<float>()[i])));
  return d;
}

struct Compiled {
  driver::LoadedModel loaded;
  driver::CompiledModel model;
};

Compiled compile(const std::string& path, const std::string& shapes, int optLevel = 3) {
  Compiled c{driver::loadModel(path, shapes), {}};
  driver::CompileModelOptions o;
  o.optLevel = optLevel;
  c.model = driver::compileModel(c.loaded.module, "llvm", {}, o);
  driver::applySymbolBounds(c.model, c.loaded.symbolBounds);
  return c;
}

std::string failureOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const runtime::RuntimeFailure& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

class TestBoundsAndChecks : public QObject {
  Q_OBJECT

private slots:
  void boundedModelRunsWithoutRegrowth() {
    Compiled c = compile(smallCnn(), "data:[B<=4,3,16,16]");
    nlohmann::json g = nlohmann::json::parse(c.model.graphJson);
    QCOMPARE(g["symbols"][0]["name"].get<std::string>(), std::string("B"));
    QCOMPARE(g["symbols"][0]["bound"].get<int64_t>(), int64_t(4));
    QVERIFY(g.value("storage_planned_for_bounds", false));
    auto ex = driver::createExecutor(c.model);
    QCOMPARE(ex->symbolBounds(), (std::map<std::string, int64_t>{{"B", 4}}));
    const size_t planned = ex->storageBytes();
    // The plan for B <= 4 is smaller than the first guess of an unbounded model (every symbol 64).
    Compiled open = compile(smallCnn(), "");
    QVERIFY2(planned < driver::createExecutor(open.model)->storageBytes(), qPrintable(QString::number(planned)));
    for (int64_t b : {4, 1, 3, 4}) {  // the bound itself, then down and up again
      runtime::NDArray x = randomArray({b, 3, 16, 16}, unsigned(b));
      ex->setInput(0, x);
      ex->run();
      std::vector<runtime::NDArray> want = graph::evaluate(c.loaded.module.main(), {x});
      QCOMPARE(ex->getOutput(0).shape(), (std::vector<int64_t>{b, 10}));
      QVERIFY2(maxDiff(ex->getOutput(0), want[0]) < 1e-4, qPrintable(QString("B = %1").arg(b)));
    }
    QCOMPARE(ex->storageGrowths(), size_t(0));
    QCOMPARE(ex->storageBytes(), planned);
  }

  void aboveTheBoundIsRefused() {
    Compiled c = compile(smallCnn(), "data:[B<=4,3,16,16]");
    auto ex = driver::createExecutor(c.model);
    std::string e = failureOf([&] { ex->setInput(0, randomArray({5, 3, 16, 16}, 1)); });
    QCOMPARE(e, std::string("input 'data': dimension 0 (B) is 5, above its bound B <= 4 (the model was compiled for B up "
                            "to 4); got float32[5, 3, 16, 16]"));
    // The executor is still usable.
    ex->setInput(0, randomArray({2, 3, 16, 16}, 1));
    ex->run();
    QCOMPARE(ex->getOutput(0).shape(), (std::vector<int64_t>{2, 10}));
  }

  void sharedSymbolMustAgree() {
    QTemporaryDir dir;
    std::string add = test::writeOnnxModel(dir.filePath("add.onnx").toStdString(), {{"x", {"1", ""}}, {"y", {"1", ""}}}, "Add");
    Compiled c = compile(add, "x:[1,W<=64],y:[1,W]");
    auto ex = driver::createExecutor(c.model);
    // Either order of setting works when the shapes agree.
    for (bool yFirst : {true, false}) {
      runtime::NDArray x = randomArray({1, 9}, 3), y = randomArray({1, 9}, 4);
      if (yFirst) ex->setInput(1, y);
      ex->setInput(0, x);
      if (!yFirst) ex->setInput(1, y);
      ex->run();
      QVERIFY(maxDiff(ex->getOutput(0), graph::evaluate(c.loaded.module.main(), {x, y})[0]) < 1e-6);
    }
    ex->setInput(0, randomArray({1, 5}, 1));
    ex->setInput(1, randomArray({1, 7}, 2));
    QCOMPARE(failureOf([&] { ex->run(); }),
             std::string("input 'y': dimension 1 is 7, but it must equal W (W = 5 from dimension 1 of input 'x'); got "
                         "float32[1, 7]"));
  }

  void unprovenConcatIsCheckedAtRunTime() {
    QTemporaryDir dir;
    std::string cat = test::writeOnnxModel(dir.filePath("cat.onnx").toStdString(), {{"a", {"2", "W"}}, {"b", {"3", "V"}}}, "Concat", 0);
    Compiled c = compile(cat, "");
    nlohmann::json g = nlohmann::json::parse(c.model.graphJson);
    QVERIFY2(g.contains("shape_checks"), c.model.graphJson.c_str());
    auto ex = driver::createExecutor(c.model);
    runtime::NDArray a = randomArray({2, 6}, 1), b = randomArray({3, 6}, 2);
    ex->setInput(0, a);
    ex->setInput(1, b);
    ex->run();
    QVERIFY(maxDiff(ex->getOutput(0), graph::evaluate(c.loaded.module.main(), {a, b})[0]) == 0);
    ex->setInput(1, randomArray({3, 8}, 2));
    QCOMPARE(failureOf([&] { ex->run(); }),
             std::string("node 'Concat_0' (concatenate): dimension 1 of input 0 and of input 1: W = 6 but V = 8 for these "
                         "inputs (W = 6 from dimension 1 of input 'a'; V = 8 from dimension 1 of input 'b'); the compiled "
                         "model needs them equal"));
  }

  void unprovenBroadcastIsCheckedAtRunTime() {
    QTemporaryDir dir;
    // Two symbols, and a symbol against a static 3 (the kernel reads both as the same extent).
    std::string two = test::writeOnnxModel(dir.filePath("two.onnx").toStdString(), {{"x", {"1", "A"}}, {"y", {"1", "B"}}}, "Add");
    Compiled c = compile(two, "");
    auto ex = driver::createExecutor(c.model);
    runtime::NDArray x = randomArray({1, 4}, 1), y = randomArray({1, 4}, 2);
    ex->setInput(0, x);
    ex->setInput(1, y);
    ex->run();
    QVERIFY(maxDiff(ex->getOutput(0), graph::evaluate(c.loaded.module.main(), {x, y})[0]) < 1e-6);
    ex->setInput(1, randomArray({1, 1}, 2));
    std::string e = failureOf([&] { ex->run(); });
    QVERIFY2(e.find("node 'Add_0' (add): broadcast dimension 1 of inputs 0 and 1: A = 4 but B = 1 for these inputs") == 0,
             e.c_str());
    std::string three = test::writeOnnxModel(dir.filePath("three.onnx").toStdString(), {{"x", {"1", "A"}}, {"y", {"1", "3"}}}, "Mul");
    Compiled d = compile(three, "");
    auto ey = driver::createExecutor(d.model);
    ey->setInput(0, randomArray({1, 5}, 1));
    ey->setInput(1, randomArray({1, 3}, 1));
    e = failureOf([&] { ey->run(); });
    QVERIFY2(e.find("node 'Mul_0' (multiply): broadcast dimension 1 of inputs 0 and 1: A = 5 but 3 = 3") == 0, e.c_str());
  }

  void unprovenReductionDimIsCheckedAtRunTime() {
    QTemporaryDir dir;
    // MatMul of x[2, K] and y[6, 3] (a dense layer over a transposed y): K must be 6.
    std::string mm = test::writeOnnxModel(dir.filePath("mm.onnx").toStdString(), {{"x", {"2", "K"}}, {"y", {"6", "3"}}}, "MatMul");
    Compiled c = compile(mm, "");
    nlohmann::json g = nlohmann::json::parse(c.model.graphJson);
    QVERIFY2(g.contains("shape_checks"), c.model.graphJson.c_str());
    auto ex = driver::createExecutor(c.model);
    runtime::NDArray x = randomArray({2, 6}, 1), y = randomArray({6, 3}, 2);
    ex->setInput(0, x);
    ex->setInput(1, y);
    ex->run();
    QVERIFY(maxDiff(ex->getOutput(0), graph::evaluate(c.loaded.module.main(), {x, y})[0]) < 1e-4);
    ex->setInput(0, randomArray({2, 5}, 2));
    std::string e = failureOf([&] { ex->run(); });
    QVERIFY2(e.find("node 'MatMul_0' (nn.dense): the reduction dimension (last of input 0, dimension 1 of input 1): K = "
                    "5 but 6 = 6 for these inputs") == 0,
             e.c_str());
    // A batched matmul (rank 3: nn.matmul) whose reduction dim is a symbol against a static 6.
    std::string bmm =
        test::writeOnnxModel(dir.filePath("bmm.onnx").toStdString(), {{"a", {"B", "2", "K"}}, {"b", {"B", "6", "3"}}}, "MatMul");
    Compiled d = compile(bmm, "");
    auto eb = driver::createExecutor(d.model);
    runtime::NDArray a = randomArray({2, 2, 6}, 1), b = randomArray({2, 6, 3}, 2);
    eb->setInput(0, a);
    eb->setInput(1, b);
    eb->run();
    QVERIFY(maxDiff(eb->getOutput(0), graph::evaluate(d.loaded.module.main(), {a, b})[0]) < 1e-4);
    eb->setInput(0, randomArray({2, 2, 7}, 1));
    e = failureOf([&] { eb->run(); });
    QVERIFY2(e.find("node 'MatMul_0' (nn.matmul): the reduction dimension (dimension 2 of input 0, dimension 1 of input "
                    "1): K = 7 but 6 = 6 for these inputs") == 0,
             e.c_str());
  }

  void symbolicWeightIsATypedError() {
    // MatMul of x[2, K] and a graph input y[L, 3]: the dense kernel needs its weight's extents
    // static. loom compile says so (exit 1, a typed error naming the op, not an internal error);
    // with static shapes given it compiles.
    QTemporaryDir dir;
    std::string mm = test::writeOnnxModel(dir.filePath("mm.onnx").toStdString(), {{"x", {"2", "K"}}, {"y", {"L", "3"}}}, "MatMul");
    const QString so = dir.filePath("mm.so");
    test::ProcessResult r = test::runLoomBinary({"compile", QString::fromStdString(mm), "-q", "-o", so}, 300000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("nn.dense (node 'MatMul_0'): this operator needs static extents") && !r.err.contains("internal"), qPrintable(r.err));
    r = test::runLoomBinary({"compile", QString::fromStdString(mm), "--input-shapes", "x:[2,4],y:[4,3]", "-q", "-o", so}, 300000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
  }

  void unprovenBiasLengthIsCheckedAtRunTime() {
    QTemporaryDir dir;
    // Conv with its bias a graph input of symbolic length C: nn.bias_add over the conv's 6 channels.
    std::string conv = test::writeOnnxModel(dir.filePath("conv.onnx").toStdString(),
                                            {{"x", {"N", "4", "8", "8"}}, {"w", {"6", "4", "3", "3"}}, {"b", {"C"}}}, "Conv");
    Compiled c = compile(conv, "");
    auto ex = driver::createExecutor(c.model);
    runtime::NDArray x = randomArray({2, 4, 8, 8}, 1), w = randomArray({6, 4, 3, 3}, 2), b = randomArray({6}, 3);
    ex->setInput(0, x);
    ex->setInput(1, w);
    ex->setInput(2, b);
    ex->run();
    QVERIFY(maxDiff(ex->getOutput(0), graph::evaluate(c.loaded.module.main(), {x, w, b})[0]) < 1e-3);
    ex->setInput(2, randomArray({5}, 3));
    std::string e = failureOf([&] { ex->run(); });
    QVERIFY2(e.find("node 'Conv_0' (nn.bias_add): dimension 1 of input 0 (the channels) and the length of input 1: 6 = 6 "
                    "but C = 5 for these inputs") == 0,
             e.c_str());
    // `loom run` exits 1 with that message.
    QString so = dir.filePath("conv.so");
    test::ProcessResult r =
        test::runLoomBinary({"compile", QString::fromStdString(conv), "-q", "-o", so}, 300000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    r = test::runLoomBinary({"run", so, "--input-shapes", "x:[1,4,8,8],w:[6,4,3,3],b:[6]"}, 60000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    r = test::runLoomBinary({"run", so, "--input-shapes", "x:[1,4,8,8],w:[6,4,3,3],b:[7]"}, 60000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("node 'Conv_0' (nn.bias_add): dimension 1 of input 0 (the channels) and the length of input 1"),
             qPrintable(r.err));
  }

  void loomRunExitsOne() {
    QTemporaryDir dir;
    QString so = dir.filePath("cnn.so");
    test::ProcessResult r = test::runLoomBinary({"compile", QString::fromStdString(smallCnn()), "--input-shapes",
                                                 "data:[B<=4,3,16,16]", "-q", "-o", so}, 300000);
    QCOMPARE(r.exitCode, 0);
    r = test::runLoomBinary({"run", so, "--input-shapes", "data:[4,3,16,16]"}, 60000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    r = test::runLoomBinary({"run", so, "--input-shapes", "data:[5,3,16,16]"}, 60000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("input 'data': dimension 0 (B) is 5, above its bound B <= 4"), qPrintable(r.err));
    r = test::runLoomBinary({"inspect", so}, 60000);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("B <= 4 (dimension 0 of input 'data')"), qPrintable(r.out));
    // A bound on a symbol the model lacks.
    r = test::runLoomBinary({"compile", QString::fromStdString(smallCnn()), "--input-shapes", "data:[2,3,16,16]", "-q", "-o",
                             dir.filePath("static.so")}, 300000);
    QCOMPARE(r.exitCode, 0);
    r = test::runLoomBinary({"run", dir.filePath("static.so"), "--input-shapes", "data:[3,3,16,16]"}, 60000);
    QCOMPARE(r.exitCode, 1);
  }
};

QTEST_GUILESS_MAIN(TestBoundsAndChecks)
#include "test_bounds_and_checks.moc"
