// SimplifyInference: BatchNorm folded into conv/dense weights or decomposed; norms decomposed.
#include "core/graph/pass/SimplifyInference.h"

#include <cmath>

#include "core/graph/Mutator.h"
#include "core/graph/Op.h"
#include "core/graph/pass/InferType.h"

namespace loom::graph {

namespace {

const ConstantNode* asConst(const Expr& e) {
  return e.as<ConstantNode>();
}

/// Reads a float tensor constant as doubles.
std::vector<double> values(const ConstantNode& c) {
  std::vector<double> v(size_t(c.data.numel()));
  DataType t = toDataType(c.data.dtype());
  for (size_t i = 0; i < v.size(); ++i)
    v[i] = t == DataType::Float(64) ? c.data.as<double>()[i] : double(c.data.as<float>()[i]);
  return v;
}

Constant floatConstant(const std::vector<double>& v, std::vector<int64_t> shape, DataType t) {
  runtime::NDArray a = runtime::NDArray::empty(std::move(shape), toDType(t));
  for (size_t i = 0; i < v.size(); ++i) {
    if (t == DataType::Float(64))
      a.as<double>()[i] = v[i];
    else
      a.as<float>()[i] = float(v[i]);
  }
  return makeConstant(a);
}

bool isFloatConst(const Expr& e) {
  auto* c = asConst(e);
  if (!c) return false;
  DataType t = toDataType(c->data.dtype());
  return t == DataType::Float(32) || t == DataType::Float(64);
}

/// Reshapes a per-channel vector expression to broadcast along `axis` of a rank-`ndim` tensor.
Expr expandChannels(const Expr& v, int64_t channels, int64_t axis, int64_t ndim) {
  std::vector<int64_t> shape{channels};
  for (int64_t i = axis + 1; i < ndim; ++i)
    shape.push_back(1);
  return makeCall("reshape", {v}, {{"newshape", shape}});
}

class Simplifier : public ExprMutator {
public:
  explicit Simplifier(std::unordered_map<const ExprNode*, int> uses) : m_uses(std::move(uses)) {}

private:
  std::unordered_map<const ExprNode*, int> m_uses;

  bool singleUse(const Expr& original) const {
    auto it = m_uses.find(original.get());
    return it != m_uses.end() && it->second == 1;
  }

  Expr rewrite(const Expr& original, const Expr& e) override {
    auto* c = e.as<CallNode>();
    if (!c || !c->op) return e;
    const std::string& op = c->op->name;
    if (op == "nn.dropout") return c->args[0];
    if (op == "nn.batch_norm") return batchNorm(original, *c);
    if (op == "nn.layer_norm") return layerNorm(*c);
    if (op == "nn.instance_norm") return instanceNorm(*c);
    return e;
  }

  Expr batchNorm(const Expr& original, const CallNode& bn) {
    const auto& data = bn.args[0];
    auto* dt = inferType(data).as<TensorTypeNode>();
    int64_t ndim = int64_t(dt->ndim());
    int64_t axis = bn.attrs.getInt("axis");
    if (axis < 0) axis += ndim;
    double eps = bn.attrs.getFloat("epsilon");
    bool allConst = true;
    for (size_t i = 1; i < 5; ++i)
      allConst &= isFloatConst(bn.args[i]);
    if (!allConst) return decomposeBatchNorm(bn, axis, ndim);
    std::vector<double> gamma = values(*asConst(bn.args[1])), beta = values(*asConst(bn.args[2])),
                        mean = values(*asConst(bn.args[3])), var = values(*asConst(bn.args[4]));
    size_t C = gamma.size();
    std::vector<double> scale(C), shift(C);
    for (size_t i = 0; i < C; ++i) {
      scale[i] = gamma[i] / std::sqrt(var[i] + eps);
      shift[i] = beta[i] - mean[i] * scale[i];
    }
    // Fold into the producer's weight when the producer is ours alone.
    const auto& origData = original.as<CallNode>()->args[0];
    Expr producer = data;
    Expr origProducer = origData;
    std::vector<double> bias;
    if (auto* ba = producer.as<CallNode>(); ba && ba->op && ba->op->name == "nn.bias_add" &&
                                            singleUse(origProducer) && isFloatConst(ba->args[1])) {
      auto* bt = inferType(producer).as<TensorTypeNode>();
      int64_t bAxis = ba->attrs.getInt("axis");
      if (bAxis < 0) bAxis += int64_t(bt->ndim());
      if (bAxis == axis) {
        bias = values(*asConst(ba->args[1]));
        producer = ba->args[0];
        origProducer = origProducer.as<CallNode>()->args[0];
      }
    }
    // Only a conv2d or dense has a weight to fold into: the producer's op is checked before its
    // second argument is read, which an op of one argument (a pool, relu) does not have
    // (fuzz_difftest graph seed 66209: batch norm after an average pool read past the end of
    // the pool's arguments, a crash now and then).
    if (auto* p = producer.as<CallNode>(); p && p->op && p->args.size() == 2) {
      bool conv = p->op->name == "nn.conv2d" && axis == 1;
      bool dense = p->op->name == "nn.dense" && axis == ndim - 1;
      if ((conv || dense) && singleUse(origProducer) && isFloatConst(p->args[1])) {
        const ConstantNode& w = *asConst(p->args[1]);
        std::vector<double> wv = values(w);
        int64_t perOut = int64_t(wv.size()) / int64_t(C);
        for (size_t o = 0; o < C; ++o)
          for (int64_t k = 0; k < perOut; ++k)
            wv[o * perOut + k] *= scale[o];
        DataType t = toDataType(w.data.dtype());
        Constant newW = floatConstant(wv, w.data.shape(), t);
        std::vector<double> newBias(C);
        for (size_t o = 0; o < C; ++o)
          newBias[o] = (bias.empty() ? 0.0 : bias[o]) * scale[o] + shift[o];
        Call newProducer = withArgs(*p, {p->args[0], newW});
        return makeCall("nn.bias_add", {newProducer, floatConstant(newBias, {int64_t(C)}, t)},
                        {{"axis", int64_t(axis)}});
      }
    }
    DataType t = dt->dtype;
    std::vector<int64_t> shape{int64_t(C)};
    for (int64_t i = axis + 1; i < ndim; ++i)
      shape.push_back(1);
    Expr scaled = makeCall("multiply", {data, floatConstant(scale, shape, t)});
    return makeCall("add", {scaled, floatConstant(shift, shape, t)});
  }

  Expr decomposeBatchNorm(const CallNode& bn, int64_t axis, int64_t ndim) {
    auto* dt = inferType(bn.args[0]).as<TensorTypeNode>();
    int64_t C = inferType(bn.args[1]).as<TensorTypeNode>()->shape[0].value;
    Expr eps = makeScalar(bn.attrs.getFloat("epsilon"), dt->dtype);
    Expr scale =
        makeCall("multiply", {bn.args[1], makeCall("rsqrt", {makeCall("add", {bn.args[4], eps})})});
    Expr shift = makeCall("subtract", {bn.args[2], makeCall("multiply", {bn.args[3], scale})});
    Expr y = makeCall("multiply", {bn.args[0], expandChannels(scale, C, axis, ndim)});
    return makeCall("add", {y, expandChannels(shift, C, axis, ndim)});
  }

  /// (x - mean(x)) * rsqrt(var(x) + eps) over `axes`.
  /// Whether `v` (a layer norm's scale or shift) is a static vector over the last axis of `x`.
  static bool perLastAxis(const Expr& v, const TensorTypeNode& x) {
    auto* t = inferType(v).as<TensorTypeNode>();
    return t && t->isStatic() && t->ndim() == 1 && t->dtype == x.dtype &&
           t->shape[0].value == x.shape.back().value;
  }

  static Expr normalize(const Expr& x, const std::vector<int64_t>& axes, double epsilon,
                        DataType t) {
    Attrs reduce{{"axis", axes}, {"keepdims", int64_t(1)}};
    Expr mean = makeCall("mean", {x}, reduce);
    Expr d = makeCall("subtract", {x, mean});
    Expr var = makeCall("mean", {makeCall("multiply", {d, d})}, reduce);
    Expr inv = makeCall("rsqrt", {makeCall("add", {var, makeScalar(epsilon, t)})});
    return makeCall("multiply", {d, inv});
  }

  Expr layerNorm(const CallNode& ln) {
    auto* dt = inferType(ln.args[0]).as<TensorTypeNode>();
    int64_t ndim = int64_t(dt->ndim()), axis = ln.attrs.getInt("axis");
    if (axis < 0) axis += ndim;
    // Over a static last axis (a transformer's layer norm) it stays one op: its compute (topi
    // nn.layer_norm) is one kernel whose row reductions and normalized row the default schedule
    // runs one row at a time in vector lanes. Decomposed, it became four kernels (mean,
    // subtract, the variance's mean, the normalization), the reductions scalar: a dynamic BERT's
    // (rows over batch and sequence) took 6x the static build's time at 1x7.
    if (axis == ndim - 1 && ndim >= 2 && dt->shape.back().isStatic() && (dt->dtype == DataType::Float(32)) &&
        perLastAxis(ln.args[1], *dt) && perLastAxis(ln.args[2], *dt))
      return makeCall("nn.layer_norm", {ln.args[0], ln.args[1], ln.args[2]}, ln.attrs);
    std::vector<int64_t> axes;
    for (int64_t i = axis; i < ndim; ++i)
      axes.push_back(i);
    Expr y = normalize(ln.args[0], axes, ln.attrs.getFloat("epsilon"), dt->dtype);
    return makeCall("add", {makeCall("multiply", {y, ln.args[1]}), ln.args[2]});
  }

  Expr instanceNorm(const CallNode& in) {
    auto* dt = inferType(in.args[0]).as<TensorTypeNode>();
    int64_t ndim = int64_t(dt->ndim());
    int64_t C = inferType(in.args[1]).as<TensorTypeNode>()->shape[0].value;
    std::vector<int64_t> axes;
    for (int64_t i = 2; i < ndim; ++i)
      axes.push_back(i);
    Expr y = normalize(in.args[0], axes, in.attrs.getFloat("epsilon"), dt->dtype);
    y = makeCall("multiply", {y, expandChannels(in.args[1], C, 1, ndim)});
    return makeCall("add", {y, expandChannels(in.args[2], C, 1, ndim)});
  }
};

} // namespace

Expr simplifyInference(const Expr& e) {
  inferType(e);
  return Simplifier(useCounts(e)).mutate(e);
}

Module simplifyInference(const Module& m) {
  return mapFunctions(m, [](const Expr& e) { return simplifyInference(e); });
}

} // namespace loom::graph
