// The ops added for ONNX coverage (nn.recurrence's loop kernel, scatter, cubic resize, grid
// sample, roi align, max-pool indices): compiled kernels against the graph evaluator's host
// kernels on random inputs.
#include <QtTest>
#include <cmath>
#include <random>

#include "ModelTestUtil.h"
#include "core/driver/CompileModel.h"
#include "core/graph/Evaluator.h"

using namespace loom;

namespace {

graph::Var var(const std::string& n, std::vector<int64_t> s, DataType t = DataType::Float(32)) {
  return graph::makeVar(n, graph::tensorType(s, t));
}

runtime::NDArray ints(const std::vector<int64_t>& shape, const std::vector<int64_t>& values, int bits) {
  runtime::NDArray a = runtime::NDArray::empty(shape, runtime::DType{runtime::DType::Int, uint8_t(bits), 1});
  for (size_t i = 0; i < values.size(); ++i) {
    if (bits == 64) a.as<int64_t>()[i] = values[i];
    else a.as<int32_t>()[i] = int32_t(values[i]);
  }
  return a;
}

/// Compiles `body` over `params` (opt level 3) and compares every output with the evaluator.
void checkAgainstEvaluator(std::vector<graph::Var> params, graph::Expr body, std::vector<runtime::NDArray> inputs,
                           double tol = 1e-4) {
  graph::Module m;
  m.functions["main"] = graph::makeFunction(params, body);
  std::vector<runtime::NDArray> want = graph::evaluate(m.main(), inputs);
  for (int level : {3}) {
    driver::CompileModelOptions o;
    o.optLevel = level;
    auto ex = driver::createExecutor(driver::compileModel(m, "llvm", {}, o));
    for (size_t i = 0; i < inputs.size(); ++i) ex->setInput(i, inputs[i]);
    ex->run();
    QCOMPARE(ex->numOutputs(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      QVERIFY2(test::maxDiff(ex->getOutput(i), want[i]) < tol,
               qPrintable(QString("output %1 at opt level %2: max diff %3").arg(i).arg(level).arg(test::maxDiff(ex->getOutput(i), want[i]))));
  }
}

graph::Expr recurrence(const std::vector<graph::Var>& v, const std::string& cell, const std::string& dir,
                       const std::string& acts, std::vector<double> params, double clip, int64_t lbr) {
  return graph::makeCall("nn.recurrence", {v[0], v[1], v[2], v[3], v[4], v[5], v[6]},
                         {{"cell", cell},
                          {"direction", dir},
                          {"activations", acts},
                          {"activation_params", params},
                          {"clip", clip},
                          {"linear_before_reset", lbr},
                          {"input_forget", int64_t(0)}});
}

}  // namespace

class TestCoverageOps : public QObject {
  Q_OBJECT

private slots:
  void recurrenceLoopKernelMatchesHostKernel_data() {
    QTest::addColumn<QString>("cell");
    QTest::addColumn<QString>("direction");
    QTest::addColumn<int>("hidden");
    QTest::addColumn<int>("panel");  // 0: RT [D, H, G*H]; P: packed [D, G*H/P, H, P]
    QTest::newRow("lstm bidirectional") << "lstm" << "bidirectional" << 16 << 0;
    QTest::newRow("lstm reverse odd hidden") << "lstm" << "reverse" << 5 << 0;
    QTest::newRow("gru forward") << "gru" << "forward" << 8 << 0;
    QTest::newRow("gru bidirectional lbr") << "gru" << "bidirectional" << 6 << 0;
    QTest::newRow("rnn reverse") << "rnn" << "reverse" << 7 << 0;
    // Hidden >= 128: a team of two tasks splits the units, meeting at a barrier per step (or,
    // with one thread, task 0 runs the serial loops); bidirectional layers whose R fits 512 KB
    // per direction run the two directions as two tasks instead, bigger ones as a team.
    QTest::newRow("lstm bidirectional team") << "lstm" << "bidirectional" << 128 << 0;
    QTest::newRow("gru bidirectional lbr team") << "gru" << "bidirectional" << 128 << 0;
    QTest::newRow("rnn reverse team") << "rnn" << "reverse" << 160 << 0;
    QTest::newRow("gru forward no team") << "gru" << "forward" << 128 << 0;
    // R^T packed in panels (what the importer makes when H is a multiple of 16): team with
    // panels of 64 and 8, serial with 8 and 32 (GRU's h-gate matmul starts at panel 2H/P); with
    // B = 3, panels of 8 hold all batch rows in the register tile, panels of 32 and 64 do not.
    QTest::newRow("lstm bidirectional team packed 64") << "lstm" << "bidirectional" << 128 << 64;
    QTest::newRow("rnn reverse team packed 8") << "rnn" << "reverse" << 144 << 8;
    QTest::newRow("lstm bidirectional packed 8") << "lstm" << "bidirectional" << 16 << 8;
    QTest::newRow("gru forward packed 32") << "gru" << "forward" << 64 << 32;
    QTest::newRow("lstm bidirectional team packed 32") << "lstm" << "bidirectional" << 192 << 32;
  }
  void recurrenceLoopKernelMatchesHostKernel() {
    QFETCH(QString, cell);
    QFETCH(QString, direction);
    QFETCH(int, hidden);
    QFETCH(int, panel);
    const int64_t T = 6, B = 3, H = hidden, D = direction == "bidirectional" ? 2 : 1, P = panel;
    const int64_t G = cell == "lstm" ? 4 : cell == "gru" ? 3 : 1;
    std::vector<int64_t> rtShape = P ? std::vector<int64_t>{D, G * H / P, H, P} : std::vector<int64_t>{D, H, G * H};
    std::vector<graph::Var> v{var("xp", {T, B, D, G * H}), var("rt", rtShape), var("rb", {D, G * H}),
                              var("h0", {D, B, H}),        var("c0", {D, B, H}),     var("p", {D, 3 * H}),
                              var("len", {B}, DataType::Int(32))};
    std::vector<runtime::NDArray> in;
    for (size_t i = 0; i < 6; ++i) {
      std::vector<int64_t> s = v[i]->annotation.as<graph::TensorTypeNode>()->staticShape();
      in.push_back(test::randomArray(s, unsigned(10 + i)));
    }
    // Wide layers: R scaled so the recurrence contracts (with R's entries in [-1, 1] a step
    // amplifies float rounding differences several times, and the test would compare chaos).
    if (H >= 64)
      for (int64_t k = 0; k < D * H * G * H; ++k) in[1].as<float>()[k] *= float(2.0 / std::sqrt(double(H)));
    in.push_back(ints({B}, {T, 2, 4}, 32));
    std::string perDir = cell == "lstm" ? "Sigmoid,Tanh,Tanh" : cell == "gru" ? "HardSigmoid,Tanh" : "Tanh";
    std::string acts = D == 2 ? perDir + "," + perDir : perDir;
    std::vector<double> params;
    for (size_t k = 0; k < size_t(G == 4 ? 3 : G == 3 ? 2 : 1) * size_t(D); ++k) params.insert(params.end(), {0.2, 0.5});
    checkAgainstEvaluator(v, recurrence(v, cell.toStdString(), direction.toStdString(), acts, params, cell == "rnn" ? 0.8 : 0.0,
                                        direction == "bidirectional" ? 1 : 0),
                          in);
  }

  // Softplus of pre-activations far above 88 (an RNN's input projection scaled to +-200, R small
  // so the state stays at that scale): as log(1 + exp(x)) the loop kernel overflowed to inf
  // where the host kernel (x for x > 30) stays finite.
  void recurrenceSoftplusOfLargeInputsStaysFinite() {
    const int64_t T = 4, B = 2, H = 5;
    std::vector<graph::Var> v{var("xp", {T, B, 1, H}), var("rt", {1, H, H}), var("rb", {1, H}), var("h0", {1, B, H}),
                              var("c0", {1, B, H}),    var("p", {1, 3 * H}), var("len", {B}, DataType::Int(32))};
    std::vector<runtime::NDArray> in;
    for (size_t i = 0; i < 6; ++i)
      in.push_back(test::randomArray(v[i]->annotation.as<graph::TensorTypeNode>()->staticShape(), unsigned(30 + i)));
    for (int64_t k = 0; k < in[0].numel(); ++k) in[0].as<float>()[k] *= 100.0f;
    for (int64_t k = 0; k < in[1].numel(); ++k) in[1].as<float>()[k] *= 0.01f;
    in.push_back(ints({B}, {T, 3}, 32));
    checkAgainstEvaluator(v, recurrence(v, "rnn", "forward", "Softplus", {0.2, 0.5}, 0.0, 0), in, 1e-3);
  }

  // Activation text and its argument need parentheses: the kernel multiplies an activation
  // (h_t = o * h(c_t)), and Affine "a * x + b" became "o_t * a * c_t + b"; LSTM's gate argument is a
  // sum with the peephole term, and HardSigmoid, LeakyRelu, Affine, ScaledTanh scaled only its
  // first term.
  void recurrenceActivationsAreParenthesized_data() {
    QTest::addColumn<QString>("acts");
    QTest::newRow("affine g and h") << "Sigmoid,Affine,Affine";
    QTest::newRow("hard sigmoid gates") << "HardSigmoid,Tanh,Tanh";
    QTest::newRow("leaky relu gates, scaled tanh") << "LeakyRelu,ScaledTanh,Tanh";
  }
  void recurrenceActivationsAreParenthesized() {
    QFETCH(QString, acts);
    const int64_t T = 3, B = 2, H = 5, G = 4;
    std::vector<graph::Var> v{var("xp", {T, B, 1, G * H}), var("rt", {1, H, G * H}), var("rb", {1, G * H}),
                              var("h0", {1, B, H}),        var("c0", {1, B, H}),     var("p", {1, 3 * H}),
                              var("len", {B}, DataType::Int(32))};
    std::vector<runtime::NDArray> in;
    for (size_t i = 0; i < 6; ++i)
      in.push_back(test::randomArray(v[i]->annotation.as<graph::TensorTypeNode>()->staticShape(), unsigned(40 + i)));
    in.push_back(ints({B}, {T, 2}, 32));
    // Absolute 1e-3: LeakyRelu gates let c_t grow, and the fixed kernel differs by 1.2e-4 there
    // (float32 rounding); the bugs gave 0.3 to 9e3.
    checkAgainstEvaluator(v, recurrence(v, "lstm", "forward", acts.toStdString(), {0.2, 0.5, 0.7, 0.3, 0.6, -0.4}, 0.0, 0),
                          in, 1e-3);
  }

  // Each family compiles once: every variant is one output of a tuple.
  void scatterElementsAndNDMatchHostKernels() {
    std::vector<graph::Var> v{var("d", {4, 5}), var("i", {3, 5}, DataType::Int(64)), var("u", {3, 5}),
                              var("d2", {4, 3, 2}), var("i2", {2, 2, 2}, DataType::Int(64)), var("u2", {2, 2, 2})};
    std::vector<graph::Expr> outs;
    for (const char* red : {"none", "add", "mul", "max", "min"})
      outs.push_back(graph::makeCall("scatter_elements", {v[0], v[1], v[2]},
                                     {{"axis", int64_t(0)}, {"reduction", std::string(red)}}));
    for (const char* red : {"none", "add", "mul"})
      outs.push_back(graph::makeCall("scatter_nd", {v[3], v[4], v[5]}, {{"reduction", std::string(red)}}));
    checkAgainstEvaluator(v, graph::makeTuple(outs),
                          {test::randomArray({4, 5}, 1), ints({3, 5}, {0, 3, -1, 2, 2, 1, 1, 3, 0, -4, 3, 0, 2, 2, 1}, 64),
                           test::randomArray({3, 5}, 2), test::randomArray({4, 3, 2}, 3),
                           ints({2, 2, 2}, {0, 1, 3, 2, -1, 0, 0, 1}, 64), test::randomArray({2, 2, 2}, 4)});
  }

  void imageOpsMatchHostKernels() {
    graph::Var x = var("x", {1, 2, 6, 7}), g = var("g", {1, 3, 4, 2}), rois = var("rois", {3, 4}),
               bi = var("bi", {3}, DataType::Int(64));
    runtime::NDArray xv = test::randomArray({1, 2, 6, 7}, 5);
    runtime::NDArray gv = test::randomArray({1, 3, 4, 2}, 6);
    for (int64_t i = 0; i < gv.numel(); ++i) gv.as<float>()[i] = gv.as<float>()[i] * 3.0f - 1.5f;  // some outside [-1, 1]
    runtime::NDArray rv = runtime::NDArray::empty({3, 4}, runtime::DType::f32());
    const float boxes[] = {0.5f, 0.5f, 4.0f, 5.0f, 1.2f, 0.0f, 6.9f, 3.3f, -0.5f, 2.0f, 2.5f, 6.5f};
    for (int i = 0; i < 12; ++i) rv.as<float>()[i] = boxes[i];
    std::vector<graph::Expr> outs;
    for (const char* ctm : {"half_pixel", "align_corners", "asymmetric", "pytorch_half_pixel"})
      for (int64_t exclude : {0, 1})
        outs.push_back(graph::makeCall("image.resize2d_cubic", {x},
                                       {{"size", std::vector<int64_t>{9, 4}},
                                        {"coordinate_transformation_mode", std::string(ctm)},
                                        {"scales", std::vector<double>{}},
                                        {"cubic_coeff_a", -0.5},
                                        {"exclude_outside", exclude}}));
    for (const char* mode : {"bilinear", "nearest", "bicubic"})
      for (const char* pad : {"zeros", "border", "reflection"})
        for (int64_t ac : {0, 1})
          outs.push_back(graph::makeCall("image.grid_sample", {x, g},
                                         {{"mode", std::string(mode)}, {"padding_mode", std::string(pad)}, {"align_corners", ac}}));
    for (const char* mode : {"avg", "max"})
      for (const char* ctm : {"half_pixel", "output_half_pixel"})
        outs.push_back(graph::makeCall("image.roi_align", {x, rois, bi},
                                       {{"mode", std::string(mode)},
                                        {"output_height", int64_t(3)},
                                        {"output_width", int64_t(2)},
                                        {"sampling_ratio", int64_t(2)},
                                        {"spatial_scale", 0.9},
                                        {"coordinate_transformation_mode", std::string(ctm)}}));
    for (int64_t order : {0, 1})
      outs.push_back(graph::makeCall("nn.max_pool2d_indices", {x},
                                     {{"pool_size", std::vector<int64_t>{3, 2}},
                                      {"strides", std::vector<int64_t>{2, 2}},
                                      {"padding", std::vector<int64_t>{1, 0, 1, 1}},
                                      {"dilation", std::vector<int64_t>{1, 2}},
                                      {"storage_order", order}}));
    checkAgainstEvaluator({x, g, rois, bi}, graph::makeTuple(outs), {xv, gv, rv, ints({3}, {0, 0, 0}, 64)});
  }
};

QTEST_APPLESS_MAIN(TestCoverageOps)
#include "test_coverage_ops.moc"
