// Random valid ONNX models built with the ONNX protobuf classes.
#include "tests/fuzz/diff/GraphGen.h"

#include <onnx/onnx_pb.h>
#include <vector>

namespace loom::fuzz {

namespace {

using Rng = std::mt19937_64;
using Shape = std::vector<int64_t>;

int64_t pick(Rng& rng, int64_t lo, int64_t hi) { return lo + int64_t(rng() % uint64_t(hi - lo + 1)); }

struct Value {
  std::string name;
  Shape shape;
};

class Builder {
public:
  explicit Builder(Rng& rng) : m_rng(rng) {
    m_model.set_ir_version(8);
    auto* op = m_model.add_opset_import();
    op->set_domain("");
    op->set_version(13);
    m_model.set_producer_name("loom-fuzz");
    m_graph = m_model.mutable_graph();
    m_graph->set_name("random");
  }

  std::string build(std::string* summary) {
    int inputs = int(pick(m_rng, 1, 2));
    bool image = m_rng() % 4 != 0;
    Shape first;
    for (int i = 0; i < inputs; ++i) {
      Shape s = i == 0 ? (image ? Shape{1, pick(m_rng, 1, 8), pick(m_rng, 3, 12), pick(m_rng, 3, 12)}
                                : Shape{pick(m_rng, 1, 6), pick(m_rng, 1, 16)})
                       : first;
      if (i == 0) first = s;
      m_pool.push_back(input("x" + std::to_string(i), s));
    }
    int nodes = int(pick(m_rng, 2, 8));
    for (int n = 0; n < nodes; ++n) step();
    // The last value is the output; so is another one now and then.
    output(m_pool.back());
    if (m_pool.size() > 2 && m_rng() % 3 == 0) output(m_pool[m_pool.size() - 2]);
    *summary = m_ops;
    // HardSwish is opset 14; a model without it stays at 13, as before it was added.
    if (m_opset14) m_model.mutable_opset_import(0)->set_version(14);
    std::string bytes;
    m_model.SerializeToString(&bytes);
    return bytes;
  }

private:
  Rng& m_rng;
  onnx::ModelProto m_model;
  onnx::GraphProto* m_graph;
  std::vector<Value> m_pool;
  std::string m_ops;
  int m_next = 0;
  bool m_opset14 = false;

  std::string fresh(const char* base) { return std::string(base) + std::to_string(m_next++); }

  static void setShape(onnx::ValueInfoProto* v, const Shape& s) {
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : s) t->mutable_shape()->add_dim()->set_dim_value(d);
  }

  Value input(const std::string& name, const Shape& s) {
    auto* v = m_graph->add_input();
    v->set_name(name);
    setShape(v, s);
    return {name, s};
  }

  void output(const Value& val) {
    for (auto& o : m_graph->output())
      if (o.name() == val.name) return;
    auto* v = m_graph->add_output();
    v->set_name(val.name);
    setShape(v, val.shape);
  }

  /// A constant initializer of `shape` with values in [lo, hi).
  std::string constant(const Shape& shape, double lo = -1, double hi = 1) {
    auto* t = m_graph->add_initializer();
    std::string name = fresh("c");
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    int64_t n = 1;
    for (int64_t d : shape) {
      t->add_dims(d);
      n *= d;
    }
    std::uniform_real_distribution<float> u{float(lo), float(hi)};
    for (int64_t i = 0; i < n; ++i) t->add_float_data(u(m_rng));
    return name;
  }

  /// A constant of shape {1} holding `v` (no draw from the rng).
  std::string scalar(float v) {
    auto* t = m_graph->add_initializer();
    std::string name = fresh("k");
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_dims(1);
    t->add_float_data(v);
    return name;
  }

  /// A node whose output is not offered to later steps (a domain guard's inner value).
  std::string inner(const char* op, std::vector<std::string> ins, const Shape& outShape) {
    node(op, std::move(ins), outShape);
    std::string out = m_pool.back().name;
    m_pool.pop_back();
    return out;
  }

  /// |x| + eps, in (eps, inf): the guard ONNX models put before Log, Sqrt, a divisor, Pow.
  std::string positive(const Value& x, float eps) {
    return inner("Add", {inner("Abs", {x.name}, x.shape), scalar(eps)}, x.shape);
  }

  onnx::NodeProto* node(const char* op, std::vector<std::string> ins, const Shape& outShape) {
    auto* nd = m_graph->add_node();
    nd->set_op_type(op);
    nd->set_name(fresh("n"));
    for (auto& i : ins) nd->add_input(i);
    std::string out = fresh("v");
    nd->add_output(out);
    m_pool.push_back({out, outShape});
    m_ops += (m_ops.empty() ? "" : " ") + std::string(op);
    return nd;
  }

  static void attr(onnx::NodeProto* n, const char* name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void attr(onnx::NodeProto* n, const char* name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void attr(onnx::NodeProto* n, const char* name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }

  /// Picks a value, preferring recent ones (chains rather than fans).
  const Value& operand() {
    size_t n = m_pool.size();
    size_t k = m_rng() % 3 == 0 ? m_rng() % n : n - 1 - m_rng() % std::min<size_t>(n, 2);
    return m_pool[k];
  }

  void step() {
    Value x = operand();
    bool img = x.shape.size() == 4;
    int r = int(m_rng() % 16);
    if (img && r < 4) return conv(x);
    if (img && r == 4) return pool(x);
    if (img && r == 5) return batchNorm(x);
    if (img && r == 6) {
      node("GlobalAveragePool", {x.name}, {x.shape[0], x.shape[1], 1, 1});
      return;
    }
    if (img && r == 7) {
      node("Flatten", {x.name}, {x.shape[0], x.shape[1] * x.shape[2] * x.shape[3]});
      attr(m_graph->mutable_node(m_graph->node_size() - 1), "axis", int64_t(1));
      return;
    }
    if (r == 8) return binary(x);
    if (r == 9) return concat(x);
    if (r == 10) return transpose(x);
    if (!img && r == 11) return matmul(x);
    if (r == 12) {
      auto* n = node("Softmax", {x.name}, x.shape);
      attr(n, "axis", int64_t(-1));
      return;
    }
    if (r == 13) {
      int64_t axis = pick(m_rng, 0, int64_t(x.shape.size()) - 1);
      Shape s = x.shape;
      s[size_t(axis)] = 1;
      auto* n = node("ReduceMean", {x.name}, s);
      attr(n, "axes", std::vector<int64_t>{axis});
      attr(n, "keepdims", int64_t(1));
      return;
    }
    if (r == 14) return binary(x);
    unary(x);
  }

  void unary(const Value& x) {
    const char* ops[] = {"Relu", "Sigmoid", "Tanh", "Abs", "Neg", "LeakyRelu", "Elu", "HardSigmoid", "Softsign"};
    const char* op = ops[m_rng() % 9];
    // Elu's family (exp(x) - 1 and log(1 + exp(x)) near their cancellations) and Tanh's (the
    // other transcendental functions with a fast float32 lowering), picked without a draw from
    // the rng, so every seed keeps the graph it had before these were added but for the op's name.
    uint64_t variant = (uint64_t(m_next) * 0x9E3779B97F4A7C15ull) >> 62;
    if (std::string(op) == "Elu") {
      const char* family[] = {"Elu", "Selu", "Celu", "Softplus"};
      op = family[variant];
    } else if (std::string(op) == "Tanh") {
      const char* family[] = {"Tanh", "Exp", "Erf", "Tanh"};
      op = family[variant];
    } else if (std::string(op) == "Abs") {
      // Functions with a restricted domain, behind the guard ONNX models use: Log(|x| + eps),
      // Sqrt(|x| + eps), Pow(|x| + eps, c).
      switch (variant) {
      case 1: node("Log", {positive(x, 0.05f)}, x.shape); return;
      case 2: node("Sqrt", {positive(x, 0.01f)}, x.shape); return;
      case 3: {
        const float exps[] = {2.0f, 0.5f, 3.0f, -1.0f, 1.5f};
        node("Pow", {positive(x, 0.25f), scalar(exps[m_next % 5])}, x.shape);
        return;
      }
      default: break;
      }
    } else if (std::string(op) == "Neg") {
      // The hyperbolic functions (Sinh, Asinh; Atanh of 0.9 * Softsign(x), inside (-1, 1)).
      switch (variant) {
      case 1: node("Sinh", {x.name}, x.shape); return;
      case 2: node("Asinh", {x.name}, x.shape); return;
      case 3:
        node("Atanh", {inner("Mul", {inner("Softsign", {x.name}, x.shape), scalar(0.9f)}, x.shape)}, x.shape);
        return;
      default: break;
      }
    } else if (std::string(op) == "Softsign" && variant % 2 == 1) {
      op = "HardSwish";
      m_opset14 = true;
    }
    auto* n = node(op, {x.name}, x.shape);
    if (std::string(op) == "LeakyRelu") attr(n, "alpha", float(0.1));
  }

  void binary(const Value& x) {
    const char* ops[] = {"Add", "Sub", "Mul", "Max", "Min"};
    const char* op = ops[m_rng() % 5];
    std::string other;
    for (auto& v : m_pool)
      if (v.shape == x.shape && v.name != x.name && m_rng() % 2) other = v.name;
    if (other.empty()) {
      // A broadcast constant: per channel for images, per column for matrices, or a scalar.
      Shape s;
      if (m_rng() % 4 == 0)
        s = {1};
      else if (x.shape.size() == 4)
        s = {x.shape[1], 1, 1};
      else
        s = {x.shape.back()};
      other = constant(s);
    }
    bool xFirst = m_rng() % 2;
    // Sub's slot also draws Div (without an rng draw), by a divisor kept away from 0: |d| + 0.5.
    if (std::string(op) == "Sub" && ((uint64_t(m_next) * 0x9E3779B97F4A7C15ull) >> 63)) {
      const std::string& num = xFirst ? x.name : other;
      const std::string& den = xFirst ? other : x.name;
      Shape denShape = x.shape;
      if (den == other) {
        for (auto& t : m_graph->initializer())
          if (t.name() == den) denShape.assign(t.dims().begin(), t.dims().end());
      }
      node("Div", {num, positive({den, denShape}, 0.5f)}, x.shape);
      return;
    }
    if (xFirst)
      node(op, {x.name, other}, x.shape);
    else
      node(op, {other, x.name}, x.shape);
  }

  void concat(const Value& x) {
    Shape s = x.shape;
    int64_t axis = x.shape.size() == 4 ? 1 : int64_t(x.shape.size()) - 1;
    std::string other;
    int64_t extra = 0;
    for (auto& v : m_pool) {
      if (v.shape.size() != x.shape.size()) continue;
      bool ok = true;
      for (size_t d = 0; d < s.size(); ++d)
        if (int64_t(d) != axis && v.shape[d] != x.shape[d]) ok = false;
      if (ok && m_rng() % 2) {
        other = v.name;
        extra = v.shape[size_t(axis)];
      }
    }
    if (other.empty()) {
      Shape c = x.shape;
      c[size_t(axis)] = extra = pick(m_rng, 1, 4);
      other = constant(c);
    }
    s[size_t(axis)] += extra;
    auto* n = node("Concat", {x.name, other}, s);
    attr(n, "axis", axis);
  }

  void transpose(const Value& x) {
    std::vector<int64_t> perm(x.shape.size());
    for (size_t i = 0; i < perm.size(); ++i) perm[i] = int64_t(i);
    std::shuffle(perm.begin() + (x.shape.size() == 4 ? 1 : 0), perm.end(), m_rng);
    Shape s;
    for (int64_t p : perm) s.push_back(x.shape[size_t(p)]);
    auto* n = node("Transpose", {x.name}, s);
    attr(n, "perm", perm);
  }

  void matmul(const Value& x) {
    int64_t k = x.shape.back(), n = pick(m_rng, 1, 16);
    if (m_rng() % 2) {
      node("MatMul", {x.name, constant({k, n})}, {x.shape[0], n});
    } else {
      auto* g = node("Gemm", {x.name, constant({n, k}), constant({n})}, {x.shape[0], n});
      attr(g, "transB", int64_t(1));
      attr(g, "alpha", float(0.5));
    }
  }

  void conv(const Value& x) {
    int64_t c = x.shape[1], h = x.shape[2], w = x.shape[3];
    int64_t groups = 1;
    int g = int(m_rng() % 4);
    if (g == 0) groups = c;                      // depthwise
    else if (g == 1 && c % 2 == 0) groups = 2;
    int64_t k = groups == c && m_rng() % 2 ? c : pick(m_rng, 1, 8) * groups;
    int64_t kr = pick(m_rng, 1, 3), ks = m_rng() % 4 ? kr : pick(m_rng, 1, 3);
    int64_t stride = pick(m_rng, 1, 2), dil = m_rng() % 5 == 0 ? 2 : 1;
    int64_t pad = pick(m_rng, 0, 1);
    int64_t spanH = h + 2 * pad - dil * (kr - 1) - 1, spanW = w + 2 * pad - dil * (ks - 1) - 1;
    if (spanH < 0 || spanW < 0) return unary(x);  // the kernel does not fit
    int64_t oh = spanH / stride + 1, ow = spanW / stride + 1;
    std::vector<std::string> ins = {x.name, constant({k, c / groups, kr, ks}, -0.5, 0.5)};
    if (m_rng() % 2) ins.push_back(constant({k}));
    auto* n = node("Conv", ins, {x.shape[0], k, oh, ow});
    attr(n, "kernel_shape", std::vector<int64_t>{kr, ks});
    attr(n, "strides", std::vector<int64_t>{stride, stride});
    attr(n, "pads", std::vector<int64_t>{pad, pad, pad, pad});
    attr(n, "dilations", std::vector<int64_t>{dil, dil});
    attr(n, "group", groups);
  }

  void pool(const Value& x) {
    int64_t kk = pick(m_rng, 1, 3), stride = pick(m_rng, 1, 2), pad = kk > 1 ? pick(m_rng, 0, 1) : 0;
    int64_t spanH = x.shape[2] + 2 * pad - kk, spanW = x.shape[3] + 2 * pad - kk;
    if (spanH < 0 || spanW < 0) return unary(x);  // the window does not fit
    int64_t oh = spanH / stride + 1, ow = spanW / stride + 1;
    bool maxPool = m_rng() % 2;
    auto* n = node(maxPool ? "MaxPool" : "AveragePool", {x.name}, {x.shape[0], x.shape[1], oh, ow});
    attr(n, "kernel_shape", std::vector<int64_t>{kk, kk});
    attr(n, "strides", std::vector<int64_t>{stride, stride});
    attr(n, "pads", std::vector<int64_t>{pad, pad, pad, pad});
    if (!maxPool && m_rng() % 2) attr(n, "count_include_pad", int64_t(1));
  }

  void batchNorm(const Value& x) {
    int64_t c = x.shape[1];
    auto* n = node("BatchNormalization", {x.name, constant({c}, 0.5, 1.5), constant({c}), constant({c}), constant({c}, 0.5, 2)},
                   x.shape);
    attr(n, "epsilon", float(1e-5));
  }
};

} // namespace

std::string randomOnnxModel(std::mt19937_64& rng, std::string* summary) { return Builder(rng).build(summary); }

} // namespace loom::fuzz
