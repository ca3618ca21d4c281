// The --input-shapes grammar (core/driver/InputShapes.h) and what loadModel makes of it: named,
// shared, anonymous and bounded symbolic dims, golden types, errors naming the column.
#include <QTemporaryDir>
#include <QtTest>

#include "DynamicTestModels.h"
#include "core/driver/InputShapes.h"
#include "core/driver/LoadModel.h"
#include "core/graph/Evaluator.h"
#include "core/support/Error.h"
#include "tests/common/ProcessRun.h"

using namespace loom;

namespace {

std::string smallCnn() { return std::string(LOOM_SOURCE_DIR) + "/examples/models/small_cnn/model.onnx"; }

/// main's parameter types and result type, "x: T, y: T -> T".
std::string signature(const graph::Module& m) {
  std::string s;
  for (const graph::Var& p : m.main()->params) s += (s.empty() ? "" : ", ") + p->name + ": " + graph::typeStr(p->checkedType);
  return s + " -> " + graph::typeStr(m.main()->body.type());
}

std::string errorOf(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

/// Writes `a` (float32) as an ONNX TensorProto file.
void writeTensor(const std::string& path, const runtime::NDArray& a) {
  onnx::TensorProto t;
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : a.shape()) t.add_dims(d);
  t.set_raw_data(std::string(static_cast<const char*>(a.data()), a.byteSize()));
  std::ofstream f(path, std::ios::binary);
  t.SerializeToOstream(&f);
}

/// An ONNX test directory of small_cnn with one test set per batch size, outputs from the graph
/// evaluator.
QString smallCnnTestDir(const QTemporaryDir& tmp, const std::vector<int64_t>& batches) {
  QString dir = tmp.filePath("small_cnn");
  QDir().mkpath(dir);
  QFile::copy(QString::fromStdString(smallCnn()), dir + "/model.onnx");
  graph::Module m = driver::loadModel(smallCnn()).module;
  for (size_t k = 0; k < batches.size(); ++k) {
    QString set = dir + QString("/test_data_set_%1").arg(k);
    QDir().mkpath(set);
    runtime::NDArray x = runtime::NDArray::empty({batches[k], 3, 16, 16}, runtime::DType::f32());
    for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = float((i * 7919 + int64_t(k) * 31) % 1000) / 250.0f - 2.0f;
    writeTensor((set + "/input_0.pb").toStdString(), x);
    writeTensor((set + "/output_0.pb").toStdString(), graph::evaluate(m.main(), {x})[0]);
  }
  return dir;
}

}  // namespace

class TestInputShapes : public QObject {
  Q_OBJECT

private slots:
  void parsesEveryForm() {
    driver::InputShapes s = driver::parseInputShapes(" x:[1, 3,48,W<=2048], ids:[batch,?]:int64,y:[?<=64,7],in:0:[],t:[W=320]");
    QCOMPARE(s.inputs.size(), size_t(5));
    QCOMPARE(s.inputs[0].str(), std::string("x:[1,3,48,W<=2048]"));
    QCOMPARE(s.inputs[1].str(), std::string("ids:[batch,?]:int64"));
    QCOMPARE(s.inputs[2].str(), std::string("y:[?<=64,7]"));
    QCOMPARE(s.inputs[3].str(), std::string("in:0:[]"));  // names may hold ':'
    QCOMPARE(s.inputs[4].str(), std::string("t:[W=320]"));
    QCOMPARE(s.bounds, (std::map<std::string, int64_t>{{"W", 2048}}));
    QVERIFY(!s.isStatic());
    QVERIFY(s.inputs[3].isStatic());
    QCOMPARE(s.inputs[4].staticDims("tuning"), std::vector<int64_t>{320});
    QVERIFY(driver::parseInputShapes("data:[1,3,224,224],mask:[1,128]").isStatic());
    // The same bound twice is fine; a symbol used unbounded elsewhere keeps its bound.
    QCOMPARE(driver::parseInputShapes("x:[W<=8],y:[W<=8],z:[W]").bounds.at("W"), int64_t(8));
    QCOMPARE(driver::concreteInputShapes("x:[3,W=5]", "loom run").at("x"), (std::vector<int64_t>{3, 5}));
  }

  void errorsNameTheColumn_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("bound missing") << "x:[1,3,W<=]" << "expected a number after '<=' at column 11";
    QTest::newRow("negative") << "x:[1,3,-1]" << "a dimension cannot be negative (use ? or a symbol for a dynamic one) at column 8";
    QTest::newRow("no colon") << "x[1,2]" << "expected NAME:[ (an input name, a colon and a bracket) at column 1";
    QTest::newRow("bad dim") << "x:[1,$]" << "expected a dimension (a number, a symbol or ?) at column 6";
    QTest::newRow("unclosed") << "x:[1,2" << "missing ']' at column 7";
    QTest::newRow("junk after dim") << "x:[1,W*2]" << "expected ',' or ']' after a dimension at column 7";
    QTest::newRow("two bounds") << "x:[1,W<=4],y:[W<=8]" << "symbol 'W' is bounded twice, by 4 and 8 at column 12";
    QTest::newRow("zero bound") << "x:[W<=0]" << "a bound must be at least 1 at column 7";
    QTest::newRow("example above bound") << "x:[W<=4=9]" << "the representative value 9 is above the bound 4 at column 9";
    QTest::newRow("twice") << "x:[1],x:[2]" << "input 'x' is given twice at column 7";
    QTest::newRow("dtype") << "x:[1]:float8" << "unknown dtype 'float8' (float32, float64, float16, int64, int32, int8, uint8, bool) at column 7";
    QTest::newRow("between") << "x:[1] y:[2]" << "expected ',' between inputs at column 7";
    QTest::newRow("empty") << "" << "expected NAME:[...] at column 1";
  }
  void errorsNameTheColumn() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    std::string e = errorOf([&] { driver::parseInputShapes(text.toStdString()); });
    QVERIFY2(e.find(message.toStdString()) != std::string::npos, e.c_str());
    QVERIFY2(e.find("--input-shapes \"" + text.toStdString() + "\"") != std::string::npos, e.c_str());
    // The text again, with a caret under the column.
    size_t col = std::stoul(e.substr(e.find("at column ") + 10));
    QVERIFY2(e.find("\n  " + text.toStdString() + "\n  " + std::string(col - 1, ' ') + "^") != std::string::npos, e.c_str());
  }

  void symbolicOnlyWhereNumbersAreNeeded() {
    std::string e = errorOf([] { driver::concreteInputShapes("x:[1,W<=8]", "loom run"); });
    QCOMPARE(e, std::string("--input-shapes gives 'x' dimension 1 as W<=8; loom run needs a number there (or a "
                            "representative value, W<=8=N)"));
  }

  void modelTypes_data() {
    QTest::addColumn<QString>("shapes");
    QTest::addColumn<QString>("type");
    // No --input-shapes keeps the model's own symbol.
    QTest::newRow("model's own") << "" << "data: Tensor[(N, 3, 16, 16), float32] -> Tensor[(N, 10), float32]";
    QTest::newRow("named") << "data:[batch,3,16,16]" << "data: Tensor[(batch, 3, 16, 16), float32] -> Tensor[(batch, 10), float32]";
    QTest::newRow("anonymous keeps N") << "data:[?,3,16,16]" << "data: Tensor[(N, 3, 16, 16), float32] -> Tensor[(N, 10), float32]";
    QTest::newRow("bounded") << "data:[B<=8,3,16,16]" << "data: Tensor[(B, 3, 16, 16), float32] -> Tensor[(B, 10), float32]";
    QTest::newRow("static") << "data:[2,3,16,16]" << "data: Tensor[(2, 3, 16, 16), float32] -> Tensor[(2, 10), float32]";
  }
  void modelTypes() {
    QFETCH(QString, shapes);
    QFETCH(QString, type);
    driver::LoadedModel m = driver::loadModel(smallCnn(), shapes.toStdString());
    QCOMPARE(QString::fromStdString(signature(m.module)), type);
  }

  void boundsAreKept() {
    QCOMPARE(driver::loadModel(smallCnn(), "data:[B<=8,3,16,16]").symbolBounds, (std::map<std::string, int64_t>{{"B", 8}}));
    // An anonymous bounded dim bounds the symbol it became (the model's N).
    QCOMPARE(driver::loadModel(smallCnn(), "data:[?<=4,3,16,16]").symbolBounds, (std::map<std::string, int64_t>{{"N", 4}}));
    QVERIFY(driver::loadModel(smallCnn()).symbolBounds.empty());
  }

  void inputsShareANamedDim() {
    QTemporaryDir dir;
    std::string add = test::writeOnnxModel(dir.filePath("add.onnx").toStdString(), {{"x", {"1", ""}}, {"y", {"1", ""}}}, "Add");
    QCOMPARE(signature(driver::loadModel(add, "x:[1,W],y:[1,W]").module),
             std::string("x: Tensor[(1, W), float32], y: Tensor[(1, W), float32] -> Tensor[(1, W), float32]"));
    // Unnamed dims of the model, left anonymous: a fresh symbol each, named after input and axis.
    QCOMPARE(signature(driver::loadModel(add, "x:[1,?],y:[1,?]").module),
             std::string("x: Tensor[(1, x_1), float32], y: Tensor[(1, y_1), float32] -> Tensor[(1, y_1), float32]"));
    std::string cat = test::writeOnnxModel(dir.filePath("cat.onnx").toStdString(), {{"a", {"2", "W"}}, {"b", {"3", "V"}}}, "Concat", 0);
    QCOMPARE(signature(driver::loadModel(cat, "a:[2,W<=100],b:[3,W]").module),
             std::string("a: Tensor[(2, W), float32], b: Tensor[(3, W), float32] -> Tensor[(5, W), float32]"));
  }

  void modelErrors_data() {
    QTest::addColumn<QString>("shapes");
    QTest::addColumn<QString>("message");
    QTest::newRow("fixed dim") << "data:[N,3,48,16]" << "--input-shapes gives 'data' dimension 2 = 48 but the model fixes it to 16";
    QTest::newRow("symbol on fixed dim") << "data:[N,C,16,16]" << "--input-shapes gives 'data' dimension 1 = C but the model fixes it to 3";
    QTest::newRow("rank") << "data:[N,3,16]" << "--input-shapes gives 'data' rank 3 but the model declares rank 4";
    QTest::newRow("unknown input") << "image:[N,3,16,16]" << "--input-shapes names 'image', which is not a graph input";
    QTest::newRow("dtype") << "data:[N,3,16,16]:int64" << "--input-shapes gives 'data' dtype int64 but the model declares float32";
  }
  void modelErrors() {
    QFETCH(QString, shapes);
    QFETCH(QString, message);
    std::string e = errorOf([&] { driver::loadModel(smallCnn(), shapes.toStdString()); });
    QVERIFY2(e.find(message.toStdString()) != std::string::npos, e.c_str());
    QVERIFY2(e.find(smallCnn()) != std::string::npos, e.c_str());  // names the file
  }

  void cliExitsOneWithTheMessage() {
    test::ProcessResult r = test::runLoomBinary({"graph", QString::fromStdString(smallCnn()), "--input-shapes", "data:[N,3,16,W<=]"}, 60000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("expected a number after '<=' at column 17"), qPrintable(r.err));
    r = test::runLoomBinary({"graph", QString::fromStdString(smallCnn()), "--input-shapes", "data:[B<=8,3,16,16]"}, 60000);
    QCOMPARE(r.exitCode, 0);
    QVERIFY2(r.out.contains("Tensor[(B, 3, 16, 16), float32]"), qPrintable(r.out));
  }

  void onnxTestTakesInputShapes() {
    QTemporaryDir tmp;
    QString dir = smallCnnTestDir(tmp, {1, 3});
    // One module for both sets, compiled at the shapes given (a bounded batch).
    test::ProcessResult r = test::runLoomBinary({"onnx-test", dir, "--input-shapes", "data:[N<=4,3,16,16]", "-v"}, 300000);
    QVERIFY2(r.exitCode == 0 && r.out.contains("1 passed, 0 failed"), qPrintable(r.out + r.err));
    // A bound below the second set's batch: that set is refused by the executor, naming the bound.
    r = test::runLoomBinary({"onnx-test", dir, "--input-shapes", "data:[N<=2,3,16,16]"}, 300000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.out.contains("above its bound N <= 2"), qPrintable(r.out));
    // A static batch of 1: the batch-3 set does not fit.
    r = test::runLoomBinary({"onnx-test", dir, "--input-shapes", "data:[1,3,16,16]"}, 300000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.out.contains("1 failed"), qPrintable(r.out));
    // Bad text: one error with the column, exit 1, nothing run.
    r = test::runLoomBinary({"onnx-test", dir, "--input-shapes", "data:[N,3,16,W<=]"}, 60000);
    QCOMPARE(r.exitCode, 1);
    QVERIFY2(r.err.contains("expected a number after '<=' at column 17"), qPrintable(r.err));
    QVERIFY2(!r.out.contains("passed"), qPrintable(r.out));
  }

  void inspectEvaluatesAtInputShapes() {
    QTemporaryDir tmp;
    QString so = tmp.filePath("cnn.so");
    test::ProcessResult r = test::runLoomBinary(
        {"compile", QString::fromStdString(smallCnn()), "--input-shapes", "data:[N<=4,3,16,16]", "-q", "-o", so}, 300000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    r = test::runLoomBinary({"inspect", so, "--input-shapes", "data:[3,3,16,16]"}, 60000);
    QVERIFY2(r.exitCode == 0, qPrintable(r.err));
    QVERIFY2(r.out.contains("at data:[3,3,16,16]:\n  symbols  N = 3\n  input    data  float32[3, 3, 16, 16]\n"
                            "  output   prob  float32[3, 10]\n"),
             qPrintable(r.out));
    QVERIFY2(r.out.contains("planned; no buffer grows"), qPrintable(r.out));  // planned for N <= 4
    // A representative value counts as the number.
    r = test::runLoomBinary({"inspect", so, "--input-shapes", "data:[N=2,3,16,16]"}, 60000);
    QVERIFY2(r.exitCode == 0 && r.out.contains("output   prob  float32[2, 10]"), qPrintable(r.out + r.err));
    const std::pair<const char*, const char*> bad[] = {
        {"data:[5,3,16,16]", "input 'data': dimension 0 (N) is 5, above its bound N <= 4"},
        {"data:[2,3,16,17]", "input 'data' expects float32[N, 3, 16, 16]: dimension 3 is 17, but it must be 16"},
        {"data:[2,3,16]", "input 'data' has rank 4 ([N, 3, 16, 16]), got [2, 3, 16]"},
        {"x:[2,3,16,16]", "--input-shapes names 'x', but the package has no such input (its inputs: 'data')"},
        {"data:[N,3,16,16]", "inspect needs a number there"}};
    for (const auto& [shapes, message] : bad) {
      r = test::runLoomBinary({"inspect", so, "--input-shapes", shapes}, 60000);
      QCOMPARE(r.exitCode, 1);
      QVERIFY2(r.err.contains(message), qPrintable(r.err));
      QVERIFY2(r.out.isEmpty(), qPrintable(r.out));  // refused before anything is printed
    }
  }
};

QTEST_GUILESS_MAIN(TestInputShapes)
#include "test_input_shapes.moc"
