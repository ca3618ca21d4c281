// Workload: softmax over the last axis, in TVM's four stages (max, exp, sum, normalize).
#include "core/topi/WorkloadUtil.h"

#include <cmath>

namespace loom::topi::detail {

namespace {

std::vector<te::Tensor> softmax(const ParamMap& p) {
  int64_t M = param(p, "M"), N = param(p, "N");
  te::Tensor A = input({M, N}, "A");
  te::IterVar k = te::reduceAxis(c32(N), "k");
  te::Tensor maxelem = te::compute(
      shapeOf({M}), [&](Var i) { return te::max(A(i, k), {k}); }, "T_softmax_maxelem", "softmax");
  te::Tensor ex = te::compute(
      shapeOf({M, N}), [&](Var i, Var j) { return tir::call("exp", {A(i, j) - maxelem(i)}); },
      "T_softmax_exp", "softmax");
  te::IterVar k2 = te::reduceAxis(c32(N), "k");
  te::Tensor expsum = te::compute(
      shapeOf({M}), [&](Var i) { return te::sum(ex(i, k2), {k2}); }, "T_softmax_expsum", "softmax");
  te::Tensor norm = te::compute(
      shapeOf({M, N}), [&](Var i, Var j) { return ex(i, j) / expsum(i); }, "T_softmax_norm",
      "softmax");
  return {A, norm};
}

void softmaxRef(const ParamMap& p, const std::vector<runtime::NDArray>& in,
                const std::vector<runtime::NDArray>& out) {
  int64_t M = param(p, "M"), N = param(p, "N");
  View A(in[0]), O(out[0]);
  for (int64_t i = 0; i < M; ++i) {
    double mx = -INFINITY, sum = 0;
    for (int64_t j = 0; j < N; ++j)
      mx = std::max(mx, double(A({i, j})));
    for (int64_t j = 0; j < N; ++j)
      sum += std::exp(double(A({i, j})) - mx);
    for (int64_t j = 0; j < N; ++j)
      O({i, j}) = float(std::exp(double(A({i, j})) - mx) / sum);
  }
}

} // namespace

void addSoftmaxWorkloads(std::vector<Workload>& out) {
  out.push_back({"softmax",
                 "T_softmax_norm[M,N] = exp(A - max_j A) / sum_j exp(A - max_j A), per row",
                 {{"M", 128, 1, "rows"}, {"N", 128, 1, "softmax length"}},
                 1,
                 softmax,
                 [](const ParamMap& p) { return 5.0 * param(p, "M") * param(p, "N"); },
                 softmaxRef,
                 [](const ParamMap& p) { return param(p, "N"); }});
}

} // namespace loom::topi::detail
