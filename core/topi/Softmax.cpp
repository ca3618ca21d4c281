// softmax over the last axis, in TVM's four stages (max, exp, sum, normalize): compute and preset.
#include "core/topi/WorkloadUtil.h"

#include <cmath>

namespace loom::topi {

using tir::Expr;
using tir::Var;

te::Tensor softmax(const te::Tensor& A) {
  if (A->ndim() == 0) LOOM_THROW(ValueError) << "softmax: tensor '" << A->name << "' is a scalar";
  size_t last = A->ndim() - 1;
  std::vector<Expr> outer(A->shape.begin(), A->shape.end() - 1);
  auto with = [](const std::vector<Var>& i, Expr e) {
    std::vector<Expr> idx(i.begin(), i.end());
    idx.push_back(e);
    return idx;
  };
  auto prefix = [](const std::vector<Var>& i) { return std::vector<Expr>(i.begin(), i.end() - 1); };
  te::IterVar k = te::reduceAxis(A->shape[last], "k");
  te::Tensor maxelem = te::compute(
      outer,
      [&](const std::vector<Var>& i) -> te::ComputeBody { return te::max(A(with(i, k)), {k}); },
      "T_softmax_maxelem", "softmax");
  te::Tensor ex = te::compute(
      A->shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return tir::call("exp", {A(std::vector<Expr>(i.begin(), i.end())) - maxelem(prefix(i))});
      },
      "T_softmax_exp", "softmax");
  te::IterVar k2 = te::reduceAxis(A->shape[last], "k");
  te::Tensor expsum = te::compute(
      outer,
      [&](const std::vector<Var>& i) -> te::ComputeBody { return te::sum(ex(with(i, k2)), {k2}); },
      "T_softmax_expsum", "softmax");
  return te::compute(
      A->shape,
      [&](const std::vector<Var>& i) -> te::ComputeBody {
        return ex(std::vector<Expr>(i.begin(), i.end())) / expsum(prefix(i));
      },
      "T_softmax_norm", "softmax");
}

namespace detail {

namespace {

std::vector<te::Tensor> softmaxWorkload(const ParamMap& p) {
  te::Tensor A = input({param(p, "M"), param(p, "N")}, "A");
  return {A, softmax(A)};
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
                 softmaxWorkload,
                 [](const ParamMap& p) { return 5.0 * param(p, "M") * param(p, "N"); },
                 softmaxRef,
                 [](const ParamMap& p) { return param(p, "N"); }});
}

} // namespace detail

} // namespace loom::topi
