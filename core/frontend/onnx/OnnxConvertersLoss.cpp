// ONNX loss ops as graph op chains: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss
// (reductions none/sum/mean, class weights, ignore_index).
#include "core/frontend/onnx/OnnxContext.h"

namespace loom::frontend::onnxi {

namespace {

using graph::Expr;

/// -input[n, target[n, d...], d...] * weight[target], reduced as `reduction`; targets equal to
/// `ignoreIndex` (when given) count neither in the loss nor in the mean's divisor.
Expr nllLoss(Context& c, Expr input, Expr target, Expr weight) {
  std::vector<int64_t> ts = c.staticShape(target);
  DataType dt = c.tensorType(input).dtype;
  DataType it = c.tensorType(target).dtype;
  std::string reduction = c.attrString("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    c.fail("reduction must be none, sum or mean, got \"" + reduction + "\"");
  bool hasIgnore = c.attr("ignore_index") != nullptr;
  Expr safe = target, mask;
  if (hasIgnore) {
    Expr ii = graph::makeScalar(double(c.attrInt("ignore_index", 0)), it);
    Expr ignored = c.call("equal", {target, ii});
    safe = c.call("where", {ignored, graph::makeScalar(0.0, it), target});
    mask = c.call("cast", {c.call("logical_not", {ignored})}, {{"dtype", dt}});
  }
  std::vector<int64_t> withClass = ts;
  withClass.insert(withClass.begin() + 1, 1);
  Expr picked = c.call("gather_elements", {input, c.call("reshape", {safe}, {{"newshape", withClass}})}, {{"axis", int64_t(1)}});
  Expr loss = c.call("negative", {c.call("reshape", {picked}, {{"newshape", ts}})});
  Expr w;
  if (weight.defined()) w = c.call("take", {weight, safe}, {{"axis", int64_t(0)}});
  if (mask.defined()) w = w.defined() ? c.call("multiply", {w, mask}) : mask;
  if (w.defined()) loss = c.call("multiply", {loss, w});
  graph::Attrs all{{"axis", std::vector<int64_t>{}}, {"keepdims", int64_t(0)}};
  if (reduction == "none") return loss;
  if (reduction == "sum") return c.call("sum", {loss}, all);
  if (!w.defined()) return c.call("mean", {loss}, all);
  return c.call("divide", {c.call("sum", {loss}, all), c.call("sum", {w}, all)});
}

}  // namespace

const std::unordered_map<std::string, Converter>& extraConverters() {
  static const std::unordered_map<std::string, Converter> table{
      {"NegativeLogLikelihoodLoss",
       [](Context& c) {
         Expr weight = c.hasInput(2) ? c.input(2) : Expr();
         return std::vector<Expr>{nllLoss(c, c.input(0), c.input(1), weight)};
       }},
      {"SoftmaxCrossEntropyLoss",
       [](Context& c) {
         Expr logProb = c.call("nn.log_softmax", {c.input(0)}, {{"axis", int64_t(1)}});
         Expr weight = c.hasInput(2) ? c.input(2) : Expr();
         return std::vector<Expr>{nllLoss(c, logProb, c.input(1), weight), logProb};
       }},
  };
  return table;
}

}  // namespace loom::frontend::onnxi
