// Ops whose output shape depends on the data (docs/dynamic-shapes.md, "Data-dependent output
// shapes"): the compiled module against the graph evaluator on random inputs, the symbol rebound
// on every run (counts up, down and zero on one executor), and the typed errors that name the node.
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>
#include <set>

#include "ModelTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/driver/Npz.h"
#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Evaluator.h"
#include "core/graph/Op.h"
#include "runtime/GraphExecutor.h"
#include "runtime/RuntimeFailure.h"

using namespace loom;

namespace {

std::string source(const std::string& rel) { return std::string(LOOM_SOURCE_DIR) + "/" + rel; }

/// Exact equality of dtype, shape and bytes.
bool sameArray(const runtime::NDArray& a, const runtime::NDArray& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() && std::memcmp(a.data(), b.data(), a.byteSize()) == 0;
}

QString shapeOf(const runtime::NDArray& a) {
  QStringList s;
  for (int64_t d : a.shape()) s << QString::number(d);
  return "[" + s.join(", ") + "]";
}

/// Every output of `ex` (after run) against the evaluator's: exact for integers, 1e-4 for floats.
void compareWithEvaluator(runtime::GraphExecutor& ex, const std::vector<runtime::NDArray>& want, const QString& what) {
  QCOMPARE(ex.numOutputs(), want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    runtime::NDArray got = ex.getOutput(i);
    QVERIFY2(got.shape() == want[i].shape(),
             qPrintable(what + QString(": output %1 is %2, want %3").arg(i).arg(shapeOf(got), shapeOf(want[i]))));
    if (want[i].dtype().code == runtime::DType::Float)
      QVERIFY2(test::maxDiff(got, want[i]) <= 1e-4 * 10, qPrintable(what + QString(": output %1 differs").arg(i)));
    else QVERIFY2(sameArray(got, want[i]), qPrintable(what + QString(": output %1 differs").arg(i)));
  }
}

/// x (float32[n]) -> nonzero(x > t) -> a chain of kernels over the count: the indices + 1, the
/// values at the hits doubled, and their sum.
graph::Module hitsModel(int64_t n) {
  auto f32 = DataType::Float(32);
  graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{n}, f32));
  graph::Var t = graph::makeVar("t", graph::tensorType(std::vector<int64_t>{}, f32));
  graph::Expr nz = graph::makeCall("dyn.nonzero", {graph::makeCall("greater", {x, t})}, {{"symbol", std::string("hits")}});
  graph::Expr idx = graph::makeCall("take", {nz, graph::makeScalar(0, DataType::Int(64))}, {{"axis", int64_t(0)}});
  graph::Expr plus1 = graph::makeCall("add", {idx, graph::makeScalar(1, DataType::Int(64))});
  graph::Expr vals = graph::makeCall("take", {x, idx}, {{"axis", int64_t(0)}});
  graph::Expr twice = graph::makeCall("multiply", {vals, graph::makeScalar(2, f32)});
  graph::Expr sum = graph::makeCall("sum", {twice}, {{"axis", std::vector<int64_t>{0}}, {"keepdims", int64_t(0)}});
  graph::Module m;
  m.functions["main"] = graph::makeFunction({x, t}, graph::makeTuple({plus1, twice, sum}));
  return m;
}

runtime::NDArray scalarF(float v) {
  runtime::NDArray a = runtime::NDArray::empty({}, runtime::DType::f32());
  a.as<float>()[0] = v;
  return a;
}

}  // namespace

class TestDataDependent : public QObject {
  Q_OBJECT

private slots:
  // One executor, many runs: the count goes up, down and to zero; every run equals the evaluator.
  void nonzeroChainRebindsEveryRun() {
    graph::Module m = hitsModel(64);
    driver::CompileModelOptions o;
    o.optLevel = 3;
    auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, o));
    QVERIFY(ex->isDynamic());
    unsigned seed = 11;
    for (float thr : {0.0f, 1.5f, -3.0f, 5.0f, 1.0f, -1.0f}) {
      runtime::NDArray x = test::randomArray({64}, seed++), t = scalarF(thr);
      std::vector<runtime::NDArray> want = graph::evaluate(m.main(), {x, t});
      ex->setInput(0, x);
      ex->setInput(1, t);
      ex->run();
      compareWithEvaluator(*ex, want, QString("threshold %1").arg(thr));
      if (thr == 5.0f) {
        // No hits: empty outputs and a sum of nothing (0, not the previous run's sum: the
        // reduction's init runs before its loop of extent 0).
        QCOMPARE(ex->getOutput(0).shape(), std::vector<int64_t>{0});
        QCOMPARE(ex->getOutput(2).as<float>()[0], 0.0f);
      }
    }
  }

  // The detector (conv backbone, heads, NonMaxSuppression, gathers) on random images: the
  // compiled module equals the evaluator (the kept indices exactly), one executor for all.
  void detectorMatchesEvaluator() {
    std::string path = source("tests/dynamic_models/detector_nms/model.onnx");
    graph::Module m = frontend::importOnnx(path);
    auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, {}));
    std::set<int64_t> counts;
    for (unsigned seed : {1u, 2u, 3u, 4u, 5u}) {
      runtime::NDArray img = test::randomArray({1, 3, 32, 32}, seed);
      for (int64_t i = 0; i < img.numel(); ++i) img.as<float>()[i] *= float(seed) * 0.6f;
      std::vector<runtime::NDArray> want = graph::evaluate(m.main(), {img});
      ex->setInput(0, img);
      ex->run();
      compareWithEvaluator(*ex, want, QString("seed %1").arg(seed));
      counts.insert(ex->getOutput(1).shape()[0]);
    }
    QVERIFY2(counts.size() >= 2, "the images should keep different numbers of boxes");
  }

  // TopK with K from data: K out of range at run time is a RuntimeFailure naming the node.
  void topkOutOfRangeNamesNode() {
    graph::Module m = frontend::importOnnx(source("tests/onnx/datadep/topk_k_input/model.onnx"));
    auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, {}));
    runtime::NDArray k = runtime::NDArray::empty({1}, runtime::DType{runtime::DType::Int, 64, 1});
    k.as<int64_t>()[0] = 13;
    ex->setInput(0, test::randomArray({2, 12}, 3));
    ex->setInput(1, k);
    try {
      ex->run();
      QFAIL("K = 13 of 12 ran");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY2(QString(e.what()).contains("(topk): topk: K = 13 is out of range for axis 1 of extent 12"), e.what());
      QVERIFY2(QString(e.what()).startsWith("node '"), e.what());
    }
    k.as<int64_t>()[0] = 12;  // the executor still runs after the failure
    ex->setInput(1, k);
    ex->run();
    QCOMPARE(ex->getOutput(0).shape(), (std::vector<int64_t>{2, 12}));
  }

  // The CLI: `loom compile` writes the package, `loom inspect` lists the data-dependent node
  // with its bound, `loom run` gives the evaluator's outputs; K out of range exits 1 naming the node.
  void cli() {
    QTemporaryDir dir;
    QString so = dir.filePath("nz.so"), in = dir.filePath("in.npz"), out = dir.filePath("out.npz");
    std::string model = source("tests/onnx/datadep/nonzero_chain/model.onnx");
    test::LoomResult r = test::runLoom({"compile", QString::fromStdString(model), "-o", so});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    r = test::runLoom({"inspect", so});
    QVERIFY2(r.out.contains("nonzero, nonzero_0 <= N*5"), qPrintable(r.out));
    QVERIFY2(!r.out.contains("MISSING"), qPrintable(r.out));
    runtime::NDArray x = test::randomArray({6, 5}, 21);
    driver::writeNpz(in.toStdString(), {{"x", x}});
    r = test::runLoom({"run", so, "--inputs", in, "--outputs", out});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    std::vector<runtime::NDArray> want = graph::evaluate(frontend::importOnnx(model).main(), {x});
    auto got = driver::readNpz(out.toStdString());
    QCOMPARE(got.size(), size_t(3));
    QVERIFY(sameArray(got[0].second, want[0]));
    QVERIFY(test::maxDiff(got[1].second, want[1]) == 0);

    QString topk = dir.filePath("topk.so"), kin = dir.filePath("k.npz");
    r = test::runLoom({"compile", QString::fromStdString(source("tests/onnx/datadep/topk_k_input/model.onnx")), "-o", topk});
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    runtime::NDArray k = runtime::NDArray::empty({1}, runtime::DType{runtime::DType::Int, 64, 1});
    k.as<int64_t>()[0] = 20;
    driver::writeNpz(kin.toStdString(), {{"x", test::randomArray({2, 12}, 4)}, {"k", k}});
    r = test::runLoom({"run", topk, "--inputs", kin});
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("(topk): topk: K = 20 is out of range for axis 1 of extent 12"), qPrintable(r.err));
  }

  // A graph whose data-dependent node names an op this runtime does not have.
  void unknownOpNamesNode() {
    std::string json = R"({"storage": [{"bytes": 64}, {"bytes": 64}],
      "entries": [{"storage": 0, "shape": [4], "dtype": "float32"},
                  {"storage": 1, "shape": [1, 0], "dtype": "int64", "sym_shape": [1, "n"]}],
      "inputs": [{"name": "x", "entry": 0}], "params": [],
      "nodes": [{"name": "sorter", "func": "__datadep", "inputs": [0], "outputs": [1],
                 "op": "argsort", "symbol": "n", "bound": "4"}],
      "outputs": [{"name": "y", "entry": 1}]})";
    try {
      runtime::GraphExecutor ex(json, runtime::Module());
      QFAIL("an unknown data-dependent op was accepted");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY2(QString(e.what()).contains("node 'sorter' has op 'argsort', which this runtime cannot run"), e.what());
    }
  }

  // GPU targets keep every tensor on the device: compiling a data-dependent node for one is a
  // typed error naming the node, and an executor on a device refuses such a graph (neither needs
  // a GPU: both fail before any device call).
  void deviceRefusesDataDependentNodes() {
    graph::Module m = frontend::importOnnx(source("tests/onnx/datadep/nonzero_chain/model.onnx"));
    try {
      driver::compileModel(m, "cuda", {}, {});
      QFAIL("a data-dependent node compiled for cuda");
    } catch (const UnsupportedError& e) {
      QVERIFY2(QString(e.what()).contains("node 'fused_dyn_nonzero' (nonzero) has a data-dependent output shape "
                                          "(nonzero_0); such nodes run on the host only, not on target 'cuda'"),
               e.what());
    }
    std::string json = driver::compileModel(m, "llvm", {}, {}).graphJson;
    try {
      runtime::GraphExecutor ex(json, runtime::Module(), runtime::Device{runtime::DeviceType::CUDA, 0});
      QFAIL("an executor on a device accepted a data-dependent node");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY2(QString(e.what()).contains("node 'fused_dyn_nonzero' (nonzero) has a data-dependent output shape"),
               e.what());
    }
  }

  // A count from the data used as a shape (Reshape to it) is refused at import, naming the node.
  void countAsShapeIsRefused() {
    try {
      frontend::importOnnx(source("tests/onnx/datadep/errors/reshape_to_count.onnx"));
      QFAIL("a shape from data was accepted");
    } catch (const frontend::ImportError& e) {
      QVERIFY2(QString(e.what()).contains("(Reshape"), e.what());
    }
  }
};

QTEST_GUILESS_MAIN(TestDataDependent)
#include "test_data_dependent.moc"
