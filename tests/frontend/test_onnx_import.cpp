// The ONNX importer on Loom's example models (run against their numpy references, before and after
// the optimization and fusion pipelines) and its refusals: unsupported ops, malformed files,
// shapes.
#include <QtTest>

#include <cmath>
#include <fstream>
#include <random>

#include <onnx/onnx_pb.h>

#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Evaluator.h"
#include "core/graph/Op.h"
#include "core/graph/PassManager.h"
#include "core/graph/Printer.h"

using namespace loom;

namespace {

std::string modelDir(const std::string& name) {
  return std::string(LOOM_SOURCE_DIR) + "/examples/models/" + name;
}

double maxAbsDiff(const runtime::NDArray& a, const runtime::NDArray& b) {
  double m = 0;
  for (int64_t i = 0; i < a.numel(); ++i)
    m = std::max(m, double(std::fabs(a.as<float>()[i] - b.as<float>()[i])));
  return m;
}

/// A serialized model with one node per (op type, domain) pair, each reading "x" and writing a
/// fresh value; the last one is the output.
std::string modelBytes(const std::vector<std::pair<std::string, std::string>>& ops,
                       int opset = 13) {
  onnx::ModelProto m;
  m.set_ir_version(7);
  auto* o = m.add_opset_import();
  o->set_domain("");
  o->set_version(opset);
  auto* g = m.mutable_graph();
  g->set_name("g");
  auto* in = g->add_input();
  in->set_name("x");
  auto* tt = in->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(2);
  tt->mutable_shape()->add_dim()->set_dim_value(3);
  std::string prev = "x";
  for (size_t i = 0; i < ops.size(); ++i) {
    auto* n = g->add_node();
    n->set_op_type(ops[i].first);
    if (!ops[i].second.empty()) {
      n->set_domain(ops[i].second);
      auto* od = m.add_opset_import();
      od->set_domain(ops[i].second);
      od->set_version(1);
    }
    n->set_name("n" + std::to_string(i));
    n->add_input(prev);
    prev = "v" + std::to_string(i);
    n->add_output(prev);
  }
  auto* out = g->add_output();
  out->set_name(prev);
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  out->mutable_type()->mutable_tensor_type()->mutable_shape();
  return m.SerializeAsString();
}

} // namespace

class TestOnnxImport : public QObject {
  Q_OBJECT

private slots:
  void exampleModelsMatchReference_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("shapes");
    QTest::newRow("small_cnn") << "small_cnn"
                               << "data:[1,3,16,16]";
    QTest::newRow("fire_net") << "fire_net"
                              << "";
    QTest::newRow("transformer_block") << "transformer_block"
                                       << "";
  }
  void exampleModelsMatchReference() {
    QFETCH(QString, name);
    QFETCH(QString, shapes);
    std::string dir = modelDir(name.toStdString());
    frontend::ImportOptions o;
    if (!shapes.isEmpty()) o.inputShapes = frontend::parseInputShapes(shapes.toStdString());
    graph::Module m = frontend::importOnnx(dir + "/model.onnx", o);
    runtime::NDArray x = frontend::loadTensorProto(dir + "/test_data_set_0/input_0.pb");
    runtime::NDArray want = frontend::loadTensorProto(dir + "/test_data_set_0/output_0.pb");
    for (const auto& passes : {std::vector<std::string>{}, graph::optimizePipeline(),
                               graph::fusePipeline(), graph::fusePipeline(true)}) {
      graph::Module opt = graph::runGraphPasses(m, passes);
      std::vector<runtime::NDArray> got = graph::evaluate(opt.main(), {x});
      QCOMPARE(got.size(), size_t(1));
      QCOMPARE(got[0].shape(), want.shape());
      QVERIFY2(maxAbsDiff(got[0], want) < 1e-4, qPrintable(QString("after %1 passes: max diff %2")
                                                               .arg(passes.size())
                                                               .arg(maxAbsDiff(got[0], want))));
    }
  }

  void fireNetStaysBlocked() {
    graph::Module m = frontend::importOnnx(modelDir("fire_net") + "/model.onnx");
    std::string text = graph::printModule(graph::runGraphPasses(m, graph::fusePipeline(true)));
    auto count = [&](const std::string& what) {
      int n = 0;
      for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1))
        ++n;
      return n;
    };
    // Every conv, pool, relu and both fire concatenations run blocked (the squeeze convs' 8
    // output channels give NCHW8c, which the expand convs read as is): one transform in at the
    // stem (NCHW3c), one out after the global pool (NCHW10c) before the flatten.
    QVERIFY2(count("concatenate(") == 2 && count("Tensor[(1, 2, 8, 8, 16), float32]") > 0,
             text.c_str());
    QVERIFY2(count("layout=\"NCHW16c\"") >= 1 && count("layout=\"NCHW10c\"") >= 1, text.c_str());
    QCOMPARE(count("layout_transform("), 2);
  }

  void symbolicBatchStaysSymbolic() {
    std::string path = modelDir("small_cnn") + "/model.onnx";
    // Without shapes the flatten's Shape -> Gather -> Unsqueeze -> Concat chain computes
    // symbolically: the batch N stays a symbol through to the output.
    std::string dyn = graph::printModule(frontend::importOnnx(path));
    QVERIFY2(dyn.find("symbolic_shape=\"N;16\"") != std::string::npos, dyn.c_str());
    QVERIFY2(dyn.find("-> Tensor[(N, 10), float32]") != std::string::npos, dyn.c_str());
    // A shape that is tensor data (a Reshape target fed as a graph input) cannot be computed
    // symbolically: refused, naming the node and the way out.
    onnx::ModelProto m;
    m.set_ir_version(8);
    m.add_opset_import()->set_version(17);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto input = [&](const char* name, int type, std::vector<int64_t> dims) {
      auto* in = g->add_input();
      in->set_name(name);
      auto* tt = in->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(type);
      for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
    };
    input("x", onnx::TensorProto::FLOAT, {2, 3});
    input("s", onnx::TensorProto::INT64, {2});
    auto* n = g->add_node();
    n->set_op_type("Reshape");
    n->set_name("r");
    n->add_input("x");
    n->add_input("s");
    n->add_output("y");
    g->add_output()->set_name("y");
    try {
      frontend::importOnnxBytes(m.SerializeAsString(), "data_shape.onnx");
      QFAIL("expected an ImportError");
    } catch (const frontend::ImportError& e) {
      std::string msg = e.what();
      QVERIFY2(msg.find("node 'r' (Reshape, opset 17)") != std::string::npos, e.what());
      QVERIFY2(msg.find("not a computation on shapes") != std::string::npos, e.what());
      QVERIFY2(msg.find("--input-shapes") != std::string::npos, e.what());
    }
    // With a static batch the Shape -> Gather -> Unsqueeze -> Concat chain becomes one reshape.
    frontend::ImportOptions o;
    o.inputShapes = frontend::parseInputShapes("data:[2,3,16,16]");
    std::string text = graph::printModule(frontend::importOnnx(path, o));
    QVERIFY2(text.find("reshape(%8, newshape=[2, 16])") != std::string::npos, text.c_str());
    QVERIFY(text.find("shape_of") == std::string::npos);
    QVERIFY(text.find("-> Tensor[(2, 10), float32]") != std::string::npos);
  }

  void symbolicDimsArePrinted() {
    // fire_net is fully static; the CNN keeps N symbolic until the flatten, which needs it.
    onnx::ModelProto m;
    std::ifstream in(modelDir("small_cnn") + "/model.onnx", std::ios::binary);
    QVERIFY(m.ParseFromIstream(&in));
    // Cut the graph after the global pool: everything up to there types with a symbolic batch.
    auto* g = m.mutable_graph();
    while (g->node_size() > 8)
      g->mutable_node()->RemoveLast();
    g->mutable_output(0)->set_name("gp");
    auto* shape = g->mutable_output(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
    shape->clear_dim();
    shape->add_dim()->set_dim_param("N");
    for (int d : {16, 1, 1})
      shape->add_dim()->set_dim_value(d);
    graph::Module mod = frontend::importOnnxBytes(m.SerializeAsString(), "cut.onnx");
    std::string text = graph::printModule(mod);
    QVERIFY2(text.find("def @main(%data: Tensor[(N, 3, 16, 16), float32]) -> Tensor[(N, 16, 1, 1), "
                       "float32]") != std::string::npos,
             text.c_str());
  }

  void unsupportedOpsListedInOneError() {
    std::string bytes = modelBytes(
        {{"Relu", ""}, {"NoSuchOpEither", ""}, {"Relu", ""}, {"NoSuchOp", ""}, {"Gelu", "com.microsoft"}});
    try {
      frontend::importOnnxBytes(bytes, "bad.onnx", {{}, {}, false});
      QFAIL("expected an ImportError");
    } catch (const frontend::ImportError& e) {
      std::string msg = e.what();
      QVERIFY2(msg.find("bad.onnx: 3 unsupported op(s):") != std::string::npos, e.what());
      QVERIFY2(msg.find("NoSuchOpEither (node 'n1', opset 13)") != std::string::npos, e.what());
      QVERIFY2(msg.find("NoSuchOp (node 'n3', opset 13)") != std::string::npos, e.what());
      QVERIFY2(msg.find("com.microsoft.Gelu (node 'n4', opset 13)") != std::string::npos, e.what());
      QVERIFY(msg.find("Relu") == std::string::npos);
    }
  }

  void oldOpsetWithUnchangedOpsImports() {
    // Opset 1-5 models import when every op kept its meaning since version 1 (Softsign did).
    graph::Module m = frontend::importOnnxBytes(modelBytes({{"Softsign", ""}}, 1), "old_softsign.onnx");
    QVERIFY(m.main().defined());
  }

  void opsetOutOfRange() {
    try {
      frontend::importOnnxBytes(modelBytes({{"Relu", ""}}, 5), "old.onnx");
      QFAIL("expected an ImportError");
    } catch (const frontend::ImportError& e) {
      QVERIFY2(std::string(e.what()).find(
                   "old.onnx: opset 5 is outside the supported range 6-21") != std::string::npos,
               e.what());
    }
  }

  void malformedFiles() {
    QVERIFY_THROWS_EXCEPTION(frontend::ImportError,
                             frontend::importOnnx("/nonexistent/model.onnx"));
    try {
      frontend::importOnnxBytes("this is not a protobuf \x01\x02\xff", "junk.onnx");
      QFAIL("expected an ImportError");
    } catch (const frontend::ImportError& e) {
      QVERIFY2(std::string(e.what()).rfind("junk.onnx: ", 0) == 0, e.what());
    }
    // Every truncation of a real model fails cleanly or imports; none crashes.
    std::ifstream in(modelDir("fire_net") + "/model.onnx", std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    int refused = 0;
    for (size_t cut = 0; cut < bytes.size(); cut += 97) {
      try {
        frontend::importOnnxBytes(bytes.substr(0, cut), "cut.onnx");
      } catch (const Error& e) {
        QVERIFY2(std::string(e.what()).rfind("cut.onnx", 0) == 0, e.what());
        ++refused;
      }
    }
    QVERIFY(refused > 0);
  }

  void mutatedModelsNeverCrash() {
    // Random byte flips in every example model: each import either succeeds or fails with a
    // loom::Error that names the file; nothing else escapes and nothing crashes.
    std::mt19937 rng(1234);
    int refused = 0, total = 0;
    for (const char* name : {"small_cnn", "fire_net", "transformer_block"}) {
      std::ifstream in(modelDir(name) + "/model.onnx", std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
      for (int trial = 0; trial < 150; ++trial) {
        std::string m = bytes;
        int flips = 1 + int(rng() % 4);
        for (int f = 0; f < flips; ++f)
          m[rng() % m.size()] = char(rng() & 0xff);
        frontend::ImportOptions o;
        o.inputShapes["data"] = {1, 3, 16, 16};
        if (std::string(name) != "small_cnn") o.inputShapes.clear();
        ++total;
        try {
          graph::Module mod = frontend::importOnnxBytes(m, "mutated.onnx", o);
          graph::runGraphPasses(mod, graph::fusePipeline());
        } catch (const Error& e) {
          QVERIFY2(std::string(e.what()).size() > 0, "empty message");
          ++refused;
        }
      }
    }
    QVERIFY(refused > 0 && refused <= total);
  }

  void nodeTypeErrorNamesNode() {
    // A Conv whose weight expects 4 input channels on 3-channel data.
    onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    auto* in = g->add_input();
    in->set_name("x");
    auto* tt = in->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    for (int d : {1, 3, 8, 8})
      tt->mutable_shape()->add_dim()->set_dim_value(d);
    auto* w = g->add_initializer();
    w->set_name("w");
    w->set_data_type(onnx::TensorProto::FLOAT);
    for (int d : {2, 4, 3, 3})
      w->add_dims(d);
    for (int i = 0; i < 2 * 4 * 9; ++i)
      w->add_float_data(0.f);
    auto* n = g->add_node();
    n->set_op_type("Conv");
    n->set_name("conv_bad");
    n->add_input("x");
    n->add_input("w");
    n->add_output("y");
    g->add_output()->set_name("y");
    g->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
    try {
      frontend::importOnnxBytes(m.SerializeAsString(), "conv.onnx", {{}, {}, false});
      QFAIL("expected an ImportError");
    } catch (const frontend::ImportError& e) {
      std::string msg = e.what();
      QVERIFY2(msg.find("conv.onnx: node 'conv_bad' (Conv, opset 13)") != std::string::npos,
               e.what());
      QVERIFY2(msg.find("Tensor[(1, 3, 8, 8), float32] has 3 input channels") != std::string::npos,
               e.what());
      QVERIFY2(msg.find("Tensor[(2, 4, 3, 3), float32] expects 4") != std::string::npos, e.what());
    }
  }

  void inputShapeSpecs() {
    auto s = frontend::parseInputShapes("data:[1,3,224,224], mask:[1, 128],scalar:[]");
    QCOMPARE(s.size(), size_t(3));
    QCOMPARE(s["data"], (std::vector<int64_t>{1, 3, 224, 224}));
    QCOMPARE(s["mask"], (std::vector<int64_t>{1, 128}));
    QVERIFY(s["scalar"].empty());
    for (const char* bad :
         {"", "data", "data:[1,", "data:[1,x]", "data:[1],data:[2]", "data:[1]x", ":[1]"})
      QVERIFY_THROWS_EXCEPTION(ValueError, frontend::parseInputShapes(bad));
    // Shapes that contradict the model, or name no input, are refused.
    frontend::ImportOptions o;
    o.inputShapes = frontend::parseInputShapes("data:[1,3,32,32]");
    QVERIFY_THROWS_EXCEPTION(frontend::ImportError,
                             frontend::importOnnx(modelDir("fire_net") + "/model.onnx", o));
    o.inputShapes = frontend::parseInputShapes("nosuch:[1]");
    QVERIFY_THROWS_EXCEPTION(frontend::ImportError,
                             frontend::importOnnx(modelDir("fire_net") + "/model.onnx", o));
  }

  void supportedOpsAreListed() {
    std::vector<std::string> ops = frontend::supportedOnnxOps();
    QVERIFY(ops.size() >= 80);
    QVERIFY(std::is_sorted(ops.begin(), ops.end()));
    for (const char* op : {"Conv", "Gemm", "Resize", "LayerNormalization", "Range", "Where"})
      QVERIFY(std::find(ops.begin(), ops.end(), op) != ops.end());
  }
};

QTEST_APPLESS_MAIN(TestOnnxImport)
#include "test_onnx_import.moc"
