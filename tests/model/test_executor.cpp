// The model compiler and graph executor: results against the graph evaluator, storage reuse by
// liveness, params and tar round trips.
#include <QtTest>
#include <fstream>

#include "ModelTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/graph/Evaluator.h"
#include "runtime/Params.h"
#include "runtime/RuntimeFailure.h"
#include "core/tir/Printer.h"
#include "runtime/Tar.h"

using namespace loom;

namespace {

graph::Module moduleOf(std::vector<graph::Var> params, graph::Expr body) {
  graph::Module m;
  m.functions["main"] = graph::makeFunction(std::move(params), std::move(body));
  return m;
}

/// x -> relu -> exp -> negative -> sigmoid -> tanh: five kernels at opt-level 0.
graph::Module chain(int64_t n) {
  graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{n, n}, DataType::Float(32)));
  graph::Expr e = x;
  for (const char* op : {"nn.relu", "exp", "negative", "sigmoid", "tanh"}) e = graph::makeCall(op, {e});
  return moduleOf({x}, e);
}

}  // namespace

class TestExecutor : public QObject {
  Q_OBJECT

private slots:
  void chainMatchesEvaluatorAtEveryLevel() {
    graph::Module m = chain(32);
    runtime::NDArray x = test::randomArray({32, 32}, 7);
    runtime::NDArray want = graph::evaluate(m.main(), {x}).at(0);
    for (int level = 0; level <= 3; ++level) {
      driver::CompileModelOptions o;
      o.optLevel = level;
      driver::CompiledModel cm = driver::compileModel(m, "llvm", {}, o);
      auto ex = driver::createExecutor(cm);
      ex->setInput(0, x);
      ex->run();
      QVERIFY2(test::maxDiff(ex->getOutput(0), want) < 1e-5, qPrintable(QString("opt-level %1").arg(level)));
    }
  }

  void storageIsReusedByLiveness() {
    driver::CompileModelOptions o;
    o.optLevel = 0;  // one kernel per op: 4 intermediate tensors
    driver::CompiledModel cm = driver::compileModel(chain(16), "llvm", {}, o);
    auto ex = driver::createExecutor(cm);
    QCOMPARE(ex->numNodes(), size_t(5));
    QCOMPARE(ex->numEntries(), size_t(6));
    // Input and output own a storage each; the 4 intermediates alternate between two.
    QCOMPARE(ex->numStorages(), size_t(4));
    QCOMPARE(ex->storageBytes(), size_t(4 * 16 * 16 * 4));
  }

  void liveTensorsDoNotShareStorage() {
    // a = exp(x), b = negative(x), c = sigmoid(a), d = add(b, c): a is dead after c, but b is
    // live across c, so c must not take b's storage.
    graph::Var x = graph::makeVar("x", graph::tensorType(std::vector<int64_t>{8, 8}, DataType::Float(32)));
    graph::Expr a = graph::makeCall("exp", {x});
    graph::Expr b = graph::makeCall("negative", {x});
    graph::Expr c = graph::makeCall("sigmoid", {a});
    graph::Expr d = graph::makeCall("add", {b, c});
    graph::Module m = moduleOf({x}, graph::makeTuple({d, c}));
    runtime::NDArray xv = test::randomArray({8, 8}, 3);
    auto want = graph::evaluate(m.main(), {xv});
    driver::CompileModelOptions o;
    o.optLevel = 0;
    driver::CompiledModel cm = driver::compileModel(m, "llvm", {}, o);
    auto ex = driver::createExecutor(cm);
    ex->setInput("x", xv);
    ex->run();
    QCOMPARE(ex->numOutputs(), size_t(2));
    QVERIFY(test::maxDiff(ex->getOutput(0), want[0]) < 1e-5);
    QVERIFY(test::maxDiff(ex->getOutput(1), want[1]) < 1e-5);
  }

  void convModelWithParams() {
    graph::Var x = graph::makeVar("data", graph::tensorType(std::vector<int64_t>{1, 3, 9, 9}, DataType::Float(32)));
    graph::Constant w = graph::makeConstant(test::randomArray({4, 3, 3, 3}, 11), "w");
    graph::Constant b = graph::makeConstant(test::randomArray({4}, 12), "b");
    graph::Attrs attrs;
    attrs.set("padding", std::vector<int64_t>{1, 0, 2, 1});
    attrs.set("strides", std::vector<int64_t>{2, 1});
    graph::Expr conv = graph::makeCall("nn.conv2d", {x, w}, attrs);
    graph::Expr y = graph::makeCall("nn.relu", {graph::makeCall("nn.bias_add", {conv, b})});
    graph::Module m = moduleOf({x}, y);
    runtime::NDArray xv = test::randomArray({1, 3, 9, 9}, 5);
    runtime::NDArray want = graph::evaluate(m.main(), {xv}).at(0);
    driver::CompiledModel cm = driver::compileModel(m);
    QCOMPARE(cm.params.size(), size_t(2));
    QCOMPARE(cm.inputs.at(0).name, std::string("data"));
    auto ex = driver::createExecutor(cm);
    ex->setInput(0, xv);
    ex->run();
    QVERIFY(test::maxDiff(ex->getOutput(0), want) < 1e-4);
    // Inputs of the wrong shape and missing params are refused with the name.
    try {
      ex->setInput(0, test::randomArray({1, 3, 8, 8}, 1));
      QFAIL("a wrong input shape was accepted");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY(QString(e.what()).contains("data"));
    }
    try {
      ex->setParams({});
      QFAIL("missing params were accepted");
    } catch (const runtime::RuntimeFailure& e) {
      QVERIFY(QString(e.what()).contains("missing"));
    }
  }

  void defaultScheduleParallelizesAndVectorizes() {
    // One fused elementwise group on (64, 64): the outer loop runs in parallel, the inner one in
    // vector lanes; at opt-level 1 the loops stay serial.
    driver::CompiledModel cm3 = driver::compileModel(chain(64));
    QCOMPARE(cm3.kernels.size(), size_t(1));
    std::string text = tir::printFunc(cm3.kernels[0]);
    QVERIFY2(text.find("parallel") != std::string::npos, text.c_str());
    QVERIFY2(text.find("T.Ramp") != std::string::npos, text.c_str());
    driver::CompileModelOptions o;
    o.optLevel = 1;
    std::string serial = tir::printFunc(driver::compileModel(chain(64), "llvm", {}, o).kernels.at(0));
    QVERIFY2(serial.find("parallel") == std::string::npos, serial.c_str());
  }

  void identicalGroupsShareOneKernel() {
    // relu(x) and relu(y) on equal shapes lower to the same kernel, called twice; relu of a
    // different shape gets its own.
    auto tt = [](int64_t n) { return graph::tensorType(std::vector<int64_t>{n, 8}, DataType::Float(32)); };
    graph::Var x = graph::makeVar("x", tt(4)), y = graph::makeVar("y", tt(4)), z = graph::makeVar("z", tt(5));
    graph::Module m = moduleOf({x, y, z}, graph::makeTuple({graph::makeCall("nn.relu", {x}), graph::makeCall("nn.relu", {y}),
                                                            graph::makeCall("nn.relu", {z})}));
    driver::CompiledModel cm = driver::compileModel(m);
    QCOMPARE(cm.kernels.size(), size_t(2));
    auto ex = driver::createExecutor(cm);
    QCOMPARE(ex->numNodes(), size_t(3));
    std::vector<runtime::NDArray> in = {test::randomArray({4, 8}, 1), test::randomArray({4, 8}, 2),
                                        test::randomArray({5, 8}, 3)};
    for (size_t i = 0; i < 3; ++i) ex->setInput(i, in[i]);
    ex->run();
    auto want = graph::evaluate(m.main(), in);
    for (size_t i = 0; i < 3; ++i) QVERIFY(test::maxDiff(ex->getOutput(i), want[i]) < 1e-6);
  }

  void paramsRoundTrip() {
    std::map<std::string, runtime::NDArray> p;
    p["weight"] = test::randomArray({3, 4}, 1);
    runtime::NDArray i64 = runtime::NDArray::empty({5}, runtime::DType{runtime::DType::Int, 64, 1});
    for (int i = 0; i < 5; ++i) i64.as<int64_t>()[i] = int64_t(i) * -1000000007LL;
    p["idx"] = i64;
    runtime::NDArray scalar = runtime::NDArray::empty({}, runtime::DType::f32());
    scalar.as<float>()[0] = 2.5f;
    p["s"] = scalar;
    // A bool constant (bits 1, a byte each): GPT-2's causal mask folds to one, and loadParams
    // refused it as "element type bits 1", so the model's .tar package did not load.
    runtime::NDArray mask = runtime::NDArray::empty({2, 3}, runtime::DType{runtime::DType::Bool, 1, 1});
    for (int i = 0; i < 6; ++i) mask.as<uint8_t>()[i] = uint8_t(i % 4 == 0);
    p["mask"] = mask;
    std::string blob = runtime::saveParams(p);
    auto q = runtime::loadParams(blob);
    QCOMPARE(q.size(), p.size());
    for (auto& [name, a] : p) {
      const runtime::NDArray& b = q.at(name);
      QCOMPARE(b.shape(), a.shape());
      QVERIFY(b.dtype() == a.dtype());
      QCOMPARE(std::memcmp(a.data(), b.data(), a.byteSize()), 0);
    }
    QVERIFY_THROWS_EXCEPTION(runtime::RuntimeFailure, runtime::loadParams(blob.substr(0, blob.size() - 3)));
    QVERIFY_THROWS_EXCEPTION(runtime::RuntimeFailure, runtime::loadParams("not a blob at all"));
    // Found by fuzz_package: a damaged dimension made loadParams allocate its shape (here 2^40
    // floats, 4 TiB) before comparing it with the bytes present. Now refused unallocated, as are
    // a negative dimension and a zero-bit element type.
    auto damaged = [&](size_t at, int64_t dim) {
      std::string b = runtime::saveParams({{"w", runtime::NDArray::empty({3}, runtime::DType::f32())}});
      std::memcpy(b.data() + at, &dim, 8);
      return b;
    };
    size_t dimAt = 8 + 8 + 4 + 1 + 1 + 1 + 2 + 4;  // magic, count, name length, "w", code, bits, lanes, ndim
    QVERIFY_THROWS_EXCEPTION(runtime::RuntimeFailure, runtime::loadParams(damaged(dimAt, int64_t(1) << 40)));
    QVERIFY_THROWS_EXCEPTION(runtime::RuntimeFailure, runtime::loadParams(damaged(dimAt, -3)));
    QCOMPARE(runtime::loadParams(damaged(dimAt, 3)).at("w").shape(), std::vector<int64_t>{3});
  }

  void tarRoundTrip() {
    QTemporaryDir dir;
    std::string path = (dir.path() + "/a.tar").toStdString();
    std::string big(1500, 'x');
    big[700] = '\0';
    runtime::writeTar(path, {{"one.txt", "hello"}, {"empty", ""}, {"big.bin", big}});
    auto files = runtime::readTar(path);
    QCOMPARE(files.size(), size_t(3));
    QCOMPARE(files["one.txt"], std::string("hello"));
    QCOMPARE(files["empty"], std::string());
    QCOMPARE(files["big.bin"], big);
    // The system tar reads what we write.
    QProcess tar;
    tar.start("tar", {"tf", QString::fromStdString(path)});
    if (tar.waitForFinished(10000) && tar.exitCode() == 0)
      QVERIFY(QString(tar.readAllStandardOutput()).contains("big.bin"));
    // A corrupted header is refused.
    std::string bytes;
    {
      std::ifstream in(path, std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    bytes[10] ^= 0x5a;
    QVERIFY_THROWS_EXCEPTION(runtime::RuntimeFailure, runtime::readTarBytes(bytes, "bad.tar"));
  }
};

QTEST_APPLESS_MAIN(TestExecutor)
#include "test_executor.moc"
