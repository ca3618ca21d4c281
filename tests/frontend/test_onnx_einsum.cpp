// The ONNX Einsum, LpPool and NonZero converters: results on random inputs against naive
// references (before and after the optimization and fusion pipelines) and their refusals.
#include <QtTest>

#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <random>

#include <onnx/onnx_pb.h>

#include "core/frontend/onnx/OnnxImporter.h"
#include "core/graph/Evaluator.h"
#include "core/graph/PassManager.h"

using namespace loom;

namespace {

using Shape = std::vector<int64_t>;

runtime::NDArray randomArray(const Shape& s, std::mt19937& rng) {
  runtime::NDArray a = runtime::NDArray::empty(s, runtime::DType::f32());
  std::uniform_real_distribution<float> d(-1.f, 1.f);
  for (int64_t i = 0; i < a.numel(); ++i) a.as<float>()[i] = d(rng);
  return a;
}

void fillTensor(onnx::TensorProto* t, const std::string& name, const runtime::NDArray& a) {
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : a.shape()) t->add_dims(d);
  for (int64_t i = 0; i < a.numel(); ++i) t->add_float_data(a.as<float>()[i]);
}

/// One node "n" of type `op` reading graph inputs x0, x1, ... (or initializers when `constant`)
/// and writing "y".
struct OneNode {
  explicit OneNode(std::string o, std::vector<runtime::NDArray> in = {}, bool c = false)
      : op(std::move(o)), inputs(std::move(in)), constant(c) {}
  std::string op;
  std::vector<runtime::NDArray> inputs;
  bool constant = false;
  std::map<std::string, int64_t> ints;
  std::map<std::string, std::vector<int64_t>> intLists;
  std::map<std::string, std::string> strings;

  std::string bytes() const {
    onnx::ModelProto m;
    m.set_ir_version(7);
    m.add_opset_import()->set_version(13);
    auto* g = m.mutable_graph();
    g->set_name("g");
    auto* n = g->add_node();
    n->set_op_type(op);
    n->set_name("n");
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::string name = "x" + std::to_string(i);
      n->add_input(name);
      if (constant) {
        fillTensor(g->add_initializer(), name, inputs[i]);
        continue;
      }
      auto* in = g->add_input();
      in->set_name(name);
      auto* tt = in->mutable_type()->mutable_tensor_type();
      tt->set_elem_type(onnx::TensorProto::FLOAT);
      for (int64_t d : inputs[i].shape()) tt->mutable_shape()->add_dim()->set_dim_value(d);
    }
    n->add_output("y");
    for (const auto& [k, v] : ints) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(v);
    }
    for (const auto& [k, v] : intLists) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t x : v) a->add_ints(x);
    }
    for (const auto& [k, v] : strings) {
      auto* a = n->add_attribute();
      a->set_name(k);
      a->set_type(onnx::AttributeProto::STRING);
      a->set_s(v);
    }
    auto* out = g->add_output();
    out->set_name("y");
    out->mutable_type()->mutable_tensor_type()->set_elem_type(op == "NonZero" ? onnx::TensorProto::INT64
                                                                              : onnx::TensorProto::FLOAT);
    return m.SerializeAsString();
  }

  /// The node's output, evaluated after each pipeline (all must agree).
  std::vector<runtime::NDArray> run() const {
    graph::Module m = frontend::importOnnxBytes(bytes(), op + ".onnx");
    std::vector<runtime::NDArray> args = constant ? std::vector<runtime::NDArray>{} : inputs;
    std::vector<runtime::NDArray> outs;
    for (const auto& passes : {std::vector<std::string>{}, graph::optimizePipeline(), graph::fusePipeline()}) {
      std::vector<runtime::NDArray> got = graph::evaluate(graph::runGraphPasses(m, passes).main(), args);
      if (got.size() != 1) throw std::runtime_error("expected one output");
      outs.push_back(got[0]);
    }
    return outs;
  }

  std::string importError() const {
    try {
      frontend::importOnnxBytes(bytes(), op + ".onnx");
    } catch (const frontend::ImportError& e) {
      return e.what();
    }
    return "(no error)";
  }
};

/// Naive einsum for explicit equations without "...": loops over every index assignment.
runtime::NDArray refEinsum(const std::string& eq, const std::vector<runtime::NDArray>& xs) {
  size_t arrow = eq.find("->");
  std::vector<std::string> terms{""};
  for (char ch : eq.substr(0, arrow)) {
    if (ch == ',') terms.emplace_back();
    else terms.back() += ch;
  }
  std::string out = eq.substr(arrow + 2);
  std::string letters;
  std::map<char, int64_t> size;
  for (size_t t = 0; t < terms.size(); ++t)
    for (size_t i = 0; i < terms[t].size(); ++i) {
      if (letters.find(terms[t][i]) == std::string::npos) letters += terms[t][i];
      size[terms[t][i]] = xs[t].shape()[i];
    }
  Shape os;
  for (char l : out) os.push_back(size[l]);
  runtime::NDArray r = runtime::NDArray::empty(os, runtime::DType::f32());
  for (int64_t i = 0; i < r.numel(); ++i) r.as<float>()[i] = 0;
  std::map<char, int64_t> at;
  for (char l : letters) at[l] = 0;
  while (true) {
    double p = 1;
    for (size_t t = 0; t < terms.size(); ++t) {
      int64_t flat = 0;
      for (size_t i = 0; i < terms[t].size(); ++i) flat = flat * xs[t].shape()[i] + at[terms[t][i]];
      p *= xs[t].as<float>()[flat];
    }
    int64_t o = 0;
    for (size_t i = 0; i < out.size(); ++i) o = o * os[i] + at[out[i]];
    r.as<float>()[o] += float(p);
    size_t k = letters.size();
    while (k > 0 && ++at[letters[k - 1]] == size[letters[k - 1]]) at[letters[--k]] = 0;
    if (k == 0) break;
  }
  return r;
}

/// Naive LpPool over NCHW with zero padding (pads: top, left, bottom, right).
runtime::NDArray refLpPool(const runtime::NDArray& x, int64_t p, Shape k, Shape s, Shape pads) {
  const Shape& xs = x.shape();
  int64_t oh = (xs[2] + pads[0] + pads[2] - k[0]) / s[0] + 1;
  int64_t ow = (xs[3] + pads[1] + pads[3] - k[1]) / s[1] + 1;
  runtime::NDArray r = runtime::NDArray::empty({xs[0], xs[1], oh, ow}, runtime::DType::f32());
  for (int64_t nc = 0; nc < xs[0] * xs[1]; ++nc)
    for (int64_t i = 0; i < oh; ++i)
      for (int64_t j = 0; j < ow; ++j) {
        double acc = 0;
        for (int64_t a = 0; a < k[0]; ++a)
          for (int64_t b = 0; b < k[1]; ++b) {
            int64_t h = i * s[0] - pads[0] + a, w = j * s[1] - pads[1] + b;
            if (h < 0 || w < 0 || h >= xs[2] || w >= xs[3]) continue;
            acc += std::pow(std::fabs(double(x.as<float>()[(nc * xs[2] + h) * xs[3] + w])), double(p));
          }
        r.as<float>()[(nc * oh + i) * ow + j] = float(std::pow(acc, 1.0 / double(p)));
      }
  return r;
}

QString compare(const runtime::NDArray& got, const runtime::NDArray& want) {
  if (got.shape() != want.shape()) return "shape differs";
  for (int64_t i = 0; i < got.numel(); ++i)
    if (std::fabs(got.as<float>()[i] - want.as<float>()[i]) > 1e-4f)
      return QString("element %1: %2 vs %3").arg(i).arg(got.as<float>()[i]).arg(want.as<float>()[i]);
  return {};
}

} // namespace

class TestOnnxEinsum : public QObject {
  Q_OBJECT

private slots:
  void einsumMatchesReference_data() {
    QTest::addColumn<QString>("equation");
    QTest::addColumn<QString>("reference");  // the explicit equation for refEinsum
    QTest::addColumn<QList<QList<int>>>("shapes");
    using L = QList<QList<int>>;
    QTest::newRow("matmul") << "ij,jk->ik" << "ij,jk->ik" << L{{3, 4}, {4, 5}};
    QTest::newRow("batched") << "bij,bjk->bik" << "bij,bjk->bik" << L{{2, 3, 4}, {2, 4, 5}};
    QTest::newRow("transpose") << "ij->ji" << "ij->ji" << L{{3, 4}};
    QTest::newRow("rowsum") << "ij->i" << "ij->i" << L{{3, 4}};
    QTest::newRow("outer") << "i,j->ij" << "i,j->ij" << L{{3}, {4}};
    QTest::newRow("dot") << "i,i->" << "i,i->" << L{{5}, {5}};
    QTest::newRow("attention") << "bhqd,bhkd->bhqk" << "bhqd,bhkd->bhqk" << L{{2, 2, 3, 4}, {2, 2, 5, 4}};
    QTest::newRow("implicit matmul") << "ij,jk" << "ij,jk->ik" << L{{3, 4}, {4, 2}};
    QTest::newRow("implicit sorted") << "ji" << "ji->ij" << L{{3, 4}};
    QTest::newRow("trace") << "ii" << "ii->" << L{{4, 4}};
    QTest::newRow("diagonal") << "ii->i" << "ii->i" << L{{4, 4}};
    QTest::newRow("three operands") << "ij,ij,ij->i" << "ij,ij,ij->i" << L{{2, 3}, {2, 3}, {2, 3}};
    QTest::newRow("ellipsis broadcast") << "...ij,jk->...ik" << "bij,jk->bik" << L{{2, 3, 4}, {4, 5}};
    QTest::newRow("spaces") << " ij , jk -> ki " << "ij,jk->ki" << L{{3, 4}, {4, 5}};
  }

  void einsumMatchesReference() {
    QFETCH(QString, equation);
    QFETCH(QString, reference);
    QFETCH(QList<QList<int>>, shapes);
    std::mt19937 rng(7);
    OneNode n{"Einsum"};
    for (const auto& s : shapes) n.inputs.push_back(randomArray(Shape(s.begin(), s.end()), rng));
    n.strings["equation"] = equation.toStdString();
    runtime::NDArray want = refEinsum(reference.toStdString(), n.inputs);
    for (const runtime::NDArray& got : n.run()) {
      QString diff = compare(got, want);
      QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }
  }

  void einsumRefusals_data() {
    QTest::addColumn<QString>("equation");
    QTest::addColumn<QList<QList<int>>>("shapes");
    QTest::addColumn<QString>("message");
    using L = QList<QList<int>>;
    QTest::newRow("operand count") << "ij,jk->ik" << L{{3, 4}} << "has 2 operands but the node has 1 inputs";
    QTest::newRow("rank") << "ijk->i" << L{{3, 4}} << "has 3 indices for an operand of rank 2";
    QTest::newRow("sizes") << "ij,jk->ik" << L{{3, 4}, {5, 6}} << "index 'j' has sizes 4 and 5";
    QTest::newRow("unknown output") << "ij->k" << L{{3, 4}} << "output index 'k' appears in no operand";
    QTest::newRow("bad char") << "i1->i" << L{{3, 4}} << "bad character '1'";
  }

  void einsumRefusals() {
    QFETCH(QString, equation);
    QFETCH(QList<QList<int>>, shapes);
    QFETCH(QString, message);
    std::mt19937 rng(1);
    OneNode n{"Einsum"};
    for (const auto& s : shapes) n.inputs.push_back(randomArray(Shape(s.begin(), s.end()), rng));
    n.strings["equation"] = equation.toStdString();
    std::string err = n.importError();
    QVERIFY2(err.find("node 'n' (Einsum, opset 13)") != std::string::npos, err.c_str());
    QVERIFY2(err.find(message.toStdString()) != std::string::npos, err.c_str());
  }

  void lpPoolMatchesReference_data() {
    QTest::addColumn<int>("p");
    QTest::addColumn<QList<int>>("kernel");
    QTest::addColumn<QList<int>>("strides");
    QTest::addColumn<QList<int>>("pads");  // ONNX order: top, left, bottom, right
    QTest::newRow("p1") << 1 << QList<int>{2, 2} << QList<int>{1, 1} << QList<int>{0, 0, 0, 0};
    QTest::newRow("p2 padded strided") << 2 << QList<int>{3, 3} << QList<int>{2, 2} << QList<int>{1, 1, 1, 1};
    QTest::newRow("p3 asymmetric") << 3 << QList<int>{2, 3} << QList<int>{1, 2} << QList<int>{0, 1, 1, 0};
  }

  void lpPoolMatchesReference() {
    QFETCH(int, p);
    QFETCH(QList<int>, kernel);
    QFETCH(QList<int>, strides);
    QFETCH(QList<int>, pads);
    std::mt19937 rng(3);
    OneNode n{"LpPool"};
    n.inputs.push_back(randomArray({1, 2, 5, 6}, rng));
    n.ints["p"] = p;
    n.intLists["kernel_shape"] = Shape(kernel.begin(), kernel.end());
    n.intLists["strides"] = Shape(strides.begin(), strides.end());
    n.intLists["pads"] = Shape(pads.begin(), pads.end());
    runtime::NDArray want = refLpPool(n.inputs[0], p, n.intLists["kernel_shape"], n.intLists["strides"],
                                      n.intLists["pads"]);
    for (const runtime::NDArray& got : n.run()) {
      QString diff = compare(got, want);
      QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }
  }

  void lpPoolRefusesCeilMode() {
    std::mt19937 rng(3);
    OneNode n{"LpPool"};
    n.inputs.push_back(randomArray({1, 1, 4, 4}, rng));
    n.intLists["kernel_shape"] = {2, 2};
    n.ints["ceil_mode"] = 1;
    std::string err = n.importError();
    QVERIFY2(err.find("node 'n' (LpPool, opset 13): ceil_mode=1 is not supported") != std::string::npos, err.c_str());
  }

  void nonZeroOfConstantFolds() {
    runtime::NDArray x = runtime::NDArray::empty({2, 3}, runtime::DType::f32());
    float v[] = {0.f, 1.5f, -0.f, -2.f, 0.f, 3.f};
    std::copy(v, v + 6, x.as<float>());
    OneNode n{"NonZero", {x}, true};
    for (const runtime::NDArray& got : n.run()) {
      QCOMPARE(got.shape(), (Shape{2, 3}));
      QCOMPARE(got.dtype(), (runtime::DType{runtime::DType::Int, 64, 1}));
      std::vector<int64_t> flat(got.as<int64_t>(), got.as<int64_t>() + 6);
      QCOMPARE(flat, (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
    }
  }

  // NonZero of data is a dyn.nonzero with a data-dependent count (OnnxConvertersDataDep.cpp): the
  // evaluator binds the count, also inside the fused groups of the optimize and fuse pipelines.
  void nonZeroOfDataHasDataDependentCount() {
    runtime::NDArray x = runtime::NDArray::empty({2, 3}, runtime::DType::f32());
    float v[] = {0.f, 1.5f, -0.f, -2.f, 0.f, 3.f};
    std::copy(v, v + 6, x.as<float>());
    OneNode n{"NonZero", {x}};
    for (const runtime::NDArray& got : n.run()) {
      QCOMPARE(got.shape(), (Shape{2, 3}));
      std::vector<int64_t> flat(got.as<int64_t>(), got.as<int64_t>() + 6);
      QCOMPARE(flat, (std::vector<int64_t>{0, 1, 1, 1, 0, 2}));
    }
  }
};

QTEST_APPLESS_MAIN(TestOnnxEinsum)
#include "test_onnx_einsum.moc"
